"""The annual package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class AnnualReportJob(Job):
    """Make ``uid``'s annual report of ``year`` (redpoll.annual.reports.generate;
    a replay writes the same report again)."""

    kind: ClassVar[str] = "annual_report"
    uid: int
    year: int

    def subject(self) -> str:
        return f"user:{self.uid}"
