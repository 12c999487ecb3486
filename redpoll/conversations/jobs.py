"""The conversations package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py (IndexJob's: redpoll.search.handlers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job, StatusJob


@dataclass(frozen=True)
class TagFollowJob(Job):
    """The journal of following or unfollowing a hashtag (tags.py)."""

    kind: ClassVar[str] = "tag_follow"
    uid: int
    tag: str

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class IndexJob(StatusJob):
    """Bring the full-text index of a status to the status as it is now,
    queued by posting on its post, each edit and its delete; handled by
    redpoll.search.handlers (redpoll.search.index.index_status: idempotent),
    a package above posting, so the record lives here."""

    kind: ClassVar[str] = "fts_index"
