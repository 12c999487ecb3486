"""Endorsements (featured profiles) and private notes on accounts:
Mastodon's routes for them. The rules are redpoll/relations/endorsements.py's
and notes.py's."""

from __future__ import annotations

from starlette.responses import Response

from ..core import limits
from ..render import entities
from .accounts import relationship_of
from .context import Ctx
from .contract import ACCOUNTS_REF, PAGE, STR, Doc, path_param, ref, request_body
from .responses import JSON, link_header
from .routing import endpoint


async def _endorse(ctx: Ctx, on: bool) -> Response:
    target = ctx.path_id()
    await ctx.rp.accounts.get_user(target)
    await ctx.rp.relations.endorse(ctx.uid, target, on)
    return JSON(await relationship_of(ctx, target))


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/endorse",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Feature an account one follows on one's profile (422 if not followed)",
        "Accounts",
        ref("Relationship"),
        params=[path_param()],
    ),
)
async def endorse(ctx: Ctx) -> Response:
    return await _endorse(ctx, True)


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/unendorse",
    auth="required",
    scope="write:accounts",
    doc=Doc("Stop featuring an account", "Accounts", ref("Relationship"), params=[path_param()]),
)
async def unendorse(ctx: Ctx) -> Response:
    return await _endorse(ctx, False)


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/pin",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Feature an account (the older name of endorse)",
        "Accounts",
        ref("Relationship"),
        params=[path_param()],
    ),
)
async def pin(ctx: Ctx) -> Response:
    return await _endorse(ctx, True)


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/unpin",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Stop featuring an account (the older name of unendorse)",
        "Accounts",
        ref("Relationship"),
        params=[path_param()],
    ),
)
async def unpin(ctx: Ctx) -> Response:
    return await _endorse(ctx, False)


async def _page(ctx: Ctx, uid: int) -> Response:
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    users, cursor = await ctx.rp.relations.endorsements(
        uid, ctx.viewer, max_score=p.cursor("max_id"), limit=p.raw("limit")
    )
    headers = link_header(ctx, [cursor], key=lambda c: c, prev=False) if cursor else {}
    return JSON([entities.account(u, ctx.base) for u in users], headers=headers)


@endpoint(
    "GET",
    "/api/v1/endorsements",
    auth="required",
    scope="read:accounts",
    doc=Doc(
        "The accounts one features, newest first",
        "Accounts",
        ACCOUNTS_REF,
        paged=True,
        params=[*PAGE],
    ),
)
async def endorsements(ctx: Ctx) -> Response:
    return await _page(ctx, ctx.uid)


@endpoint(
    "GET",
    "/api/v1/accounts/{id}/endorsements",
    auth="optional",
    scope="read:accounts",
    doc=Doc(
        "The accounts an account features, newest first",
        "Accounts",
        ACCOUNTS_REF,
        paged=True,
        params=[path_param(), *PAGE],
    ),
)
async def account_endorsements(ctx: Ctx) -> Response:
    uid = ctx.path_id()
    await ctx.rp.accounts.get_user(uid)
    return await _page(ctx, uid)


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/note",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Set one's private note on an account (empty: none); shown in "
        "Relationship.note to its writer only",
        "Accounts",
        ref("Relationship"),
        params=[path_param()],
        body=request_body({"comment": {**STR, "maxLength": limits.ACCOUNT_NOTE_MAX_CHARS}}),
    ),
)
async def note(ctx: Ctx) -> Response:
    target = ctx.path_id()
    await ctx.rp.relations.set_note(ctx.uid, target, ctx.params.raw("comment"))
    return JSON(await relationship_of(ctx, target))
