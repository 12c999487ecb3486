"""Reading statuses: one, or many in one round trip."""
from __future__ import annotations

from typing import Iterable

from . import keys, validate
from .errors import StatusNotFound
from .models import Status
from .store import Store


async def get_statuses(store: Store, ids: Iterable) -> list[Status]:
    """Statuses in the order given; deleted or unknown ids are skipped."""
    ids = [validate.an_id(i, "status_id") for i in ids]
    if not ids:
        return []
    found = (Status.from_hash(raw) for raw in
             await store.hgetall_many([keys.status(sid) for sid in ids]))
    return [s for s in found if s is not None]


async def get_status(store: Store, sid) -> Status:
    sid = validate.an_id(sid, "status_id")
    status = Status.from_hash(await store.client.hgetall(keys.status(sid)))
    if status is None:
        raise StatusNotFound(f"status {sid} does not exist")
    return status
