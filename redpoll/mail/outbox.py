"""Queueing a mail (never sent in the request that asks for it): one job,
bounded per address (limits.MAIL_PER_ADDRESS: past it the mail is dropped
and logged, so no one can flood a mailbox through the server), and nothing
at all while e-mail is off."""

from __future__ import annotations

import hashlib
import logging

from ..accounts import ratelimit
from ..bus.queue import JobQueue
from ..core import limits
from ..core.settings import Settings
from ..storage.store import Store
from .jobs import MailJob

log = logging.getLogger("redpoll.mail")


def address_bucket(address: str) -> str:
    """A rate-limit bucket of one address (by digest: the address itself is
    not spelled in a key name)."""
    return "mail:" + hashlib.sha256(address.strip().lower().encode()).hexdigest()[:32]


async def admitted(store: Store, settings: Settings, job: MailJob, address: str) -> bool:
    """Whether ``job`` may be sent to ``address`` now (e-mail on, the
    address under its share of mails: this counts it); for a caller that
    queues the job itself, in the step of its own change."""
    if not settings.mail:
        return False
    state = await ratelimit.hit(store, address_bucket(address) + ":sent", limits.MAIL_PER_ADDRESS)
    if state is not None and state.exceeded:
        log.warning(
            "mail not sent: too many for one address",
            extra={"mail": job.message, "uid": job.uid},
        )
        return False
    return True


async def queue(store: Store, settings: Settings, job: MailJob, address: str) -> bool:
    """Queue ``job`` to ``address``; False if e-mail is off or the address
    had its share of mails for now."""
    if not await admitted(store, settings, job, address):
        return False
    await JobQueue(store).enqueue(job)
    return True
