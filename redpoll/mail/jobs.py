"""The mail package's background job as a record (redpoll.bus.queue: the
queue and its codec); its handler is in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job, MalformedJob

#: What a MailJob sends (redpoll.mail.messages builds each)
MESSAGES = ("confirm", "change", "changing", "reset", "warning", "approved")


@dataclass(frozen=True)
class MailJob(Job):
    """Send message ``message`` to account ``uid`` at ``to`` ('' for the
    account's address, read when sent); ``text`` is what the message quotes
    (a moderator's action and warning: ``<action>\\n<text>``); ``attempt``
    counts the tries before (the retries are jobs for later,
    redpoll.mail.delivery)."""

    kind: ClassVar[str] = "mail"
    time_limit_s: ClassVar[float] = 90.0
    max_attempts: ClassVar[int] = 3  # its own retries are jobs for later
    uid: int
    message: str
    to: str = ""
    text: str = ""
    attempt: int = 0

    def check(self) -> None:
        if self.message not in MESSAGES:
            raise MalformedJob(f"unknown message {self.message!r}")

    def subject(self) -> str:
        return f"user:{self.uid}"
