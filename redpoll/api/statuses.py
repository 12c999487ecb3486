"""Statuses and timelines."""

from __future__ import annotations

import re

import orjson
from starlette.responses import Response

from ..core import limits, validate
from ..core.errors import Forbidden, UnexpectedMentions, ValidationError
from ..core.models import Status
from ..polls import polls
from ..quotes import quotes
from ..reading import pages
from ..relations import visibility
from ..render import entities
from ..render import shown as shown_entities
from .context import Ctx
from .contract import (
    BOOL,
    ID,
    PAGE,
    POLL_PARAM,
    SCHEDULED_REF,
    STATUS_REF,
    STATUSES_REF,
    Doc,
    path_param,
    query_param,
    ref,
    request_body,
)
from .responses import JSON, NOT_FOUND, ApiError, link_header
from .routing import endpoint
from .scheduled import parse_time, scheduled_entity

VISIBILITIES = visibility.ALL


async def seen_status(ctx: Ctx, sid: int) -> Status:
    """The status ``sid`` if the caller may see it (redpoll.relations.visibility);
    404 otherwise, as for a status that does not exist."""
    return await ctx.rp.statuses.seen_status(ctx.viewer, sid)


def status_entities(ctx: Ctx, shown: pages.Shown, *, with_source: bool = False) -> list[dict]:
    """The entities of ``shown.statuses`` as the caller sees them (redpoll.render.shown)."""
    return shown_entities.status_entities(
        shown, ctx.base, ctx.viewer is not None, with_source=with_source
    )


async def render_statuses(
    ctx: Ctx, statuses: list[Status], *, with_source: bool = False
) -> list[dict]:
    """Statuses as the caller is shown them where they were asked for
    (redpoll.reading.pages.show), rendered (:func:`status_entities`)."""
    return status_entities(
        ctx, await ctx.rp.timelines.show(ctx.viewer, statuses), with_source=with_source
    )


def timeline_response(ctx: Ctx, shown: pages.Shown) -> Response:
    """A page of statuses (redpoll.reading.pages), from the process's kept
    renderings (:func:`rendered_entities`). The Link header pages on the
    page's own cursors when it has them (favourites and bookmarks), else on
    what was read."""
    body = b"[" + b",".join(rendered_entities(ctx, shown)) + b"]"
    links = (
        link_header(ctx, shown.cursors, key=lambda c: c)
        if shown.cursors is not None
        else link_header(ctx, list(shown.read))
    )
    return Response(body, media_type=JSON.media_type, headers=links)


def rendered_entities(ctx: Ctx, shown: pages.Shown) -> list[bytes]:
    """The JSON entities of ``shown.statuses``, in order (:func:`rendered_pairs`)."""
    return [body for _, body in rendered_pairs(ctx, shown)]


def rendered_pairs(ctx: Ctx, shown: pages.Shown) -> list[tuple[Status, bytes]]:
    """Each of ``shown.statuses`` with its JSON entity, in order, from the
    process's kept renderings (redpoll.render.shown.rendered_pairs)."""
    return shown_entities.rendered_pairs(
        shown, ctx.base, ctx.viewer is not None, ctx.request.app.state.rendered
    )


# --- statuses -------------------------------------------------------------------------------
_LANGUAGE = re.compile(r"[a-z]{2,3}(?:[-_][a-z0-9]{2,8})?")


def _post_options(ctx: Ctx, text_chars: int) -> dict:
    """The documented POST /api/v1/statuses parameters beyond ``status``, as
    the engine's status extras (echoed by the entity). Clients send them all
    with every post, empty or false; what redpoll cannot do is refused with a
    422 naming the parameter, never silently dropped."""
    p = ctx.params
    extra = {}
    visibility = p.str("visibility", max_chars=20)
    if visibility is not None:  # none named: the author's default (posting.prepare)
        if visibility not in VISIBILITIES:
            raise ValidationError("visibility", "must be one of " + ", ".join(VISIBILITIES))
        extra["visibility"] = visibility
    spoiler = (p.str("spoiler_text", max_chars=limits.SPOILER_TEXT_MAX_CHARS) or "").strip()
    if spoiler:
        if len(spoiler) + text_chars > limits.STATUS_MAX_CHARS:
            raise ValidationError(
                "spoiler_text",
                "the text and the content warning together "
                f"exceed {limits.STATUS_MAX_CHARS} characters",
            )
        extra["spoiler_text"] = spoiler
    if p.bool("sensitive") or spoiler:  # a content warning hides the text (Mastodon)
        extra["sensitive"] = "true"
    language = p.str("language", max_chars=16)
    if language:
        language = language.lower()
        if not _LANGUAGE.fullmatch(language):
            raise ValidationError("language", "must be an ISO 639 language code")
        extra["language"] = language
    quoted = p.cursor("quoted_status_id")  # checked when posted (redpoll.quotes)
    if quoted is not None:
        extra[quotes.EXTRA] = str(quoted)
    policy = p.str("quote_approval_policy", max_chars=20)
    if policy:
        extra[quotes.POLICY_EXTRA] = policy
    return extra


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


def poll_param(ctx: Ctx) -> polls.PollSpec | None:
    """The ``poll`` parameter, JSON or form-encoded (Params.nested),
    checked (polls.spec); None when not sent."""
    raw = ctx.params.nested("poll")
    if raw is None:
        return None
    return polls.spec(
        raw.get("options"),
        raw.get("expires_in"),
        raw.get("multiple"),
        raw.get("hide_totals"),
        min_s=ctx.settings.poll_expires_min_s,
    )


def _media_ids(ctx: Ctx) -> list[int]:
    """``media_ids`` (JSON list, or form ``media_ids[]``); clients send an
    empty list with every post. More than four: 422 (the engine says so)."""
    raw = ctx.params.raw("media_ids")
    if raw in (None, "", []):
        return []
    return ctx.params.ids("media_ids", max_count=limits.MEDIA_PER_STATUS * 4)


@endpoint(
    "POST",
    "/api/v1/statuses",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Post a status (Idempotency-Key honoured; lat/long stored as location; "
        "visibility public, unlisted, private (followers and mentioned) "
        "or direct (mentioned only)); with scheduled_at (at least 5 minutes "
        "ahead) a ScheduledStatus, posted at that time",
        "Statuses",
        {"anyOf": [STATUS_REF, SCHEDULED_REF]},
        params=[
            {
                "name": "Idempotency-Key",
                "in": "header",
                "required": False,
                "schema": {"type": "string", "maxLength": limits.IDEMPOTENCY_KEY_MAX_CHARS},
            }
        ],
        body=request_body(
            {
                "status": {"type": "string", "maxLength": limits.STATUS_TEXT_MAX_CHARS},
                "visibility": {"enum": ["public", "unlisted", "private", "direct"]},
                "sensitive": BOOL,
                "spoiler_text": {"type": "string", "maxLength": limits.SPOILER_TEXT_MAX_CHARS},
                "language": {"type": "string", "pattern": "^[a-z]{2,3}(-[a-z]{2,8})?$"},
                "media_ids": {
                    "type": "array",
                    "items": ID,
                    "maxItems": limits.MEDIA_PER_STATUS,
                    "description": "Your uploads not attached "
                    "elsewhere; with them the "
                    "text may be empty",
                },
                "in_reply_to_id": {**ID, "description": "Reply to this status (404 if unknown)"},
                "scheduled_at": {"type": "string", "format": "date-time"},
                "poll": POLL_PARAM,
                "lat": {"type": "number", "minimum": -90, "maximum": 90},
                "long": {"type": "number", "minimum": -180, "maximum": 180},
                "quoted_status_id": {
                    **ID,
                    "description": "Quote this status (404 when it is unknown or "
                    "its quote approval policy does not let you)",
                },
                "quote_approval_policy": {
                    "enum": list(quotes.POLICIES),
                    "description": "Who may quote it (default public; a private "
                    "or direct status: nobody)",
                },
                "allowed_mentions": {
                    "type": "array",
                    "items": ID,
                    "description": "The accounts it may mention: mentioning another "
                    "is a 422 naming them in unexpected_accounts, nothing posted",
                },
            },
            (),
        ),
    ),
)
async def post_status(ctx: Ctx) -> Response:
    media = _media_ids(ctx)  # with attachments, the text may be empty (Mastodon)
    text = ctx.params.str("status", required=not media, max_chars=100_000) or ""
    extra = _post_options(ctx, validate.status_length(text)) | _location(ctx)
    poll = poll_param(ctx)
    reply_to = ctx.params.cursor("in_reply_to_id")  # an unknown one: 404, nothing posted
    if reply_to is not None:  # nor a reply to what the caller may not see
        await seen_status(ctx, reply_to)
    key = ctx.request.headers.get("idempotency-key")
    if ctx.params.has("scheduled_at"):  # posted later, by a job (redpoll.scheduling)
        if poll is not None:  # (it would be lost when the job posts it)
            raise ValidationError("poll", "a scheduled status cannot have a poll yet")
        try:
            found = await ctx.rp.statuses.schedule(
                ctx.uid, parse_time(ctx), text, extra, reply_to, media, ctx.params.raw("poll"), key
            )
        except quotes.QuoteRefused:  # Mastodon's answer, nothing scheduled
            raise ApiError(404, quotes.NOT_FOUND_MESSAGE) from None
        return JSON(scheduled_entity(ctx, found))
    allowed = (
        frozenset(ctx.params.ids("allowed_mentions"))
        if ctx.params.has("allowed_mentions")
        else None
    )
    try:
        if key is not None:
            status = await ctx.rp.statuses.post_once(
                ctx.uid, key, text, extra, reply_to, media, poll, allowed_mentions=allowed
            )
        else:
            status = await ctx.rp.statuses.post(
                ctx.uid, text, extra, reply_to, media, poll, allowed_mentions=allowed
            )
    except quotes.QuoteRefused:  # Mastodon's answer, nothing posted
        raise ApiError(404, quotes.NOT_FOUND_MESSAGE) from None
    except UnexpectedMentions as exc:  # Mastodon's answer: who they are
        found = await ctx.rp.accounts.get_users(exc.accounts)
        body = {
            "error": "Post would be sent to unexpected accounts",
            "unexpected_accounts": [entities.account(u, ctx.base) for u in found],
        }
        return JSON(body, status_code=422)
    return JSON((await render_statuses(ctx, [status]))[0])


@endpoint(
    "GET",
    "/api/v1/statuses/{id}",
    auth="optional",
    scope="read:statuses",
    doc=Doc("A status", "Statuses", STATUS_REF, params=[path_param()]),
)
async def get_status(ctx: Ctx) -> Response:
    """From the kept renderings the timelines use, under the same rule
    (:func:`rendered_entities`); visibility and the counts and flags in one
    round trip (redpoll.reading.pages.checked). A status the caller may not see, or a
    boost whose original is gone, is a 404."""
    entities_ = rendered_entities(
        ctx, await ctx.rp.timelines.status_page(ctx.viewer, ctx.path_id())
    )
    if not entities_:
        raise ApiError(404, NOT_FOUND)
    return Response(entities_[0], media_type=JSON.media_type)


@endpoint(
    "GET",
    "/api/v1/statuses/{id}/card",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "A status's link preview card, or {} when it has none (deprecated in "
        "Mastodon for the status's ``card``; some apps still call it)",
        "Statuses",
        {"oneOf": [ref("PreviewCard"), ref("Empty")]},
        params=[path_param()],
    ),
)
async def status_card(ctx: Ctx) -> Response:
    """From the status's rendering (:func:`get_status`): its ``card``."""
    entities_ = rendered_entities(
        ctx, await ctx.rp.timelines.status_page(ctx.viewer, ctx.path_id())
    )
    if not entities_:
        raise ApiError(404, NOT_FOUND)
    shown = orjson.loads(entities_[0])
    return JSON((shown.get("reblog") or shown).get("card") or {})


@endpoint(
    "GET",
    "/api/v1/statuses",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "Several statuses by id",
        "Statuses",
        STATUSES_REF,
        params=[
            query_param(
                "id[]", {"type": "array", "items": ID, "maxItems": limits.API_IDS_PER_REQUEST}
            )
        ],
    ),
)
async def get_statuses(ctx: Ctx) -> Response:
    ids = list(dict.fromkeys(ctx.params.ids("id")))
    shown = await ctx.rp.timelines.statuses_page(ctx.viewer, ids)  # as get_status
    return Response(
        b"[" + b",".join(rendered_entities(ctx, shown)) + b"]", media_type=JSON.media_type
    )


@endpoint(
    "DELETE",
    "/api/v1/statuses/{id}",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Delete your status; returns it with its source text. Its uploads go with it "
        "whatever delete_media says (Mastodon 4.4's parameter: true deletes them at once, "
        "false lets the server keep them a day for a redraft)",
        "Statuses",
        STATUS_REF,
        params=[path_param(), query_param("delete_media", BOOL)],
    ),
)
async def delete_status(ctx: Ctx) -> Response:
    ctx.params.bool("delete_media")  # checked (a boolean); deleting is the same either way
    status = await seen_status(ctx, ctx.path_id())
    try:
        await ctx.rp.statuses.delete(status.id, ctx.uid)
    except Forbidden:  # Mastodon answers 404 for statuses that are not yours
        raise ApiError(404, NOT_FOUND) from None
    return JSON((await render_statuses(ctx, [status], with_source=True))[0])


# --- timelines ------------------------------------------------------------------------------
@endpoint(
    "GET",
    "/api/v1/timelines/home",
    auth="required",
    scope="read:statuses",
    doc=Doc("Home timeline", "Timelines", STATUSES_REF, paged=True, params=PAGE),
)
async def home(ctx: Ctx) -> Response:
    return timeline_response(ctx, await ctx.rp.timelines.home_page(ctx.uid, **ctx.params.cursors()))


@endpoint(
    "GET",
    "/api/v1/timelines/public",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "Public timeline: every public status known here, newest first (local: this "
        "server's; remote: other servers')",
        "Timelines",
        STATUSES_REF,
        paged=True,
        params=[
            *PAGE,
            query_param("local", BOOL),
            query_param("remote", BOOL),
            query_param("only_media", BOOL),
        ],
    ),
)
async def public(ctx: Ctx) -> Response:
    p = ctx.params
    local, remote, only_media = p.bool("local"), p.bool("remote"), p.bool("only_media")
    return timeline_response(
        ctx,
        await ctx.rp.timelines.public_page(
            ctx.viewer, origin=origin(local, remote), only_media=only_media, **p.cursors()
        ),
    )


@endpoint(
    "GET",
    "/api/v1/timelines/link",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "A trending link's timeline (Mastodon 4.3): the public statuses of discoverable "
        "accounts that carried the link, newest first (local: this server's); 404 for a "
        "link that does not trend",
        "Timelines",
        STATUSES_REF,
        paged=True,
        params=[
            query_param(
                "url", {"type": "string", "maxLength": limits.TRENDS_LINK_MAX_CHARS}, required=True
            ),
            *PAGE,
            query_param("local", BOOL),
        ],
    ),
)
async def link_timeline(ctx: Ctx) -> Response:
    p = ctx.params
    url = p.str("url", max_chars=limits.TRENDS_LINK_MAX_CHARS * 2) or ""
    return timeline_response(
        ctx, await ctx.rp.discovery.link_page(ctx.viewer, url, local=p.bool("local"), **p.cursors())
    )


def origin(local: bool, remote: bool) -> str | None:
    """``local``: this server's statuses only; ``remote`` (without local):
    other servers' only; neither (or both, as Mastodon): all."""
    return "local" if local else "remote" if remote else None


@endpoint(
    "GET",
    "/api/v1/timelines/list/{list_id}",
    auth="required",
    scope="read:lists",
    doc=Doc(
        "A list's timeline",
        "Timelines",
        STATUSES_REF,
        paged=True,
        params=[path_param("list_id"), *PAGE],
    ),
)
async def list_timeline(ctx: Ctx) -> Response:
    lid = ctx.path_id("list_id")
    return timeline_response(
        ctx, await ctx.rp.timelines.list_page(ctx.uid, lid, **ctx.params.cursors())
    )
