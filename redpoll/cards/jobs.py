"""The cards package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class CardJob(Job):
    """Give status ``sid`` the card of its first link (fetched if no card
    of that URL is kept), or none. Idempotent; in the ingress lane: it
    waits on other servers."""

    kind: ClassVar[str] = "card"
    lane: ClassVar[str] = "ingress"
    time_limit_s: ClassVar[float] = 90.0
    max_attempts: ClassVar[int] = 3
    sid: int

    def subject(self) -> str:
        return f"status:{self.sid}"


@dataclass(frozen=True)
class CardImageJob(Job):
    """Fetch again the image of the card that names ``part`` (status
    ``sid``'s, or 0: the card kept for its URL) when the remote media cache
    dropped it: asked for through the media proxy. Idempotent; in the
    ingress lane."""

    kind: ClassVar[str] = "card-image"
    lane: ClassVar[str] = "ingress"
    time_limit_s: ClassVar[float] = 60.0
    max_attempts: ClassVar[int] = 3
    sid: int
    part: str

    def subject(self) -> str:
        return f"card-image:{self.part}"
