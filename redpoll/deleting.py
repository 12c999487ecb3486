"""Deleting a status (SPEC 5, 6)."""
from __future__ import annotations

from redis.exceptions import ResponseError

from . import conversation, events, keys, limits, validate
from .errors import Forbidden, StatusNotFound
from .jobs import JobQueue
from .models import Status, now_ms
from .store import Store


async def delete_status(store: Store, queue: JobQueue, sid, by_user) -> None:
    """Delete a status as its author.

    Idempotent and re-runnable: ``delete_mark`` marks the status deleted (it
    vanishes from every read at once) and checks the owner; ``delete_own``
    uncounts it at most once; the cleanup of follower and list timelines is a
    chain of jobs; the status hash itself goes last, so a delete cut short by
    a crash is finished by calling it again.
    """
    sid = validate.an_id(sid, "status_id")
    by_user = validate.an_id(by_user, "user_id")
    raw = await store.client.hgetall(keys.status(sid))
    try:
        now = now_ms()
        mark = ([keys.status(sid)], [by_user]) if store.cluster else (
            [keys.status(sid), keys.DELETED_STATUSES],
            [by_user, now, now - limits.DELETED_IDS_KEPT_S * 1000, limits.DELETED_IDS_MAX])
        first, author = await store.run("delete_mark", *mark)
    except ResponseError as exc:
        if "FORBIDDEN" in str(exc):
            raise Forbidden(f"status {sid} belongs to another user") from exc
        raise StatusNotFound(f"status {sid} does not exist") from exc
    author = int(author)
    uncounted = await store.run(
        "delete_own", [keys.profile(author), keys.home(author), keys.user(author)], [sid])
    await store.run("undeliver", [keys.PUBLIC_TIMELINE], [sid])  # idempotent
    await queue.enqueue({"t": "cleanup", "sid": sid, "aid": author, "ph": "home", "cur": 0})
    if uncounted:
        await store.client.hincrby(keys.STATS, "deleted", 1)
    if raw:  # out of its thread, hashtags and the mentioned's homes (idempotent)
        await conversation.after_delete(store, Status.from_hash(
            {k: v for k, v in raw.items() if k != b"deleted"}))
    if first and raw:
        await events.publish(store, events.delete_event(Status.from_hash(raw)))
    await store.client.delete(keys.status(sid))
