"""Posting a status (SPEC 2 and 5)."""
from __future__ import annotations

from redis.exceptions import ResponseError

from . import conversation, delivery, events, keys, validate
from .errors import UserNotFound
from .jobs import JobQueue
from .models import Status, now_ms
from .settings import Settings
from .store import Store


async def post(store: Store, queue: JobQueue, settings: Settings, author_id, text,
               extra=None, in_reply_to=None) -> Status:
    """Create a status and deliver it.

    The status hash is one HSET (atomic); recording it in the author's profile
    and counter is one script; delivery to the author's own home, the public
    timeline and the first batch of followers happens here, the rest in
    chained jobs. A crash after the HSET and before the fan-out job is held
    leaves an uncounted or undelivered status; after that, nothing is lost.
    """
    author_id = validate.an_id(author_id, "author_id")
    text = validate.status_text(text)
    extra = validate.extra_fields(extra)
    await queue.check_capacity()
    # Check the author before taking an id: a failed post must write nothing,
    # not even a counter bump (errors.py's promise).
    login = await store.client.hget(keys.user(author_id), "login")
    if login is None:
        raise UserNotFound(f"user {author_id} does not exist")
    # replies, mentions, hashtags: read (and refused) before anything is written
    conv = await conversation.prepare(store, author_id, text, in_reply_to)
    extra = {**extra, **conv.to_extra()}
    sid = await store.client.incr(keys.STATUS_SEQ)
    status = Status(id=sid, text=text, created_at=now_ms(), user_id=author_id,
                    login=login.decode(), extra=extra)
    await store.client.hset(keys.status(sid), mapping=status.to_hash())
    try:
        await store.run("record_post", [keys.profile(author_id), keys.user(author_id)], [sid])
    except ResponseError as exc:  # NOUSER: the author vanished between reads
        await store.client.delete(keys.status(sid))
        raise UserNotFound(f"user {author_id} does not exist") from exc
    # The whole fan-out is queued first, held by this call (job_hold.lua): the
    # call runs the first step itself and then hands the rest to the workers;
    # if the call dies in between, a worker takes the held job over.
    only = conversation.replies_only_to_followers_of(status)
    job = {"t": "fanout", "sid": sid, "aid": author_id, **delivery.Cursor().to_job()}
    if not status.listed:
        job["unl"] = 1  # unlisted: kept off the public timeline (delivery.step)
    if only:
        job["rt"] = only  # a reply: followers of its author who follow this account
    held = await queue.hold(job)
    # the conversation links go in the held job's first step (replayed with it)
    await conversation.after_post(store, status)
    cursor = await delivery.step(store, "deliver", sid, author_id, delivery.Cursor(),
                                 settings.fanout_batch, listed=status.listed, only_following=only)
    await queue.release(held, None if cursor is None else {**job, **cursor.to_job()})
    await store.client.hincrby(keys.STATS, "statuses", 1)
    await events.publish(store, events.update_event(status))
    return status
