"""A forgotten password: a mail with a single-use link that expires
(limits.PASSWORD_RESET_TTL_S) to a page that sets a new one. Asking tells
nothing about which addresses have accounts: the answer is the same, and
the request is counted per address (limited.count_request) whether or not
one has it."""

from __future__ import annotations

from ..accounts import account, auth
from ..core import keys, limits
from ..core.settings import Settings
from ..storage.store import Store
from . import limited, links, outbox
from .jobs import MailJob


async def request(store: Store, settings: Settings, email) -> None:
    """Mail a reset link to the account whose address ``email`` is, if one
    is (MailLimited past the address's requests; nothing else is said)."""
    if not isinstance(email, str) or not email.strip() or len(email) > limits.EMAIL_MAX_CHARS:
        return
    email = email.strip()
    await limited.count_request(store, settings, email)
    raw = await store.get(keys.email(email.lower()))
    if raw is None or not raw.isdigit():  # no account, or a sign-up under way
        return
    uid = int(raw)
    stored = await store.hget(keys.secrets(uid), "email")
    if stored is None:
        return
    await outbox.queue(store, settings, MailJob(uid, "reset"), stored.decode())


async def valid(store: Store, raw, now: int | None = None) -> bool:
    """Whether ``raw`` is a reset link that works now (reads only)."""
    return await links.find(store, raw, "reset", now) is not None


async def reset(store: Store, raw, password, now: int | None = None) -> bool:
    """Set a new password with the reset link ``raw``. A password that
    sign-up would refuse raises ValidationError and a link that does not
    work now answers False, both before any write. Then every token of the
    account is revoked (Mastodon's revoke_access!: all its apps and devices
    are signed out; first, so that following the link again finishes a
    reset cut short), and the link is used and the password set in one
    script (link_use.lua): the link works once."""
    password = auth.valid_password(password)
    link = await links.find(store, raw, "reset", now)
    if link is None:
        return False
    hashed = await account.password_hash(password)
    await auth.revoke_other_tokens(store, link.uid, None)
    return await links.use(store, link, {"password": hashed})
