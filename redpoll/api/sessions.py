"""One's own account beyond the profile: the apps and devices signed in to
it (its tokens) with a way to revoke each, changing the password, deleting
the account. Mastodon keeps these in its web settings, not its client API,
so they are small Redpoll endpoints under ``/api/v1/redpoll/``."""

from __future__ import annotations

from starlette.responses import Response

from ..accounts import auth
from ..core import limits
from ..render import entities
from .context import Ctx
from .contract import BOOL, STR, Doc, array, obj, request_body
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint

SESSION = obj(
    {
        "id": STR,
        "app_name": STR,
        "website": {"type": ["string", "null"]},
        "scopes": array(STR),
        "created_at": STR,
        "current": BOOL,
    }
)
SESSION_ID = {
    "name": "id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": f"^[0-9a-f]{{{auth.SESSION_ID_CHARS}}}$"},
}
PASSWORD = {"type": "string", "maxLength": limits.PASSWORD_MAX_CHARS}


def session_entity(s: auth.Session, current: str) -> dict:
    return {
        "id": s.id,
        "app_name": s.app.name if s.app else "(removed app)",
        "website": (s.app.website or None) if s.app else None,
        "scopes": list(s.scopes),
        "created_at": entities.iso(s.created_at * 1000),
        "current": s.digest == current,
    }


def _wrong_password(field: str) -> ApiError:
    return ApiError(
        422,
        "Validation failed: the password is not right",
        details={field: [{"error": "ERR_INVALID", "description": "The password is not right"}]},
    )


async def _limited(call):
    """``call()``, with the account's log-in limit as a 429."""
    try:
        return await call()
    except auth.LoginLimited as exc:
        raise ApiError(429, "Too many requests", headers=exc.state.headers()) from None


@endpoint(
    "GET",
    "/api/v1/redpoll/sessions",
    auth="required",
    scope="read:accounts",
    doc=Doc(
        "The apps and devices signed in to your account (its tokens), newest first",
        "Accounts",
        array(SESSION),
    ),
)
async def list_sessions(ctx: Ctx) -> Response:
    current = ctx.authed.digest
    return JSON(
        [session_entity(s, current) for s in await ctx.rp.accounts.sessions(ctx.uid)],
        headers={"Cache-Control": "no-store"},
    )


@endpoint(
    "DELETE",
    "/api/v1/redpoll/sessions/{id}",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Sign an app or device out: revoke that token", "Accounts", obj({}), params=[SESSION_ID]
    ),
)
async def revoke_session(ctx: Ctx) -> Response:
    if not await ctx.rp.accounts.revoke_session(ctx.uid, ctx.request.path_params["id"]):
        raise ApiError(404, NOT_FOUND)
    return JSON({})


@endpoint(
    "POST",
    "/api/v1/redpoll/password",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Change your password (the current one is needed); every other token is revoked",
        "Accounts",
        obj({}),
        body=request_body(
            {"current_password": PASSWORD, "password": PASSWORD}, ("current_password", "password")
        ),
    ),
)
async def change_password(ctx: Ctx) -> Response:
    await ctx.limit("login", ctx.settings.rate_login)
    p = ctx.params
    if not await _limited(
        lambda: ctx.rp.accounts.change_password(
            ctx.token,
            p.raw("current_password"),
            p.raw("password"),
            rate=ctx.settings.rate_login_account,
        )
    ):
        raise _wrong_password("current_password")
    return JSON({})


@endpoint(
    "POST",
    "/api/v1/redpoll/delete_account",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Delete your account for good (your password is needed): as "
        "`redpoll admin delete-account`; every token is revoked at once",
        "Accounts",
        obj({}),
        body=request_body({"password": PASSWORD}, ("password",)),
    ),
)
async def delete_account(ctx: Ctx) -> Response:
    await ctx.limit("login", ctx.settings.rate_login)
    if not await _limited(
        lambda: ctx.rp.accounts.delete_own_account(
            ctx.uid, ctx.params.raw("password"), rate=ctx.settings.rate_login_account
        )
    ):
        raise _wrong_password("password")
    return JSON({})
