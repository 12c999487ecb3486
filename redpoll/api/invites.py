"""Invites (redpoll.accounts.invites): a member makes, lists and revokes
their own; anyone may ask whether a code can be used (the web app's
``/invite/:code`` page). Mastodon keeps these in its web settings, not its
client API, so they are small Redpoll endpoints under ``/api/v1/redpoll/``;
the sign-up itself is Mastodon's (POST /api/v1/accounts with
``invite_code``)."""

from __future__ import annotations

from starlette.responses import Response

from ..accounts import invites
from ..core import limits
from ..render import entities
from .context import Ctx
from .contract import BOOL, INT, STR, Doc, array, obj, request_body
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint

NULL_STR = {"type": ["string", "null"]}
INVITE = obj(
    {
        "id": STR,
        "code": STR,
        "url": STR,
        "created_at": STR,
        "expires_at": NULL_STR,
        "max_uses": {"type": ["integer", "null"]},
        "uses": INT,
        "valid": BOOL,
        "comment": STR,
    }
)
CODE = {
    "name": "code",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9]{1,64}$"},
}


def invite_entity(found: invites.Invite, base: str) -> dict:
    return {
        "id": found.code,
        "code": found.code,
        "url": f"{base}/invite/{found.code}",
        "created_at": entities.iso(found.created_at),
        "expires_at": entities.iso(found.expires_at) if found.expires_at else None,
        "max_uses": found.max_uses,
        "uses": found.uses,
        "valid": found.valid(),
        "comment": found.comment,
    }


@endpoint(
    "GET",
    "/api/v1/redpoll/invites",
    auth="required",
    scope=("read", "read:accounts"),
    doc=Doc("The invites one made, newest first", "Accounts", array(INVITE)),
)
async def mine(ctx: Ctx) -> Response:
    return JSON([invite_entity(i, ctx.base) for i in await ctx.rp.auth.list_invites(ctx.uid)])


@endpoint(
    "POST",
    "/api/v1/redpoll/invites",
    auth="required",
    scope=("write", "write:accounts"),
    doc=Doc(
        "Make an invite (the role must allow invite_users): it lets one sign up "
        "while registrations are closed or need approval",
        "Accounts",
        INVITE,
        body=request_body(
            {
                "expires_in": {
                    "type": ["integer", "string"],
                    "description": f"seconds, 1 to {limits.INVITE_EXPIRES_MAX_S}; none: never",
                },
                "max_uses": {
                    "type": ["integer", "string"],
                    "description": f"1 to {limits.INVITE_USES_MAX}; none: no limit",
                },
                "comment": STR,
            },
            (),
        ),
    ),
)
async def create(ctx: Ctx) -> Response:
    p = ctx.params
    made = await ctx.rp.auth.create_invite(
        ctx.uid,
        expires_in=p.raw("expires_in"),
        max_uses=p.raw("max_uses"),
        comment=p.str("comment", max_chars=limits.INVITE_COMMENT_MAX_CHARS) or "",
    )
    return JSON(invite_entity(made, ctx.base))


@endpoint(
    "DELETE",
    "/api/v1/redpoll/invites/{code}",
    auth="required",
    scope=("write", "write:accounts"),
    doc=Doc("Revoke (expire now) one's invite", "Accounts", INVITE, params=[CODE]),
)
async def revoke(ctx: Ctx) -> Response:
    try:
        found = await ctx.rp.auth.revoke_invite(ctx.uid, ctx.request.path_params["code"])
    except invites.InviteNotFound:
        raise ApiError(404, NOT_FOUND) from None
    return JSON(invite_entity(found, ctx.base))


@endpoint(
    "GET",
    "/api/v1/redpoll/invites/{code}",
    auth="none",
    params=False,
    doc=Doc(
        "Whether an invite can be used now (404: no such invite)",
        "Accounts",
        obj({"code": STR, "valid": BOOL, "expires_at": NULL_STR}),
        params=[CODE],
    ),
)
async def check(ctx: Ctx) -> Response:
    try:
        found = await ctx.rp.auth.get_invite(ctx.request.path_params["code"])
    except invites.InviteNotFound:
        raise ApiError(404, NOT_FOUND) from None
    return JSON(
        {
            "code": found.code,
            "valid": found.valid(),
            "expires_at": entities.iso(found.expires_at) if found.expires_at else None,
        }
    )
