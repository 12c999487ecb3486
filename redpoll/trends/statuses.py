"""Trending statuses: public local statuses of the last
limits.TRENDS_STATUS_WINDOW_S, ranked by favourites + boosts.

A status enters the candidates when it is favourited or boosted: after each
such change (in the interaction's journal step, replayed with it) :func:`note`
reads its counts and sets them as its score among the candidates of the day
it was posted (``keys.trend_statuses``, trend_mark.lua, the most interacted
with limits.TRENDS_CANDIDATES_KEPT kept; setting the same count again is a
no-op, so it is idempotent; a later note sets the later count). A read
takes the best of the candidates of the window's days and ranks them by
the counts read then (an unfavourite counts at once), newest first on ties.
"""

from __future__ import annotations

from ..core import keys, limits
from ..core.models import now_ms
from ..storage.store import Store
from . import review
from .history import DAY_MS
from .ranking import window

WINDOW_MS = limits.TRENDS_STATUS_WINDOW_S * 1000
KEEP_S = limits.TRENDS_STATUS_WINDOW_S + 86_400
FIELDS = ("at", "deleted", "x:visibility", "x:uri", "x:reblog_of")


def _eligible(row, now: int) -> bool:
    at, deleted, vis, uri, reblog = row
    return (
        at is not None
        and deleted is None
        and uri is None
        and reblog is None
        and (vis is None or vis == b"public")
        and int(at) >= now - WINDOW_MS
    )


async def note(store: Store, sid: int, now: int | None = None) -> None:
    """A status was favourited, unfavourited, boosted or unboosted: its
    score among the candidates (see the module). Idempotent."""
    now = now_ms() if now is None else now
    row, (favs, boosts) = await store.batch(
        [("HMGET", keys.status(sid), *FIELDS), ("HMGET", keys.status_counts(sid), "f", "r")]
    )
    if not _eligible(row, now):
        return
    day = int(row[0]) // DAY_MS
    await store.run(
        "trend_mark",
        [keys.trend_statuses(day)],
        [sid, int(favs or 0) + int(boosts or 0), limits.TRENDS_CANDIDATES_KEPT, KEEP_S, 0],
    )


async def trending(
    store: Store,
    *,
    offset=None,
    limit=None,
    now: int | None = None,
    audience: review.Audience = review.Audience.PUBLIC,
) -> list[int]:
    """The ids of the trending statuses ``audience`` is shown, best first
    (``now``: the clock, ms)."""
    found = await reviewed(store, offset=offset, limit=limit, now=now, audience=audience)
    return [sid for sid, _ in found]


async def reviewed(
    store: Store,
    *,
    offset=None,
    limit=None,
    now: int | None = None,
    audience: review.Audience = review.Audience.PUBLIC,
) -> list[tuple[int, bool | None]]:
    """The trending statuses ``audience`` is shown, best first, each with
    its verdict (trends.review). Reads at most
    limits.TRENDS_CANDIDATES_READ candidates of each day of the window,
    then their records and counts in one batch, then the verdicts."""
    start, size = window(offset, limit, limits.PAGE_DEFAULT, limits.PAGE_MAX)
    now = now_ms() if now is None else now
    first, last = (now - WINDOW_MS) // DAY_MS, now // DAY_MS
    rows = await store.batch(
        [
            ("ZREVRANGE", keys.trend_statuses(day), 0, limits.TRENDS_CANDIDATES_READ - 1)
            for day in range(first, last + 1)
        ]
    )
    sids = list(dict.fromkeys(int(m) for row in rows for m in row))
    if not sids:
        return []
    read = await store.batch(
        [
            c
            for sid in sids
            for c in (
                ("HMGET", keys.status(sid), *FIELDS),
                ("HMGET", keys.status_counts(sid), "f", "r"),
            )
        ]
    )
    ranked = []
    for i, sid in enumerate(sids):
        row, (favs, boosts) = read[2 * i], read[2 * i + 1]
        total = int(favs or 0) + int(boosts or 0)
        if total > 0 and _eligible(row, now):
            ranked.append((-total, -sid))
    ranked.sort()
    ids = [-sid for _, sid in ranked]
    kept = await review.select(store, "status", ids, [str(i) for i in ids], audience)
    return kept[start : start + size]
