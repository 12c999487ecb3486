"""Confirming an account's e-mail address (Mastodon's sign-up confirmation
and POST /api/v1/emails/confirmations), and following a confirmation link,
which also completes an e-mail change (redpoll.mail.address: the link of
a change names the new address)."""

from __future__ import annotations

from ..accounts import auth, standing
from ..core import keys
from ..core.errors import Forbidden
from ..core.settings import Settings
from ..storage.store import Store
from . import address, limited, links, outbox
from .jobs import MailJob


async def signed_up(store: Store, settings: Settings, uid: int, client_id: str) -> bool:
    """The sign-up hook: with e-mail on, the new account is unconfirmed
    (redpoll.accounts.standing) and its confirmation mail is queued. False
    (nothing done) with e-mail off: the account counts as confirmed."""
    if not settings.mail:
        return False
    await standing.mark_unconfirmed(store, uid, client_id)
    raw = await store.hget(keys.secrets(uid), "email")
    await outbox.queue(store, settings, MailJob(uid, "confirm"), raw.decode() if raw else "")
    return True


async def resend(store: Store, settings: Settings, token: auth.Token, email=None) -> None:
    """Mastodon's POST /api/v1/emails/confirmations: only the app the
    account signed up with, only while an address awaits confirmation (the
    sign-up's, or a change's); ``email`` given: that address instead (as an
    e-mail change, taking effect when its link is followed). The mail is
    sent again either way. Every refusal is before any write."""
    uid = token.uid
    assert uid is not None
    if await standing.signup_app(store, uid) != token.client_id:
        raise Forbidden(
            "This method is only available to the application the user originally signed-up with"
        )
    waiting = await links.pending(store, uid)
    if not await standing.unconfirmed(store, uid) and waiting is None:
        raise Forbidden("This method is only available while the e-mail is awaiting confirmation")
    if email is not None:
        await address.request(store, settings, uid, email, tell_old=False)
        return
    target = waiting or ""
    if not target:
        raw = await store.hget(keys.secrets(uid), "email")
        target = raw.decode() if raw else ""
    await limited.count_request(store, settings, target)
    job = MailJob(uid, "change", waiting) if waiting else MailJob(uid, "confirm")
    await outbox.queue(store, settings, job, target)


async def confirmed(store: Store, uid: int) -> bool:
    """Mastodon's GET /api/v1/emails/check_confirmation."""
    return not await standing.unconfirmed(store, uid)


async def follow(store: Store, raw, now: int | None = None) -> str | None:
    """Follow a confirmation link: the address it confirmed (the account's
    own, or the new one of a change, now its address), or None if the link
    is unknown, used, replaced by a newer one or expired (nothing written).
    An address taken by another account since the change was asked for is
    refused too (address.AddressTaken), with nothing written."""
    link = await links.find(store, raw, "confirm", now)
    if link is None:
        return None
    current = await store.hget(keys.secrets(link.uid), "email")
    if current is not None and current.decode().lower() == link.address.lower():
        # the sign-up's own address (or a change back to it): one script
        done = await links.use(store, link, {"email": link.address}, (standing.UNCONFIRMED,))
        return link.address if done else None
    return await address.complete(store, link, current.decode() if current else "")
