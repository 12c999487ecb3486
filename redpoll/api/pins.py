"""Pins: pin a status of one's own to the profile, unpin it."""

from __future__ import annotations

from starlette.responses import Response

from ..core.errors import StatusNotFound
from .context import Ctx
from .contract import STATUS_REF, Doc, path_param
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint
from .statuses import render_statuses, seen_status


async def _pinned(ctx: Ctx, change) -> Response:
    sid = (await seen_status(ctx, ctx.path_id())).id  # what the caller may not see: 404
    try:
        status = await change(ctx.uid, sid)
    except StatusNotFound:  # deleted meanwhile
        raise ApiError(404, NOT_FOUND) from None
    return JSON((await render_statuses(ctx, [status]))[0])


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/pin",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Pin one of your statuses to your profile (not a boost, not a direct one; at most 5)",
        "Statuses",
        STATUS_REF,
        params=[path_param()],
    ),
)
async def pin(ctx: Ctx) -> Response:
    return await _pinned(ctx, ctx.rp.statuses.pin)


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/unpin",
    auth="required",
    scope="write:accounts",
    doc=Doc("Unpin a status from your profile", "Statuses", STATUS_REF, params=[path_param()]),
)
async def unpin(ctx: Ctx) -> Response:
    return await _pinned(ctx, ctx.rp.statuses.unpin)
