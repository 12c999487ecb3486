"""The trending hashtags and links: each item's score from its history
(redpoll.trends.history), a growth over its own baseline.

    recent   = accounts today + accounts yesterday x (share of today not yet passed)
    baseline = the average accounts a day over the five days before
    score    = recent - baseline

``recent`` counts the accounts of about the last 24 hours (a sliding day:
at 06:00 it is today's plus three quarters of yesterday's), so nothing drops
at midnight. An item trends when ``recent`` reaches limits.TRENDS_MIN_ACCOUNTS
and the score is above 0: a tag used by five accounts today and by none
before outranks one used by five accounts every day (which does not trend).
Ties: more recent accounts first, then by name. Only the candidates of the
last two days are scored (history.candidates), a bounded read per request.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core import limits, validate
from ..core.errors import ValidationError
from ..core.models import now_ms
from ..storage.store import Store
from . import history, review
from .history import DAY_MS, Day

BASELINE_DAYS = 5


@dataclass(frozen=True, slots=True)
class Trend:
    item: str  # a hashtag's name or a URL
    score: float
    history: tuple[Day, ...]  # today first
    verdict: bool | None = None  # a moderator's (trends.review): None not reviewed


def score(days: tuple[Day, ...], now: int) -> tuple[float, float]:
    """(score, recent) of a history, today first (see the module)."""
    passed = (now % DAY_MS) / DAY_MS
    recent = days[0].accounts + days[1].accounts * (1 - passed)
    before = [d.accounts for d in days[2 : 2 + BASELINE_DAYS]]
    baseline = sum(before) / BASELINE_DAYS if before else 0.0
    return recent - baseline, recent


def window(offset, limit, default: int, maximum: int) -> tuple[int, int]:
    """Validated ``offset`` and ``limit`` of a trends page."""
    size = validate.page_limit(limit, default, maximum)
    if offset is None or offset == "":
        start = 0
    else:
        if isinstance(offset, bool) or not str(offset).isdigit():
            raise ValidationError("offset", "must be a non-negative integer")
        start = int(offset)
    if start + size > limits.TRENDS_WINDOW:
        raise ValidationError("offset", f"offset + limit at most {limits.TRENDS_WINDOW}")
    return start, size


async def trending(
    store: Store,
    kind: str,
    *,
    offset=None,
    limit=None,
    now: int | None = None,
    audience: review.Audience = review.Audience.PUBLIC,
) -> list[Trend]:
    """The trending items of ``kind`` ("tag" or "link") that ``audience``
    is shown (trends.review), best first; ``now`` (ms) the clock. One read
    of the candidates, one batch of histories, one read of the verdicts."""
    start, size = window(
        offset,
        limit,
        limits.TRENDS_TAGS_DEFAULT if kind == "tag" else limits.PAGE_DEFAULT,
        limits.TRENDS_TAGS_MAX if kind == "tag" else limits.PAGE_MAX,
    )
    kept = await _ranked(store, kind, now_ms() if now is None else now, audience)
    return [Trend(t.item, t.score, t.history, verdict) for t, verdict in kept[start : start + size]]


async def trends(
    store: Store,
    kind: str,
    item: str,
    *,
    now: int | None = None,
    audience: review.Audience = review.Audience.PUBLIC,
) -> bool:
    """Whether ``item`` is among the trending items of ``kind`` that
    ``audience`` is shown (any place of them, not only a page's)."""
    kept = await _ranked(store, kind, now_ms() if now is None else now, audience)
    return any(t.item == item for t, _ in kept)


async def _ranked(store: Store, kind: str, now: int, audience: review.Audience) -> list:
    """Every trending item of ``kind`` that ``audience`` is shown, best
    first, with its verdict."""
    items = await history.candidates(store, kind, now)
    days = await history.histories(store, kind, items, now)
    ranked = []
    for item in items:
        value, recent = score(days[item], now)
        if value > 0 and recent >= limits.TRENDS_MIN_ACCOUNTS:
            ranked.append((-value, -recent, item))
    ranked.sort()
    found = [Trend(item, -value, days[item]) for value, _, item in ranked]
    return await review.select(
        store, kind, found, [review.item_id(kind, t.item) for t in found], audience
    )
