"""Threads and hashtags (issue 9): status context, tag timelines, tags."""
from __future__ import annotations

from starlette.responses import Response

from .. import conversation, tags, timelines
from ..errors import ValidationError
from ..tags import Tag
from .http import JSON, NOT_FOUND, ApiError, Ctx, endpoint
from .statuses import render_statuses, timeline_response


@endpoint(auth="optional", scope="read:statuses")
async def context(ctx: Ctx) -> Response:
    status = await ctx.rp.get_status(ctx.path_id())
    ancestors, descendants = await conversation.context(ctx.rp.store, status)
    up = await render_statuses(ctx, await ctx.rp.get_statuses(ancestors))
    down = await render_statuses(ctx, await ctx.rp.get_statuses(descendants))
    return JSON({"ancestors": up, "descendants": down})


def _tag_name(ctx: Ctx, name: str = "tag") -> str:
    try:
        return conversation.tag_name(ctx.request.path_params[name])
    except ValidationError:
        raise ApiError(404, NOT_FOUND) from None


@endpoint(auth="optional", scope="read:statuses")
async def tag_timeline(ctx: Ctx) -> Response:
    name = _tag_name(ctx)
    p = ctx.params
    for unsupported in ("any", "all", "none"):
        if p.has(unsupported):
            raise ValidationError(unsupported, "combining hashtags is not supported")
    local, remote, only_media = p.bool("local"), p.bool("remote"), p.bool("only_media")
    cursors = p.cursors()
    if (remote and not local) or only_media:  # no remote statuses, no media here
        return JSON([])
    return await timeline_response(ctx, await timelines.tag(ctx.rp.store, name, **cursors))


def tag_entity(ctx: Ctx, tag: Tag, viewer: bool) -> dict:
    """The Tag entity (search answers with it too)."""
    out = {"name": tag.name, "url": f"{ctx.base}/tags/{tag.name}", "history": []}
    if viewer:
        out["following"] = tag.following
    return out


@endpoint(auth="optional", scope="read:statuses")
async def get_tag(ctx: Ctx) -> Response:
    tag = await tags.get_tag(ctx.rp.store, ctx.viewer, _tag_name(ctx, "name"))
    if not (tag.used or tag.following):
        raise ApiError(404, NOT_FOUND)
    return JSON(tag_entity(ctx, tag, ctx.viewer is not None))


@endpoint(auth="required", scope="write:follows")
async def follow_tag(ctx: Ctx) -> Response:
    tag = await tags.set_following(ctx.rp.store, ctx.rp.queue, ctx.uid, _tag_name(ctx, "name"),
                                   True)
    return JSON(tag_entity(ctx, tag, True))


@endpoint(auth="required", scope="write:follows")
async def unfollow_tag(ctx: Ctx) -> Response:
    tag = await tags.set_following(ctx.rp.store, ctx.rp.queue, ctx.uid, _tag_name(ctx, "name"),
                                   False)
    return JSON(tag_entity(ctx, tag, True))


@endpoint(auth="required", scope="read:follows")
async def followed_tags(ctx: Ctx) -> Response:
    names = await tags.followed(ctx.rp.store, ctx.uid)
    return JSON([tag_entity(ctx, Tag(n, True, True), True) for n in names])
