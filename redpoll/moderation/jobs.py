"""The moderation package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class PurgeAccountJob(Job):
    """The journal of an account's purge (moderation.purge_account): every
    step idempotent, replayed whole; released with the account counted out
    of the users, once (held with a claim, job_hold_once.lua)."""

    kind: ClassVar[str] = "purge_account"
    uid: int
    login: str

    def subject(self) -> str:
        return f"user:{self.uid}"
