"""Discovery: trending hashtags, statuses and links; who to follow."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from starlette.responses import Response

from ..cards import cards
from ..core import limits
from ..render import entities
from ..trends import links as trend_links
from .context import Ctx
from .contract import ACCOUNTS_REF, EMPTY, STATUSES_REF, Doc, array, path_param, query_param, ref
from .responses import JSON
from .routing import endpoint
from .statuses import rendered_entities
from .threads import tag_entity


def _window(maximum: int) -> list[dict]:
    return [
        query_param("limit", {"type": "integer", "minimum": 1, "maximum": maximum}),
        query_param(
            "offset",
            {"type": "integer", "minimum": 0, "maximum": limits.TRENDS_WINDOW - 1},
            f"offset + limit at most {limits.TRENDS_WINDOW}",
        ),
    ]


def _query(ctx: Ctx) -> dict:
    """``offset`` and ``limit`` as sent (the domain validates them)."""
    return {"offset": ctx.params.raw("offset"), "limit": ctx.params.raw("limit")}


def _next(ctx: Ctx, count: int, default: int) -> dict:
    """The Link header of a full page (``default``: the size asked when no
    ``limit`` is): the next one by ``offset``."""
    q = _query(ctx)
    if not count or count < (int(q["limit"]) if q["limit"] not in (None, "") else default):
        return {}
    keep = {k: v for k, v in ctx.request.query_params.items() if k != "offset"}
    keep["offset"] = str(int(q["offset"] or 0) + count)
    return {"Link": f'<{ctx.base}{ctx.request.scope["path"]}?{urlencode(keep)}>; rel="next"'}


async def _tags(ctx: Ctx) -> Response:
    found = await ctx.rp.discovery.trending_tags(ctx.viewer, **_query(ctx))
    return JSON(
        [tag_entity(ctx, t, ctx.viewer is not None) for t in found],
        headers=_next(ctx, len(found), limits.TRENDS_TAGS_DEFAULT),
    )


@endpoint(
    "GET",
    "/api/v1/trends/tags",
    auth="optional",
    doc=Doc(
        "Trending hashtags: the most growth in accounts using them over the last "
        "day against their week",
        "Trends",
        array(ref("Tag")),
        params=_window(limits.TRENDS_TAGS_MAX),
    ),
)
async def trending_tags(ctx: Ctx) -> Response:
    return await _tags(ctx)


@endpoint(
    "GET",
    "/api/v1/trends",
    auth="optional",
    doc=Doc(
        "Trending hashtags (the older path of /api/v1/trends/tags)",
        "Trends",
        array(ref("Tag")),
        params=_window(limits.TRENDS_TAGS_MAX),
    ),
)
async def trends(ctx: Ctx) -> Response:
    return await _tags(ctx)


@endpoint(
    "GET",
    "/api/v1/trends/statuses",
    auth="optional",
    doc=Doc(
        "Trending statuses: public local statuses of the last two days by favourites and boosts",
        "Trends",
        STATUSES_REF,
        params=_window(limits.PAGE_MAX),
    ),
)
async def trending_statuses(ctx: Ctx) -> Response:
    shown = await ctx.rp.discovery.trending_page(ctx.viewer, **_query(ctx))
    body = b"[" + b",".join(rendered_entities(ctx, shown)) + b"]"
    return Response(
        body, media_type=JSON.media_type, headers=_next(ctx, len(shown.read), limits.PAGE_DEFAULT)
    )


def link_entity(trend, card: dict | None = None, base: str = "") -> dict:
    """Mastodon's Trends::Link (a PreviewCard with its history): the card
    kept for the link (redpoll.cards; its image this server's copy), or,
    while there is none, the link's host and path for its title."""
    url = trend.item
    host = urlsplit(url).hostname or ""
    history = [
        {"day": str(d.day), "uses": str(d.uses), "accounts": str(d.accounts)} for d in trend.history
    ]
    if card is not None:
        return cards.shown(card, 0, base) | {"url": url, "history": history}
    return {
        "url": url,
        "title": trend_links.title(url),
        "description": "",
        "type": "link",
        "author_name": "",
        "author_url": "",
        "authors": [],
        "provider_name": host,
        "provider_url": "",
        "html": "",
        "width": 0,
        "height": 0,
        "image": None,
        "image_description": "",
        "embed_url": "",
        "blurhash": None,
        "language": None,
        "published_at": None,
        "history": history,
    }


@endpoint(
    "GET",
    "/api/v1/trends/links",
    auth="optional",
    doc=Doc(
        "Trending links: the most growth in accounts posting them over the last day "
        "against their week",
        "Trends",
        array(ref("TrendsLink")),
        params=_window(limits.PAGE_MAX),
    ),
)
async def trending_links(ctx: Ctx) -> Response:
    found = await ctx.rp.discovery.trending_links_shown(**_query(ctx))
    return JSON(
        [link_entity(t, card, ctx.base) for t, card in found],
        headers=_next(ctx, len(found), limits.PAGE_DEFAULT),
    )


def _limit(ctx: Ctx):
    return ctx.params.raw("limit")


@endpoint(
    "GET",
    "/api/v2/suggestions",
    auth="required",
    scope="read:accounts",
    doc=Doc(
        "Accounts to follow: followed by those you follow, then the most followed",
        "Suggestions",
        array(ref("Suggestion")),
        params=[
            query_param(
                "limit", {"type": "integer", "minimum": 1, "maximum": limits.SUGGESTIONS_MAX}
            )
        ],
    ),
)
async def suggestions_v2(ctx: Ctx) -> Response:
    found = await ctx.rp.discovery.suggestions(ctx.uid, limit=_limit(ctx))
    return JSON(
        [
            {
                "source": s.source,
                "sources": list(s.sources),
                "account": entities.account(s.user, ctx.base),
            }
            for s in found
        ]
    )


@endpoint(
    "GET",
    "/api/v1/suggestions",
    auth="required",
    scope="read:accounts",
    doc=Doc(
        "Accounts to follow (the accounts of /api/v2/suggestions)",
        "Suggestions",
        ACCOUNTS_REF,
        params=[
            query_param(
                "limit", {"type": "integer", "minimum": 1, "maximum": limits.SUGGESTIONS_MAX}
            )
        ],
    ),
)
async def suggestions_v1(ctx: Ctx) -> Response:
    found = await ctx.rp.discovery.suggestions(ctx.uid, limit=_limit(ctx))
    return JSON([entities.account(s.user, ctx.base) for s in found])


@endpoint(
    "DELETE",
    "/api/v1/suggestions/{account_id}",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Never suggest this account again", "Suggestions", EMPTY, params=[path_param("account_id")]
    ),
)
async def dismiss_suggestion(ctx: Ctx) -> Response:
    await ctx.rp.discovery.dismiss_suggestion(ctx.uid, ctx.path_id("account_id"))
    return JSON({})
