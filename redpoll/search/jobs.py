"""The search package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py. The index job of
one status is queued by posting, below this package: its record is
redpoll.conversations.jobs.IndexJob, handled here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class ReindexAuthorJob(Job):
    """Index again the statuses of ``uid`` older than ``before`` (0: from the
    newest), a batch a run, chained: their family follows the account's
    ``indexable`` as it is now."""

    kind: ClassVar[str] = "fts_reindex"
    time_limit_s: ClassVar[float] = 120.0
    uid: int
    before: int = 0

    def subject(self) -> str:
        return f"user:{self.uid}"
