"""Favourites and bookmarks: Mastodon's routes for them."""
from __future__ import annotations

from starlette.responses import Response

from ..render import entities
from ..core.errors import ValidationError
from .http import JSON, Ctx, endpoint, link_header
from .statuses import render_statuses, seen_status, timeline_response


async def _status_response(ctx: Ctx, sid: int) -> Response:
    status = await seen_status(ctx, sid)
    return JSON((await render_statuses(ctx, [status]))[0])


@endpoint(auth="required", scope="write:favourites")
async def favourite(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)  # 404 before anything is written
    await ctx.rp.favourite(ctx.uid, sid)
    return await _status_response(ctx, sid)


@endpoint(auth="required", scope="write:favourites")
async def unfavourite(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)
    await ctx.rp.unfavourite(ctx.uid, sid)
    return await _status_response(ctx, sid)


@endpoint(auth="required", scope="write:bookmarks")
async def bookmark(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)
    await ctx.rp.bookmark(ctx.uid, sid)
    return await _status_response(ctx, sid)


@endpoint(auth="required", scope="write:bookmarks")
async def unbookmark(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)
    await ctx.rp.unbookmark(ctx.uid, sid)
    return await _status_response(ctx, sid)


@endpoint(auth="optional", scope="read:statuses")
async def favourited_by(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)  # 404 before the parameters are read
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    users, cursor = await ctx.rp.favourited_by(sid, max_id=p.cursor("max_id"),
                                               limit=p.raw("limit"))
    headers = link_header(ctx, [cursor], key=lambda c: c, prev=False) if users else {}
    return JSON([entities.account(u, ctx.base) for u in users], headers=headers)


@endpoint(auth="required", scope="read:favourites")
async def favourites_list(ctx: Ctx) -> Response:
    return timeline_response(ctx, await ctx.rp.favourites_page(ctx.uid, **ctx.params.cursors()))


@endpoint(auth="required", scope="read:bookmarks")
async def bookmarks_list(ctx: Ctx) -> Response:
    return timeline_response(ctx, await ctx.rp.bookmarks_page(ctx.uid, **ctx.params.cursors()))




@endpoint(auth="required", scope="write:statuses")
async def reblog(ctx: Ctx) -> Response:
    """Boost; the answer is the boost status, wrapping the original."""
    p = ctx.params
    visibility = p.str("visibility", max_chars=20)
    if visibility not in (None, "public", "unlisted"):
        raise ValidationError("visibility", "must be public or unlisted")
    await seen_status(ctx, ctx.path_id())  # one may not see it: 404, as Mastodon
    bid = await ctx.rp.boost(ctx.uid, ctx.path_id())
    return await _status_response(ctx, bid)


@endpoint(auth="required", scope="write:statuses")
async def unreblog(ctx: Ctx) -> Response:
    """Undo a boost; the answer is the original status."""
    sid = ctx.path_id()
    status = await seen_status(ctx, sid)
    original = status.reblog_of or sid
    await ctx.rp.unboost(ctx.uid, original)
    return await _status_response(ctx, original)


@endpoint(auth="optional", scope="read:statuses")
async def reblogged_by(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)  # 404 before the parameters are read
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    users, cursor = await ctx.rp.reblogged_by(sid, max_id=p.cursor("max_id"),
                                              limit=p.raw("limit"))
    headers = link_header(ctx, [cursor], key=lambda c: c, prev=False) if users else {}
    return JSON([entities.account(u, ctx.base) for u in users], headers=headers)
