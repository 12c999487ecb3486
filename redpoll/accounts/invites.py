"""Invites, as Mastodon's: a code a member makes (their role must allow
``invite_users``) with an expiry and a number of uses, that lets one sign
up even while registrations are closed or need approval (an invited
account is approved at once). Listed by their maker (the operator and
roles with ``manage_invites``: all of them) and revoked (expired now).

Storage: one hash per invite (keys.invite(code): its maker, when it was
made, expires and how many uses it allows and has had), written by one
HSET; the maker's index (keys.user_invites) and the server's
(keys.INVITES), one ZADD each after it, so an invite cut short before
them works but is not listed (it expires as any). An expiring invite's
hash goes limits.INVITE_KEPT_AFTER_S after it expired (PEXPIREAT, in the
same HSET's MULTI); the indexes drop codes whose hash is gone when read.
A sign-up takes a use with invite_use.lua (the check and the count in one
step, on the invite's one key: cluster-safe) and gives it back if the
sign-up then fails."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from ..admin import audit, roles, staff
from ..core import keys, limits, validate
from ..core.errors import Forbidden, NotFound, ValidationError
from ..core.models import now_ms
from ..storage.store import Store

#: Mastodon's alphabet for invite codes: letters and digits less the ones
#: that read alike (0, 1, I, l, O)
ALPHABET = "".join(
    c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" if c not in "01IlO"
)
CODE_CHARS = 8


class InviteNotFound(NotFound):
    pass


class InviteNotValid(ValidationError):
    """An invite that cannot be used: ``reason`` is 'none', 'expired' or 'used'."""

    def __init__(self, reason: str):
        text = {
            "expired": "This invite has expired",
            "used": "This invite has been used up",
        }.get(reason, "This invite is not valid")
        super().__init__("invite_code", text)
        self.reason = reason
        self.text = text


@dataclass(frozen=True, slots=True)
class Invite:
    code: str
    uid: int  # who made it
    created_at: int  # ms
    expires_at: int | None  # ms; None: never
    max_uses: int | None  # None: no limit
    uses: int
    comment: str = ""

    def expired(self, now: int | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or now_ms())

    def used_up(self) -> bool:
        return self.max_uses is not None and self.uses >= self.max_uses

    def valid(self, now: int | None = None) -> bool:
        """Mastodon's valid_for_use?"""
        return not self.expired(now) and not self.used_up()


def _code(value) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= 64 or not value.isalnum():
        raise InviteNotValid("none")
    return value


def _from_hash(code: str, raw: dict) -> Invite | None:
    if not raw:
        return None
    h = {k.decode(): v.decode() for k, v in raw.items()}
    exp, top = int(h.get("exp") or 0), int(h.get("max") or 0)
    return Invite(
        code,
        int(h["uid"]),
        int(h.get("at") or 0),
        exp or None,
        top or None,
        int(h.get("uses") or 0),
        h.get("comment", ""),
    )


async def get(store: Store, code) -> Invite:
    try:
        code = _code(code)
    except InviteNotValid:
        raise InviteNotFound("no such invite") from None
    found = _from_hash(code, await store.hgetall(keys.invite(code)))
    if found is None:
        raise InviteNotFound("no such invite")
    return found


async def check(store: Store, code) -> Invite:
    """The invite if it can be used now, else InviteNotValid (a read only)."""
    try:
        found = await get(store, code)
    except InviteNotFound:
        raise InviteNotValid("none") from None
    if found.expired():
        raise InviteNotValid("expired")
    if found.used_up():
        raise InviteNotValid("used")
    return found


async def take(store: Store, code: str) -> int:
    """Take one use of the invite (atomic: invite_use.lua); its maker's id,
    else InviteNotValid with nothing written."""
    state, creator = await store.run("invite_use", [keys.invite(_code(code))], [now_ms(), "take"])
    state = state.decode() if isinstance(state, bytes) else state
    if state != "ok":
        raise InviteNotValid(state)
    return int(creator)


async def give_back(store: Store, code: str) -> None:
    """Undo :func:`take` for a sign-up that failed after it."""
    await store.run("invite_use", [keys.invite(_code(code))], [now_ms(), "give"])


def _bounded(value, field: str, top: int) -> int | None:
    """A whole number 1..top given as int or decimal string; None when not given."""
    if value is None or value == "":
        return None
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 12:
        number = int(value)
    if number is None or not 1 <= number <= top:
        raise ValidationError(field, f"must be a whole number from 1 to {top}")
    return number


async def create(
    store: Store,
    actor: int,
    *,
    expires_in=None,
    max_uses=None,
    comment: str = "",
) -> Invite:
    """A new invite by the account ``actor``: ``expires_in`` seconds from
    now (None: never), at most ``max_uses`` sign-ups (None: no limit)."""
    roles.require(await staff.role_of(store, actor), "invite_users")
    seconds = _bounded(expires_in, "expires_in", limits.INVITE_EXPIRES_MAX_S)
    uses = _bounded(max_uses, "max_uses", limits.INVITE_USES_MAX)
    comment = validate.text(
        comment or "", "comment", limits.INVITE_COMMENT_MAX_CHARS, allow_empty=True
    ).strip()
    live = [i for i in await mine(store, actor) if i.valid()]
    if len(live) >= limits.INVITES_PER_USER_MAX:
        raise ValidationError("invite", f"at most {limits.INVITES_PER_USER_MAX} invites at once")
    code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_CHARS))
    at = now_ms()
    exp = at + seconds * 1000 if seconds else 0
    pipe = store.pipeline(transaction=True)  # one key: the invite's record and its end
    pipe.hset(
        keys.invite(code),
        mapping={
            "uid": actor,
            "at": at,
            "exp": exp,
            "max": uses or 0,
            "uses": 0,
            "comment": comment,
        },
    )
    if exp:
        pipe.pexpireat(keys.invite(code), exp + limits.INVITE_KEPT_AFTER_S * 1000)
    await pipe.execute()
    await store.zadd(keys.user_invites(actor), {code: at})
    await store.zadd(keys.INVITES, {code: at})
    return Invite(code, actor, at, exp or None, uses, 0, comment)


async def _listed(store: Store, index: str) -> list[Invite]:
    codes = [c.decode() for c in await store.zrevrange(index, 0, limits.INVITES_LIST_MAX - 1)]
    rows = await store.batch([("HGETALL", keys.invite(c)) for c in codes])
    out, gone = [], []
    for code, raw in zip(codes, rows):
        if isinstance(raw, list):  # RESP2
            raw = dict(zip(raw[0::2], raw[1::2]))
        found = _from_hash(code, raw)
        if found is None:
            gone.append(code)
        else:
            out.append(found)
    if gone:  # their hashes expired: out of the index (idempotent)
        await store.zrem(index, *gone)
    return out


async def mine(store: Store, uid: int) -> list[Invite]:
    """The invites ``uid`` made, newest first."""
    return await _listed(store, keys.user_invites(uid))


async def listed(store: Store, actor: int | None) -> list[Invite]:
    """What the actor may list: every invite for the operator and roles
    with ``manage_invites``, else their own."""
    role = await staff.role_of(store, actor)
    if role.can("manage_invites"):
        return await _listed(store, keys.INVITES)
    if actor is None:
        return []
    return await mine(store, actor)


async def revoke(store: Store, actor: int | None, code) -> Invite:
    """Expire an invite now (Mastodon's expire!): its maker may, and the
    operator and roles with ``manage_invites``; Forbidden otherwise."""
    found = await get(store, code)
    role = await staff.role_of(store, actor)
    if found.uid != actor and not role.can("manage_invites"):
        raise Forbidden(roles.NOT_ALLOWED)
    at = now_ms()
    if not found.expired(at):
        pipe = store.pipeline(transaction=True)
        pipe.hset(keys.invite(found.code), "exp", at)
        pipe.pexpireat(keys.invite(found.code), at + limits.INVITE_KEPT_AFTER_S * 1000)
        await pipe.execute()
        if actor is None or found.uid != actor:
            await audit.record(store, actor, "expire", "Invite", found.code, found.code)
    return await get(store, found.code)
