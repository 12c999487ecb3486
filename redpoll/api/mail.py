"""E-mail for members (redpoll.mail): Mastodon's confirmation endpoints
(POST /api/v1/emails/confirmations, GET /api/v1/emails/check_confirmation),
Redpoll's own e-mail change for the web app's settings (Mastodon keeps it
in its web settings, not its client API), and the server pages the mails'
links open: the confirmation (Mastodon's /auth/confirmation) and the
forgotten password (/auth/password/new, then /auth/password/edit), in the
look of the sign-in page (redpoll.api.oauth.page)."""

from __future__ import annotations

import html

from starlette.requests import Request
from starlette.responses import Response

from ..accounts import auth
from ..core import limits
from ..core.errors import ValidationError
from ..mail.address import AddressTaken
from ..mail.limited import MailLimited
from .context import Ctx
from .contract import BOOL, STR, Doc, obj, query_param, request_body
from .oauth import page
from .params import parse_params
from .responses import JSON, ApiError
from .routing import endpoint, route

EMAIL = {"type": "string", "maxLength": limits.EMAIL_MAX_CHARS}
PASSWORD = {"type": "string", "maxLength": limits.PASSWORD_MAX_CHARS}
EMAIL_STATE = obj(
    {
        "email": {"type": ["string", "null"]},
        "unconfirmed_email": {"type": ["string", "null"]},
        "confirmed": BOOL,
        "enabled": BOOL,
    }
)


def _field_error(field: str, code: str, message: str) -> ApiError:
    return ApiError(
        422,
        f"Validation failed: {message}",
        details={field: [{"error": code, "description": message}]},
    )


async def _mail_call(ctx: Ctx, call):
    """``call()`` with the mail flows' refusals in Mastodon's shapes."""
    try:
        return await call()
    except MailLimited as exc:
        ctx.rate = exc.state
        raise ApiError(429, "Too many requests", headers=exc.state.headers()) from None
    except auth.LoginLimited as exc:
        ctx.rate = exc.state
        raise ApiError(429, "Too many requests", headers=exc.state.headers()) from None
    except AddressTaken:
        raise _field_error("email", "ERR_TAKEN", "E-mail has already been taken") from None
    except ValidationError as exc:
        raise _field_error(exc.field, "ERR_INVALID", exc.message) from None


@endpoint(
    "POST",
    "/api/v1/emails/confirmations",
    auth="required",
    scope="write:accounts",
    standing=False,
    doc=Doc(
        "Send the confirmation mail again, to `email` if given (the address "
        "then awaits confirmation instead); only the app the account signed "
        "up with, only while an address awaits confirmation (403 otherwise)",
        "Accounts",
        obj({}),
        body=request_body({"email": EMAIL}),
    ),
)
async def resend_confirmation(ctx: Ctx) -> Response:
    await ctx.limit("mail", ctx.settings.rate_mail_ip)
    email = ctx.params.raw("email") if ctx.params.has("email") else None
    await _mail_call(ctx, lambda: ctx.rp.accounts.resend_confirmation(ctx.authed, email))
    return JSON({})


@endpoint(
    "GET",
    "/api/v1/emails/check_confirmation",
    auth="required",
    scope="read:accounts",
    standing=False,
    doc=Doc("Whether the account's e-mail address is confirmed", "Accounts", BOOL),
)
async def check_confirmation(ctx: Ctx) -> Response:
    return JSON(await ctx.rp.accounts.email_confirmed(ctx.uid))


async def _state(ctx: Ctx) -> dict:
    email, waiting, confirmed = await ctx.rp.accounts.email_state(ctx.uid)
    return {
        "email": email,
        "unconfirmed_email": waiting,
        "confirmed": confirmed,
        "enabled": ctx.settings.mail,
    }


@endpoint(
    "GET",
    "/api/v1/redpoll/email",
    auth="required",
    scope="read:accounts",
    standing=False,
    doc=Doc(
        "Your e-mail address, the one a change awaits to confirm, whether "
        "yours is confirmed, and whether this server sends e-mail",
        "Accounts",
        EMAIL_STATE,
    ),
)
async def email_state(ctx: Ctx) -> Response:
    return JSON(await _state(ctx), headers={"Cache-Control": "no-store"})


@endpoint(
    "POST",
    "/api/v1/redpoll/email",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Change your e-mail address (your password is needed): the new "
        "address is sent a confirmation link and the old one is told; the "
        "change takes effect when the link is followed",
        "Accounts",
        EMAIL_STATE,
        body=request_body(
            {"current_password": PASSWORD, "email": EMAIL}, ("current_password", "email")
        ),
    ),
)
async def change_email(ctx: Ctx) -> Response:
    await ctx.limit("login", ctx.settings.rate_login)
    await ctx.limit("mail", ctx.settings.rate_mail_ip)
    p = ctx.params
    done = await _mail_call(
        ctx,
        lambda: ctx.rp.accounts.change_email(
            ctx.uid, p.raw("current_password"), p.raw("email"), ctx.settings.rate_login_account
        ),
    )
    if done is None:
        raise _field_error("current_password", "ERR_INVALID", "The password is not right")
    return JSON(await _state(ctx))


# --- the pages the mails' links open ----------------------------------------------------
def _more(*links: tuple[str, str]) -> str:
    inner = " · ".join(f"<a href={href}>{html.escape(text)}</a>" for href, text in links)
    return f"<p class=auth-more>{inner}</p>"


BAD_LINK = "This link does not work: it was used already, a newer one was sent, or it expired."


def _refused(title: str, message: str, status: int, *links: tuple[str, str]) -> Response:
    body = f"<p class=error role=alert>{html.escape(message)}</p>"
    return page(title, body + _more(*(links or (("/", "Back to Redpoll"),))), status)


async def _page_ctx(request: Request, family: str | None = None) -> Ctx:
    """A page's context: the per-IP count (and ``family``'s), its parameters."""
    ctx = Ctx(request)
    await ctx._ip_hit()
    if family == "mail":
        await ctx.limit("mail", ctx.settings.rate_mail_ip)
    ctx.params = await parse_params(request)
    return ctx


def _too_many(title: str) -> Response:
    return _refused(title, "Too many requests: wait a few minutes, then try again.", 429)


@route(
    "GET",
    "/auth/confirmation",
    doc=Doc(
        "Follow a confirmation link (sign-up or e-mail change): an HTML page",
        "Accounts",
        STR,
        ok_type="text/html",
        params=[query_param("confirmation_token", STR, required=True)],
    ),
)
async def confirmation_page(request: Request) -> Response:
    title = "E-mail address confirmed"
    try:
        ctx = await _page_ctx(request)
        done = await ctx.rp.accounts.follow_confirmation(
            ctx.params.str("confirmation_token", max_chars=200)
        )
    except AddressTaken:
        return _refused("Not confirmed", "Another account uses this e-mail address now.", 422)
    except ApiError as exc:
        if exc.status == 429:
            return _too_many("Not confirmed")
        return _refused("Not confirmed", BAD_LINK, 400)
    except ValidationError:  # a token no link carries (a NUL, too long)
        return _refused("Not confirmed", BAD_LINK, 400)
    if done is None:
        return _refused(
            "Not confirmed",
            BAD_LINK + " Sign in to ask for a new one.",
            400,
            ("/signin", "Sign in"),
        )
    return page(
        title,
        f"<p role=status>Your e-mail address <strong>{html.escape(done)}</strong> is "
        "confirmed: your account is ready to use.</p>" + _more(("/", "Go to Redpoll")),
    )


def _forgot_form(error: str = "", email: str = "") -> str:
    e = html.escape
    err = f"<p class=error role=alert>{e(error)}</p>" if error else ""
    return (
        "<p>Type the e-mail address of your account: a link to choose a new "
        "password is sent there.</p>"
        f"{err}<form method=post action=/auth/password class=signin>"
        "<label class=field><span>E-mail</span>"
        f'<input name=email type=email autocomplete=email required autofocus value="{e(email)}"'
        f" maxlength={limits.EMAIL_MAX_CHARS}></label>"
        "<button type=submit class='primary big'>Send the link</button></form>"
        + _more(("/signin", "Back to sign in"))
    )


OFF = "This server sends no e-mail, so it cannot send a reset link: ask its operator."


@route(
    "GET",
    "/auth/password/new",
    doc=Doc(
        "The forgotten-password page: asks for the account's e-mail address",
        "Accounts",
        STR,
        ok_type="text/html",
    ),
)
async def forgot_page(request: Request) -> Response:
    try:
        ctx = await _page_ctx(request)
    except ApiError:
        return _too_many("Forgot your password?")
    if not ctx.settings.mail:
        return page("Forgot your password?", f"<p>{html.escape(OFF)}</p>" + _more(("/", "Back")))
    return page("Forgot your password?", _forgot_form())


@route(
    "POST",
    "/auth/password",
    doc=Doc(
        "Ask for a password-reset link: the same answer whether or not an account has the address",
        "Accounts",
        STR,
        ok_type="text/html",
        body=request_body(
            {"email": EMAIL},
            ("email",),
            html_form=True,
        ),
    ),
)
async def forgot_submit(request: Request) -> Response:
    title = "Forgot your password?"
    try:
        ctx = await _page_ctx(request, "mail")
    except ApiError as exc:
        if exc.status == 429:
            return _too_many(title)
        return _refused(title, exc.message, 400)
    if not ctx.settings.mail:
        return page(title, f"<p>{html.escape(OFF)}</p>" + _more(("/", "Back")))
    email = ctx.params.raw("email")
    if not isinstance(email, str) or not email.strip():
        return page(title, _forgot_form("Type your e-mail address."), 422)
    try:
        await ctx.rp.accounts.request_password_reset(email)
    except MailLimited:
        return _too_many(title)
    return page(
        "Check your inbox",
        "<p role=status>If an account has the address "
        f"<strong>{html.escape(email.strip())}</strong>, a link to choose a new "
        f"password is on its way. It works for "
        f"{limits.PASSWORD_RESET_TTL_S // 3600} hours.</p>" + _more(("/signin", "Back to sign in")),
    )


def _reset_form(token: str, error: str = "") -> str:
    e = html.escape
    err = f"<p class=error role=alert>{e(error)}</p>" if error else ""
    return (
        f"{err}<form method=post action=/auth/password/edit class=signin>"
        f'<input type=hidden name=reset_password_token value="{e(token)}">'
        "<label class=field><span>New password</span><input name=password type=password "
        f"autocomplete=new-password required minlength={limits.PASSWORD_MIN_CHARS} "
        f"maxlength={limits.PASSWORD_MAX_CHARS} autofocus></label>"
        "<label class=field><span>New password again</span><input "
        "name=password_confirmation type=password autocomplete=new-password required "
        f"maxlength={limits.PASSWORD_MAX_CHARS}></label>"
        "<button type=submit class='primary big'>Set the new password</button></form>"
    )


@route(
    "GET",
    "/auth/password/edit",
    doc=Doc(
        "Follow a password-reset link: the form for the new password",
        "Accounts",
        STR,
        ok_type="text/html",
        params=[query_param("reset_password_token", STR, required=True)],
    ),
)
async def reset_page(request: Request) -> Response:
    title = "Choose a new password"
    try:
        ctx = await _page_ctx(request)
        token = ctx.params.str("reset_password_token", max_chars=200) or ""
    except ApiError as exc:
        if exc.status == 429:
            return _too_many(title)
        return _refused(title, BAD_LINK, 400)
    except ValidationError:  # a token no link carries (a NUL, too long)
        return _refused(title, BAD_LINK, 400)
    if not await ctx.rp.accounts.reset_link_valid(token):
        return _refused(title, BAD_LINK, 400, ("/auth/password/new", "Ask for a new link"))
    return page(title, _reset_form(token))


@route(
    "POST",
    "/auth/password/edit",
    doc=Doc(
        "Set a new password with a reset link: every app and device signed "
        "in to the account is signed out, and the link stops working",
        "Accounts",
        STR,
        ok_type="text/html",
        body=request_body(
            {
                "reset_password_token": STR,
                "password": PASSWORD,
                "password_confirmation": PASSWORD,
            },
            ("reset_password_token", "password"),
            html_form=True,
        ),
    ),
)
async def reset_submit(request: Request) -> Response:
    title = "Choose a new password"
    try:
        ctx = await _page_ctx(request)
        token = ctx.params.str("reset_password_token", max_chars=200) or ""
    except ApiError as exc:
        if exc.status == 429:
            return _too_many(title)
        return _refused(title, BAD_LINK, 400)
    except ValidationError:  # a token no link carries (a NUL, too long)
        return _refused(title, BAD_LINK, 400)
    password, again = ctx.params.raw("password"), ctx.params.raw("password_confirmation")
    if again is not None and again != password:
        return page(title, _reset_form(token, "The two passwords differ."), 422)
    try:
        done = await ctx.rp.accounts.reset_password(token, password)
    except ValidationError as exc:
        return page(
            title, _reset_form(token, "The password " + exc.message.split(": ", 1)[-1]), 422
        )
    if not done:
        return _refused(title, BAD_LINK, 400, ("/auth/password/new", "Ask for a new link"))
    return page(
        "Password changed",
        "<p role=status>Your password was changed, and every app and device "
        "signed in to your account was signed out. Sign in with the new password.</p>"
        + _more(("/signin", "Sign in")),
    )
