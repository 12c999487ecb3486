"""Posting a status (SPEC 2 and 5)."""
from __future__ import annotations

from redis.exceptions import ResponseError

from . import delivery, events, keys, validate
from .errors import UserNotFound
from .jobs import JobQueue
from .models import Status, now_ms
from .settings import Settings
from .store import Store


async def post(store: Store, queue: JobQueue, settings: Settings, author_id, text,
               extra=None) -> Status:
    """Create a status and deliver it.

    The status hash is one HSET (atomic); recording it in the author's profile
    and counter is one script; delivery to the author's own home and the first
    batch of followers happens here, the rest in chained jobs. A crash after
    the HSET leaves an uncounted status that no timeline shows.
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
    sid = await store.client.incr(keys.STATUS_SEQ)
    status = Status(id=sid, text=text, created_at=now_ms(), user_id=author_id,
                    login=login.decode(), extra=extra)
    await store.client.hset(keys.status(sid), mapping=status.to_hash())
    try:
        await store.run("record_post", [keys.profile(author_id), keys.user(author_id)], [sid])
    except ResponseError as exc:  # NOUSER: the author vanished between reads
        await store.client.delete(keys.status(sid))
        raise UserNotFound(f"user {author_id} does not exist") from exc
    cursor = await delivery.step(store, "deliver", sid, author_id, delivery.Cursor(),
                                 settings.fanout_batch, also=(keys.home(author_id), keys.PUBLIC_TIMELINE))
    if cursor is not None:
        await queue.enqueue({"t": "fanout", "sid": sid, "aid": author_id, **cursor.to_job()})
    await store.client.hincrby(keys.STATS, "statuses", 1)
    await events.publish(store, events.update_event(status))
    return status
