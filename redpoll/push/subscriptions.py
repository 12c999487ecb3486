"""Web Push subscriptions: one per access token (Mastodon's), kept in the
user's slot, ``keys.push_subscriptions(uid)``: token digest -> the
subscription as JSON (its id, endpoint, the browser's keys, alerts, policy,
whether it is a standard one, the token itself and the link base).

The token is kept in the clear beside its digest because Mastodon's push
payload carries it (``access_token``: how a client with several accounts
tells whose notification came); revoking the token removes the
subscription (redpoll.accounts.auth.revoke), and a subscription whose token
is gone by another way is dropped when it would be sent to.

Every write is one step: setting one is one script (push_subscribe.lua:
the bound's check, a new id and the write; atomic), changing its alerts or
policy one script (push_update.lua; atomic), removing one an HDEL (atomic),
dropping one a push service says is gone a compare-and-delete
(push_drop.lua; atomic). Input is checked whole before anything is written.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric import ec

from ..core import keys, limits, validate
from ..core.errors import LimitReached, ValidationError
from ..net import safety
from ..notifications import notifications
from ..storage.store import Store

#: The notification kinds a subscription may ask for (data[alerts][...]),
#: as Mastodon 4.5 takes them: every kind but those Redpoll never pushes
#: (admin.* are pushed only to whom they are made for; Mastodon 4.6 has no
#: alert for added_to_collection either).
NOT_PUSHED = ("severed_relationships", "moderation_warning", "added_to_collection")
ALERTS = tuple(kind for kind in notifications.TYPES if kind not in NOT_PUSHED)
#: Whose notifications are pushed: everyone's, accounts the user follows,
#: accounts following the user, no one's.
POLICIES = ("all", "followed", "follower", "none")


@dataclass(frozen=True, slots=True)
class Subscription:
    id: int
    digest: str  # the access token's digest (the hash field)
    endpoint: str
    p256dh: str  # base64url, as stored
    auth: str  # base64url
    alerts: dict[str, bool] = field(default_factory=dict)
    policy: str = "all"
    #: RFC 8291 aes128gcm with RFC 8292 VAPID; False: the draft aesgcm
    #: Mastodon sends subscriptions made without ``standard``
    standard: bool = False
    token: str = ""
    #: scheme://host[:port] the client used when it subscribed (icon links)
    base: str = ""

    @classmethod
    def from_json(cls, digest: str, raw: bytes | str) -> Subscription:
        d = json.loads(raw)
        return cls(
            id=int(d["id"]),
            digest=digest,
            endpoint=d["endpoint"],
            p256dh=d["p256dh"],
            auth=d["auth"],
            alerts={k: bool(d["alerts"].get(k)) for k in ALERTS},
            policy=d.get("policy", "all"),
            standard=bool(d.get("standard")),
            token=d.get("token", ""),
            base=d.get("base", ""),
        )


# --- input ---------------------------------------------------------------------------
def _b64(value, name: str, size: int | None) -> bytes:
    """Base64 as browsers (url-safe) or Mastodon.py (standard, padded) send it."""
    if not isinstance(value, str) or not value or len(value) > 200:
        raise ValidationError(name, "must be a base64 string")
    text = value.strip().replace("+", "-").replace("/", "_").rstrip("=").replace(" ", "-")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValidationError(name, "must be a base64 string") from None
    if size is not None and len(raw) != size:
        raise ValidationError(name, f"must be {size} bytes")
    return raw


def p256dh(value) -> str:
    """The browser's public key: an uncompressed P-256 point; base64url."""
    raw = _b64(value, "subscription[keys][p256dh]", 65)
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw)
    except ValueError:
        raise ValidationError("subscription[keys][p256dh]", "is not a P-256 public key") from None
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def auth_secret(value) -> str:
    """The browser's authentication secret: 16 bytes; base64url."""
    raw = _b64(value, "subscription[keys][auth]", 16)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def endpoint(value, *, loopback: bool) -> str:
    """A push service's URL: https (http too where outgoing requests may
    reach loopback: tests), a host, no credentials, bounded."""
    url = (
        validate.text(
            value, "subscription[endpoint]", limits.PUSH_ENDPOINT_MAX_CHARS, allow_empty=False
        )
        if isinstance(value, str)
        else None
    )
    if url is None:
        raise ValidationError("subscription[endpoint]", "must be a URL")
    try:
        safety.check_url(url, loopback=loopback)
    except safety.Refused as exc:
        raise ValidationError("subscription[endpoint]", str(exc)) from None
    return url


def _bool(value, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "on", "yes"):
        return True
    if isinstance(value, str) and value.lower() in ("false", "0", "off", "no", ""):
        return False
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValidationError(name, "must be a boolean")


def alerts(value) -> dict[str, bool]:
    """``data[alerts]``: kind -> on; kinds not named are left out (other
    well-formed kind names, of a newer Mastodon, are ignored)."""
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise ValidationError("data[alerts]", "must be an object")
    if len(value) > 32:
        raise ValidationError("data[alerts]", "too many kinds")
    out = {}
    for kind, on in value.items():
        if kind in ALERTS:
            out[kind] = _bool(on, f"data[alerts][{kind}]")
        elif not isinstance(kind, str) or not kind.replace(".", "").replace("_", "").isalpha():
            raise ValidationError("data[alerts]", f"unknown kind {str(kind)[:40]!r}")
    return out


def policy(value) -> str | None:
    if value in (None, ""):
        return None
    if value not in POLICIES:
        raise ValidationError("data[policy]", "must be one of " + ", ".join(POLICIES))
    return value


# --- reads and writes --------------------------------------------------------------------
async def subscribe(
    store: Store,
    uid: int,
    digest: str,
    token: str,
    *,
    endpoint_url,
    key,
    secret,
    alerts_raw,
    policy_raw,
    standard: bool,
    base: str,
    loopback: bool,
) -> Subscription:
    """Set the subscription of the token ``digest`` (input as sent, all of
    it checked first: ValidationError, nothing written), replacing the one
    it had; ValidationError too when the user holds
    limits.PUSH_SUBSCRIPTIONS_MAX of other tokens."""
    uid = validate.an_id(uid, "user_id")
    url = endpoint(endpoint_url, loopback=loopback)
    public, auth = p256dh(key), auth_secret(secret)
    on, chosen = alerts(alerts_raw), policy(policy_raw)
    record = json.dumps(
        {
            "endpoint": url,
            "p256dh": public,
            "auth": auth,
            "alerts": {k: on.get(k, False) for k in ALERTS},
            "policy": chosen or "all",
            "standard": bool(standard),
            "token": token,
            "base": base,
        },
        separators=(",", ":"),
    )
    try:
        _, stored = await store.run(
            "push_subscribe",
            [keys.push_subscriptions(uid), keys.push_seq(uid)],
            [digest, record, limits.PUSH_SUBSCRIPTIONS_MAX],
        )
    except LimitReached:
        raise ValidationError(
            "subscription",
            f"at most {limits.PUSH_SUBSCRIPTIONS_MAX} push subscriptions per account",
        ) from None
    return Subscription.from_json(digest, stored)


async def get(store: Store, uid: int, digest: str) -> Subscription | None:
    raw = await store.hget(keys.push_subscriptions(uid), digest)
    return None if raw is None else Subscription.from_json(digest, raw)


async def update(
    store: Store, uid: int, digest: str, alerts_raw, policy_raw
) -> Subscription | None:
    """Change the alerts named and the policy (when given; input as sent,
    checked first); None when the token has no subscription."""
    alerts_on, policy_name = alerts(alerts_raw), policy(policy_raw)
    stored = await store.run(
        "push_update",
        [keys.push_subscriptions(uid)],
        [digest, json.dumps(alerts_on) if alerts_on else "", policy_name or ""],
    )
    return None if not stored else Subscription.from_json(digest, stored)


async def remove(store: Store, uid: int, digest: str) -> bool:
    """Remove the token's subscription (one HDEL; none: False)."""
    return bool(await store.hdel(keys.push_subscriptions(uid), digest))


async def drop(store: Store, uid: int, sub: Subscription) -> bool:
    """Remove ``sub`` if it still stands (not one set again since)."""
    return bool(await store.run("push_drop", [keys.push_subscriptions(uid)], [sub.digest, sub.id]))


async def of_user(store: Store, uid: int) -> list[Subscription]:
    raw = await store.hgetall(keys.push_subscriptions(uid))
    return sorted(
        (
            Subscription.from_json(d.decode() if isinstance(d, bytes) else d, v)
            for d, v in raw.items()
        ),
        key=lambda s: s.id,
    )
