"""Changing an account's e-mail address (Mastodon keeps this in its web
settings, Devise's reconfirmable: no client API), here
POST /api/v1/redpoll/email: the current password, then the new address
gets a confirmation link and the old one is told; the change takes effect
only when the link is followed (:func:`complete`).

The address index (keys.email: address -> account) is one key per
address, each in its own slot, so completing a change is steps, each
idempotent, in an order that a repeat of the same link finishes: claim the
new address (SET NX, or already ours), drop the old one if it still names
the account, then use the link and set the address (one script on the
account's slot, link_use.lua). A link refused at that last step (replaced
by a newer one meanwhile) puts the index back as it was."""

from __future__ import annotations

from ..accounts import auth, email_blocks, ratelimit, standing
from ..core import keys
from ..core.errors import Conflict, ValidationError
from ..core.settings import Settings
from ..storage.store import Store
from . import limited, links, outbox
from .jobs import MailJob


class AddressTaken(Conflict):
    pass


async def _free_for(store: Store, uid: int, email: str) -> bool:
    holder = await store.get(keys.email(email.lower()))
    return holder is None or holder == str(uid).encode()


async def request(
    store: Store, settings: Settings, uid: int, email, *, tell_old: bool = True
) -> str:
    """Ask to change ``uid``'s address to ``email`` (checked as at sign-up,
    not blocked, not another account's): the address awaiting confirmation
    is set, the new address is mailed its link and, if ``tell_old``, the old
    one is told. Refusals come before any write. The new address."""
    email = auth.valid_email(email)
    if not await _free_for(store, uid, email):
        raise AddressTaken("E-mail has already been taken")
    if await email_blocks.refused(store, email):
        raise ValidationError("email", "is not allowed")
    await limited.count_request(store, settings, email)
    raw = await store.hget(keys.secrets(uid), "email")
    old = raw.decode() if raw else ""
    await links.set_pending(store, uid, email)
    await outbox.queue(store, settings, MailJob(uid, "change", email), email)
    if tell_old and old and old.lower() != email.lower():
        await outbox.queue(store, settings, MailJob(uid, "changing", old, email), old)
    return email


async def change(
    store: Store,
    settings: Settings,
    uid: int,
    password,
    email,
    rate: ratelimit.Rate | None = None,
) -> str | None:
    """:func:`request` behind the account's password (counted as a log-in
    is: auth.LoginLimited past ``rate``); None if the password is wrong
    (nothing written). ValidationError if e-mail is off: no link could
    reach the new address."""
    if not settings.mail:
        raise ValidationError("email", "cannot be changed: this server sends no e-mail")
    email = auth.valid_email(email)
    if await auth.check_own_password(store, uid, password, rate) is None:
        return None
    return await request(store, settings, uid, email)


async def complete(store: Store, link: links.Link, old: str) -> str | None:
    """Make ``link``'s address the account's (see the module doc); None if
    the link was used or replaced meanwhile; AddressTaken if another
    account has the address now (nothing written)."""
    uid, new = link.uid, link.address
    new_key = keys.email(new.lower())
    claimed = bool(await store.set(new_key, uid, nx=True))
    if not claimed and not await _free_for(store, uid, new):
        raise AddressTaken("E-mail has already been taken")
    dropped = bool(old) and bool(await store.run("email_unbind", [keys.email(old.lower())], [uid]))
    if await links.use(store, link, {"email": new}, (standing.UNCONFIRMED,)):
        return new
    # replaced or used meanwhile: the index as it was
    if dropped:
        await store.set(keys.email(old.lower()), uid, nx=True)
    if claimed:
        await store.run("email_unbind", [new_key], [uid])
    return None


async def state(store: Store, uid: int) -> tuple[str | None, str | None, bool]:
    """(the address, the one a change awaits to confirm or None, confirmed)."""
    raw = await store.hget(keys.secrets(uid), "email")
    return (
        raw.decode() if raw else None,
        await links.pending(store, uid),
        not await standing.unconfirmed(store, uid),
    )
