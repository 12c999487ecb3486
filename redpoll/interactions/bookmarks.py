"""Bookmarks: private to their user, so one key on the user's slot
and one write each way (bookmark.lua: the bound's check and ZADD NX in one
step / ZREM: atomic, idempotent). At most limits.BOOKMARKS_MAX per user."""

from __future__ import annotations

from ..core import keys, limits, validate
from ..core.errors import LimitReached, StatusNotFound, ValidationError
from ..storage.store import Store
from .favourites import scored_page


async def set_bookmark(store: Store, uid, sid, on: bool) -> bool:
    """Bookmark (``on``) or unbookmark a status; twice is still once. True if
    it changed. StatusNotFound (nothing written) for a missing or deleted
    status when bookmarking."""
    uid = validate.an_id(uid, "user_id")
    sid = validate.an_id(sid, "status_id")
    if on:
        found, deleted = await store.hmget(keys.status(sid), ["id", "deleted"])
        if found is None or deleted is not None:
            raise StatusNotFound(f"status {sid} does not exist")
        mark = await store.incr(keys.INTERACTION_SEQ)  # unique, ordered: the cursor
        try:  # the cap's check and the add in one script (bookmark.lua)
            return bool(
                await store.run(
                    "bookmark", [keys.bookmarks(uid)], [sid, mark, limits.BOOKMARKS_MAX]
                )
            )
        except LimitReached:
            raise ValidationError("id", f"at most {limits.BOOKMARKS_MAX} bookmarks") from None
    return bool(await store.zrem(keys.bookmarks(uid), sid))


async def bookmarks_page(store: Store, uid, **cursors) -> list[tuple[int, int]]:
    """(status id, bookmark id) newest bookmark first, by bookmark-id cursors."""
    return await scored_page(store, keys.bookmarks(validate.an_id(uid, "user_id")), **cursors)
