"""Two-factor sign-in: TOTP codes (RFC 6238, pyotp) and recovery codes, as
Mastodon's (devise-two-factor): 30 s steps, a code good for one step either
side of now, each code usable once, ten single-use recovery codes.

What an account keeps, in its secrets hash (core ``keys.secrets``; it goes
with the account):

* ``otp_secret``: the TOTP secret, sealed (AES-GCM, bound to the account id)
  with the operator's key (REDPOLL_TWO_FACTOR_KEY) or, without one, a random
  key the database keeps (``keys.TWO_FACTOR_DB_KEY``). It leaves the server
  once, in the answer that begins the set-up, and is never shown again;
* ``otp_step``: the step of the last code used; a code of that step or an
  earlier one is refused (Mastodon's ``consumed_timestep``), so a code
  works once;
* ``otp_recovery``: the sha256 digests of the unused recovery codes
  (random, 80 bits each: a digest is as good as a slow hash here).

Atomicity: the set-up's secret waits in its own key with a TTL until a
code confirms it; confirming moves it into the secrets hash with the
recovery codes in one script (``two_factor_enable.lua``, both keys in the
account's slot). Spending a code is one script on the secrets hash
(``two_factor_use.lua``: compare and set). Turning it off is one HDEL.

The second step of a sign-in is a short-lived state (``keys.two_factor_challenge``,
SET with a TTL) made only after a right password, named by a random token
the sign-in form carries (stored as its digest, as every token): it holds
the account and the authorization request, so the form of the second step
takes a code and nothing else, and cannot check a password. Each code it
gets is counted (``limits.TWO_FACTOR_CHALLENGE_TRIES`` a step, then it is
dropped) and so is each for the account (``ratelimit``, the caller's rate);
a right one takes the state with GETDEL (at most once).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from dataclasses import dataclass

import pyotp
import segno
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..core import keys as core_keys
from ..core import limits
from ..core.errors import RedpollError
from ..storage.store import Store
from . import keys, ratelimit

SECRET = "otp_secret"
STEP = "otp_step"
RECOVERY = "otp_recovery"

_DIGITS = re.compile(f"[0-9]{{{limits.TWO_FACTOR_DIGITS}}}")
_RECOVERY = re.compile(f"[0-9a-f]{{{limits.TWO_FACTOR_RECOVERY_HEX}}}")


class TwoFactorError(RedpollError):
    """A two-factor request that cannot be done (on already, off, no set-up)."""

    status = 422


class TwoFactorLimited(RedpollError):
    """Too many codes tried for one account (``state``: its bucket)."""

    status = 429

    def __init__(self, state: ratelimit.RateState):
        super().__init__("Too many requests")
        self.state = state


# --- sealing the secret ---------------------------------------------------------------
def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


async def _cipher(store: Store, key: str | None) -> AESGCM:
    """The AEAD the secrets are sealed with: from the operator's key, else
    from the database's own (made once, SET NX: every process finds the same)."""
    if key is None:
        made = base64.urlsafe_b64encode(os.urandom(32)).decode()
        await store.set(keys.TWO_FACTOR_DB_KEY, made, nx=True)
        raw = await store.get(keys.TWO_FACTOR_DB_KEY)
        key = raw.decode() if isinstance(raw, bytes) else str(raw)
    return AESGCM(hashlib.sha256(b"redpoll two-factor\0" + key.encode()).digest())


def _seal(aead: AESGCM, uid: int, secret: str) -> str:
    nonce = os.urandom(12)
    box = aead.encrypt(nonce, secret.encode(), str(uid).encode())
    return base64.urlsafe_b64encode(nonce + box).decode()


def _open(aead: AESGCM, uid: int, sealed: str) -> str | None:
    """The secret, or None when it was not sealed with this key for ``uid``
    (the operator changed REDPOLL_TWO_FACTOR_KEY: codes then fail until an
    admin turns two-factor off, docs/operating.md)."""
    try:
        raw = base64.urlsafe_b64decode(sealed.encode())
        return aead.decrypt(raw[:12], raw[12:], str(uid).encode()).decode()
    except (InvalidTag, ValueError):
        return None


# --- codes ----------------------------------------------------------------------------
def _totp(secret: str) -> pyotp.TOTP:
    return pyotp.TOTP(secret, digits=limits.TWO_FACTOR_DIGITS, interval=limits.TWO_FACTOR_STEP_S)


def normalize(code) -> str:
    """A code as typed, without spaces and dashes, lower case ("" if none)."""
    if not isinstance(code, str) or len(code) > limits.TWO_FACTOR_CODE_MAX_CHARS:
        return ""
    return re.sub(r"[\s-]", "", code).lower()


def matching_step(secret: str, code: str, now: float | None = None) -> int | None:
    """The step whose TOTP code ``code`` is, within the window around now."""
    if not _DIGITS.fullmatch(code):
        return None
    totp = _totp(secret)
    current = int((time.time() if now is None else now) // limits.TWO_FACTOR_STEP_S)
    found = None
    window = limits.TWO_FACTOR_WINDOW_STEPS
    for step in range(current - window, current + window + 1):  # every one: same time
        if hmac.compare_digest(totp.generate_otp(step), code):
            found = step
    return found


def _recovery_codes() -> tuple[list[str], str]:
    """New recovery codes as shown (groups of five), and their digests as stored."""
    raw = [
        secrets.token_hex(limits.TWO_FACTOR_RECOVERY_HEX // 2)
        for _ in range(limits.TWO_FACTOR_RECOVERY_CODES)
    ]
    shown = ["-".join(c[i : i + 5] for i in range(0, len(c), 5)) for c in raw]
    return shown, " ".join(_digest(c) for c in raw)


# --- the account's state ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Status:
    enabled: bool
    recovery_codes_left: int


async def status(store: Store, uid: int) -> Status:
    secret, codes = await store.hmget(core_keys.secrets(uid), SECRET, RECOVERY)
    left = len(codes.split()) if codes else 0
    return Status(secret is not None, left if secret is not None else 0)


async def enabled(store: Store, uid: int) -> bool:
    return bool(await store.hexists(core_keys.secrets(uid), SECRET))


@dataclass(frozen=True, slots=True)
class Setup:
    secret: str  # base32, as typed into an app by hand
    uri: str  # otpauth://totp/..., what the QR code holds
    qr_svg: str  # the QR code, a data: URI of an SVG image


async def begin_setup(
    store: Store, uid: int, login: str, issuer: str, key: str | None = None
) -> Setup:
    """A new secret for ``uid``, kept (sealed) until a code confirms it
    (:func:`confirm_setup`); a set-up begun again replaces it."""
    if await enabled(store, uid):
        raise TwoFactorError("Two-factor authentication is already enabled")
    secret = pyotp.random_base32()
    aead = await _cipher(store, key)
    await store.set(
        keys.two_factor_setup(uid), _seal(aead, uid, secret), ex=limits.TWO_FACTOR_SETUP_TTL_S
    )
    uri = _totp(secret).provisioning_uri(name=login, issuer_name=issuer)
    qr = segno.make(uri, error="m").svg_data_uri(scale=4, border=2)
    return Setup(secret, uri, qr)


async def confirm_setup(store: Store, uid: int, code, key: str | None = None) -> list[str] | None:
    """Turn two-factor sign-in on if ``code`` is a code of the pending
    secret; the recovery codes (shown once), or None for a wrong code."""
    sealed = await store.get(keys.two_factor_setup(uid))
    if sealed is None:
        if await enabled(store, uid):
            raise TwoFactorError("Two-factor authentication is already enabled")
        raise TwoFactorError("No set-up in progress (or it expired): begin again")
    sealed = sealed.decode()
    secret = _open(await _cipher(store, key), uid, sealed)
    step = matching_step(secret, normalize(code)) if secret else None
    if step is None:
        return None
    shown, digests = _recovery_codes()
    done = await store.run(
        "two_factor_enable",
        [core_keys.secrets(uid), keys.two_factor_setup(uid)],
        [sealed, step, digests],
    )
    if done == -1:
        raise TwoFactorError("Two-factor authentication is already enabled")
    if done == 0:
        raise TwoFactorError("No set-up in progress (or it expired): begin again")
    return shown


async def use_code(store: Store, uid: int, code, key: str | None = None) -> bool:
    """Spend ``code`` (a TOTP code of now, or an unused recovery code) of
    ``uid``: True once for each right code, False for anything else."""
    code = normalize(code)
    if _RECOVERY.fullmatch(code):
        return bool(
            await store.run(
                "two_factor_use", [core_keys.secrets(uid)], ["recovery", "", _digest(code)]
            )
        )
    raw = await store.hget(core_keys.secrets(uid), SECRET)
    if raw is None:
        return False
    sealed = raw.decode()
    secret = _open(await _cipher(store, key), uid, sealed)
    step = matching_step(secret, code) if secret else None
    if step is None:
        return False
    return bool(await store.run("two_factor_use", [core_keys.secrets(uid)], ["step", sealed, step]))


async def counted(store: Store, uid: int, rate: ratelimit.Rate | None) -> None:
    """Count one code tried for ``uid`` (TwoFactorLimited past ``rate``)."""
    state = await ratelimit.hit(store, f"account:{uid}:two_factor", rate)
    if state is not None and state.exceeded:
        raise TwoFactorLimited(state)


async def new_recovery_codes(store: Store, uid: int) -> list[str]:
    """A new set of recovery codes (the old ones stop working)."""
    shown, digests = _recovery_codes()
    if not await store.run("two_factor_codes", [core_keys.secrets(uid)], [digests]):
        raise TwoFactorError("Two-factor authentication is not enabled")
    return shown


async def disable(store: Store, uid: int) -> bool:
    """Turn two-factor sign-in off (one HDEL); False when it was off."""
    return bool(await store.hdel(core_keys.secrets(uid), SECRET, STEP, RECOVERY))


# --- the second step of a sign-in ---------------------------------------------------------
async def start_challenge(store: Store, uid: int, grant: dict) -> str:
    """The token of a new second step for ``uid`` (whose password was right),
    continuing the authorization request ``grant`` (JSON-able)."""
    token = secrets.token_urlsafe(32)
    payload = json.dumps({"uid": uid, "grant": grant})
    await store.set(
        keys.two_factor_challenge(_digest(token)), payload, ex=limits.TWO_FACTOR_CHALLENGE_TTL_S
    )
    return token


@dataclass(frozen=True, slots=True)
class Challenge:
    uid: int
    grant: dict


async def challenge(store: Store, token) -> Challenge | None:
    """The second step ``token`` names, counting one try (None when there
    is none: expired, used, or out of tries, which drops it)."""
    if not isinstance(token, str) or not 0 < len(token) <= 100:
        return None
    dig = _digest(token)
    raw = await store.get(keys.two_factor_challenge(dig))
    if raw is None:
        return None
    tries = await store.run(
        "rate_hit", [keys.two_factor_tries(dig)], [limits.TWO_FACTOR_CHALLENGE_TTL_S * 1000]
    )
    if int(tries) > limits.TWO_FACTOR_CHALLENGE_TRIES:
        await store.delete(keys.two_factor_challenge(dig))
        return None
    data = json.loads(raw)
    return Challenge(int(data["uid"]), data["grant"])


async def finish_challenge(store: Store, token: str) -> bool:
    """Take the second step ``token`` (GETDEL): True for the one caller that did."""
    return await store.getdel(keys.two_factor_challenge(_digest(token))) is not None
