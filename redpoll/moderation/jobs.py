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


@dataclass(frozen=True)
class ApprovalJob(Job):
    """The journal of a pending account's approval (admin_accounts.approve):
    held before the approval's first write, released in one step with the
    member's mail queued (job_next.lua), so an approval cut short anywhere
    is finished, mail and all, by a worker's replay (every step idempotent;
    the audit entry and the mail at least once)."""

    kind: ClassVar[str] = "approve_account"
    uid: int
    actor: int  # 0: the operator

    def subject(self) -> str:
        return f"user:{self.uid}"
