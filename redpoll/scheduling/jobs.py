"""The scheduling package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class ScheduledStatusJob(Job):
    """Post the scheduled status ``id`` of ``uid`` (redpoll.scheduling),
    queued for its time (JobQueue.enqueue_at; the same record at any time,
    so moving the time is one ZADD). ``media``: the uploads held for it,
    released by a run that finds the scheduled status gone."""

    kind: ClassVar[str] = "scheduled_status"
    uid: int
    id: int
    media: tuple[int, ...] = ()

    def subject(self) -> str:
        return f"user:{self.uid}"
