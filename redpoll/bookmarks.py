"""Bookmarks (issue 9): private to their user, so one key on the user's slot
and one write each way (ZADD NX / ZREM: atomic, idempotent)."""
from __future__ import annotations

from . import keys, validate
from .errors import StatusNotFound
from .favourites import scored_page
from .store import Store


async def set_bookmark(store: Store, uid, sid, on: bool) -> bool:
    """Bookmark (``on``) or unbookmark a status; twice is still once. True if
    it changed. StatusNotFound (nothing written) for a missing or deleted
    status when bookmarking."""
    uid = validate.an_id(uid, "user_id")
    sid = validate.an_id(sid, "status_id")
    if on:
        found, deleted = await store.client.hmget(keys.status(sid), ["id", "deleted"])
        if found is None or deleted is not None:
            raise StatusNotFound(f"status {sid} does not exist")
        mark = await store.client.incr(keys.INTERACTION_SEQ)  # unique, ordered: the cursor
        return bool(await store.client.zadd(keys.bookmarks(uid), {sid: mark}, nx=True))
    return bool(await store.client.zrem(keys.bookmarks(uid), sid))


async def bookmarks_page(store: Store, uid, **cursors) -> list[tuple[int, int]]:
    """(status id, bookmark id) newest bookmark first, by bookmark-id cursors."""
    return await scored_page(store, keys.bookmarks(validate.an_id(uid, "user_id")), **cursors)
