"""The media package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class MediaJob(Job):
    """The journal of an upload (redpoll.media.uploads), held from before
    its record is written until it is ready: if its producer dies, a worker
    settles it: a finished upload stays, an unfinished one is given up (its
    record a tombstone, its files deleted)."""

    kind: ClassVar[str] = "media"
    owner: int
    mid: int

    def subject(self) -> str:
        return f"user:{self.owner}"


@dataclass(frozen=True)
class ProfileImageJob(Job):
    """The journal of a new avatar or header (redpoll.media.profile_images):
    ``files`` the new stored names, ``old`` those it replaces (space-separated).
    Settled by a worker if its producer died: of both, the files the user
    record does not name are deleted."""

    kind: ClassVar[str] = "profile_image"
    uid: int
    image: str
    files: str
    old: str = ""

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class MediaFilesJob(Job):
    """Delete stored media files whose records are gone (a deleted status,
    a replaced avatar, a purged account); idempotent."""

    kind: ClassVar[str] = "media_files"
    owner: int
    names: tuple[str, ...] = ()

    def subject(self) -> str:
        return f"user:{self.owner}"


@dataclass(frozen=True)
class MediaSweepJob(Job):
    """Remove uploads never attached to a status once they are
    limits.MEDIA_UNATTACHED_TTL_S old, as of ``now`` (ms; 0: the clock)."""

    kind: ClassVar[str] = "media_sweep"
    time_limit_s: ClassVar[float] = 300.0
    now: int = 0

    def subject(self) -> str:
        return "media:sweep"
