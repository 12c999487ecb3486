"""The portability package's background jobs as records (redpoll.bus.queue:
the queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class ImportJob(Job):
    """The next step of ``uid``'s CSV import ``iid``, chained until it is
    finished (redpoll.portability.imports.step)."""

    kind: ClassVar[str] = "csv_import"
    # a step resolves up to limits.IMPORT_STEP accounts, some on other servers
    time_limit_s: ClassVar[float] = 300.0
    uid: int
    iid: int

    def subject(self) -> str:
        return f"user:{self.uid}"
