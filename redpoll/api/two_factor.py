"""Two-factor sign-in of one's own account (redpoll/accounts/two_factor.py):
set up (a secret shown once as a QR code and as text, on only after a right
code), new recovery codes, removal. Mastodon keeps these in its web
settings, not its client API, so they are Redpoll endpoints under
``/api/v1/redpoll/``, for a user's token only (never an app's)."""

from __future__ import annotations

from starlette.responses import Response

from ..accounts import auth, two_factor
from ..core import limits
from .context import Ctx
from .contract import BOOL, INT, STR, Doc, array, obj, request_body
from .responses import JSON, ApiError
from .routing import endpoint

CODE = {"type": "string", "maxLength": limits.TWO_FACTOR_CODE_MAX_CHARS}
PASSWORD = {"type": "string", "maxLength": limits.PASSWORD_MAX_CHARS}
STATUS = obj({"enabled": BOOL, "recovery_codes_left": INT})
SETUP = obj({"secret": STR, "uri": STR, "qr_svg": STR})
CODES = obj({"recovery_codes": array(STR)})
NO_STORE = {"Cache-Control": "no-store"}


def _invalid(field: str, what: str) -> ApiError:
    return ApiError(
        422,
        f"Validation failed: {what}",
        details={field: [{"error": "ERR_INVALID", "description": what}]},
    )


async def _limited(call):
    """``call()``, with the account's limits (log-in, codes) as a 429."""
    try:
        return await call()
    except (auth.LoginLimited, two_factor.TwoFactorLimited) as exc:
        raise ApiError(429, "Too many requests", headers=exc.state.headers()) from None


@endpoint(
    "GET",
    "/api/v1/redpoll/two_factor",
    auth="required",
    scope="read:accounts",
    doc=Doc("Whether two-factor sign-in is on, and recovery codes left", "Accounts", STATUS),
)
async def status(ctx: Ctx) -> Response:
    found = await ctx.rp.accounts.two_factor_status(ctx.uid)
    return JSON(
        {"enabled": found.enabled, "recovery_codes_left": found.recovery_codes_left},
        headers=NO_STORE,
    )


@endpoint(
    "POST",
    "/api/v1/redpoll/two_factor/setup",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Begin setting up two-factor sign-in: a new secret (base32), its "
        "otpauth:// URI and that URI as an SVG QR code (a data: URI). Nothing "
        "is on until a code of it is confirmed; the secret is never shown again",
        "Accounts",
        SETUP,
    ),
)
async def setup(ctx: Ctx) -> Response:
    host = ctx.base.split("://", 1)[-1]
    found = await ctx.rp.accounts.two_factor_setup(ctx.uid, host)
    return JSON(
        {"secret": found.secret, "uri": found.uri, "qr_svg": found.qr_svg}, headers=NO_STORE
    )


@endpoint(
    "POST",
    "/api/v1/redpoll/two_factor/enable",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Turn two-factor sign-in on with a code of the secret being set up; "
        "the answer holds the recovery codes, shown this once",
        "Accounts",
        CODES,
        body=request_body({"code": CODE}, ("code",)),
    ),
)
async def enable(ctx: Ctx) -> Response:
    await ctx.limit("login", ctx.settings.rate_login)
    code = ctx.params.raw("code")
    codes = await _limited(lambda: ctx.rp.accounts.two_factor_enable(ctx.uid, code))
    if codes is None:
        raise _invalid("code", "The code is not right")
    return JSON({"recovery_codes": codes}, headers=NO_STORE)


@endpoint(
    "POST",
    "/api/v1/redpoll/two_factor/recovery_codes",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "New recovery codes (your password is needed); the old ones stop working",
        "Accounts",
        CODES,
        body=request_body({"password": PASSWORD}, ("password",)),
    ),
)
async def recovery_codes(ctx: Ctx) -> Response:
    await ctx.limit("login", ctx.settings.rate_login)
    password = ctx.params.raw("password")
    codes = await _limited(lambda: ctx.rp.accounts.two_factor_recovery_codes(ctx.uid, password))
    if codes is None:
        raise _invalid("password", "The password is not right")
    return JSON({"recovery_codes": codes}, headers=NO_STORE)


@endpoint(
    "POST",
    "/api/v1/redpoll/two_factor/disable",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Turn two-factor sign-in off: a current code (or a recovery code), "
        "or else your password, is needed",
        "Accounts",
        obj({}),
        body=request_body({"code": CODE, "password": PASSWORD}),
    ),
)
async def disable(ctx: Ctx) -> Response:
    await ctx.limit("login", ctx.settings.rate_login)
    p = ctx.params
    code, password = p.raw("code"), p.raw("password")
    if code in (None, "") and password in (None, ""):
        raise _invalid("code", "A code or the password is needed")
    if not await _limited(lambda: ctx.rp.accounts.two_factor_disable(ctx.uid, password, code)):
        field = "code" if code not in (None, "") else "password"
        raise _invalid(field, f"The {field} is not right")
    return JSON({})
