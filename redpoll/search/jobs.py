"""The search package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job, StatusJob


@dataclass(frozen=True)
class IndexJob(StatusJob):
    """Bring the full-text index of a status to the status as it is now
    (redpoll.search.index.index_status: idempotent), queued on its post,
    each edit and its delete."""

    kind: ClassVar[str] = "fts_index"


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
