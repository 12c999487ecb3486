"""An item's (a hashtag's, a link's) ``history``: for each of the last
limits.TAG_HISTORY_DAYS UTC days, how many public statuses carried it and
how many accounts wrote them, as Mastodon's Tag and PreviewCard entities
show, and each day's candidates of the trends.

Counted at post time into two HyperLogLogs per item and day (day_use.lua):
adding the same status again (a replayed post journal) counts nothing
twice, and the keys expire after the history's days, so they are bounded by
time. Counts are HyperLogLog estimates, exact in practice at small numbers
(Mastodon counts accounts the same way). Then the item's accounts of the day
go into the day's candidates (``keys.trend_day``, trend_mark.lua: only ever
raised, so idempotent too; the most used limits.TRENDS_CANDIDATES_KEPT kept).
The two steps are on two slots: a call cut short between them is replayed
with the post's journal. Deleting a status does not take its use back, as
with Mastodon.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..core import keys, limits
from ..core.models import now_ms
from ..storage.store import Store

DAY_MS = 86_400_000
#: seconds a day's counts and candidates are kept
KEEP_S = (limits.TAG_HISTORY_DAYS + 1) * 86_400
KINDS = ("tag", "link")


@dataclass(frozen=True, slots=True)
class Day:
    day: int  # seconds since the epoch at 00:00 UTC of the day
    uses: int
    accounts: int


def digest(url: str) -> str:
    """A link's name in its keys (its own slot)."""
    return hashlib.sha256(url.encode()).hexdigest()[:24]


def day_keys(kind: str, item: str, day: int) -> tuple[str, str]:
    if kind == "tag":
        return keys.tag_day_uses(item, day), keys.tag_day_accounts(item, day)
    return keys.link_day_uses(digest(item), day), keys.link_day_accounts(digest(item), day)


async def count_use(store: Store, kind: str, items, sid: int, author: int, at_ms: int) -> None:
    """Count status ``sid`` by ``author``, posted at ``at_ms``, in the day's
    history of each item (one script per item: each is its own slot), and
    the item among the day's candidates. Idempotent."""
    day = at_ms // DAY_MS
    for item in items:
        accounts = await store.run("day_use", day_keys(kind, item, day), [sid, author, KEEP_S])
        await store.run(
            "trend_mark",
            [keys.trend_day(kind, day)],
            [item, int(accounts), limits.TRENDS_CANDIDATES_KEPT, KEEP_S, 1],
        )


async def histories(
    store: Store, kind: str, items: list[str], now: int | None = None
) -> dict[str, tuple[Day, ...]]:
    """Each item's history, today (of ``now``, ms) first (one batch of PFCOUNTs)."""
    today = (now_ms() if now is None else now) // DAY_MS
    days = [today - i for i in range(limits.TAG_HISTORY_DAYS)]
    commands = []
    for item in items:
        for day in days:
            uses, accounts = day_keys(kind, item, day)
            commands += [("PFCOUNT", uses), ("PFCOUNT", accounts)]
    counts = await store.batch(commands) if commands else []
    out, i = {}, 0
    for item in items:
        rows = []
        for day in days:
            rows.append(Day(day * 86_400, int(counts[i]), int(counts[i + 1])))
            i += 2
        out[item] = tuple(rows)
    return out


async def candidates(store: Store, kind: str, now: int) -> list[str]:
    """The items most used today and yesterday (of ``now``, ms), at most
    limits.TRENDS_CANDIDATES_READ of each day."""
    today = now // DAY_MS
    rows = await store.batch(
        [
            ("ZREVRANGE", keys.trend_day(kind, day), 0, limits.TRENDS_CANDIDATES_READ - 1)
            for day in (today, today - 1)
        ]
    )
    return list(dict.fromkeys(m.decode() for row in rows for m in row))
