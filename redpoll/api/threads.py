"""Threads and hashtags: status context, tag timelines, tags."""

from __future__ import annotations

from starlette.responses import Response

from ..conversations import conversation
from ..conversations.tags import Tag
from ..core import limits
from ..core.errors import ValidationError
from .context import Ctx
from .contract import (
    BOOL,
    PAGE,
    STATUS_REF,
    STR,
    TAG_PATH,
    Doc,
    array,
    path_param,
    query_param,
    ref,
)
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint
from .statuses import origin, rendered_pairs, timeline_response


@endpoint(
    "GET",
    "/api/v1/statuses/{id}/context",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "A status's thread: ancestors oldest first, descendants depth-first (bounded)",
        "Statuses",
        ref("Context"),
        params=[path_param()],
    ),
)
async def context(ctx: Ctx) -> Response:
    shown, ancestors = await ctx.rp.timelines.thread(ctx.viewer, ctx.path_id())
    pairs = rendered_pairs(ctx, shown)  # the kept renderings, as a page's
    return Response(
        b'{"ancestors":['
        + b",".join(b for s, b in pairs if s.id in ancestors)
        + b'],"descendants":['
        + b",".join(b for s, b in pairs if s.id not in ancestors)
        + b"]}",
        media_type=JSON.media_type,
    )


def _tag_name(ctx: Ctx, name: str = "tag") -> str:
    try:
        return conversation.tag_name(ctx.request.path_params[name])
    except ValidationError:
        raise ApiError(404, NOT_FOUND) from None


@endpoint(
    "GET",
    "/api/v1/timelines/tag/{tag}",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "Public statuses carrying a hashtag",
        "Timelines",
        array(STATUS_REF),
        paged=True,
        params=[
            {**TAG_PATH, "name": "tag"},
            *PAGE,
            query_param("local", BOOL),
            query_param("remote", BOOL),
            query_param("only_media", BOOL),
            *(
                query_param(
                    f"{mode}[]",
                    {"type": "array", "items": STR, "maxItems": limits.TAG_TIMELINE_COMBINE_MAX},
                    text,
                )
                for mode, text in (
                    ("any", "Or carrying one of these hashtags"),
                    ("all", "And carrying all of these"),
                    ("none", "And none of these"),
                )
            ),
        ],
    ),
)
async def tag_timeline(ctx: Ctx) -> Response:
    try:
        name = conversation.tag_name(ctx.request.path_params["tag"])
    except ValidationError:  # no status can carry it: none (Mastodon answers [] too)
        return JSON([])
    p = ctx.params
    combine = {mode: _tag_list(ctx, mode) for mode in ("any", "all", "none")}
    local, remote, only_media = p.bool("local"), p.bool("remote"), p.bool("only_media")
    return timeline_response(
        ctx,
        await ctx.rp.timelines.tag_page(
            ctx.viewer,
            name,
            any_=combine["any"],
            all_=combine["all"],
            none=combine["none"],
            origin=origin(local, remote),
            only_media=only_media,
            **p.cursors(),
        ),
    )


def _tag_list(ctx: Ctx, mode: str) -> list[str]:
    """``any[]``/``all[]``/``none[]``: hashtag names (a single value or a
    comma-separated one is taken too), at most limits.TAG_TIMELINE_COMBINE_MAX."""
    value = ctx.params.raw(mode)
    if value in (None, ""):
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    if len(items) > limits.TAG_TIMELINE_COMBINE_MAX:
        raise ValidationError(mode, f"at most {limits.TAG_TIMELINE_COMBINE_MAX} hashtags")
    names = []
    for item in items:
        if not isinstance(item, str):
            raise ValidationError(mode, "must be hashtag names")
        try:
            names.append(conversation.tag_name(item.removeprefix("#")))
        except ValidationError:
            raise ValidationError(mode, "must be hashtag names") from None
    return list(dict.fromkeys(names))


def tag_entity(ctx: Ctx, tag: Tag, viewer: bool) -> dict:
    """The Tag entity (search answers with it too)."""
    out = {
        "name": tag.name,
        "url": f"{ctx.base}/tags/{tag.name}",
        "history": [
            {"day": str(d.day), "uses": str(d.uses), "accounts": str(d.accounts)}
            for d in tag.history
        ],
    }
    if viewer:
        out["following"] = tag.following  # type: ignore[assignment]  # (Mastodon's bool)
        out["featuring"] = tag.featuring  # type: ignore[assignment]
    return out


@endpoint(
    "GET",
    "/api/v1/tags/{name}",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "A hashtag, used or not (404 for a name no hashtag can have)",
        "Tags",
        ref("Tag"),
        params=[TAG_PATH],
    ),
)
async def get_tag(ctx: Ctx) -> Response:
    tag = await ctx.rp.tags.get(ctx.viewer, _tag_name(ctx, "name"))
    return JSON(tag_entity(ctx, tag, ctx.viewer is not None))


@endpoint(
    "POST",
    "/api/v1/tags/{name}/follow",
    auth="required",
    scope="write:follows",
    doc=Doc(
        "Follow a hashtag: its new statuses reach your home", "Tags", ref("Tag"), params=[TAG_PATH]
    ),
)
async def follow_tag(ctx: Ctx) -> Response:
    tag = await ctx.rp.tags.follow(ctx.uid, _tag_name(ctx, "name"), True)
    return JSON(tag_entity(ctx, tag, True))


@endpoint(
    "POST",
    "/api/v1/tags/{name}/unfollow",
    auth="required",
    scope="write:follows",
    doc=Doc("Unfollow a hashtag", "Tags", ref("Tag"), params=[TAG_PATH]),
)
async def unfollow_tag(ctx: Ctx) -> Response:
    tag = await ctx.rp.tags.follow(ctx.uid, _tag_name(ctx, "name"), False)
    return JSON(tag_entity(ctx, tag, True))


@endpoint(
    "GET",
    "/api/v1/followed_tags",
    auth="required",
    scope="read:follows",
    doc=Doc("The hashtags you follow", "Tags", array(ref("Tag"))),
)
async def followed_tags(ctx: Ctx) -> Response:
    return JSON([tag_entity(ctx, t, True) for t in await ctx.rp.tags.followed(ctx.uid)])
