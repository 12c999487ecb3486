"""Accounts for the HTTP API: OAuth applications, access tokens, authorization
codes, registration with an e-mail index, and log-in.

Secrets never reach Redis in the clear: tokens, client secrets and codes are
random (``secrets.token_urlsafe(32)``, 256 bits) and stored only as their
sha256 hex digest, which is also the key (``keys.token(digest)``), so a token
is found with one lookup and a dump of the database yields no usable token.
Passwords are argon2id hashes kept by the engine (``account.sign_up``), in the
user's secrets hash, never in the user record.

Atomicity, step by step (every step is one Redis command or one script, and
each is on one key or one slot, so all of it is Redis Cluster safe):

* creating an app or a token is one HSET (atomic);
* revoking a token is one DEL: the next request with it fails (no cache);
  then its push subscription goes (one HDEL) and one event closes the
  streams opened with it (``events.end_streams``);
* a code is one SET with a TTL and is redeemed with GETDEL (at most once);
* registration claims the e-mail with SET NX and a short TTL, signs the user
  up (the engine's own atomic login claim), then binds the e-mail to the new
  id. A registration that dies in between leaves a claim that expires by
  itself (``limits.EMAIL_CLAIM_TTL_S``): the steps are retried by the client
  by registering again. A sign-up with an invite takes one of its uses first
  (invite_use.lua, atomic) and gives it back when a later step fails; a
  process that dies in between loses that use, never grants one too many;
* a token issued to an account waiting for approval carries ``pend`` and is
  refused until the approval drops it (:func:`approve_tokens`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
import secrets
import time
from dataclasses import dataclass

from ..admin import staff
from ..bus import events
from ..bus.queue import JobQueue
from ..core import keys, limits, validate
from ..core.errors import (
    Conflict,
    Forbidden,
    LoginTaken,
    RedpollError,
    UserNotFound,
    ValidationError,
)
from ..core.models import User
from ..instance import registrations
from ..notifications import notifications
from ..records import users
from ..storage.store import Store
from . import account, email_blocks, invites, ip_blocks, ratelimit, standing, two_factor

OOB = "urn:ietf:wg:oauth:2.0:oob"

# --- scopes (Mastodon's, docs "OAuth scopes") ------------------------------------
READ_SCOPES = frozenset(
    f"read:{s}"
    for s in (
        "accounts",
        "blocks",
        "bookmarks",
        "collections",
        "favourites",
        "filters",
        "follows",
        "lists",
        "mutes",
        "notifications",
        "search",
        "statuses",
    )
)
WRITE_SCOPES = frozenset(
    f"write:{s}"
    for s in (
        "accounts",
        "blocks",
        "bookmarks",
        "collections",
        "conversations",
        "favourites",
        "filters",
        "follows",
        "lists",
        "media",
        "mutes",
        "notifications",
        "reports",
        "statuses",
    )
)
FOLLOW_SCOPES = frozenset(
    {"read:blocks", "write:blocks", "read:follows", "write:follows", "read:mutes", "write:mutes"}
)
#: what the admin API's routes ask for (Mastodon's, each granted by its
#: parent ``admin:read`` / ``admin:write``; ``read`` and ``write`` grant none)
ADMIN_RESOURCES = (
    "accounts",
    "reports",
    "domain_allows",
    "domain_blocks",
    "ip_blocks",
    "email_domain_blocks",
    "canonical_email_blocks",
)
ADMIN_READ_SCOPES = frozenset(f"admin:read:{s}" for s in ADMIN_RESOURCES)
ADMIN_WRITE_SCOPES = frozenset(f"admin:write:{s}" for s in ADMIN_RESOURCES)
TOP_SCOPES = ("read", "write", "follow", "push", "profile", "admin:read", "admin:write")
KNOWN_SCOPES = (
    frozenset(TOP_SCOPES) | READ_SCOPES | WRITE_SCOPES | ADMIN_READ_SCOPES | ADMIN_WRITE_SCOPES
)
_EXPANSION = {
    "read": READ_SCOPES,
    "write": WRITE_SCOPES,
    "follow": FOLLOW_SCOPES,
    "admin:read": ADMIN_READ_SCOPES,
    "admin:write": ADMIN_WRITE_SCOPES,
}


class OAuthError(RedpollError):
    """An OAuth 2 error (RFC 6749 section 5.2): ``code`` is the error code."""

    def __init__(self, code: str, description: str, status: int = 400):
        super().__init__(description)
        self.code = code
        self.status = status


def parse_scopes(raw, default: str = "read") -> tuple[str, ...]:
    """Space-separated scopes, each known; duplicates dropped, order kept."""
    if raw is None or raw == "":
        raw = default
    if not isinstance(raw, str):
        raise OAuthError("invalid_scope", "scope must be a space-separated string")
    found: list[str] = []
    for scope in raw.split():
        if scope not in KNOWN_SCOPES:
            raise OAuthError("invalid_scope", f"unknown scope {scope[:40]!r}")
        if scope not in found:
            found.append(scope)
    if not found:
        raise OAuthError("invalid_scope", "no scope requested")
    return tuple(found)


def expand(scopes) -> frozenset[str]:
    out = set(scopes)
    for scope in scopes:
        out |= _EXPANSION.get(scope, frozenset())
    return frozenset(out)


@functools.lru_cache(maxsize=limits.SCOPE_SETS_KEPT)
def _expanded(granted: tuple[str, ...]) -> frozenset[str]:
    """:func:`expand` of a token's scopes, kept by value: every request
    checks one, and tokens share a few combinations."""
    return expand(granted)


def within(requested, granted) -> bool:
    """Every requested scope is covered by a granted one."""
    have = _expanded(granted) if type(granted) is tuple else expand(granted)
    return all(scope in have for scope in requested)


# --- secrets ------------------------------------------------------------------------
def new_secret() -> str:
    return secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


# --- applications ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class App:
    id: int
    client_id: str
    name: str
    website: str
    redirect_uris: tuple[str, ...]
    scopes: tuple[str, ...]
    secret_digest: str


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")


def _redirect_uris(raw) -> tuple[str, ...]:
    if isinstance(raw, (list, tuple)):
        parts = [p for p in raw]
    elif isinstance(raw, str):
        parts = raw.split()
    else:
        raise ValidationError("redirect_uris", "must be a string or a list of strings")
    uris = []
    for uri in parts:
        uri = validate.text(uri, "redirect_uris", limits.APP_URI_MAX_CHARS)
        if uri != OOB:
            if not _SCHEME.fullmatch(uri) or "#" in uri:
                raise ValidationError("redirect_uris", "must be absolute URIs without fragments")
            if uri.split(":", 1)[0].lower() in ("javascript", "data", "vbscript", "file"):
                raise ValidationError("redirect_uris", "uses a forbidden scheme")
        uris.append(uri)
    if not uris:
        raise ValidationError("redirect_uris", "must not be empty")
    if len(uris) > limits.APP_REDIRECT_URIS_MAX:
        raise ValidationError("redirect_uris", f"at most {limits.APP_REDIRECT_URIS_MAX}")
    return tuple(uris)


async def create_app(
    store: Store, name, redirect_uris, scopes=None, website=None
) -> tuple[App, str]:
    """Register an application; returns it and its client secret (shown once)."""
    name = validate.text(name, "client_name", limits.APP_NAME_MAX_CHARS)
    uris = _redirect_uris(redirect_uris)
    try:
        scope_list = parse_scopes(scopes)
    except OAuthError as exc:
        raise ValidationError("scopes", exc.message) from None
    website = (
        "" if website in (None, "") else validate.text(website, "website", limits.APP_URI_MAX_CHARS)
    )
    client_id, client_secret = new_secret(), new_secret()
    app_id = await store.incr(keys.APP_SEQ)
    record = {
        "id": app_id,
        "name": name,
        "website": website,
        "redirect_uris": "\n".join(uris),
        "scopes": " ".join(scope_list),
        "secret": digest(client_secret),
        "at": int(time.time()),
    }
    await store.hset(keys.app(client_id), mapping=record)  # one command: atomic
    return App(app_id, client_id, name, website, uris, scope_list, record["secret"]), client_secret


def _str(raw: dict, name: str) -> str:
    value = raw.get(name.encode())
    return value.decode() if value is not None else ""


async def get_app(store: Store, client_id) -> App | None:
    if not isinstance(client_id, str) or not 0 < len(client_id) <= 100:
        return None
    raw = await store.hgetall(keys.app(client_id))
    if not raw:
        return None
    return App(
        int(_str(raw, "id")),
        client_id,
        _str(raw, "name"),
        _str(raw, "website"),
        tuple(_str(raw, "redirect_uris").split("\n")),
        tuple(_str(raw, "scopes").split()),
        _str(raw, "secret"),
    )


async def check_client(store: Store, client_id, client_secret) -> App:
    """The app whose id and secret these are, else OAuthError invalid_client (401)."""
    app = await get_app(store, client_id)
    if (
        app is None
        or not isinstance(client_secret, str)
        or not secrets.compare_digest(app.secret_digest, digest(client_secret))
    ):
        raise OAuthError(
            "invalid_client",
            "Client authentication failed due to unknown "
            "client, no client authentication included, or unsupported "
            "authentication method.",
            401,
        )
    return app


# --- tokens -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Token:
    digest: str
    uid: int | None  # None for an app (client credentials) token
    client_id: str
    scopes: tuple[str, ...]
    #: its user's standing is read where a functional login is needed
    #: (redpoll.accounts.standing: the account was unconfirmed when marked)
    check: bool = False
    #: issued to an account waiting for approval: refused until it is approved
    pending: bool = False

    def allows(self, required: str) -> bool:
        return within((required,), self.scopes)


async def issue_token(
    store: Store, app: App, uid: int | None, scopes, pending: bool = False
) -> tuple[str, int]:
    """A new access token (returned once, stored as a digest) and its
    creation time; ``pending``: for an account waiting for approval."""
    token = new_secret()
    created = int(time.time())
    record: dict[str, str | int] = {
        "uid": uid or 0,
        "app": app.client_id,
        "scopes": " ".join(scopes),
        "at": created,
        # (ms: what orders a user's sessions; two made in one second keep their order)
        "ms": int(time.time() * 1000),
    }
    if uid:  # indexed first: a token that exists is always in its user's index
        _, unconfirmed = await store.batch(
            [
                ("SADD", keys.user_tokens(uid), digest(token)),
                ("HEXISTS", keys.secrets(uid), standing.UNCONFIRMED),
            ]
        )
        if unconfirmed:
            record["chk"] = 1
    if pending:
        record["pend"] = 1
    await store.hset(keys.token(digest(token)), mapping=record)  # one command: atomic
    return token, created


async def token_for_app(
    store: Store, client_id, uid: int | None, scopes, pending: bool = False
) -> tuple[str, int] | None:
    """A new access token of the app ``client_id`` for ``uid`` (:func:`issue_token`);
    None when the app is gone."""
    app = await get_app(store, client_id)
    if app is None:
        return None
    return await issue_token(store, app, uid, scopes, pending)


async def approve_tokens(store: Store, uid: int) -> None:
    """The tokens of ``uid`` issued while it waited for approval work from
    now on (one HDEL each: idempotent; an approval runs it before it clears
    the account's own mark, so a call cut short is finished by approving
    again)."""
    digests = [d.decode() for d in await store.smembers(keys.user_tokens(uid))]
    if digests:
        await store.batch([("HDEL", keys.token(d), "pend") for d in digests])


async def authenticate(
    store: Store, token: str, rate: ratelimit.Rate | None
) -> tuple[Token | None, ratelimit.RateState | None]:
    """The token's record and its rate-limit state after counting this request,
    in one script call (one plain read when tokens are not rate limited);
    (None, None) for an unknown or revoked token."""
    if not token or len(token) > 200:
        return None, None
    dig = digest(token)
    if rate is None:
        # nothing to count: one plain read (a script costs the server ~10x)
        (reply,) = await store.batch(
            [("HMGET", keys.token(dig), "uid", "app", "scopes", "chk", "pend")]
        )
        if reply[0] is None:
            return None, None
        reply.insert(3, 0)
        end = 0.0
    else:
        index, end, ttl_ms = ratelimit.window(rate)
        reply = await store.run(
            "auth_hit", [keys.token(dig), keys.token_rate(dig, index)], [ttl_ms]
        )
    if not reply:
        return None, None
    uid, client_id, scopes, counted, chk, pend = reply
    uid = int(uid)
    info = Token(
        dig, uid or None, client_id.decode(), tuple(scopes.decode().split()), bool(chk), bool(pend)
    )
    return info, (None if rate is None else ratelimit.state(rate, int(counted), end))


async def missing_tokens(store: Store, digests: list[str]) -> list[str]:
    """The token digests among ``digests`` that no longer exist (revoked)."""
    found = await store.batch([("EXISTS", keys.token(d)) for d in digests])
    return [d for d, exists in zip(digests, found) if not exists]


async def revoke(store: Store, app: App, token) -> bool:
    """Revoke ``token`` if it belongs to ``app`` (RFC 7009: unknown tokens are
    not an error). One DEL: effective for the very next request."""
    if not isinstance(token, str) or not token or len(token) > 200:
        return False
    key = keys.token(digest(token))
    owner, uid = await store.hmget(key, "app", "uid")
    if owner is None:
        return False
    if owner.decode() != app.client_id:
        raise OAuthError("unauthorized_client", "You are not authorized to revoke this token", 403)
    return await _revoke_digest(store, int(uid) if uid else 0, digest(token))


async def _revoke_digest(store: Store, uid: int, dig: str) -> bool:
    """Revoke the token whose digest is ``dig``: one DEL (effective for the
    very next request), then its push subscription (one HDEL; if this process
    dies in between, the subscription is dropped when a push finds its token
    gone), its place in the user's index, and its open streams close
    (events.end_streams; else the streams' periodic token check closes them)."""
    deleted = bool(await store.delete(keys.token(dig)))
    if uid:
        await store.hdel(keys.push_subscriptions(uid), dig)
        await store.srem(keys.user_tokens(uid), dig)
    await events.end_streams(store, token_digest=dig)
    return deleted


# --- a user's sessions: the tokens issued to them ------------------------------------------
#: A session's public id: the first characters of its token's digest (the
#: digest names the token in Redis; the token itself is never stored).
SESSION_ID_CHARS = 16


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    digest: str
    app: App | None  # None when the app was removed
    scopes: tuple[str, ...]
    created_at: int


async def sessions(store: Store, uid: int) -> list[Session]:
    """The tokens issued to ``uid`` that still work, newest first."""
    digests = sorted(d.decode() for d in await store.smembers(keys.user_tokens(uid)))
    rows = await store.batch(
        [("HMGET", keys.token(d), "uid", "app", "scopes", "at", "ms") for d in digests]
    )
    apps: dict[str, App | None] = {}
    out = []
    made: dict[str, int] = {}
    for dig, (owner, client_id, scopes, at, ms) in zip(digests, rows):
        if owner is None or int(owner) != uid:  # revoked (the index is cleaned lazily)
            continue
        cid = client_id.decode()
        if cid not in apps:
            apps[cid] = await get_app(store, cid)
        out.append(
            Session(
                dig[:SESSION_ID_CHARS], dig, apps[cid], tuple(scopes.decode().split()), int(at or 0)
            )
        )
        made[dig] = int(ms) if ms else int(at or 0) * 1000
    out.sort(key=lambda s: made[s.digest], reverse=True)
    return out


async def revoke_session(store: Store, uid: int, session_id) -> bool:
    """Revoke the token of ``uid`` whose session id is ``session_id``; False
    when there is none (another user's, or revoked already)."""
    if not isinstance(session_id, str) or len(session_id) != SESSION_ID_CHARS:
        return False
    for s in await sessions(store, uid):
        if s.id == session_id:
            return await _revoke_digest(store, uid, s.digest)
    return False


async def revoke_other_tokens(store: Store, uid: int, keep: str | None) -> int:
    """Revoke every token of ``uid`` but the one whose digest is ``keep``
    (each as :func:`_revoke_digest`). How many went."""
    gone = 0
    for d in await store.smembers(keys.user_tokens(uid)):
        if d.decode() != keep:
            gone += await _revoke_digest(store, uid, d.decode())
    return gone


# --- authorization codes -------------------------------------------------------------------
#: RFC 7636 section 4.1: a code verifier is 43 to 128 unreserved characters;
#: an S256 challenge is the base64url (no padding) of its SHA-256, 43 characters.
_VERIFIER = re.compile(r"[A-Za-z0-9._~-]{43,128}")
_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")


def s256(verifier: str) -> str:
    """The S256 code challenge of a PKCE code verifier (RFC 7636 section 4.2)."""
    return (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest())
        .rstrip(b"=")
        .decode("ascii")
    )


def pkce_challenge(challenge, method) -> str | None:
    """A checked PKCE challenge from an authorization request, or None when the
    client sent none. Only S256 is supported (a missing method means "plain",
    RFC 7636 section 4.3, which is refused)."""
    if challenge in (None, ""):
        if method not in (None, ""):
            raise OAuthError("invalid_request", "code_challenge_method without code_challenge")
        return None
    if method != "S256":
        raise OAuthError("invalid_request", "code_challenge_method must be S256")
    if not isinstance(challenge, str) or not _CHALLENGE.fullmatch(challenge):
        raise OAuthError("invalid_request", "code_challenge must be 43 base64url characters")
    return challenge


@dataclass(frozen=True, slots=True)
class CodeGrant:
    """What an authorization code stands for, stored with it."""

    uid: int
    client_id: str
    redirect_uri: str
    #: the authorization request named redirect_uri (RFC 6749 4.1.3: then the
    #: token request must name the same one)
    redirect_given: bool
    scopes: tuple[str, ...]
    challenge: str | None  # PKCE S256 challenge, if the client sent one


async def create_code(
    store: Store,
    app: App,
    uid: int,
    redirect_uri: str,
    scopes,
    *,
    redirect_given: bool = True,
    challenge: str | None = None,
) -> str:
    code = new_secret()
    payload = json.dumps(
        {
            "uid": uid,
            "app": app.client_id,
            "redirect_uri": redirect_uri,
            "redirect_given": redirect_given,
            "scopes": " ".join(scopes),
            "challenge": challenge,
        }
    )
    await store.set(keys.auth_code(digest(code)), payload, ex=limits.AUTH_CODE_TTL_S)
    return code


def _grant_matches(grant: CodeGrant, app: App, redirect_uri, verifier) -> bool:
    if grant.client_id != app.client_id:
        return False
    # RFC 6749 4.1.3: a code issued for a named redirect_uri needs that same
    # redirect_uri here; without one named, a redirect_uri given must be the one used
    if grant.redirect_given and redirect_uri in (None, ""):
        return False
    if redirect_uri not in (None, "") and redirect_uri != grant.redirect_uri:
        return False
    if grant.challenge is None:
        return verifier in (None, "")  # a verifier for a code without a challenge: refused
    return (
        isinstance(verifier, str)
        and bool(_VERIFIER.fullmatch(verifier))
        and secrets.compare_digest(s256(verifier), grant.challenge)
    )


async def redeem_code(
    store: Store, app: App, code, redirect_uri, verifier=None
) -> tuple[int, tuple[str, ...]]:
    """(user id, scopes) of a code issued to ``app``; a code works once (GETDEL),
    so a failed attempt (wrong redirect_uri, wrong PKCE verifier) burns it too."""
    bad = OAuthError(
        "invalid_grant",
        "The provided authorization grant is invalid, expired, "
        "revoked, does not match the redirection URI used in the authorization "
        "request, or was issued to another client.",
    )
    if not isinstance(code, str) or not code or len(code) > 200:
        raise bad
    raw = await store.getdel(keys.auth_code(digest(code)))
    if raw is None:
        raise bad
    data = json.loads(raw)
    grant = CodeGrant(
        int(data["uid"]),
        data["app"],
        data["redirect_uri"],
        bool(data.get("redirect_given", True)),
        tuple(data["scopes"].split()),
        data.get("challenge"),
    )
    if not _grant_matches(grant, app, redirect_uri, verifier):
        raise bad
    return grant.uid, grant.scopes


# --- registration and log-in ---------------------------------------------------------------
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
#: what the operator may give (``redpoll admin create-user``, as tootctl):
#: a local address such as admin@localhost too
_LOCAL_EMAIL = re.compile(r"[^@\s]+@[^@\s.][^@\s]*")
_LOGIN = re.compile(r"[A-Za-z0-9_]+")
#: Mastodon's reserved usernames (Account::RESERVED_USERNAMES... and the
#: ones its ReservedUsernameValidator refuses): ERR_RESERVED at sign-up
RESERVED_USERNAMES = frozenset(
    {"admin", "administrator", "help", "mod", "moderator", "root", "support", "webmaster"}
)
#: Mastodon's answer to a pending account's sign-in (Api::BaseController)
PENDING_MESSAGE = "Your login is currently pending approval"


def _email(value) -> str:
    value = validate.text(value, "email", limits.EMAIL_MAX_CHARS)
    if not _EMAIL.fullmatch(value):
        raise ValidationError("email", "is not an e-mail address")
    return value


def _password(value) -> str:
    value = validate.text(value, "password", limits.PASSWORD_MAX_CHARS)
    if len(value) < limits.PASSWORD_MIN_CHARS:
        raise ValidationError("password", f"is shorter than {limits.PASSWORD_MIN_CHARS} characters")
    return value


def valid_email(value) -> str:
    """``value`` if it is an e-mail address as sign-up takes one, else ValidationError."""
    return _email(value)


def valid_password(value) -> str:
    """``value`` if it is a password as sign-up takes one, else ValidationError."""
    return _password(value)


class EmailTaken(Conflict):
    pass


class PendingApproval(RedpollError):
    """The right password of an account still waiting for a moderator's approval."""

    status = 403

    def __init__(self) -> None:
        super().__init__(PENDING_MESSAGE)


class RegistrationsClosed(Forbidden):
    """Registrations are closed and no valid invite came (Mastodon: 403)."""

    def __init__(self) -> None:
        super().__init__("This action is not allowed")


#: Mastodon's names of the fields in its messages ("Username can't be blank")
_HUMAN = {
    "username": "Username",
    "email": "Email",
    "password": "Password",
    "agreement": "Agreement",
    "reason": "Reason",
    "invite_code": "Invite code",
}


class SignUpInvalid(ValidationError):
    """Every field a sign-up got wrong, at once: ``errors`` maps a field to
    its [(Mastodon's error code, description)] (nothing was written)."""

    def __init__(self, errors: dict[str, list[tuple[str, str]]]):
        field = next(iter(errors))
        super().__init__(field, errors[field][0][1])
        self.errors = errors

    @property
    def summary(self) -> str:
        """Mastodon's ``error``: "Validation failed: Username can't be blank, ..."."""
        parts = [
            f"{_HUMAN.get(f, f.capitalize())} {d}"
            for f, found in self.errors.items()
            for _, d in found
        ]
        return "Validation failed: " + ", ".join(parts)


@dataclass(frozen=True, slots=True)
class SignUp:
    """What a sign-up asks (POST /api/v1/accounts' fields)."""

    username: object
    email: object
    password: object
    agreement: bool = True
    reason: object = None
    invite_code: object = None
    #: the address it came from (IP blocks may make it wait for approval)
    ip: str | None = None


def _text_errors(value, *, top: int, bottom: int = 0) -> tuple[str, str] | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return "ERR_BLANK", "can't be blank"
    if not isinstance(value, str) or "\x00" in value:
        return "ERR_INVALID", "is invalid"
    if len(value) > top:
        return "ERR_TOO_LONG", f"is too long (maximum is {top} characters)"
    if len(value) < bottom:
        return "ERR_TOO_SHORT", f"is too short (minimum is {bottom} characters)"
    return None


async def _sign_up_errors(
    store: Store, form: SignUp, *, operator: bool, asks_reason: bool
) -> dict[str, list[tuple[str, str]]]:
    """What is wrong with the form, field by field (reads only)."""
    errors: dict[str, list[tuple[str, str]]] = {}
    name = form.username
    found = _text_errors(name, top=limits.LOGIN_MAX_CHARS)
    if found is None and not _LOGIN.fullmatch(str(name)):
        found = ("ERR_INVALID", "must contain only letters, numbers and underscores")
    if found is None and not operator and str(name).lower() in RESERVED_USERNAMES:
        found = ("ERR_RESERVED", "is reserved")
    if found is None and await store.exists(keys.login(str(name).lower())):
        found = ("ERR_TAKEN", "has already been taken")
    if found is not None:
        errors["username"] = [found]
    email = form.email
    found = _text_errors(email, top=limits.EMAIL_MAX_CHARS)
    if found is None and not (_LOCAL_EMAIL if operator else _EMAIL).fullmatch(str(email)):
        found = ("ERR_INVALID", "is invalid")
    if found is None and not operator and await email_blocks.refused(store, str(email)):
        found = ("ERR_BLOCKED", "uses a disallowed e-mail provider")
    if found is None and await store.exists(keys.email(str(email).lower())):
        found = ("ERR_TAKEN", "has already been taken")
    if found is not None:
        errors["email"] = [found]
    found = _text_errors(
        form.password, top=limits.PASSWORD_MAX_CHARS, bottom=limits.PASSWORD_MIN_CHARS
    )
    if found is not None:
        errors["password"] = [found]
    if not operator and form.agreement is not True:
        errors["agreement"] = [("ERR_ACCEPTED", "must be accepted")]
    reason = form.reason
    if reason not in (None, "") and (
        not isinstance(reason, str) or len(reason) > limits.SIGN_UP_REASON_MAX_CHARS
    ):
        errors["reason"] = [
            (
                "ERR_TOO_LONG",
                f"is too long (maximum is {limits.SIGN_UP_REASON_MAX_CHARS} characters)",
            )
        ]
    elif asks_reason and (not isinstance(reason, str) or not reason.strip()):
        errors["reason"] = [("ERR_BLANK", "can't be blank")]
    return errors


async def register(
    store: Store,
    queue: JobQueue,
    username,
    email,
    password,
    *,
    form: SignUp | None = None,
    operator: bool = False,
) -> User:
    """Sign a user up with a unique login and a unique e-mail (see module doc).

    As Mastodon: registrations closed refuse it (RegistrationsClosed, 403)
    unless a valid invite came (an expired or used-up one is told apart:
    SignUpInvalid on ``invite_code``); every field that is wrong is reported at
    once (SignUpInvalid), with nothing written; in approval mode (or from
    an IP block's network that asks for it) the account is pending (it
    cannot sign in until a moderator approves it), unless it came with an
    invite; moderators (roles with ``manage_users``) get an
    ``admin.sign_up`` notification. ``operator``: ``redpoll admin
    create-user``, which any mode lets through, approved, and which may use
    a local address (admin@localhost) and a reserved name.

    The invite's use is taken (invite_use.lua: atomic) before the e-mail
    claim and the account, and given back if either fails."""
    form = form or SignUp(username, email, password)
    mode = await registrations.registrations(store)
    code = form.invite_code if form.invite_code not in (None, "") else None
    invite = None
    if code is not None and not operator:
        try:
            invite = await invites.check(store, code)
        except invites.InviteNotValid as exc:
            if not mode.enabled and exc.reason == "none":  # no invite at all: Mastodon's 403
                raise RegistrationsClosed() from None
            raise SignUpInvalid({"invite_code": [("ERR_INVALID", exc.text)]}) from None
    if not operator and not mode.enabled and invite is None:
        raise RegistrationsClosed()
    errors = await _sign_up_errors(
        store, form, operator=operator, asks_reason=mode.asks_reason and invite is None
    )
    if errors:
        raise SignUpInvalid(errors)
    login, email, password = str(form.username), str(form.email), str(form.password)
    pending = (
        not operator
        and invite is None
        and (mode.approval_required or await ip_blocks.sign_up_needs_approval(store, form.ip))
    )
    fields: dict[str, str] = {}
    if pending:
        fields["pend"] = "1"
    if invite is not None:
        try:
            fields["invby"] = str(await invites.take(store, invite.code))
        except invites.InviteNotValid as exc:  # used up or expired since the check
            raise SignUpInvalid({"invite_code": [("ERR_INVALID", exc.text)]}) from None
    reason = form.reason.strip() if isinstance(form.reason, str) else ""
    index = keys.email(email.lower())
    try:
        if not await store.set(index, "pending", nx=True, ex=limits.EMAIL_CLAIM_TTL_S):
            raise SignUpInvalid({"email": [("ERR_TAKEN", "has already been taken")]})
        try:
            user = await account.sign_up(
                store,
                queue,
                login,
                password=password,
                email=email,
                fields=fields,
                private={"reason": reason} if reason else None,
            )
        except LoginTaken:
            await store.delete(index)
            raise SignUpInvalid({"username": [("ERR_TAKEN", "has already been taken")]}) from None
        except BaseException:
            await store.delete(index)
            raise
    except BaseException:
        if invite is not None:
            await invites.give_back(store, invite.code)
        raise
    await store.set(index, user.id)  # bind for good (drops the claim's TTL)
    await tell_staff(store, user.id)
    return user


async def tell_staff(store: Store, uid: int) -> None:
    """An ``admin.sign_up`` notification of the new account ``uid`` to each
    account whose role may manage users (Mastodon's rule), at most
    limits.SIGN_UP_NOTIFIED_STAFF_MAX. Each is one idempotent script; a
    call cut short leaves the rest untold."""
    (op,) = await store.batch([("INCR", keys.INTERACTION_SEQ)])
    for moderator in await staff.holding(store, "manage_users"):
        await notifications.apply(store, moderator, "admin.sign_up", uid, uid, int(op), True)


async def register_with_token(
    store: Store, queue: JobQueue, client_id, scopes, form: SignUp
) -> tuple[User, tuple[str, int] | None]:
    """:func:`register`, then a new access token of the app ``client_id``
    for the new user with ``scopes`` (:func:`token_for_app`; None when the
    app is gone: the account stays registered). A pending account's token
    is refused until the account is approved (Token.pending)."""
    user = await register(store, queue, form.username, form.email, form.password, form=form)
    return user, await token_for_app(store, client_id, user.id, scopes, pending=user.pending)


class LoginLimited(RedpollError):
    """Too many log-in attempts for one account (``state``: its bucket)."""

    status = 429

    def __init__(self, state: ratelimit.RateState):
        super().__init__("Too many requests")
        self.state = state


async def password_login(
    store: Store, username, password, rate: ratelimit.Rate | None = None
) -> User | None:
    """The user whose login (or e-mail) and password these are, else None.

    ``rate``: attempts per account, whatever the address (LoginLimited past
    it); the login and the e-mail of an account share its count, and a name
    that is no account is counted as one would be, so the limit does not
    tell which exist. Neither does the time taken: an unknown account is
    checked against a dummy hash (account.verify_password)."""
    if not isinstance(username, str) or not isinstance(password, str):
        return None
    if (
        not username
        or len(username) > limits.EMAIL_MAX_CHARS
        or len(password) > limits.PASSWORD_MAX_CHARS
    ):
        return None
    user = None
    try:
        if "@" in username:
            raw = await store.get(keys.email(username.lower()))
            if raw is not None and raw.isdigit():
                user = await users.get_user(store, int(raw))
        else:
            user = await users.lookup(store, username)
    except (UserNotFound, ValidationError):
        user = None
    bucket = (
        f"account:{user.id}:login"
        if user is not None
        else f"name:{digest(username.lower())[:32]}:login"
    )
    state = await ratelimit.hit(store, bucket, rate)
    if state is not None and state.exceeded:
        raise LoginLimited(state)
    found = await account.verify_password(store, user, password)
    if found is not None and found.pending:  # (told only to whoever knows the password)
        raise PendingApproval()
    return found


async def password_grant_login(
    store: Store, username, password, rate: ratelimit.Rate | None = None
) -> User | None:
    """:func:`password_login` for the password grant, which has no second
    step: an account with two-factor sign-in on is refused as a wrong
    password is (Mastodon's ``resource_owner_from_credentials``: ``user
    unless user&.otp_required_for_login?``)."""
    user = await password_login(store, username, password, rate)
    if user is None or await two_factor.enabled(store, user.id):
        return None
    return user


# --- the authorize page: password, then (with two-factor on) a code ----------------------
@dataclass(frozen=True, slots=True)
class CodeRequest:
    """What an authorization request asks a code for (the app apart)."""

    redirect_uri: str
    redirect_given: bool
    scopes: tuple[str, ...]
    state: str
    challenge: str | None  # PKCE S256

    def as_dict(self) -> dict:
        return {
            "redirect_uri": self.redirect_uri,
            "redirect_given": self.redirect_given,
            "scopes": " ".join(self.scopes),
            "state": self.state,
            "challenge": self.challenge,
        }

    @classmethod
    def of(cls, data: dict) -> CodeRequest:
        return cls(
            data["redirect_uri"],
            bool(data["redirect_given"]),
            tuple(data["scopes"].split()),
            data["state"],
            data["challenge"],
        )


@dataclass(frozen=True, slots=True)
class SecondStep:
    """The password was right and the account has two-factor on: the code
    comes next, in the step ``token`` names (two_factor.start_challenge)."""

    token: str


async def authorize_sign_in(
    store: Store, app: App, username, password, request: CodeRequest, rate=None
) -> str | SecondStep | None:
    """The first step of the authorize page: an authorization code for
    ``request`` when the password is right and two-factor is off, the
    second step when it is on, None for a wrong password."""
    user = await password_login(store, username, password, rate)
    if user is None:
        return None
    if await two_factor.enabled(store, user.id):
        grant = {"client_id": app.client_id, **request.as_dict()}
        return SecondStep(await two_factor.start_challenge(store, user.id, grant))
    return await _code_for(store, app, user.id, request)


async def _code_for(store: Store, app: App, uid: int, request: CodeRequest) -> str:
    return await create_code(
        store,
        app,
        uid,
        request.redirect_uri,
        request.scopes,
        redirect_given=request.redirect_given,
        challenge=request.challenge,
    )


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """The second step's answer: ``app`` None when the step is gone
    (expired, used, out of tries, or its app removed); ``code`` None for a
    wrong code (the same step may be tried again)."""

    app: App | None
    request: CodeRequest | None
    code: str | None


async def authorize_second_step(
    store: Store, token, otp, rate: ratelimit.Rate | None = None, key: str | None = None
) -> StepOutcome:
    """The second step ``token`` with the code ``otp`` (TOTP or recovery):
    an authorization code for the request the first step was given, once.
    Each try counts for the step and for the account (TwoFactorLimited
    past ``rate``); a wrong code writes nothing else."""
    step = await two_factor.challenge(store, token)
    if step is None:
        return StepOutcome(None, None, None)
    app = await get_app(store, step.grant["client_id"])
    if app is None:
        return StepOutcome(None, None, None)
    request = CodeRequest.of(step.grant)
    await two_factor.counted(store, step.uid, rate)
    if not await two_factor.use_code(store, step.uid, otp, key):
        return StepOutcome(app, request, None)
    # the code is spent; the step is taken once (a second, racing, right code: gone)
    if not await two_factor.finish_challenge(store, token):
        return StepOutcome(None, None, None)
    return StepOutcome(app, request, await _code_for(store, app, step.uid, request))


async def check_own_password(
    store: Store, uid: int, password, rate: ratelimit.Rate | None = None
) -> User | None:
    """The user ``uid`` if ``password`` is theirs, else None; counted in the
    account's log-in bucket (LoginLimited past ``rate``), as a log-in is."""
    state = await ratelimit.hit(store, f"account:{uid}:login", rate)
    if state is not None and state.exceeded:
        raise LoginLimited(state)
    if not isinstance(password, str) or len(password) > limits.PASSWORD_MAX_CHARS:
        return None
    return await account.verify_password(store, await users.get_user(store, uid), password)


async def disable_two_factor(
    store: Store,
    uid: int,
    password=None,
    code=None,
    *,
    rate: ratelimit.Rate | None = None,
    code_rate: ratelimit.Rate | None = None,
    key: str | None = None,
) -> bool:
    """Turn ``uid``'s two-factor sign-in off when ``code`` is a current code
    (or an unused recovery code) of it, or else ``password`` is the
    account's (Mastodon asks for the password); False, writing nothing,
    when neither is right or it is off."""
    if not await two_factor.enabled(store, uid):
        raise two_factor.TwoFactorError("Two-factor authentication is not enabled")
    if code not in (None, ""):
        await two_factor.counted(store, uid, code_rate)
        if not await two_factor.use_code(store, uid, code, key):
            return False
    elif await check_own_password(store, uid, password, rate) is None:
        return False
    return await two_factor.disable(store, uid)


async def new_recovery_codes(
    store: Store, uid: int, password, rate: ratelimit.Rate | None = None
) -> list[str] | None:
    """A new set of recovery codes for ``uid`` if ``password`` is the
    account's (None, writing nothing, if not), as Mastodon asks."""
    if not await two_factor.enabled(store, uid):
        raise two_factor.TwoFactorError("Two-factor authentication is not enabled")
    if await check_own_password(store, uid, password, rate) is None:
        return None
    return await two_factor.new_recovery_codes(store, uid)


async def change_password(
    store: Store, uid: int, current, new, keep: str | None, rate: ratelimit.Rate | None = None
) -> bool:
    """Set a new password if ``current`` is the account's (False if not);
    then every token but ``keep`` (a digest: the one asking) is revoked."""
    new = _password(new)
    if await check_own_password(store, uid, current, rate) is None:
        return False
    await account.set_password(store, uid, new)
    await revoke_other_tokens(store, uid, keep)
    return True


__all__ = [
    "App",
    "Token",
    "OAuthError",
    "EmailTaken",
    "LoginLimited",
    "LoginTaken",
    "OOB",
    "parse_scopes",
    "within",
    "create_app",
    "get_app",
    "check_client",
    "issue_token",
    "authenticate",
    "revoke",
    "create_code",
    "redeem_code",
    "pkce_challenge",
    "s256",
    "CodeGrant",
    "register",
    "SignUp",
    "SignUpInvalid",
    "PendingApproval",
    "RegistrationsClosed",
    "password_login",
    "password_grant_login",
    "CodeRequest",
    "SecondStep",
    "StepOutcome",
    "authorize_sign_in",
    "authorize_second_step",
    "Session",
    "sessions",
    "revoke_session",
    "revoke_other_tokens",
    "check_own_password",
    "change_password",
]
