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


async def read_statuses(store: Store, ids: list[int], *, seen_live: bool = False) -> list[Status]:
    """As :func:`get_statuses`, for ids already known to be well formed
    (read from a timeline). ``seen_live``: the caller has just seen each of
    them exist undeleted (read_page.lua), so only those not yet decoded in
    this process are read."""
    if not ids:
        return []
    records = store.status_records
    if seen_live:
        kept = [records.get(sid) for sid in ids]
        missing = [sid for sid, status in zip(ids, kept) if status is None]
        if not missing:
            return kept
        fetched = dict(zip(missing, await _decode(store, missing)))
        return [s for s in (k or fetched[sid] for sid, k in zip(ids, kept)) if s is not None]
    return [s for s in await _decode(store, ids) if s is not None]


async def _decode(store: Store, ids: list[int]) -> list[Status | None]:
    """Each status read and decoded (kept in ``store.status_records``); None
    for a missing or deleted one."""
    records = store.status_records
    out: list[Status | None] = []
    for sid, row in zip(ids, await store.hash_rows([keys.status(sid) for sid in ids])):
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
