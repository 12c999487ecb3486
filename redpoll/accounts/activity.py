"""How many accounts used the server lately, for NodeInfo's ``usage``: read
from the home reads that hybrid fan-out records anyway (keys.HOME_SEEN:
user id -> ms of the last recorded read, negated once an idle user's home
was dropped), so counting costs two ZCOUNTs and nothing is kept for it."""

from __future__ import annotations

from ..core import keys
from ..core.models import now_ms
from ..storage.store import Store

DAY_MS = 86_400_000


async def active_within(store: Store, *days: int) -> list[int]:
    """For each period of ``days``, the accounts whose last home read is at
    most that old (a read is recorded at most once per quarter of the idle
    period: the count is exact to that); one round trip for all of them."""
    now = now_ms()
    commands = []
    for d in days:
        cutoff = now - d * DAY_MS
        commands += [
            ("ZCOUNT", keys.HOME_SEEN, cutoff, "+inf"),
            ("ZCOUNT", keys.HOME_SEEN, "-inf", -cutoff),
        ]
    counts = await store.batch(commands)
    return [int(recent) + int(dropped) for recent, dropped in zip(counts[0::2], counts[1::2])]
