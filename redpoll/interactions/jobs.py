"""The interactions package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class FavouriteJob(Job):
    """The journal of a favourite (``on``) or unfavourite (favourites.py),
    ordered by its operation id ``op``."""

    kind: ClassVar[str] = "favourite"
    uid: int
    sid: int
    op: int
    on: bool

    def subject(self) -> str:
        return f"status:{self.sid}"
