"""Reading statuses: one, or many in one round trip."""
from __future__ import annotations

from typing import Iterable

from . import keys, validate
from .errors import StatusNotFound
from .models import Status
from .store import Store


async def get_statuses(store: Store, ids: Iterable) -> list[Status]:
    """Statuses in the order given; deleted or unknown ids are skipped.

    Every hash is read (that is how a delete is seen at once), but a status
    never changes once posted, so one already decoded is taken from
    ``store.status_records`` instead of decoded again."""
    return await read_statuses(store, [validate.an_id(i, "status_id") for i in ids])


async def read_statuses(store: Store, ids: list[int]) -> list[Status]:
    """As :func:`get_statuses`, for ids already known to be well formed
    (read from a timeline)."""
    if not ids:
        return []
    epoch, *rows = await store.batch([("GET", keys.EPOCH),
                                      *(("HGETALL", keys.status(sid)) for sid in ids)])
    await store.memos_valid(epoch)
    return [s for s in decode_statuses(store, ids, rows) if s is not None]


def decode_statuses(store: Store, ids: list[int], rows: list[list]) -> list[Status | None]:
    """Statuses from their HGETALL rows, None for a missing or deleted one; a
    status already decoded in this process is taken from
    ``store.status_records`` (a status never changes once posted). The
    caller has checked ``store.memos_valid`` in the batch that read the rows."""
    records = store.status_records
    out: list[Status | None] = []
    for sid, row in zip(ids, rows):
        if not row or b"deleted" in row[0::2]:
            out.append(None)
            continue
        status = records.get(sid)
        if status is None:
            status = Status.from_hash(dict(zip(row[0::2], row[1::2])))
            if status is not None:
                records.put(sid, status)
        out.append(status)
    return out


async def get_status(store: Store, sid) -> Status:
    sid = validate.an_id(sid, "status_id")
    status = Status.from_hash(await store.client.hgetall(keys.status(sid)))
    if status is None:
        raise StatusNotFound(f"status {sid} does not exist")
    return status


async def get_status_or_none(store: Store, sid: int) -> Status | None:
    """The status, or None when missing or deleted."""
    return Status.from_hash(await store.client.hgetall(keys.status(sid)))
