"""A hashtag's ``history``: for each of the last limits.TAG_HISTORY_DAYS
UTC days, how many public statuses carried it and how many accounts wrote
them, as Mastodon's Tag entity shows. Kept as every item's history is
(redpoll.trends.history, kind ``tag``: HyperLogLogs per tag and day,
counted at post time by conversation.after_post, idempotent, bounded by
time), which also makes the tag a candidate of the trending tags.
"""

from __future__ import annotations

from ..storage.store import Store
from ..trends import history
from ..trends.history import Day as TagDay

__all__ = ["TagDay", "count_use", "histories"]


async def count_use(store: Store, names, sid: int, author: int, at_ms: int) -> None:
    """Count status ``sid`` by ``author``, posted at ``at_ms``, in the day's
    history of each hashtag it carries. Idempotent."""
    await history.count_use(store, "tag", names, sid, author, at_ms)


async def histories(
    store: Store, names: list[str], now: int | None = None
) -> dict[str, tuple[TagDay, ...]]:
    """Each tag's history, today first (one batch of PFCOUNTs)."""
    return await history.histories(store, "tag", names, now)
