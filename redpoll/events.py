"""Events for the real-time stream (SPEC 8): posted and deleted statuses.

Posting and deleting append one event to the event log, a capped Redis Stream
(``keys.EVENT_LOG``): one key, so it works the same on a cluster, and it keeps
the recent past, so a reconnecting stream client can be replayed what it
missed (v1.1 ``count``, SSE ``Last-Event-ID``). A delete event carries the
full status marked deleted, so every stream filter decides on a deletion
exactly as it decided on the post.
"""
from __future__ import annotations

import json

from . import keys, limits
from .models import Status
from .store import Store

#: The one field of an event-log entry: the event's JSON.
FIELD = "e"


def update_event(status: Status) -> str:
    return json.dumps({"event": "update", "status": status.to_dict()}, separators=(",", ":"))


def delete_event(status: Status) -> str:
    body = status.to_dict() | {"deleted": True}
    return json.dumps({"event": "delete", "status": body}, separators=(",", ":"))


async def publish(store: Store, payload: str) -> str:
    """Append one event to the log; returns its entry id."""
    entry = await store.client.xadd(keys.EVENT_LOG, {FIELD: payload},
                                    maxlen=limits.EVENT_LOG_MAXLEN, approximate=True)
    return entry.decode() if isinstance(entry, bytes) else entry
