"""Mastodon's admin trends: the trending hashtags, links and statuses as a
moderator reviews them (unreviewed and rejected ones included, each with
``requires_review``), and approving or rejecting one, which decides what
/api/v1/trends/* shows (redpoll.trends.review). A caller without
``manage_taxonomies`` is given the public trends by the lists, as Mastodon
does, and 403 by the decisions."""

from __future__ import annotations

from starlette.responses import Response

from ..core import limits
from ..core.errors import Forbidden
from ..trends import history
from .context import Ctx
from .contract import BOOL, STR, Doc, array, obj, query_param
from .responses import JSON
from .routing import endpoint
from .statuses import render_statuses
from .threads import tag_entity
from .trends import link_entity

READ = ("admin:read",)
WRITE = ("admin:write",)
ITEM = [{"name": "id", "in": "path", "required": True, "schema": STR}]
ADMIN_TAG = obj(
    {"id": STR, "name": STR, "trendable": BOOL, "usable": BOOL, "requires_review": BOOL}
)
ADMIN_LINK = obj({"id": STR, "url": STR, "requires_review": BOOL})
ADMIN_STATUS = obj({"id": STR, "requires_review": BOOL})


def _window(maximum: int) -> list[dict]:
    return [
        query_param("limit", {"type": "integer", "minimum": 1, "maximum": maximum}),
        query_param("offset", {"type": "integer", "minimum": 0}),
    ]


def _query(ctx: Ctx) -> dict:
    return {"offset": ctx.params.raw("offset"), "limit": ctx.params.raw("limit")}


def _trendable(ctx: Ctx, verdict: bool | None) -> bool:
    """Mastodon's ``trendable``: the decision, or for an item not reviewed
    whether it may trend without one."""
    return verdict if verdict is not None else not ctx.settings.trends_review


def _tag(ctx: Ctx, trend) -> dict:
    out = {
        "id": trend.item,
        "name": trend.item,
        "url": f"{ctx.base}/tags/{trend.item}",
        "history": [
            {"day": str(d.day), "uses": str(d.uses), "accounts": str(d.accounts)}
            for d in trend.history
        ],
    }
    return {
        **out,
        "trendable": _trendable(ctx, trend.verdict),
        "usable": True,
        "listable": True,
        "requires_review": trend.verdict is None,
    }


def _link(trend) -> dict:
    return {
        "id": history.digest(trend.item),
        **link_entity(trend),
        "requires_review": trend.verdict is None,
    }


async def _statuses(ctx: Ctx, found: list[tuple[int, bool | None]]) -> list[dict]:
    verdict = dict(found)
    shown = await render_statuses(
        ctx, await ctx.rp.statuses.get_statuses([sid for sid, _ in found])
    )
    return [{**s, "requires_review": verdict.get(int(s["id"])) is None} for s in shown]


@endpoint(
    "GET",
    "/api/v1/admin/trends/tags",
    auth="required",
    scope=READ,
    doc=Doc(
        "Trending hashtags, unreviewed and rejected ones included (manage_taxonomies)",
        "Admin",
        array(ADMIN_TAG),
        params=_window(limits.TRENDS_TAGS_MAX),
    ),
)
async def trending_tags(ctx: Ctx) -> Response:
    try:
        found = await ctx.rp.admin.trending(ctx.uid, "tag", **_query(ctx))
    except Forbidden:
        public = await ctx.rp.discovery.trending_tags(ctx.viewer, **_query(ctx))
        return JSON([tag_entity(ctx, t, True) for t in public])
    return JSON([_tag(ctx, t) for t in found])


@endpoint(
    "GET",
    "/api/v1/admin/trends/links",
    auth="required",
    scope=READ,
    doc=Doc(
        "Trending links, unreviewed and rejected ones included (manage_taxonomies)",
        "Admin",
        array(ADMIN_LINK),
        params=_window(limits.PAGE_MAX),
    ),
)
async def trending_links(ctx: Ctx) -> Response:
    try:
        found = await ctx.rp.admin.trending(ctx.uid, "link", **_query(ctx))
    except Forbidden:
        found = await ctx.rp.discovery.trending_links_shown(**_query(ctx))
        return JSON([link_entity(t, card, ctx.base) for t, card in found])
    return JSON([_link(t) for t in found])


@endpoint(
    "GET",
    "/api/v1/admin/trends/statuses",
    auth="required",
    scope=READ,
    doc=Doc(
        "Trending statuses, unreviewed and rejected ones included (manage_taxonomies)",
        "Admin",
        array(ADMIN_STATUS),
        params=_window(limits.PAGE_MAX),
    ),
)
async def trending_statuses(ctx: Ctx) -> Response:
    try:
        found = await ctx.rp.admin.trending_statuses(ctx.uid, **_query(ctx))
    except Forbidden:
        shown = await ctx.rp.discovery.trending_page(ctx.viewer, **_query(ctx))
        return JSON(await render_statuses(ctx, shown.statuses))
    return JSON(await _statuses(ctx, found))


def _decision(kind: str, verb: str):
    approve = verb == "approve"
    what = {"tag": "a hashtag", "link": "a link", "status": "a status"}[kind]
    plural = {"tag": "tags", "link": "links", "status": "statuses"}[kind]

    @endpoint(
        "POST",
        f"/api/v1/admin/trends/{plural}/{{id}}/{verb}",
        auth="required",
        scope=WRITE,
        doc=Doc(
            f"{'Approve' if approve else 'Reject'} {what} in the trends (manage_taxonomies)",
            "Admin",
            {"tag": ADMIN_TAG, "link": ADMIN_LINK, "status": ADMIN_STATUS}[kind],
            params=ITEM,
        ),
    )
    async def decide(ctx: Ctx) -> Response:
        item = ctx.request.path_params["id"]
        found = await ctx.rp.admin.review_trend(ctx.uid, kind, item, approve)
        if kind == "tag":
            return JSON(_tag(ctx, found))
        if kind == "link":
            return JSON(_link(found))
        return JSON((await _statuses(ctx, [found]))[0])

    decide.__name__ = f"{verb}_trending_{kind}"
    return decide


approve_tag = _decision("tag", "approve")
reject_tag = _decision("tag", "reject")
approve_link = _decision("link", "approve")
reject_link = _decision("link", "reject")
approve_status = _decision("status", "approve")
reject_status = _decision("status", "reject")
