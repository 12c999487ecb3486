"""Delivery: an activity POSTed, signed by its sender, to one inbox, by a
job (jobs.DeliverJob), so posting never waits for another server. A try
that fails for a reason that may pass (no answer, 5xx, 408, 429) is queued
again for later (JobQueue.enqueue_at), waiting limits.FED_RETRY_BASE_S x
4^n, capped at limits.FED_RETRY_MAX_S, for limits.FED_DELIVERY_ATTEMPTS
tries (about four days); another 4xx is final. A host whose deliveries
failed limits.FED_HOST_FAILURES_UNAVAILABLE times in a row is unavailable:
its deliveries are dropped until it is heard from (a delivery to it
succeeds, or it sends us a signed activity).

At-least-once: a delivery cut short is run again, and receivers drop an
activity id they already took."""

from __future__ import annotations

import json
import logging
import time

from ..bus.queue import JobQueue
from ..core import limits
from ..core.errors import UserNotFound
from ..core.settings import Settings
from ..records import users
from ..storage.store import Store
from . import client, documents, domains, keys, remote
from .jobs import DeliverJob
from .remote import host_of

log = logging.getLogger("redpoll.federation")


async def send(store: Store, queue: JobQueue, sender: int, inbox: str, activity: dict) -> None:
    """Queue ``activity`` for ``inbox``, signed by local account ``sender``
    (0: the server's actor)."""
    if inbox:
        await queue.enqueue(
            DeliverJob(sender=sender, inbox=inbox, body=json.dumps(activity, separators=(",", ":")))
        )


async def heard_from(store: Store, host: str) -> None:
    await store.delete(keys.host_failures(host))


async def unavailable(store: Store, host: str) -> bool:
    failures = await store.get(keys.host_failures(host))
    return int(failures or 0) >= limits.FED_HOST_FAILURES_UNAVAILABLE


def retry_delay_s(attempt: int) -> float:
    return min(limits.FED_RETRY_BASE_S * 4**attempt, limits.FED_RETRY_MAX_S)


async def deliver(store: Store, queue: JobQueue, settings: Settings, job: DeliverJob) -> str:
    """One try; what became of it: delivered, dropped, retry, given up."""
    base = (settings.public_url or "").rstrip("/")
    host = host_of(job.inbox)
    if not base:
        return "dropped"
    if await unavailable(store, host) or await domains.suspended(store, host):
        return "dropped"
    if job.sender:
        try:
            login = (await users.get_user(store, job.sender)).login
        except UserNotFound:
            return "dropped"  # the sender's account is gone
        signer = client.Signer(
            await remote.key_pair(store, job.sender), documents.key_id(base, login)
        )
    else:
        signer = await remote.instance_signer(store, base)
    # RFC 9421 for a server that signed to us with it lately, draft-cavage otherwise
    rfc9421 = bool(await store.get(keys.rfc9421_host(host)))
    try:
        status = await client.post_activity(
            job.inbox,
            job.body.encode(),
            signer,
            loopback=settings.federation_loopback,
            rfc9421=rfc9421,
        )
    except client.FetchFailed as exc:
        status, reason = 0, str(exc)
    else:
        reason = f"answered {status}"
    if 200 <= status < 300:
        await heard_from(store, host)
        return "delivered"
    if 400 <= status < 500 and status not in (408, 429):
        log.info("delivery to %s refused: %s", job.inbox, reason)
        return "dropped"
    await store.incr(keys.host_failures(host))
    if job.attempt + 1 >= limits.FED_DELIVERY_ATTEMPTS:
        log.warning(
            "delivery to %s given up after %s tries: %s", job.inbox, job.attempt + 1, reason
        )
        return "given up"
    due = int((time.time() + retry_delay_s(job.attempt)) * 1000)
    await queue.enqueue_at(DeliverJob(job.sender, job.inbox, job.body, job.attempt + 1), due)
    return "retry"
