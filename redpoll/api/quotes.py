"""Quote posts (Mastodon 4.5): a status's quotes, revoking one, and the
quote approval policy of a status (redpoll.quotes)."""

from __future__ import annotations

from starlette.responses import Response

from ..core.errors import Forbidden
from ..quotes import quotes
from .context import Ctx
from .contract import PAGE, STATUS_REF, STATUSES_REF, Doc, path_param, request_body
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint
from .statuses import rendered_entities, seen_status, timeline_response

#: Mastodon's answer to an action on another's status
NOT_ALLOWED = "This action is not allowed"


def _one(ctx: Ctx, shown) -> Response:
    entities_ = rendered_entities(ctx, shown)
    if not entities_:
        raise ApiError(404, NOT_FOUND)
    return Response(entities_[0], media_type=JSON.media_type)


@endpoint(
    "GET",
    "/api/v1/statuses/{id}/quotes",
    auth="required",
    scope="read:statuses",
    doc=Doc(
        "The accepted quotes of your status, newest first (another's: 403)",
        "Statuses",
        STATUSES_REF,
        paged=True,
        params=[path_param(), *PAGE],
    ),
)
async def status_quotes(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)  # 404 for a status the caller may not see
    p = ctx.params
    try:
        shown = await ctx.rp.timelines.quotes_page(
            ctx.uid,
            sid,
            max_id=p.cursor("max_id"),
            since_id=p.cursor("since_id"),
            min_id=p.cursor("min_id"),
            limit=p.raw("limit"),
        )
    except Forbidden:
        raise ApiError(403, NOT_ALLOWED) from None
    return timeline_response(ctx, shown)


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/quotes/{quoting_status_id}/revoke",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Revoke the quote the status quoting_status_id makes of your status: "
        "it shows your status no more (state revoked); returns the quoting status",
        "Statuses",
        STATUS_REF,
        params=[path_param(), path_param("quoting_status_id")],
    ),
)
async def revoke_quote(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    quoting = ctx.path_id("quoting_status_id")
    await seen_status(ctx, sid)
    try:
        shown = await ctx.rp.statuses.revoke_quote(ctx.uid, sid, quoting)
    except Forbidden:
        raise ApiError(403, NOT_ALLOWED) from None
    except quotes.QuoteNotFound:
        raise ApiError(404, NOT_FOUND) from None
    return _one(ctx, shown)


@endpoint(
    "PUT",
    "/api/v1/statuses/{id}/interaction_policy",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Change who may quote your status (a private or direct one: nobody)",
        "Statuses",
        STATUS_REF,
        params=[path_param()],
        body=request_body({"quote_approval_policy": {"enum": list(quotes.POLICIES)}}),
    ),
)
async def interaction_policy(ctx: Ctx) -> Response:
    sid = ctx.path_id()
    await seen_status(ctx, sid)
    policy = ctx.params.str("quote_approval_policy", max_chars=20)
    try:
        shown = await ctx.rp.statuses.set_quote_policy(ctx.uid, sid, policy)
    except Forbidden:
        raise ApiError(403, NOT_ALLOWED) from None
    return _one(ctx, shown)
