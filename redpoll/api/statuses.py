"""Statuses and timelines."""
from __future__ import annotations

from starlette.responses import Response

from .. import idempotency
from ..errors import Forbidden, ValidationError
from ..models import Page, Status
from . import entities
from .http import JSON, NOT_FOUND, ApiError, Ctx, endpoint, link_header

VISIBILITIES = ("public", "unlisted", "private", "direct")


async def render_statuses(ctx: Ctx, statuses: list[Status], *, with_source: bool = False) -> list[dict]:
    """Statuses with their authors' account entities (one read for all authors)."""
    if not statuses:
        return []
    authors = await ctx.rp.get_users(list(dict.fromkeys(s.user_id for s in statuses)))
    base = ctx.base
    accounts = {u.id: entities.account(u, base) for u in authors}
    viewer = ctx.token is not None and ctx.token.uid is not None
    out = []
    for s in statuses:
        author = accounts.get(s.user_id)
        if author is None:
            author = accounts[s.user_id] = entities.account(entities.placeholder_user(s), base)
        out.append(entities.status(s, author, base, viewer=viewer, with_source=with_source))
    return out


async def timeline_response(ctx: Ctx, statuses: Page) -> Response:
    """A page of statuses, from the process's kept renderings (api/rendered.py);
    authors the page did not bring along are read here."""
    authors = statuses.authors
    missing = [uid for uid in dict.fromkeys(s.user_id for s in statuses) if uid not in authors]
    if missing:
        authors = {**authors, **{u.id: u for u in await ctx.rp.get_users(missing)}}
    viewer = ctx.token is not None and ctx.token.uid is not None
    body = ctx.request.app.state.rendered.array(statuses, authors, ctx.base, viewer)
    return Response(body, media_type=JSON.media_type, headers=link_header(ctx, statuses))


# --- statuses -------------------------------------------------------------------------------
def _unsupported(ctx: Ctx) -> None:
    """Reject, rather than silently drop, what redpoll cannot do."""
    p = ctx.params
    if p.has("media_ids"):
        raise ValidationError("media_ids", "media attachments are not supported")
    if p.has("poll"):
        raise ValidationError("poll", "polls are not supported")
    if p.has("in_reply_to_id"):
        raise ValidationError("in_reply_to_id", "replies are not supported")
    if p.has("scheduled_at"):
        raise ValidationError("scheduled_at", "scheduled statuses are not supported")
    if p.str("spoiler_text", max_chars=500):
        raise ValidationError("spoiler_text", "content warnings are not supported")
    visibility = p.str("visibility", max_chars=20)
    if visibility not in (None, "public"):
        if visibility in VISIBILITIES:
            raise ValidationError("visibility", f"{visibility} is not supported; only public")
        raise ValidationError("visibility", "must be one of " + ", ".join(VISIBILITIES))
    p.bool("sensitive")
    p.str("language", max_chars=16)


def _location(ctx: Ctx) -> dict:
    """Twitter's statuses/update ``lat`` and ``long``, as the engine's location extra."""
    lat, lon = ctx.params.number("lat"), ctx.params.number("long")
    if lat is None and lon is None:
        return {}
    if lat is None or lon is None:
        raise ValidationError("lat" if lat is None else "long", "lat and long go together")
    if not -90 <= lat <= 90:
        raise ValidationError("lat", "must be between -90 and 90")
    if not -180 <= lon <= 180:
        raise ValidationError("long", "must be between -180 and 180")
    return {"location": f"{lat!r},{lon!r}"}


@endpoint(auth="required", scope="write:statuses")
async def post_status(ctx: Ctx) -> Response:
    _unsupported(ctx)
    text = ctx.params.str("status", required=True, max_chars=100_000)
    extra = _location(ctx)
    key = ctx.request.headers.get("idempotency-key")
    if key is not None:
        status = await idempotency.post_once(ctx.rp, ctx.uid, key, text, extra)
    else:
        status = await ctx.rp.post(ctx.uid, text, extra)
    return JSON((await render_statuses(ctx, [status]))[0])


@endpoint(auth="optional", scope="read:statuses")
async def get_status(ctx: Ctx) -> Response:
    status = await ctx.rp.get_status(ctx.path_id())
    return JSON((await render_statuses(ctx, [status]))[0])


@endpoint(auth="optional", scope="read:statuses")
async def get_statuses(ctx: Ctx) -> Response:
    ids = list(dict.fromkeys(ctx.params.ids("id")))
    return JSON(await render_statuses(ctx, await ctx.rp.get_statuses(ids)))


@endpoint(auth="required", scope="write:statuses")
async def delete_status(ctx: Ctx) -> Response:
    status = await ctx.rp.get_status(ctx.path_id())
    try:
        await ctx.rp.delete_status(status.id, ctx.uid)
    except Forbidden:  # Mastodon answers 404 for statuses that are not yours
        raise ApiError(404, NOT_FOUND) from None
    return JSON((await render_statuses(ctx, [status], with_source=True))[0])


# --- timelines ------------------------------------------------------------------------------
@endpoint(auth="required", scope="read:statuses")
async def home(ctx: Ctx) -> Response:
    return await timeline_response(ctx, await ctx.rp.home_timeline(ctx.uid, **ctx.params.cursors()))


@endpoint(auth="optional", scope="read:statuses")
async def public(ctx: Ctx) -> Response:
    p = ctx.params
    local, remote, only_media = p.bool("local"), p.bool("remote"), p.bool("only_media")
    cursors = p.cursors()
    if (remote and not local) or only_media:  # no remote statuses, no media here
        return JSON([])
    return await timeline_response(ctx, await ctx.rp.public_timeline(**cursors))


@endpoint(auth="required", scope="read:lists")
async def list_timeline(ctx: Ctx) -> Response:
    statuses = await ctx.rp.list_timeline(ctx.uid, ctx.path_id("list_id"), **ctx.params.cursors())
    return await timeline_response(ctx, statuses)
