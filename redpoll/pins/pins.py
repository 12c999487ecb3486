"""Pins (Mastodon's featured statuses): an account pins its own statuses
to the top of its profile.

As Mastodon's StatusPinValidator: only one's own status, not a boost, not a
direct one, at most limits.PINS_MAX. The pins are one sorted set on the
author's slot, ``keys.pins(uid)`` (status id -> pin time); a status's
``pinned`` flag is read with its other flags (redpoll.records.state). Pinning is one script (pin.lua: the bound's check and the add in one step,
idempotent); unpinning one ZREM. A pinned status that is deleted leaves its
id behind: readers skip it, and it is dropped (idempotent ZREM) when the
pins are read or when the bound is met, so it never holds a place.
"""

from __future__ import annotations

from ..core import keys, limits, validate
from ..core.errors import LimitReached, StatusNotFound, ValidationError
from ..core.models import DIRECT, Status, now_ms
from ..records.statuses import get_status_or_none, read_statuses
from ..storage.store import Store


def check(status: Status, uid: int) -> None:
    """Whether ``uid`` may pin ``status`` (ValidationError naming why not)."""
    if status.user_id != uid:
        raise ValidationError("id", "Only your own posts can be pinned")
    if status.reblog_of:
        raise ValidationError("id", "A boost cannot be pinned")
    if status.extra.get("visibility") == DIRECT:
        raise ValidationError("id", "A direct post cannot be pinned")


async def pin(store: Store, uid, sid) -> Status:
    """Pin ``sid`` to ``uid``'s profile; the status. StatusNotFound for an
    unknown one; ValidationError for a status that may not be pinned or
    when limits.PINS_MAX are pinned already."""
    uid, sid = validate.an_id(uid, "user_id"), validate.an_id(sid, "status_id")
    status = await get_status_or_none(store, sid)
    if status is None:
        raise StatusNotFound(f"status {sid} does not exist")
    check(status, uid)
    for attempt in range(2):
        try:
            await store.run("pin", [keys.pins(uid)], [sid, now_ms(), limits.PINS_MAX])
            return status
        except LimitReached:
            if attempt or not await _drop_gone(store, uid):
                raise ValidationError(
                    "id", f"at most {limits.PINS_MAX} posts can be pinned"
                ) from None
    return status


async def unpin(store: Store, uid, sid) -> Status:
    """Unpin ``sid`` (a no-op if it is not pinned); the status."""
    uid, sid = validate.an_id(uid, "user_id"), validate.an_id(sid, "status_id")
    status = await get_status_or_none(store, sid)
    if status is None:
        raise StatusNotFound(f"status {sid} does not exist")
    await store.zrem(keys.pins(uid), sid)
    return status


async def pinned(store: Store, uid) -> list[Status]:
    """``uid``'s pinned statuses, the last pinned first (deleted ones
    dropped)."""
    uid = validate.an_id(uid, "user_id")
    ids = [int(i) for i in await store.zrevrange(keys.pins(uid), 0, limits.PINS_MAX - 1)]
    statuses = await read_statuses(store, ids)
    if len(statuses) < len(ids):
        await _drop_gone(store, uid, ids, statuses)
    return statuses


async def _drop_gone(
    store: Store, uid: int, ids: list[int] | None = None, found: list[Status] | None = None
) -> int:
    """Drop the pins whose status is gone; how many."""
    if ids is None:
        ids = [int(i) for i in await store.zrange(keys.pins(uid), 0, -1)]
        found = await read_statuses(store, ids)
    gone = set(ids) - {s.id for s in found or ()}
    if gone:
        await store.zrem(keys.pins(uid), *gone)
    return len(gone)
