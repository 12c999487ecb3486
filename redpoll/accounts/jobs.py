"""The accounts package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job


@dataclass(frozen=True)
class SignUpJob(Job):
    """The journal of a sign-up (users.py), held from the id's draw to the
    user's record: released with the user counted; if its caller died, a
    worker settles it (account.settle_sign_up): counted if the user was
    written, else made void and the login freed."""

    kind: ClassVar[str] = "sign_up"
    uid: int
    login: str

    def subject(self) -> str:
        return f"user:{self.uid}"
