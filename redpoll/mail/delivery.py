"""Sending one mail (the worker's handler of jobs.MailJob), decided when it
is sent: the account still exists, what the mail is about still holds (a
confirmation for an address still awaiting it, a reset for an account that
can sign in), and its single-use link is made now (redpoll.mail.links).

An SMTP server that cannot be reached, drops the connection or answers a
temporary error (4xx) gets the mail again later (JobQueue.enqueue_at),
waiting limits.MAIL_RETRY_BASE_S x 4^n, for limits.MAIL_ATTEMPTS tries,
then it is given up and logged; a permanent refusal (5xx) is given up at
once and logged. Every retry decides again and makes a new link (the one
of a mail that may have got through after all stops working).

At-least-once like every job: a run cut short after the server took the
mail may send it twice (the later one's link is the one that works).
"""

from __future__ import annotations

import logging
import time

from ..accounts import standing
from ..bus.queue import JobQueue
from ..core import keys, limits
from ..core.errors import UserNotFound
from ..core.settings import Settings
from ..records import users
from ..storage.store import Store
from . import links, messages, smtp
from .jobs import MailJob

log = logging.getLogger("redpoll.mail")

#: the pages the links open (redpoll.api.mail)
CONFIRM_PATH = "/auth/confirmation?confirmation_token="
RESET_PATH = "/auth/password/edit?reset_password_token="


def retry_delay_s(attempt: int) -> float:
    return min(limits.MAIL_RETRY_BASE_S * 4**attempt, limits.MAIL_RETRY_MAX_S)


async def _address(store: Store, job: MailJob) -> str | None:
    if job.to:
        return job.to
    raw = await store.hget(keys.secrets(job.uid), "email")
    return raw.decode() if raw is not None else None


async def _link(store: Store, settings: Settings, job: MailJob, to: str) -> str | None:
    """The link ``job`` carries, made now; None if the mail is no longer due."""
    base = settings.public_url or ""
    if job.message == "confirm":
        if not await standing.unconfirmed(store, job.uid):
            return None  # confirmed meanwhile
        return base + CONFIRM_PATH + await links.issue(store, job.uid, "confirm", to)
    if job.message == "change":
        if (await links.pending(store, job.uid) or "").lower() != to.lower():
            return None  # another change asked for since, or done
        return base + CONFIRM_PATH + await links.issue(store, job.uid, "confirm", to)
    if job.message == "reset":
        return base + RESET_PATH + await links.issue(store, job.uid, "reset", to)
    return ""


async def send(store: Store, settings: Settings, job: MailJob) -> str:
    """One try of ``job``: sent, skipped, retry, given up or refused."""
    if not settings.mail:
        log.info("mail not sent: e-mail is off", extra={"mail": job.message, "uid": job.uid})
        return "skipped"
    try:
        user = await users.get_user(store, job.uid)
    except UserNotFound:
        return "skipped"
    to = await _address(store, job)
    if to is None or (user.suspended and job.message != "warning"):
        return "skipped"
    link = await _link(store, settings, job, to)
    if link is None:
        return "skipped"
    msg = messages.build(
        settings, to, messages.draft(settings, job.message, user.login, link=link, text=job.text)
    )
    try:
        await smtp.deliver(settings, msg)
    except smtp.Permanent as exc:
        log.warning(
            "mail refused by the SMTP server, given up",
            extra={"mail": job.message, "uid": job.uid, "reason": str(exc)[:300]},
        )
        return "refused"
    except smtp.Temporary as exc:
        if job.attempt + 1 >= limits.MAIL_ATTEMPTS:
            log.warning(
                "mail given up",
                extra={
                    "mail": job.message,
                    "uid": job.uid,
                    "tries": job.attempt + 1,
                    "reason": str(exc)[:300],
                },
            )
            return "given up"
        due = int((time.time() + retry_delay_s(job.attempt)) * 1000)
        again = MailJob(job.uid, job.message, job.to, job.text, job.attempt + 1)
        await JobQueue(store).enqueue_at(again, due)
        log.info(
            "mail not sent yet, tried again later",
            extra={
                "mail": job.message,
                "uid": job.uid,
                "tries": job.attempt + 1,
                "reason": str(exc)[:300],
            },
        )
        return "retry"
    log.info("mail sent", extra={"mail": job.message, "uid": job.uid})
    return "sent"
