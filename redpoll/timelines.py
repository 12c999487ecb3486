"""Reading timelines by id cursors, newest first (SPEC 3).

Cursors work as Mastodon's: ``max_id`` returns statuses older than it,
``since_id`` the newest ones newer than it, ``min_id`` the ones right above
it; a page never repeats or skips a status when new ones arrive. The ids of a
page come from one script, the statuses from one pipelined round trip.
"""
from __future__ import annotations

from redis.exceptions import ResponseError

from . import keys, validate
from .errors import ListNotFound, UserNotFound
from .models import Status
from .statuses import get_statuses
from .store import Store


def _cursors(max_id, since_id, min_id, limit) -> list:
    return [validate.optional_id(max_id, "max_id") or "",
            validate.optional_id(since_id, "since_id") or "",
            validate.optional_id(min_id, "min_id") or "",
            validate.page_limit(limit)]


async def _list_page(store: Store, timeline: str, owner_hash: str, field: str, cursors: list):
    return await store.run("read_page", [timeline, owner_hash], [*cursors, field])


async def home(store: Store, uid, *, max_id=None, since_id=None, min_id=None, limit=None) -> list[Status]:
    uid = validate.an_id(uid, "user_id")
    cursors = _cursors(max_id, since_id, min_id, limit)
    try:
        ids = await _list_page(store, keys.home(uid), keys.user(uid), "id", cursors)
    except ResponseError as exc:
        raise UserNotFound(f"user {uid} does not exist") from exc
    return await get_statuses(store, ids)


async def list_timeline(store: Store, owner, lid, *, max_id=None, since_id=None, min_id=None,
                        limit=None) -> list[Status]:
    owner, lid = validate.an_id(owner, "user_id"), validate.an_id(lid, "list_id")
    cursors = _cursors(max_id, since_id, min_id, limit)
    try:
        ids = await _list_page(store, keys.list_timeline(owner, lid), keys.lists(owner),
                               str(lid), cursors)
    except ResponseError as exc:
        raise ListNotFound(f"list {lid} does not exist") from exc
    return await get_statuses(store, ids)


async def profile(store: Store, uid, *, max_id=None, since_id=None, min_id=None,
                  limit=None) -> list[Status]:
    """A user's own statuses; the profile is a sorted set scored by id."""
    uid = validate.an_id(uid, "user_id")
    max_id, since_id, min_id, limit = _cursors(max_id, since_id, min_id, limit)
    top = f"({max_id}" if max_id else "+inf"
    key = keys.profile(uid)
    pipe = store.pipeline()
    pipe.exists(keys.user(uid))
    if min_id:
        pipe.zrangebyscore(key, f"({min_id}", top, start=0, num=limit)
    else:
        pipe.zrevrangebyscore(key, top, f"({since_id}" if since_id else "-inf", start=0, num=limit)
    exists, ids = await pipe.execute()
    if not exists:
        raise UserNotFound(f"user {uid} does not exist")
    if min_id:
        ids.reverse()
    return await get_statuses(store, ids)
