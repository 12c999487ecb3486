"""What Mastodon clients read at start-up, with real (so far empty) data.

A 404 on any of these breaks many clients' first screen. Redpoll has no
custom emojis or announcements, so these lists are empty because there is
nothing in them, not because the endpoints are stubs: each answers what the
data is. Filters are in redpoll.api.filters.
"""

from __future__ import annotations

from starlette.responses import Response

from .context import Ctx
from .contract import BOOL, ID, PREFERENCES, Doc, array, query_param
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint


@endpoint(
    "GET",
    "/api/v1/custom_emojis",
    auth="none",
    params=False,
    doc=Doc("Custom emojis (none)", "Instance", array({})),
)
async def custom_emojis(ctx: Ctx) -> Response:
    return JSON([])


@endpoint(
    "GET",
    "/api/v1/announcements",
    auth="required",
    doc=Doc(
        "Instance announcements (none)",
        "Instance",
        array({}),
        params=[query_param("with_dismissed", BOOL)],
    ),
)
async def announcements(ctx: Ctx) -> Response:
    ctx.params.bool("with_dismissed")
    return JSON([])


def _no_announcement(ctx: Ctx) -> Response:
    """Mastodon's answer for an announcement that is not published
    (Announcement.published.find): this server publishes none."""
    raise ApiError(404, NOT_FOUND)


ANNOUNCEMENT_ID = {"name": "id", "in": "path", "required": True, "schema": ID}
REACTION_NAME = {
    "name": "name",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "maxLength": 100},
}


@endpoint(
    "POST",
    "/api/v1/announcements/{id}/dismiss",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Dismiss an announcement (none are published: 404, as Mastodon for an unknown one)",
        "Instance",
        {"type": "object"},
        params=[ANNOUNCEMENT_ID],
    ),
)
async def dismiss_announcement(ctx: Ctx) -> Response:
    return _no_announcement(ctx)


@endpoint(
    "PUT",
    "/api/v1/announcements/{id}/reactions/{name}",
    auth="required",
    scope="write:favourites",
    doc=Doc(
        "React to an announcement (none are published: 404)",
        "Instance",
        {"type": "object"},
        params=[ANNOUNCEMENT_ID, REACTION_NAME],
    ),
)
async def react_to_announcement(ctx: Ctx) -> Response:
    return _no_announcement(ctx)


@endpoint(
    "DELETE",
    "/api/v1/announcements/{id}/reactions/{name}",
    auth="required",
    scope="write:favourites",
    doc=Doc(
        "Take back a reaction to an announcement (none are published: 404)",
        "Instance",
        {"type": "object"},
        params=[ANNOUNCEMENT_ID, REACTION_NAME],
    ),
)
async def unreact_to_announcement(ctx: Ctx) -> Response:
    return _no_announcement(ctx)


@endpoint(
    "GET",
    "/api/v1/preferences",
    auth="required",
    scope="read:accounts",
    doc=Doc("Your posting and reading defaults", "Accounts", PREFERENCES),
)
async def preferences(ctx: Ctx) -> Response:
    """The defaults a client pre-fills its compose box with: what a post
    without those parameters gets."""
    user = await ctx.rp.accounts.get_user(ctx.uid)
    return JSON(
        {
            "posting:default:visibility": user.privacy,
            "posting:default:sensitive": False,
            "posting:default:language": None,
            "posting:default:quote_policy": user.quote_policy,
            "reading:expand:media": "default",
            "reading:expand:spoilers": False,
        }
    )
