"""Read markers (Mastodon's ``/api/v1/markers``): per user, where they stopped
reading the home timeline and the notifications. One hash on the user's
slot; setting is one script (markers_set.lua)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import keys, validate
from ..core.errors import ValidationError
from ..core.models import now_ms
from ..storage.store import Store

TIMELINES = ("home", "notifications")


@dataclass(frozen=True, slots=True)
class Marker:
    timeline: str
    last_read_id: int
    version: int
    updated_at: int  # ms

    @classmethod
    def parse(cls, timeline: str, raw: bytes | str) -> Marker:
        text = raw.decode() if isinstance(raw, bytes) else raw
        last, version, at = text.split(":")
        return cls(timeline, int(last), int(version), int(at))


def _timeline(name) -> str:
    if name not in TIMELINES:
        raise ValidationError("timeline", "must be one of " + ", ".join(TIMELINES))
    return name


async def get_markers(store: Store, uid: int, timelines) -> list[Marker]:
    """The markers of the named timelines that were ever set."""
    names = list(dict.fromkeys(_timeline(t) for t in timelines))
    if not names:
        return []
    values = await store.hmget(keys.markers(uid), names)
    return [Marker.parse(n, v) for n, v in zip(names, values) if v is not None]


async def set_markers(store: Store, uid: int, positions: dict) -> list[Marker]:
    """Move the markers given as {timeline: last_read_id}, all at once."""
    pairs: list = []
    for name, last in positions.items():
        pairs += [_timeline(name), validate.an_id(last, "last_read_id")]
    if not pairs:
        raise ValidationError("timeline", "give home or notifications with a last_read_id")
    rows = await store.run("markers_set", [keys.markers(uid)], [now_ms(), *pairs])
    return [Marker.parse(n.decode(), v) for n, v in zip(rows[0::2], rows[1::2])]


async def last_read(store: Store, uid: int, timeline: str) -> int:
    """The marker's id, 0 when never set."""
    [marker] = await get_markers(store, uid, [timeline]) or [None]
    return marker.last_read_id if marker else 0
