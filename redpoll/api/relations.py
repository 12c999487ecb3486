"""Blocks and mutes: Mastodon's routes for them. The rules are
redpoll/relations/relations.py's; what they hide, redpoll/relations/visibility.py decides."""
from __future__ import annotations

from starlette.responses import Response

from ..render import entities
from .accounts import relationship_of
from ..core.errors import ValidationError
from .http import JSON, Ctx, endpoint, link_header


@endpoint(auth="required", scope="write:blocks")
async def block(ctx: Ctx) -> Response:
    target = ctx.path_id()
    await ctx.rp.block(ctx.uid, target)
    return JSON(await relationship_of(ctx, target))


@endpoint(auth="required", scope="write:blocks")
async def unblock(ctx: Ctx) -> Response:
    target = ctx.path_id()
    await ctx.rp.unblock(ctx.uid, target)
    return JSON(await relationship_of(ctx, target))


@endpoint(auth="required", scope="write:mutes")
async def mute(ctx: Ctx) -> Response:
    """``duration`` seconds (0 or absent: until unmuted), ``notifications``
    (default true: their notifications are hidden too)."""
    target = ctx.path_id()
    p = ctx.params
    seconds = p.number("duration")
    if seconds is not None and not float(seconds).is_integer():
        raise ValidationError("duration", "must be a whole number of seconds")
    duration = int(seconds or 0)
    notes = p.bool("notifications", True) if p.has("notifications") else True
    await ctx.rp.mute(ctx.uid, target, duration, notes)
    return JSON(await relationship_of(ctx, target))


@endpoint(auth="required", scope="write:mutes")
async def unmute(ctx: Ctx) -> Response:
    target = ctx.path_id()
    await ctx.rp.unmute(ctx.uid, target)
    return JSON(await relationship_of(ctx, target))


async def _accounts_page(ctx: Ctx, read) -> Response:
    """``read``: one of the engine's account pages, (accounts, marks)."""
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    users, marks = await read(ctx.uid, max_id=p.cursor("max_id"), limit=p.raw("limit"))
    headers = link_header(ctx, marks, key=lambda c: c, prev=False) if marks else {}
    return JSON([entities.account(u, ctx.base) for u in users], headers=headers)


@endpoint(auth="required", scope="read:blocks")
async def blocks(ctx: Ctx) -> Response:
    return await _accounts_page(ctx, ctx.rp.blocked_accounts)


@endpoint(auth="required", scope="read:mutes")
async def mutes(ctx: Ctx) -> Response:
    return await _accounts_page(ctx, ctx.rp.muted_accounts)


# --- follow requests (locked accounts) ---------------------------------------------------
@endpoint(auth="required", scope="read:follows")
async def follow_requests_list(ctx: Ctx) -> Response:
    """Pending requests to follow the caller, newest first (by request ids)."""
    return await _accounts_page(ctx, ctx.rp.follow_requesters)


@endpoint(auth="required", scope="write:follows")
async def authorize(ctx: Ctx) -> Response:
    requester = ctx.path_id()
    await ctx.rp.authorize_follow(ctx.uid, requester)
    return JSON(await relationship_of(ctx, requester))


@endpoint(auth="required", scope="write:follows")
async def reject(ctx: Ctx) -> Response:
    requester = ctx.path_id()
    await ctx.rp.reject_follow(ctx.uid, requester)
    return JSON(await relationship_of(ctx, requester))


@endpoint(auth="required", scope="write:follows")
async def remove_from_followers(ctx: Ctx) -> Response:
    """Make an account stop following the caller."""
    follower = ctx.path_id()
    await ctx.rp.get_user(follower)
    await ctx.rp.unfollow(follower, ctx.uid)
    return JSON(await relationship_of(ctx, follower))
