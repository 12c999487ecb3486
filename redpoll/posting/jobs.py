"""The posting package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job, StatusJob


@dataclass(frozen=True)
class PostJob(StatusJob):
    """The journal of a post: the status's record, written by its first run
    (posting.apply_post), which also delivers the first batch."""

    kind: ClassVar[str] = "post"
    record: dict = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class EditJob(StatusJob):
    """The journal of an edit (posting.editing): the status as it was and as
    the edit makes it (Status.to_hash) and when the edit was made (its
    ``edited_at``). Its first run is the call itself; a replay does what
    follows the edit if, and only if, the record holds this edit."""

    kind: ClassVar[str] = "edit"
    old: dict = dataclasses.field(default_factory=dict)
    new: dict = dataclasses.field(default_factory=dict)
    at: int = 0


@dataclass(frozen=True)
class DeleteJob(StatusJob):
    """The journal of a delete; ``snapshot`` is the status's hash as it was
    (for the delete event)."""

    kind: ClassVar[str] = "delete"
    snapshot: dict = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class BoostJob(Job):
    """The journal of a boost (boosts.py): ``bid`` the boost status's id,
    ``op`` the operation id, ``at`` its time, ``login`` the booster's."""

    kind: ClassVar[str] = "boost"
    uid: int
    sid: int
    op: int
    bid: int
    login: str
    at: int

    def subject(self) -> str:
        return f"status:{self.sid}"
