"""Scheduled statuses (Mastodon's ScheduledStatus): list, show, reschedule,
cancel one's own (another's is a 404); POST /api/v1/statuses with
``scheduled_at`` makes them (redpoll.api.statuses)."""

from __future__ import annotations

from starlette.responses import Response

from ..media import entity as media_entity
from ..render.entities import iso
from ..scheduling import scheduled
from .context import Ctx
from .contract import PAGE, SCHEDULED_REF, Doc, array, path_param, ref, request_body
from .responses import JSON, link_header
from .routing import endpoint


def scheduled_entity(ctx: Ctx, found: scheduled.Scheduled) -> dict:
    return {
        "id": str(found.id),
        "scheduled_at": iso(found.at),
        "params": found.params,
        "media_attachments": media_entity.attachments(found.media or None, ctx.base),
    }


def parse_time(ctx: Ctx) -> int:
    """The request's ``scheduled_at`` as ms (ISO 8601; 422 otherwise)."""
    return scheduled.parse_time(ctx.params.raw("scheduled_at"))


@endpoint(
    "GET",
    "/api/v1/scheduled_statuses",
    auth="required",
    scope="read:statuses",
    doc=Doc(
        "Your scheduled statuses, the newest first",
        "Scheduled statuses",
        array(SCHEDULED_REF),
        paged=True,
        params=PAGE,
    ),
)
async def list_scheduled(ctx: Ctx) -> Response:
    found = await ctx.rp.statuses.scheduled(ctx.uid, **ctx.params.cursors())
    return JSON([scheduled_entity(ctx, s) for s in found], headers=link_header(ctx, found))


@endpoint(
    "GET",
    "/api/v1/scheduled_statuses/{id}",
    auth="required",
    scope="read:statuses",
    doc=Doc(
        "One of your scheduled statuses", "Scheduled statuses", SCHEDULED_REF, params=[path_param()]
    ),
)
async def get_scheduled(ctx: Ctx) -> Response:
    return JSON(scheduled_entity(ctx, await ctx.rp.statuses.scheduled_one(ctx.uid, ctx.path_id())))


@endpoint(
    "PUT",
    "/api/v1/scheduled_statuses/{id}",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Move one of your scheduled statuses to another time (at least 5 minutes ahead)",
        "Scheduled statuses",
        SCHEDULED_REF,
        params=[path_param()],
        body=request_body(
            {"scheduled_at": {"type": "string", "format": "date-time"}}, ("scheduled_at",)
        ),
    ),
)
async def update_scheduled(ctx: Ctx) -> Response:
    found = await ctx.rp.statuses.reschedule(ctx.uid, ctx.path_id(), parse_time(ctx))
    return JSON(scheduled_entity(ctx, found))


@endpoint(
    "DELETE",
    "/api/v1/scheduled_statuses/{id}",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Cancel one of your scheduled statuses (its uploads become unattached)",
        "Scheduled statuses",
        ref("Empty"),
        params=[path_param()],
    ),
)
async def delete_scheduled(ctx: Ctx) -> Response:
    await ctx.rp.statuses.cancel_scheduled(ctx.uid, ctx.path_id())
    return JSON({})
