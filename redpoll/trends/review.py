"""What moderators decided about the trends, as Mastodon's trends review:
an item (a hashtag, a link, a status) is approved to trend, rejected (it
never trends, whatever its growth), or not reviewed yet. Unreviewed items
trend unless the server asks for review first (``REDPOLL_TRENDS_REVIEW``,
Mastodon's "allow trends without prior review" turned off): then only
approved ones do. The public trends and the admin's list are one ranking
(redpoll.trends.ranking, redpoll.trends.statuses) read through :func:`keep`.

Decisions are one HSET each on one key (keys.trend_review): atomic, and
deciding again overwrites (idempotent).
"""

from __future__ import annotations

from enum import Enum
from typing import TypeVar

from ..core import keys
from ..storage.store import Store
from .history import digest

KINDS = ("tag", "link", "status")
T = TypeVar("T")


class Audience(Enum):
    """Who the trends are read for."""

    PUBLIC = "public"  #: rejected never, unreviewed unless review comes first
    REVIEW_FIRST = "review_first"  #: approved ones only
    MODERATORS = "moderators"  #: everything that trends, with its verdict


def item_id(kind: str, item: str) -> str:
    """An item's id in the review (and in the admin API): a hashtag's
    name, a link's digest (history.digest), a status's id."""
    return digest(item) if kind == "link" else item


def public(review_first: bool) -> Audience:
    return Audience.REVIEW_FIRST if review_first else Audience.PUBLIC


def shown(verdict: bool | None, audience: Audience) -> bool:
    if audience is Audience.MODERATORS:
        return True
    if audience is Audience.REVIEW_FIRST:
        return verdict is True
    return verdict is not False


async def verdicts(store: Store, kind: str, ids: list[str]) -> list[bool | None]:
    """Each id's decision: True approved, False rejected, None not reviewed
    (one HMGET)."""
    if not ids:
        return []
    (found,) = await store.batch([("HMGET", keys.trend_review(kind), *ids)])
    return [None if v is None else v == b"1" for v in found]


async def select(
    store: Store, kind: str, ranked: list[T], ids: list[str], audience: Audience
) -> list[tuple[T, bool | None]]:
    """The ``ranked`` items (``ids``: their ids, in order) the audience is
    shown, in their order, each with its verdict."""
    found = await verdicts(store, kind, ids)
    return [(item, v) for item, v in zip(ranked, found) if shown(v, audience)]


async def decide(store: Store, kind: str, item: str, approve: bool) -> None:
    """Approve or reject ``item`` of ``kind`` (one HSET)."""
    await store.batch([("HSET", keys.trend_review(kind), item, "1" if approve else "0")])
