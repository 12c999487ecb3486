"""The conversations package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class TagFollowJob(Job):
    """The journal of following or unfollowing a hashtag (tags.py)."""

    kind: ClassVar[str] = "tag_follow"
    uid: int
    tag: str

    def subject(self) -> str:
        return f"user:{self.uid}"
