"""OAuth 2 for Mastodon clients: apps, tokens (password, client_credentials,
authorization_code), the authorize page, revocation, server metadata."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from .. import web
from ..accounts import auth, two_factor
from ..accounts.auth import OOB, OAuthError
from ..core import limits
from ..core.errors import RedpollError
from .context import Ctx
from .contract import STR, Doc, query_param, ref, request_body
from .params import parse_params
from .responses import JSON, ApiError
from .routing import endpoint, route

GRANT_TYPES = ("authorization_code", "password", "client_credentials")


def app_entity(app: auth.App, vapid_key: str, secret: str | None = None) -> dict:
    """Mastodon's Application; ``vapid_key`` the server's (redpoll.push.vapid)."""
    out: dict[str, Any] = {
        "id": str(app.id),
        "name": app.name,
        "website": app.website or None,
        "scopes": list(app.scopes),
        "redirect_uri": "\n".join(app.redirect_uris),
        "redirect_uris": list(app.redirect_uris),
        "vapid_key": vapid_key,
        "client_id": app.client_id,
    }
    if secret is not None:
        out["client_secret"] = secret
        out["client_secret_expires_at"] = 0
    return out


def token_entity(token: str, scopes, created: int) -> dict:
    return {
        "access_token": token,
        "token_type": "Bearer",
        "scope": " ".join(scopes),
        "created_at": created,
    }


@endpoint(
    "POST",
    "/api/v1/apps",
    auth="none",
    doc=Doc(
        "Register an application",
        "OAuth",
        ref("Application"),
        body=request_body(
            {"client_name": STR, "redirect_uris": STR, "scopes": STR, "website": STR},
            ("client_name", "redirect_uris"),
        ),
    ),
)
async def create_app(ctx: Ctx) -> Response:
    await ctx.limit("apps", ctx.settings.rate_apps)  # apps and tokens per IP
    p = ctx.params
    app, secret = await ctx.rp.auth.create_app(
        p.str("client_name", required=True, allow_empty=False),
        p.raw("redirect_uris") if p.has("redirect_uris") else None,
        p.str("scopes"),
        p.str("website"),
    )
    return JSON(app_entity(app, await ctx.rp.push.vapid_key(), secret))


@endpoint(
    "GET",
    "/api/v1/apps/verify_credentials",
    auth="required",
    user=False,
    doc=Doc("The token's application", "OAuth", ref("Application")),
)
async def verify_app(ctx: Ctx) -> Response:
    app = await ctx.rp.auth.get_app(ctx.authed.client_id)
    if app is None:
        raise ApiError(401, "The access token is invalid")
    return JSON(app_entity(app, await ctx.rp.push.vapid_key()))


def _client_credentials(ctx: Ctx) -> tuple[str | None, str | None]:
    """client_id / client_secret from the body or an HTTP Basic header."""
    header = ctx.request.headers.get("authorization", "")
    if header[:6].lower() == "basic ":
        try:
            cid, _, secret = base64.b64decode(header[6:], validate=True).decode().partition(":")
            return cid, secret
        except (ValueError, UnicodeDecodeError):
            raise OAuthError("invalid_client", "Malformed Basic authorization", 401) from None
    return ctx.params.str("client_id"), ctx.params.str("client_secret")


async def _limited(ctx: Ctx, call):
    """``call()`` with the per-account limits (log-in, two-factor codes) as a
    429; an account waiting for approval: 403 with Mastodon's message."""
    try:
        return await call()
    except (auth.LoginLimited, two_factor.TwoFactorLimited) as exc:
        ctx.rate = exc.state
        raise ApiError(429, "Too many requests", headers=exc.state.headers()) from None
    except auth.PendingApproval as exc:
        raise ApiError(403, exc.message) from None


@endpoint(
    "POST",
    "/oauth/token",
    auth="none",
    doc=Doc(
        "Obtain a token (password, client_credentials, authorization_code)",
        "OAuth",
        ref("Token"),
        body=request_body(
            {
                "grant_type": {"enum": ["password", "client_credentials", "authorization_code"]},
                "client_id": STR,
                "client_secret": STR,
                "scope": STR,
                "username": STR,
                "password": STR,
                "code": STR,
                "redirect_uri": STR,
                "code_verifier": STR,
            },
            ("grant_type", "client_id", "client_secret"),
        ),
    ),
)
async def token(ctx: Ctx) -> Response:
    p = ctx.params
    grant = p.str("grant_type")
    if grant not in GRANT_TYPES:
        raise OAuthError(
            "unsupported_grant_type",
            "The authorization grant type is not supported by the authorization server.",
        )
    await ctx.limit("apps", ctx.settings.rate_apps)  # apps and tokens per IP
    if grant == "password":
        await ctx.limit("login", ctx.settings.rate_login)
    app = await ctx.rp.auth.check_client(*_client_credentials(ctx))
    if grant == "authorization_code":
        uid, scopes = await ctx.rp.auth.redeem_code(
            app, p.str("code"), p.str("redirect_uri"), p.str("code_verifier", max_chars=200)
        )
    else:
        scopes = auth.parse_scopes(p.str("scope") or p.str("scopes"))
        if not auth.within(scopes, app.scopes):
            raise OAuthError(
                "invalid_scope", "The requested scope is invalid, unknown, or malformed."
            )
        uid = None
        if grant == "password":
            user = await _limited(
                ctx,
                lambda: ctx.rp.auth.password_grant_login(
                    p.raw("username"), p.raw("password"), rate=ctx.settings.rate_login_account
                ),
            )
            if user is None:  # also with two-factor on, as Mastodon (auth.password_grant_login)
                raise OAuthError(
                    "invalid_grant",
                    "The provided authorization grant is invalid, "
                    "expired, revoked, does not match the redirection URI used in "
                    "the authorization request, or was issued to another client.",
                )
            uid = user.id
    access, created = await ctx.rp.auth.issue_token(app, uid, scopes)
    return JSON(token_entity(access, scopes, created), headers={"Cache-Control": "no-store"})


@endpoint(
    "POST",
    "/oauth/revoke",
    auth="none",
    doc=Doc(
        "Revoke a token",
        "OAuth",
        ref("Empty"),
        body=request_body(
            {"client_id": STR, "client_secret": STR, "token": STR},
            ("client_id", "client_secret", "token"),
        ),
    ),
)
async def revoke(ctx: Ctx) -> Response:
    await ctx.rp.auth.revoke_token(*_client_credentials(ctx), ctx.params.raw("token"))
    return JSON({})


@endpoint(
    "GET",
    "/.well-known/oauth-authorization-server",
    auth="none",
    params=False,
    doc=Doc("OAuth server metadata (RFC 8414)", "OAuth", ref("OAuthMetadata")),
)
async def server_metadata(ctx: Ctx) -> Response:
    base = ctx.base
    return JSON(
        {
            "issuer": base + "/",
            "service_documentation": "https://docs.joinmastodon.org/",
            "authorization_endpoint": f"{base}/oauth/authorize",
            "token_endpoint": f"{base}/oauth/token",
            "revocation_endpoint": f"{base}/oauth/revoke",
            "app_registration_endpoint": f"{base}/api/v1/apps",
            "scopes_supported": list(auth.TOP_SCOPES)
            + sorted(
                auth.READ_SCOPES
                | auth.WRITE_SCOPES
                | auth.ADMIN_READ_SCOPES
                | auth.ADMIN_WRITE_SCOPES
            ),
            "response_types_supported": ["code"],
            # (RFC 8414: the modes the authorize page answers in; it redirects
            # with the query only, and without this field "fragment" is implied)
            "response_modes_supported": ["query"],
            "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": list(GRANT_TYPES),
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        }
    )


# --- the authorize page -----------------------------------------------------------------
#: The page is the web app's look (its style sheets, same origin), with no
#: script and no inline style. No form-action: the form's answer redirects
#: to the client's registered redirect_uri, on another origin.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; "
    "base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
}

#: What each scope lets an app do, in words.
SCOPE_WORDS = {
    "read": "Read your posts and notifications",
    "write": "Post and change things for you",
    "follow": "Follow and unfollow",
    "push": "Send you push notifications",
    "profile": "See your profile",
}


def scope_words(scopes) -> list[str]:
    """The scopes in plain words, one line each (a part of a top scope,
    ``read:lists`` say, names what it covers)."""
    out: list[str] = []
    for scope in scopes:
        top, _, part = scope.partition(":")
        if not part:
            line = SCOPE_WORDS.get(scope, scope)
        elif top == "read":
            line = f"Read your {part}"
        else:
            line = f"Change your {part}"
        if line not in out:
            out.append(line)
    return out


def page(title: str, body: str, status: int = 200) -> HTMLResponse:
    e = html.escape
    doc = (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<meta name=viewport content='width=device-width, initial-scale=1'>"
        f"<meta name=color-scheme content='light dark'><title>{e(title)} · Redpoll</title>"
        f"<link rel=icon href='{web.ASSETS}/icon.svg' type='image/svg+xml'>"
        f"<link rel=stylesheet href='{web.ASSETS}/style.css'>"
        f"<link rel=stylesheet href='{web.ASSETS}/account.css'></head>"
        f"<body class=auth-page><main class='welcome auth'>"
        f"<p class=auth-brand><a href=/ class=logo><span aria-hidden=true>●</span> Redpoll</a></p>"
        f"<h1>{e(title)}</h1>{body}</main></body></html>"
    )
    return HTMLResponse(doc, status_code=status, headers=PAGE_HEADERS)


class _Refused(Exception):
    def __init__(self, message: str):
        self.message = message


@dataclass(frozen=True, slots=True)
class _AuthorizeRequest:
    app: auth.App
    redirect_uri: str
    redirect_given: bool  # the request named it (RFC 6749 4.1.3 at the token endpoint)
    scopes: tuple[str, ...]
    state: str
    challenge: str | None  # PKCE S256 (RFC 7636)


async def _authorize_request(ctx: Ctx) -> _AuthorizeRequest:
    """Check the client's request; an error here must not redirect anywhere."""
    p = ctx.params
    try:
        if p.str("response_type") != "code":
            raise _Refused("response_type must be code")
        app = await ctx.rp.auth.get_app(p.str("client_id", max_chars=200))
        if app is None:
            raise _Refused("Unknown client_id")
        given = p.str("redirect_uri", max_chars=2000) or ""
        redirect_uri = given or (app.redirect_uris[0] if len(app.redirect_uris) == 1 else "")
        if redirect_uri not in app.redirect_uris:
            raise _Refused("The redirect_uri is not registered for this application")
        scopes = auth.parse_scopes(p.str("scope", max_chars=2000))
        if not auth.within(scopes, app.scopes):
            raise _Refused("The requested scope is not allowed for this application")
        state = p.str("state", max_chars=2000) or ""
        challenge = auth.pkce_challenge(
            p.str("code_challenge", max_chars=200), p.str("code_challenge_method", max_chars=20)
        )
    except RedpollError as exc:
        raise _Refused(exc.message) from None
    return _AuthorizeRequest(app, redirect_uri, bool(given), scopes, state, challenge)


def _own(ctx: Ctx, req: _AuthorizeRequest) -> bool:
    """The web app on this origin signing in (its callback is this server's)."""
    return req.redirect_uri == ctx.base + "/oauth/callback"


def _title(ctx: Ctx, req: _AuthorizeRequest) -> str:
    return "Sign in to Redpoll" if _own(ctx, req) else "Authorize " + req.app.name


def _form(ctx: Ctx, req: _AuthorizeRequest, error: str = "", username: str = "") -> str:
    """The sign-in form; for another app, what it asks for in words, with
    Authorize and Deny. After a refusal it keeps the username typed (never
    the password)."""
    e = html.escape
    fields = [
        ("response_type", "code"),
        ("client_id", req.app.client_id),
        ("scope", " ".join(req.scopes)),
        ("state", req.state),
    ]
    if req.redirect_given:
        fields.append(("redirect_uri", req.redirect_uri))
    if req.challenge:
        fields += [("code_challenge", req.challenge), ("code_challenge_method", "S256")]
    hidden = "".join(
        f'<input type=hidden name={name} value="{e(value)}">' for name, value in fields
    )
    err = f"<p class=error role=alert>{e(error)}</p>" if error else ""
    if _own(ctx, req):
        intro = ""
        buttons = "<button type=submit class='primary big'>Sign in</button>"
    else:
        site = f" <span class=app-site>({e(req.app.website)})</span>" if req.app.website else ""
        can = "".join(f"<li>{e(line)}</li>" for line in scope_words(req.scopes))
        intro = (
            f"<div class=app-request><p><strong>{e(req.app.name)}</strong>{site} would like "
            f"to use your Redpoll account. Sign in to let it:</p>"
            f"<ul class=scopes>{can}</ul></div>"
        )
        buttons = (
            "<div class=auth-buttons>"
            "<button type=submit name=decision value=allow class=primary>Authorize</button>"
            "<button type=submit name=decision value=deny formnovalidate>Deny</button></div>"
        )
    return (
        f"{intro}{err}<form method=post action=/oauth/authorize class=signin>{hidden}"
        f"<label class=field><span>Username or e-mail</span>"
        f'<input name=username autocomplete=username required value="{e(username)}"'
        f" autocapitalize=none{' autofocus' if not username else ''}></label>"
        f"<label class=field><span>Password</span><input name=password type=password"
        f" autocomplete=current-password required{' autofocus' if username else ''}></label>"
        f"{buttons}</form>"
        f"<p class=auth-more>New here? <a href=/signup>Create an account</a></p>"
        # e-mail on (redpoll.mail): the forgotten-password page
        + (
            "<p class=auth-more><a href=/auth/password/new>Forgot your password?</a></p>"
            if ctx.settings.mail
            else ""
        )
    )


async def _read_authorize_request(ctx: Ctx, request: Request):
    ctx.params = await parse_params(request)
    return await _authorize_request(ctx)


def _failure_page(exc: Exception) -> Response:
    status = exc.status if isinstance(exc, ApiError) else 400
    message = (
        "Too many requests: wait a few minutes, then try again."
        if status == 429
        else getattr(exc, "message", str(exc))
    )
    return page(
        "Sign-in failed",
        f"<p class=error role=alert>{html.escape(message)}</p>"
        "<p class=auth-more><a href=/>Back to Redpoll</a></p>",
        status,
    )


@route(
    "GET",
    "/oauth/authorize",
    auth="none",
    doc=Doc(
        "The authorization page (HTML log-in and approve form)",
        "OAuth",
        STR,
        ok_type="text/html",
        params=[
            query_param("response_type", {"const": "code"}, required=True),
            query_param("client_id", STR, required=True),
            query_param("redirect_uri", STR),
            query_param("scope", STR),
            query_param("state", STR),
            query_param("code_challenge", STR),
            query_param("code_challenge_method", {"const": "S256"}),
        ],
    ),
)
async def authorize_page(request: Request) -> Response:
    ctx = Ctx(request)
    try:
        await ctx._ip_hit()
        req = await _read_authorize_request(ctx, request)
    except (_Refused, ApiError) as exc:
        return _failure_page(exc)
    return page(_title(ctx, req), _form(ctx, req))


@route(
    "POST",
    "/oauth/authorize",
    auth="none",
    doc=Doc(
        "Submit the authorization form (username and password; then, for an "
        "account with two-factor on, two_factor_token and otp_attempt): redirect "
        "with a code, or show it (oob)",
        "OAuth",
        STR,
        ok_type="text/html",
        body=request_body(
            {
                "response_type": STR,
                "client_id": STR,
                "redirect_uri": STR,
                "scope": STR,
                "state": STR,
                "username": STR,
                "password": STR,
                "decision": {"enum": ["allow", "deny"]},
                "code_challenge": STR,
                "code_challenge_method": STR,
                # the second step (two-factor on): its token and the code
                "two_factor_token": STR,
                "otp_attempt": STR,
            },
            html_form=True,
        ),
    ),
)
async def authorize_submit(request: Request) -> Response:
    ctx = Ctx(request)
    try:
        await ctx.limit("login", ctx.settings.rate_login)
        ctx.params = await parse_params(request)
        if ctx.params.has("two_factor_token"):
            return await _second_step(ctx)
        req = await _authorize_request(ctx)
    except (_Refused, ApiError) as exc:
        return _failure_page(exc)
    redirect_uri, state = req.redirect_uri, req.state
    if ctx.params.raw("decision") == "deny":  # RFC 6749 4.1.2.1: access_denied
        if redirect_uri == OOB:
            return page(
                "Not authorized",
                f"<p>{html.escape(req.app.name)} was not given access to your account.</p>",
            )
        query = urlencode({"error": "access_denied", **({"state": state} if state else {})})
        sep = "&" if "?" in redirect_uri else "?"
        return RedirectResponse(
            f"{redirect_uri}{sep}{query}", status_code=302, headers=PAGE_HEADERS
        )
    p = ctx.params
    wanted = auth.CodeRequest(
        req.redirect_uri, req.redirect_given, req.scopes, req.state, req.challenge
    )
    try:
        outcome = await _limited(
            ctx,
            lambda: ctx.rp.auth.authorize_sign_in(
                req.app,
                p.raw("username"),
                p.raw("password"),
                wanted,
                rate=ctx.settings.rate_login_account,
            ),
        )
    except ApiError as exc:
        return _failure_page(exc)
    if outcome is None:
        typed = p.raw("username")
        return page(
            _title(ctx, req),
            _form(
                ctx, req, "Invalid username or password.", typed if isinstance(typed, str) else ""
            ),
            401,
        )
    if isinstance(outcome, auth.SecondStep):
        return page(_title(ctx, req), _code_form(outcome.token))
    return _answer(req, outcome)


def _code_form(token: str, error: str = "") -> str:
    """The second step: a code from the authenticator app (or a recovery
    code), with the token of the step the password opened, and nothing else."""
    e = html.escape
    err = f"<p class=error role=alert>{e(error)}</p>" if error else ""
    return (
        "<p class=auth-step>Two-factor authentication is on for this account: "
        "enter the code your authenticator app shows, or one of your recovery codes.</p>"
        f"{err}<form method=post action=/oauth/authorize class=signin>"
        f'<input type=hidden name=two_factor_token value="{e(token)}">'
        "<label class=field><span>Code</span><input name=otp_attempt"
        " autocomplete=one-time-code autocapitalize=none spellcheck=false required"
        f" maxlength={limits.TWO_FACTOR_CODE_MAX_CHARS} autofocus></label>"
        "<button type=submit class='primary big'>Verify</button></form>"
        "<p class=auth-more><a href=/>Cancel</a></p>"
    )


async def _second_step(ctx: Ctx) -> Response:
    """The code for the step a right password opened: an authorization code
    as the first step would have given, once; a wrong code shows the form
    again (the same words whatever was wrong), limited per step and per account."""
    token = ctx.params.raw("two_factor_token")
    outcome = await _limited(
        ctx, lambda: ctx.rp.auth.authorize_second_step(token, ctx.params.raw("otp_attempt"))
    )
    if outcome.app is None or outcome.request is None:
        return page(
            "Sign-in failed",
            "<p class=error role=alert>This sign-in has expired or was already used: "
            "sign in again.</p><p class=auth-more><a href=/>Back to Redpoll</a></p>",
            400,
        )
    w = outcome.request
    req = _AuthorizeRequest(
        outcome.app, w.redirect_uri, w.redirect_given, w.scopes, w.state, w.challenge
    )
    if outcome.code is None:
        return page(_title(ctx, req), _code_form(str(token), "Invalid code."), 401)
    return _answer(req, outcome.code)


def _answer(req: _AuthorizeRequest, code: str) -> Response:
    """The authorization code: shown (oob) or sent to the redirect_uri."""
    if req.redirect_uri == OOB:
        return page(
            "Authorization code",
            "<p>Copy this code and paste it into the application:</p>"
            f"<p><code id=code>{html.escape(code)}</code></p>",
        )
    query = urlencode({"code": code, **({"state": req.state} if req.state else {})})
    sep = "&" if "?" in req.redirect_uri else "?"
    return RedirectResponse(
        f"{req.redirect_uri}{sep}{query}", status_code=302, headers=PAGE_HEADERS
    )
