"""Sending a notification to its owner's Web Push subscriptions (the
worker's handler of jobs.PushJob), everything decided when it is sent:

* the notification still exists and its owner is shown it now: the one
  decision of redpoll.reading.notification_view (an account blocked or
  muted since, a status deleted or hidden, a ``hide`` filter: nothing);
* for each subscription: its token still exists, its alerts ask for the
  kind, and its policy lets the account in (``followed``: accounts the
  owner follows; ``follower``: accounts following the owner; ``none``).

The payload is Mastodon's (Web::NotificationSerializer: access_token,
preferred_locale, notification_id, notification_type, icon, title, body),
encrypted for the subscription (RFC 8291 aes128gcm for a ``standard`` one,
else the draft aesgcm Mastodon's older clients expect; http_ece) and signed with the server's VAPID key (RFC 8292). Every
request goes through the address guard (redpoll.net). A push service that
answers 404 or 410 has dropped the subscription: it is removed. One that
fails for a reason that may pass (no answer, 5xx, 408, 429) gets the
notification again later (JobQueue.enqueue_at), waiting
limits.PUSH_RETRY_BASE_S x 4^n, for limits.PUSH_ATTEMPTS tries; another
4xx is final. A retry decides again, as at the first try.

At-least-once like every job: a run cut short may push a notification to
a subscription twice (clients show it once: the same notification_id).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import time

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from ..accounts import auth
from ..bus.queue import JobQueue
from ..core import keys, limits
from ..core.errors import UserNotFound
from ..core.settings import Settings
from ..media.entity import full_url
from ..net import http, safety
from ..notifications import notifications
from ..notifications.jobs import PushJob
from ..reading import notification_view
from ..records import users
from ..storage.store import Store
from . import subscriptions, vapid
from .subscriptions import Subscription

log = logging.getLogger("redpoll.push")

#: Mastodon's titles (its notification_mailer subjects, in English).
TITLES = {
    "mention": "You were mentioned by {name}",
    "status": "{name} just posted",
    "reblog": "{name} boosted your post",
    "follow": "{name} is now following you",
    "follow_request": "Pending follower: {name}",
    "favourite": "{name} favorited your post",
    "poll": "A poll by {name} has ended",
    "update": "{name} edited a post",
    "quote": "{name} quoted your post",
    "quoted_update": "{name} edited a post you have quoted",
    "admin.sign_up": "{name} signed up",
    "admin.report": "{name} submitted a report",
}


def retry_delay_s(attempt: int) -> float:
    return min(limits.PUSH_RETRY_BASE_S * 4**attempt, limits.PUSH_RETRY_MAX_S)


def _body(status, actor) -> str:
    text = (status.extra.get("spoiler_text") or status.text) if status is not None else actor.bio
    text = " ".join((text or "").split())
    cap = limits.PUSH_BODY_MAX_CHARS
    return text if len(text) <= cap else text[: cap - 1] + "…"


def payload(
    sub: Subscription, note: notifications.Notification, actor, status, public_url: str | None
) -> dict:
    """What the subscription's client decrypts (Mastodon's fields)."""
    base = (public_url or sub.base or "").rstrip("/")
    name = actor.display_name or actor.login.split("@", 1)[0]
    icon = (
        full_url(actor.avatar_static or actor.avatar, base)
        or f"{base}/avatars/original/missing.png"
    )
    return {
        "access_token": sub.token,
        "preferred_locale": "en",
        "notification_id": str(note.id),
        "notification_type": note.type,
        "icon": icon,
        "title": TITLES.get(note.type, "{name}").format(name=name),
        "body": _body(status, actor),
    }


def _b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encrypt(
    sub: Subscription, data: bytes, key: vapid.ServerKey, subject: str
) -> tuple[bytes, dict[str, str]]:
    """The request's body and headers for ``sub``: encrypted with a key
    pair made for this message (http_ece) and signed (VAPID)."""
    ephemeral = ec.generate_private_key(ec.SECP256R1())
    head = {
        "ttl": str(limits.PUSH_TTL_S),
        "urgency": "normal",
        "content-type": "application/octet-stream",
    }
    if sub.standard:  # RFC 8291: salt and key in the body's header
        body = http_ece.encrypt(
            data,
            private_key=ephemeral,
            dh=_b64(sub.p256dh),
            auth_secret=_b64(sub.auth),
            version="aes128gcm",
        )
        head |= {"content-encoding": "aes128gcm"}
        head |= vapid.headers(key, sub.endpoint, subject, standard=True)
        return body, head
    salt = os.urandom(16)
    sender = ephemeral.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    body = http_ece.encrypt(
        data,
        salt=salt,
        private_key=ephemeral,
        dh=_b64(sub.p256dh),
        auth_secret=_b64(sub.auth),
        keyid=vapid.b64url(sender),
        version="aesgcm",
    )
    head |= {"content-encoding": "aesgcm", "encryption": "salt=" + vapid.b64url(salt)}
    head |= vapid.headers(
        key, sub.endpoint, subject, standard=False, crypto_key="dh=" + vapid.b64url(sender)
    )
    return body, head


def wanted(sub: Subscription, kind: str, follows: bool, followed_by: bool) -> bool:
    """Whether ``sub`` asks for a notification of ``kind`` from an account
    the owner follows (``follows``) or that follows the owner."""
    if not sub.alerts.get(kind):
        return False
    return {"all": True, "none": False, "followed": follows, "follower": followed_by}.get(
        sub.policy, False
    )


async def send(store: Store, settings: Settings, job: PushJob) -> dict[str, str]:
    """One try of ``job``: what became of each subscription it was for (by
    id): pushed, skipped, removed, retry, given up, refused."""
    subs = await subscriptions.of_user(store, job.uid)
    if job.sub:
        subs = [s for s in subs if s.digest == job.sub]
    if not subs:
        return {}
    try:
        note = await notifications.get(store, job.uid, job.nid)
    except notifications.NotificationNotFound:
        return {}  # dismissed or gone meanwhile
    shown = await notification_view.shown_one(store, job.uid, note)
    if shown is False:
        return {}  # not shown to its owner now: not pushed either
    try:
        actor = await users.get_user(store, note.actor)
    except UserNotFound:
        return {}
    gone = set(await auth.missing_tokens(store, [s.digest for s in subs]))
    out: dict[str, str] = {}
    for sub in [s for s in subs if s.digest in gone]:  # revoked by a way that left it
        await subscriptions.drop(store, job.uid, sub)
        out[str(sub.id)] = "removed"
    subs = [s for s in subs if s.digest not in gone]
    follows, followed_by = await store.batch(
        [
            ("ZSCORE", keys.following(job.uid), note.actor),
            ("ZSCORE", keys.followers(job.uid), note.actor),
        ]
    )
    key = await vapid.server_key(store)
    subject = vapid.subject(settings.public_url)
    for sub in subs:
        if not wanted(sub, note.type, follows is not None, followed_by is not None):
            out[str(sub.id)] = "skipped"
            continue
        data = json.dumps(
            payload(sub, note, actor, shown or None, settings.public_url), separators=(",", ":")
        ).encode()
        out[str(sub.id)] = await _push(store, settings, job, sub, data, key, subject)
    return out


async def _push(
    store: Store,
    settings: Settings,
    job: PushJob,
    sub: Subscription,
    data: bytes,
    key: vapid.ServerKey,
    subject: str,
) -> str:
    body, head = encrypt(sub, data, key, subject)
    try:
        status, _, _ = await http.send(
            "POST", sub.endpoint, loopback=settings.federation_loopback, body=body, headers=head
        )
    except safety.Refused as exc:  # an address it must not reach: never will
        log.info("push to subscription %s refused: %s", sub.id, exc)
        return "refused"
    except http.FetchFailed as exc:
        status, reason = 0, str(exc)
    else:
        reason = f"answered {status}"
    if 200 <= status < 300:
        return "pushed"
    if status in (404, 410):
        await subscriptions.drop(store, job.uid, sub)
        return "removed"
    if 400 <= status < 500 and status not in (408, 429):
        log.info("push to subscription %s refused: %s", sub.id, reason)
        return "refused"
    if job.attempt + 1 >= limits.PUSH_ATTEMPTS:
        log.warning(
            "push to subscription %s given up after %s tries: %s", sub.id, job.attempt + 1, reason
        )
        return "given up"
    due = int((time.time() + retry_delay_s(job.attempt)) * 1000)
    await JobQueue(store).enqueue_at(PushJob(job.uid, job.nid, sub.digest, job.attempt + 1), due)
    return "retry"
