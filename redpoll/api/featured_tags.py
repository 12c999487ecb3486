"""Featured hashtags: Mastodon's /api/v1/featured_tags, their suggestions,
/api/v1/tags/:name/feature and unfeature, and an account's featured tags.
The rules are redpoll/conversations/featured_tags.py's."""

from __future__ import annotations

import time
from urllib.parse import quote

from starlette.responses import Response

from ..conversations.featured_tags import FeaturedTag
from .context import Ctx
from .contract import STR, TAG_PATH, Doc, array, path_param, ref, request_body
from .responses import JSON
from .routing import endpoint
from .threads import _tag_name, tag_entity


def featured_entity(base: str, login: str, tag: FeaturedTag) -> dict:
    """Mastodon's FeaturedTag: its count as a string, its last use a date."""
    last = tag.last_status_at
    return {
        "id": str(tag.id),
        "name": tag.name,
        "url": f"{base}/@{login}/tagged/{quote(tag.name, safe='')}",
        "statuses_count": str(tag.statuses_count),
        "last_status_at": (
            time.strftime("%Y-%m-%d", time.gmtime(last // 1000)) if last is not None else None
        ),
    }


async def _entities(ctx: Ctx, uid: int) -> list[dict]:
    user = await ctx.rp.accounts.get_user(uid)
    return [featured_entity(ctx.base, user.login, t) for t in await ctx.rp.tags.featured(uid)]


@endpoint(
    "GET",
    "/api/v1/featured_tags",
    auth="required",
    scope="read:accounts",
    doc=Doc("The hashtags you feature on your profile", "Tags", array(ref("FeaturedTag"))),
)
async def list_featured(ctx: Ctx) -> Response:
    return JSON(await _entities(ctx, ctx.uid))


@endpoint(
    "POST",
    "/api/v1/featured_tags",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Feature a hashtag on your profile (422: invalid, featured already, or ten featured)",
        "Tags",
        ref("FeaturedTag"),
        body=request_body({"name": STR}, required=("name",)),
    ),
)
async def create_featured(ctx: Ctx) -> Response:
    tag = await ctx.rp.tags.feature(ctx.uid, ctx.params.raw("name"))
    user = await ctx.rp.accounts.get_user(ctx.uid)
    return JSON(featured_entity(ctx.base, user.login, tag))


@endpoint(
    "DELETE",
    "/api/v1/featured_tags/{id}",
    auth="required",
    scope="write:accounts",
    doc=Doc("Stop featuring a hashtag", "Tags", ref("Empty"), params=[path_param()]),
)
async def delete_featured(ctx: Ctx) -> Response:
    await ctx.rp.tags.unfeature(ctx.uid, ctx.path_id())
    return JSON({})


@endpoint(
    "GET",
    "/api/v1/featured_tags/suggestions",
    auth="required",
    scope="read:accounts",
    doc=Doc(
        "The hashtags you used lately and do not feature (at most ten)",
        "Tags",
        array(ref("Tag")),
    ),
)
async def suggestions(ctx: Ctx) -> Response:
    return JSON([tag_entity(ctx, t, True) for t in await ctx.rp.tags.featured_suggestions(ctx.uid)])


async def _featuring(ctx: Ctx, on: bool) -> Response:
    tag = await ctx.rp.tags.set_featuring(ctx.uid, _tag_name(ctx, "name"), on)
    return JSON(tag_entity(ctx, tag, True))


@endpoint(
    "POST",
    "/api/v1/tags/{name}/feature",
    auth="required",
    scope="write:accounts",
    doc=Doc("Feature a hashtag on your profile", "Tags", ref("Tag"), params=[TAG_PATH]),
)
async def feature_tag(ctx: Ctx) -> Response:
    return await _featuring(ctx, True)


@endpoint(
    "POST",
    "/api/v1/tags/{name}/unfeature",
    auth="required",
    scope="write:accounts",
    doc=Doc("Stop featuring a hashtag", "Tags", ref("Tag"), params=[TAG_PATH]),
)
async def unfeature_tag(ctx: Ctx) -> Response:
    return await _featuring(ctx, False)


@endpoint(
    "GET",
    "/api/v1/accounts/{id}/featured_tags",
    auth="optional",
    scope="read:accounts",
    doc=Doc(
        "The hashtags an account features on its profile",
        "Accounts",
        array(ref("FeaturedTag")),
        params=[path_param()],
    ),
)
async def account_featured(ctx: Ctx) -> Response:
    return JSON(await _entities(ctx, ctx.path_id()))
