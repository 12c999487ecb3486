"""Reading statuses: one, or many in one round trip.

Decoded statuses are kept per process under the one rule of redpoll.core.memo:
a read sends, for a status kept at version ``v``, only ``HGET v`` and takes
the kept record when the version is unchanged; it sends ``HGETALL`` for the
others (and for a kept one whose version changed, in a second round trip).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core import keys, validate
from ..core.errors import StatusNotFound
from ..core.models import Status
from ..storage.store import Store


async def get_statuses(store: Store, ids: Iterable) -> list[Status]:
    """Statuses in the order given; deleted or unknown ids are skipped."""
    return await read_statuses(store, [validate.an_id(i, "status_id") for i in ids])


def reads(store: Store, ids: list[int]) -> list[tuple]:
    """The commands that read ``ids`` for :func:`settle`, to send in the
    caller's batch after ``GET keys.EPOCH``: the version of a kept status,
    the whole hash of the others."""
    kept = store.statuses.kept_version
    return [
        ("HGETALL", keys.status(sid)) if kept(sid) is None else ("HGET", keys.status(sid), "v")
        for sid in ids
    ]


async def settle(store: Store, ids: list[int], replies: list) -> list[Status | None]:
    """Statuses from the replies to :func:`reads` (None: missing or deleted).
    The caller checked ``store.memos_valid`` in the same batch and, if it
    failed, sends :func:`reads` again (the memo is empty then)."""
    memo = store.statuses
    out: list[Status | None] = []
    changed = []
    for sid, reply in zip(ids, replies):
        if type(reply) is list:  # a whole hash (HGETALL)
            out.append(_decode(store, sid, reply))
            continue
        status = memo.get(sid, reply)
        if status is None:
            changed.append(len(out))
        out.append(status)
    if changed:  # kept, but the version moved: read those again, whole
        rows = await store.batch([("HGETALL", keys.status(ids[i])) for i in changed])
        for i, row in zip(changed, rows):
            out[i] = _decode(store, ids[i], row)
    return out


def _decode(store: Store, sid: int, row: list) -> Status | None:
    fields = row[0::2]
    if not row or b"deleted" in fields:
        store.statuses.discard(sid)
        return None
    status = Status.from_hash(dict(zip(fields, row[1::2])))
    store.statuses.put(sid, row[2 * fields.index(b"v") + 1] if b"v" in fields else None, status)
    return status


async def read_statuses(store: Store, ids: list[int]) -> list[Status]:
    """As :func:`get_statuses`, for ids already known to be well formed
    (read from a timeline)."""
    if not ids:
        return []
    epoch, *replies = await store.batch([("GET", keys.EPOCH), *reads(store, ids)])
    if not await store.memos_valid(epoch):
        replies = await store.batch(reads(store, ids))
    return [s for s in await settle(store, ids, replies) if s is not None]


async def get_status(store: Store, sid) -> Status:
    sid = validate.an_id(sid, "status_id")
    status = Status.from_hash(await store.hgetall(keys.status(sid)))
    if status is None:
        raise StatusNotFound(f"status {sid} does not exist")
    return status


async def get_status_or_none(store: Store, sid: int) -> Status | None:
    """The status, or None when missing or deleted."""
    return Status.from_hash(await store.hgetall(keys.status(sid)))
