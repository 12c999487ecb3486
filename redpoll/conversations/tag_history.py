"""A hashtag's ``history``: for each of the last
limits.TAG_HISTORY_DAYS UTC days, how many public statuses carried it and
how many accounts wrote them, as Mastodon's Tag entity shows.

Counted at post time (conversation.after_post) into two HyperLogLogs per tag
and day (keys.tag_day_uses / tag_day_accounts) by tag_use.lua: adding the
same status again (a replayed post journal) counts nothing twice, and the
keys expire after the history's days, so they are bounded by time. Counts
are HyperLogLog estimates, exact in practice at small numbers (Mastodon
counts accounts the same way). Deleting a status does not take its use back,
as with Mastodon.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core import keys, limits
from ..core.models import now_ms
from ..storage.store import Store

DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class TagDay:
    day: int  # seconds since the epoch at 00:00 UTC of the day
    uses: int
    accounts: int


async def count_use(store: Store, names, sid: int, author: int, at_ms: int) -> None:
    """Count status ``sid`` by ``author``, posted at ``at_ms``, in the day's
    history of each hashtag it carries (one script per tag: each tag is its
    own slot). Idempotent."""
    day = at_ms // DAY_MS
    keep_s = (limits.TAG_HISTORY_DAYS + 1) * 86_400
    for name in names:
        await store.run("tag_use", [keys.tag_day_uses(name, day), keys.tag_day_accounts(name, day)],
                        [sid, author, keep_s])


async def histories(store: Store, names: list[str]) -> dict[str, tuple[TagDay, ...]]:
    """Each tag's history, today first (one batch of PFCOUNTs)."""
    today = now_ms() // DAY_MS
    days = [today - i for i in range(limits.TAG_HISTORY_DAYS)]
    commands = []
    for name in names:
        for day in days:
            commands += [("PFCOUNT", keys.tag_day_uses(name, day)),
                         ("PFCOUNT", keys.tag_day_accounts(name, day))]
    counts = await store.batch(commands)
    out, i = {}, 0
    for name in names:
        rows = []
        for day in days:
            rows.append(TagDay(day * 86_400, int(counts[i]), int(counts[i + 1])))
            i += 2
        out[name] = tuple(rows)
    return out
