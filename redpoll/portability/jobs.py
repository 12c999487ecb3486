"""The portability package's background jobs as records (redpoll.bus.queue:
the queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class ImportJob(Job):
    """The next step of ``uid``'s CSV import ``iid``, chained until it is
    finished (redpoll.portability.imports.step)."""

    kind: ClassVar[str] = "csv_import"
    # a step resolves up to limits.IMPORT_STEP accounts, some on other servers
    time_limit_s: ClassVar[float] = 300.0
    uid: int
    iid: int

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class ArchiveJob(Job):
    """The next step of ``uid``'s archive ``aid`` of their posts and media,
    chained until it is packed (redpoll.portability.archive.step). It carries
    what the archive's record is made of (when it was asked for, the random
    part of its file's name, the base of its links), so a start cut short
    after holding it is finished by its first step."""

    kind: ClassVar[str] = "archive"
    # a step renders limits.ARCHIVE_STATUS_STEP statuses; the last one packs
    # every media file of the member's into the ZIP
    time_limit_s: ClassVar[float] = 900.0
    uid: int
    aid: int
    made: int
    token: str
    base: str

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class ArchiveExpireJob(Job):
    """Remove ``uid``'s archive ``aid`` (its ZIP: ``file``) once past
    limits.ARCHIVE_KEPT_S (redpoll.portability.archive.expire), queued for
    then; the file named here goes even if the record went first (an
    account purged)."""

    kind: ClassVar[str] = "archive_expire"
    uid: int
    aid: int
    file: str

    def subject(self) -> str:
        return f"user:{self.uid}"
