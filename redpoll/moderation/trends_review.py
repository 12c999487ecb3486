"""Mastodon's trends review for moderators (``manage_taxonomies``): the
trending hashtags, links and statuses with what was decided about each,
including those the public is not shown, and approving or rejecting one
(redpoll.trends.review keeps the decisions; the audit log records them)."""

from __future__ import annotations

import re

from ..admin import audit, roles, staff
from ..conversations.conversation import tag_name
from ..core import keys
from ..core.errors import NotFound, ValidationError
from ..core.models import now_ms
from ..records import statuses
from ..storage.store import Store
from ..trends import history, ranking, review
from ..trends import statuses as trend_statuses

MODERATORS = review.Audience.MODERATORS
#: the audit log's type of each kind, as Mastodon's
AUDIT_TYPE = {"tag": "Tag", "link": "PreviewCard", "status": "Status"}


class TrendNotFound(NotFound):
    pass


async def _may(store: Store, actor: int | None) -> None:
    roles.require(await staff.role_of(store, actor), "manage_taxonomies")


async def trending(store: Store, actor: int | None, kind: str, *, offset=None, limit=None):
    """What trends of ``kind`` ("tag", "link"), unreviewed and rejected
    included, best first (ranking.Trend, each with its verdict)."""
    await _may(store, actor)
    return await ranking.trending(store, kind, offset=offset, limit=limit, audience=MODERATORS)


async def trending_statuses(
    store: Store, actor: int | None, *, offset=None, limit=None
) -> list[tuple[int, bool | None]]:
    await _may(store, actor)
    return await trend_statuses.reviewed(store, offset=offset, limit=limit, audience=MODERATORS)


async def _link_of(store: Store, lid) -> str:
    """The URL whose id (history.digest) is ``lid``, among the links of
    the trends' candidates; TrendNotFound for any other."""
    if not isinstance(lid, str) or not re.fullmatch(r"[0-9a-f]{24}", lid):
        raise TrendNotFound("no such link")
    for url in await history.candidates(store, "link", now_ms()):
        if history.digest(url) == lid:
            return url
    raise TrendNotFound("no such link")


async def decide(store: Store, actor: int | None, kind: str, item, approve: bool):
    """Approve (``approve``) or reject one hashtag (by name), link (by its
    id) or status (by id): what it is now with its verdict (a hashtag or
    link as a ranking.Trend with its history; a status as (id, verdict)). Checks the role first, then
    that the item exists (404); nothing is written when either fails.
    Idempotent: deciding the same again writes the same."""
    await _may(store, actor)
    if kind == "tag":
        name = tag_name(item)
        (used,) = await store.batch([("ZSCORE", keys.TAG_NAMES, name)])
        if used is None:
            raise TrendNotFound(f"no hashtag #{name}")
        found, rid = name, name
    elif kind == "link":
        found = await _link_of(store, item)
        rid = history.digest(found)
    elif kind == "status":
        status = await statuses.get_status(store, item)
        found, rid = str(status.id), str(status.id)
    else:
        raise ValidationError("kind", "must be tag, link or status")
    await review.decide(store, kind, rid, approve)
    await audit.record(
        store, actor, "approve" if approve else "reject", AUDIT_TYPE[kind], rid, str(found)
    )
    if kind == "status":
        return int(found), approve
    days = await history.histories(store, kind, [found])
    return ranking.Trend(found, 0.0, days[found], approve)
