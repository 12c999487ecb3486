"""Editing statuses: PUT /api/v1/statuses/:id, its history and its source
(redpoll.posting.editing)."""

from __future__ import annotations

from starlette.responses import Response

from ..core import limits
from ..core.errors import Forbidden, ValidationError
from ..quotes import quotes
from ..render import entities
from .context import Ctx
from .contract import BOOL, ID, POLL_PARAM, Doc, array, path_param, ref, request_body
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint
from .statuses import _LANGUAGE, _media_ids, poll_param, render_statuses


@endpoint(
    "PUT",
    "/api/v1/statuses/{id}",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Edit your status: its text, content warning, sensitive flag, language "
        "and poll (as Mastodon: a poll not sent is removed; changed options or "
        "choice kind reset its votes) and attachments (media_ids: the ones it "
        "keeps and new uploads of yours, in order); its visibility and reply "
        "stay. At most "
        f"{limits.EDITS_MAX} edits; another's status or a missing one: 404",
        "Statuses",
        ref("Status"),
        params=[path_param()],
        body=request_body(
            {
                "status": {"type": "string", "maxLength": limits.STATUS_TEXT_MAX_CHARS},
                "spoiler_text": {"type": "string", "maxLength": limits.SPOILER_TEXT_MAX_CHARS},
                "sensitive": BOOL,
                "language": {"type": "string", "pattern": "^[a-z]{2,3}(-[a-z]{2,8})?$"},
                "media_ids": {"type": "array", "items": ID, "maxItems": limits.MEDIA_PER_STATUS},
                "poll": POLL_PARAM,
                "quote_approval_policy": {"enum": list(quotes.POLICIES)},
            }
        ),
    ),
)
async def edit_status(ctx: Ctx) -> Response:
    p = ctx.params
    poll = poll_param(ctx)  # none sent: the poll goes, as Mastodon's edits
    text = p.str("status", max_chars=100_000) or ""
    spoiler = (p.str("spoiler_text", max_chars=limits.SPOILER_TEXT_MAX_CHARS) or "").strip()
    language = p.str("language", max_chars=16)
    if language:
        language = language.lower()
        if not _LANGUAGE.fullmatch(language):
            raise ValidationError("language", "must be an ISO 639 language code")
    media = _media_ids(ctx) if p.raw("media_ids") is not None else None
    policy = p.str("quote_approval_policy", max_chars=20)
    if policy:  # checked before anything is written
        quotes.policy_param(policy, "public")
    try:
        status = await ctx.rp.statuses.edit(
            ctx.uid,
            ctx.path_id(),
            text,
            spoiler_text=spoiler,
            sensitive=p.bool("sensitive"),
            language=language,
            media=media,
            poll=poll,
        )
        if policy:  # Mastodon 4.5: an edit may change who may quote it; a second
            # atomic step (quote_policy's script), the same on a retried request
            await ctx.rp.statuses.set_quote_policy(ctx.uid, status.id, policy)
            status = await ctx.rp.statuses.seen_status(ctx.viewer, status.id)
    except Forbidden:  # another's status: Mastodon answers 404
        raise ApiError(404, NOT_FOUND) from None
    return JSON((await render_statuses(ctx, [status]))[0])


@endpoint(
    "POST",
    "/api/v1/statuses/{id}/translate",
    auth="required",
    scope="read:statuses",
    doc=Doc(
        "Translate a status: this server has no translation service (its instance "
        "configuration says translation.enabled false), so 404 as Mastodon answers then "
        "(and for a status the caller may not see)",
        "Statuses",
        {"type": "object"},
        params=[path_param()],
        body=request_body({"lang": {"type": "string", "maxLength": 16}}),
    ),
)
async def translate(ctx: Ctx) -> Response:
    await ctx.rp.statuses.seen_status(ctx.viewer, ctx.path_id())  # 404 for one not seen
    raise ApiError(404, NOT_FOUND)  # Mastodon's TranslationService::NotConfiguredError


@endpoint(
    "GET",
    "/api/v1/statuses/{id}/history",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "A status's versions, oldest first (the original included once it was "
        "edited); for whoever may see the status",
        "Statuses",
        array(ref("StatusEdit")),
        params=[path_param()],
    ),
)
async def status_history(ctx: Ctx) -> Response:
    status, author, versions = await ctx.rp.statuses.history(ctx.viewer, ctx.path_id())
    account = entities.account(author or entities.placeholder_user(status), ctx.base)
    return JSON([entities.status_edit(v, account, ctx.base) for v in versions])


@endpoint(
    "GET",
    "/api/v1/statuses/{id}/source",
    auth="required",
    scope="read:statuses",
    doc=Doc(
        "Your status's source text and content warning, for editing it (another's: 404)",
        "Statuses",
        ref("StatusSource"),
        params=[path_param()],
    ),
)
async def status_source(ctx: Ctx) -> Response:
    status = await ctx.rp.statuses.source(ctx.uid, ctx.path_id())
    return JSON(
        {
            "id": str(status.id),
            "text": status.text,
            "spoiler_text": status.extra.get("spoiler_text", ""),
        }
    )
