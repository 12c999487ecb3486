"""The notifications package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class PushJob(Job):
    """Send notification ``nid`` of ``uid`` to their Web Push subscriptions
    (redpoll.push.delivery), deciding at send time whether each gets it;
    ``sub`` names the one subscription (its token digest) a retry is for
    ('' for all), ``attempt`` counts the tries before."""

    kind: ClassVar[str] = "push"
    time_limit_s: ClassVar[float] = 60.0
    max_attempts: ClassVar[int] = 3  # its own retries are jobs for later
    uid: int
    nid: int
    sub: str = ""
    attempt: int = 0

    def subject(self) -> str:
        return f"user:{self.uid}"
