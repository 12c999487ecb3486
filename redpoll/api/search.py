"""Search: GET /api/v2/search and GET /api/v1/accounts/search."""

from __future__ import annotations

from starlette.responses import Response

from ..core import limits
from ..core.errors import ValidationError
from ..render import entities
from ..search import search
from . import threads
from .context import Ctx
from .contract import ACCOUNTS_REF, BOOL, ID, SEARCH, SEARCH_PARAMS, Doc, query_param
from .responses import JSON, ApiError
from .routing import endpoint
from .statuses import render_statuses


def _count(ctx: Ctx, name: str, default: int, minimum: int) -> int:
    raw = ctx.params.raw(name)
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool) or isinstance(raw, (list, dict, float)):
        raise ValidationError(name, "must be an integer")
    text = str(raw)
    if not text.isascii() or not text.isdigit() or len(text) > 9 or int(text) < minimum:
        raise ValidationError(name, f"must be an integer of at least {minimum}")
    return int(text)


def _query(ctx: Ctx, kind: str | None) -> search.Query:
    p = ctx.params
    if p.raw("q") is None:
        raise ValidationError("q", "is missing")
    q = p.str("q", max_chars=limits.SEARCH_QUERY_MAX_CHARS) or ""
    resolve, offset = p.bool("resolve"), _count(ctx, "offset", 0, 0)
    if ctx.viewer is None and (resolve or offset):  # as Mastodon: these need a user
        raise ApiError(401, "Search queries with resolve or offset need a user token")
    if kind is None:
        kind = p.str("type", max_chars=20)
    p.bool("exclude_unreviewed")
    host = ctx.request.url.hostname or ""
    return search.Query(
        q=q,
        viewer=ctx.viewer,
        type=kind,
        limit=min(_count(ctx, "limit", 20, 1), limits.PAGE_MAX),
        offset=offset,
        resolve=resolve,
        following=p.bool("following"),
        account_id=p.cursor("account_id"),
        max_id=p.cursor("max_id"),
        min_id=p.cursor("min_id"),
        hosts=tuple({host.lower(), ctx.request.url.netloc.lower()}),
    )


@endpoint(
    "GET",
    "/api/v2/search",
    auth="optional",
    scope="read:search",
    doc=Doc(
        "Search accounts (login/display-name prefix, @login, @login@this-host), your "
        "statuses by full text (your library and the public posts of indexable accounts; "
        "Mastodon's operators), hashtags; never contacts another host",
        "Search",
        SEARCH,
        params=SEARCH_PARAMS
        + [
            query_param("type", {"enum": ["accounts", "hashtags", "statuses"]}),
            query_param("account_id", ID),
            query_param("max_id", ID),
            query_param("min_id", ID),
            query_param("exclude_unreviewed", BOOL),
        ],
    ),
)
async def search_v2(ctx: Ctx) -> Response:
    found = await ctx.rp.discovery.search(_query(ctx, None))
    return JSON(
        {
            "accounts": [entities.account(u, ctx.base) for u in found.accounts],
            "statuses": await render_statuses(ctx, found.statuses),
            "hashtags": [
                threads.tag_entity(ctx, tag, ctx.viewer is not None) for tag in found.hashtags
            ],
        }
    )


@endpoint(
    "GET",
    "/api/v1/accounts/search",
    auth="required",
    scope="read:accounts",
    doc=Doc(
        "Search accounts by login or display-name prefix",
        "Accounts",
        ACCOUNTS_REF,
        params=SEARCH_PARAMS,
    ),
)
async def accounts_search(ctx: Ctx) -> Response:
    found = await ctx.rp.discovery.search(_query(ctx, "accounts"))
    return JSON([entities.account(u, ctx.base) for u in found.accounts])
