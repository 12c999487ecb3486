"""What Mastodon clients read at start-up, with real (so far empty) data.

A 404 on any of these breaks many clients' first screen. Redpoll has no
custom emojis, filters, announcements or follow requests yet (locked accounts
come with the privacy issue), so these lists are empty because there is
nothing in them, not because the endpoints are stubs: each answers what the
data is. Markers belong to the notifications work.
"""
from __future__ import annotations

from starlette.responses import Response

from .http import JSON, Ctx, endpoint


@endpoint(auth="none", params=False)
async def custom_emojis(ctx: Ctx) -> Response:
    return JSON([])


@endpoint(auth="required", scope="read:filters")
async def filters_v1(ctx: Ctx) -> Response:
    return JSON([])


@endpoint(auth="required", scope="read:filters")
async def filters_v2(ctx: Ctx) -> Response:
    return JSON([])


@endpoint(auth="required")
async def announcements(ctx: Ctx) -> Response:
    ctx.params.bool("with_dismissed")
    return JSON([])


@endpoint(auth="required", scope="read:accounts")
async def preferences(ctx: Ctx) -> Response:
    """The defaults a client pre-fills its compose box with: what a post
    without those parameters gets."""
    user = await ctx.rp.get_user(ctx.uid)
    return JSON({"posting:default:visibility": user.privacy, "posting:default:sensitive": False,
                 "posting:default:language": None, "reading:expand:media": "default",
                 "reading:expand:spoilers": False})

