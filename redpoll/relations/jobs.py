"""The relations package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class FollowNoteJob(Job):
    """The journal of a follow or unfollow's notification (follows.py).
    ``since``: queued with the follow's change in one round trip, before
    the call knows whether the follow is new: the worker syncs only if the
    follow's score is at least ``since`` (the score the call wrote, so the
    follow is this call's or a later one's); 0 (a journal taken over, an
    unfollow): always."""

    kind: ClassVar[str] = "follow_note"
    uid: int
    target: int
    since: int = 0

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class BlockJob(Job):
    """The journal of a block (relations.py): both sides' block sets, then
    the follows both ways undone; every step idempotent, replayed whole."""

    kind: ClassVar[str] = "block"
    uid: int
    target: int
    op: int

    def subject(self) -> str:
        return f"user:{self.uid}"
