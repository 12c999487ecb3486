"""Events for the real-time stream (SPEC 8): posted and deleted statuses."""
from __future__ import annotations

import json

from . import keys
from .models import Status
from .store import Store


def update_event(status: Status) -> str:
    return json.dumps({"event": "update", "status": status.to_dict()}, separators=(",", ":"))


def delete_event(status: Status) -> str:
    body = status.to_dict() | {"deleted": True}
    return json.dumps({"event": "delete", "status": body}, separators=(",", ":"))


async def publish(store: Store, payload: str) -> None:
    await store.client.publish(keys.STATUS_CHANNEL, payload)
