"""Favourites and bookmarks: Mastodon's routes for them."""

from __future__ import annotations

from starlette.responses import Response

from ..core.errors import ValidationError
from ..render import entities
from .context import Ctx
from .contract import (
    ACCOUNTS_PAGE,
    ACCOUNTS_REF,
    PAGE,
    STATUS_REF,
    Doc,
    array,
    path_param,
    request_body,
)
from .responses import JSON, link_header
from .routing import endpoint
from .statuses import render_statuses, seen_status, timeline_response


async def _status_response(ctx: Ctx, sid: int) -> Response:
    status = await seen_status(ctx, sid)
    return JSON((await render_statuses(ctx, [status]))[0])


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/favourite",
    auth="required",
    scope="write:favourites",
    doc=Doc("Favourite a status (again: no change)", "Statuses", STATUS_REF, params=[path_param()]),
)
async def favourite(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)  # 404 before anything is written
    await ctx.rp.statuses.favourite(ctx.uid, sid)
    return await _status_response(ctx, sid)


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/unfavourite",
    auth="required",
    scope="write:favourites",
    doc=Doc(
        "Undo a favourite (and its notification)", "Statuses", STATUS_REF, params=[path_param()]
    ),
)
async def unfavourite(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)
    await ctx.rp.statuses.unfavourite(ctx.uid, sid)
    return await _status_response(ctx, sid)


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/mute",
    auth="required",
    scope="write:mutes",
    doc=Doc(
        "Mute the status's thread: no more notifications about it (muted in the answer)",
        "Statuses",
        STATUS_REF,
        params=[path_param()],
    ),
)
async def mute_thread(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await ctx.rp.statuses.mute_thread(ctx.uid, sid, True)
    return await _status_response(ctx, sid)


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/unmute",
    auth="required",
    scope="write:mutes",
    doc=Doc("Unmute the status's thread", "Statuses", STATUS_REF, params=[path_param()]),
)
async def unmute_thread(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await ctx.rp.statuses.mute_thread(ctx.uid, sid, False)
    return await _status_response(ctx, sid)


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/bookmark",
    auth="required",
    scope="write:bookmarks",
    doc=Doc("Bookmark a status", "Statuses", STATUS_REF, params=[path_param()]),
)
async def bookmark(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)
    await ctx.rp.statuses.bookmark(ctx.uid, sid)
    return await _status_response(ctx, sid)


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/unbookmark",
    auth="required",
    scope="write:bookmarks",
    doc=Doc("Remove a bookmark", "Statuses", STATUS_REF, params=[path_param()]),
)
async def unbookmark(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)
    await ctx.rp.statuses.unbookmark(ctx.uid, sid)
    return await _status_response(ctx, sid)


@endpoint(
    "GET",
    "/api/v1/statuses/{id}/favourited_by",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "Who favourited a status, newest first",
        "Statuses",
        ACCOUNTS_REF,
        paged=True,
        params=ACCOUNTS_PAGE,
    ),
)
async def favourited_by(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)  # 404 before the parameters are read
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    users, cursor = await ctx.rp.statuses.favourited_by(
        sid, max_id=p.cursor("max_id"), limit=p.raw("limit")
    )
    headers = link_header(ctx, [cursor], key=lambda c: c, prev=False) if users else {}
    return JSON([entities.account(u, ctx.base) for u in users], headers=headers)


@endpoint(
    "GET",
    "/api/v1/favourites",
    auth="required",
    scope="read:favourites",
    doc=Doc(
        "Your favourites, newest favourite first (cursors are favourite ids)",
        "Statuses",
        array(STATUS_REF),
        paged=True,
        params=PAGE,
    ),
)
async def favourites_list(ctx: Ctx) -> Response:
    return timeline_response(
        ctx, await ctx.rp.timelines.favourites_page(ctx.uid, **ctx.params.cursors())
    )


@endpoint(
    "GET",
    "/api/v1/bookmarks",
    auth="required",
    scope="read:bookmarks",
    doc=Doc(
        "Your bookmarks, newest first (cursors are bookmark ids)",
        "Statuses",
        array(STATUS_REF),
        paged=True,
        params=PAGE,
    ),
)
async def bookmarks_list(ctx: Ctx) -> Response:
    return timeline_response(
        ctx, await ctx.rp.timelines.bookmarks_page(ctx.uid, **ctx.params.cursors())
    )


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/reblog",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Boost a status (again: the same boost); returns the boost wrapping it; "
        "a private status only by its author, a direct one never (403)",
        "Statuses",
        STATUS_REF,
        params=[path_param()],
        body=request_body({"visibility": {"enum": ["public", "unlisted"]}}),
    ),
)
async def reblog(ctx: Ctx) -> Response:
    """Boost; the answer is the boost status, wrapping the original."""
    p = ctx.params
    visibility = p.str("visibility", max_chars=20)
    if visibility not in (None, "public", "unlisted"):
        raise ValidationError("visibility", "must be public or unlisted")
    await seen_status(ctx, ctx.path_id())  # one may not see it: 404, as Mastodon
    bid = await ctx.rp.statuses.boost(ctx.uid, ctx.path_id())
    return await _status_response(ctx, bid)


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/unreblog",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Undo a boost (it leaves every timeline); returns the original",
        "Statuses",
        STATUS_REF,
        params=[path_param()],
    ),
)
async def unreblog(ctx: Ctx) -> Response:
    """Undo a boost; the answer is the original status."""
    sid = ctx.path_id()
    status = await seen_status(ctx, sid)
    original = status.reblog_of or sid
    await ctx.rp.statuses.unboost(ctx.uid, original)
    return await _status_response(ctx, original)


@endpoint(
    "GET",
    "/api/v1/statuses/{id}/reblogged_by",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "Who boosted a status, newest first",
        "Statuses",
        ACCOUNTS_REF,
        paged=True,
        params=ACCOUNTS_PAGE,
    ),
)
async def reblogged_by(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)  # 404 before the parameters are read
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    users, cursor = await ctx.rp.statuses.reblogged_by(
        sid, max_id=p.cursor("max_id"), limit=p.raw("limit")
    )
    headers = link_header(ctx, [cursor], key=lambda c: c, prev=False) if users else {}
    return JSON([entities.account(u, ctx.base) for u in users], headers=headers)
