"""The timelines package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job, StatusJob


@dataclass(frozen=True)
class FanoutJob(StatusJob):
    """Deliver a status to the next batch of targets after ``after``;
    ``listed`` False for an unlisted status (kept off the public timeline)."""

    kind: ClassVar[str] = "fanout"
    phase: str = "home"
    after: int = 0
    listed: bool = True
    #: a reply: only followers who also follow this account get it
    #: (Status.replies_to_other)
    only_following: int | None = None
    #: a boost of this status (boosts.py): the homes that take it (the home
    #: rule) get it through deliver_boost.lua
    boost_of: int | None = None
    #: the status's visibility (redpoll.relations.visibility): who the fan-out reaches
    audience: str = "public"


@dataclass(frozen=True)
class CleanupJob(StatusJob):
    """Take a deleted status out of the next batch of targets."""

    kind: ClassVar[str] = "cleanup"
    phase: str = "home"
    after: int = 0


@dataclass(frozen=True)
class RefillJob(Job):
    """Refill a home (``lid`` None) or a list timeline after an unfollow."""

    kind: ClassVar[str] = "refill"
    time_limit_s: ClassVar[float] = 120.0
    uid: int
    lid: int | None = None

    def subject(self) -> str:
        return f"user:{self.uid}" if self.lid is None else f"list:{self.uid}:{self.lid}"
