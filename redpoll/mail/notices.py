"""Mails that tell a member what others did with their account: a
moderator's action (the admin API's account action with
send_email_notification) and the approval of a pending sign-up."""

from __future__ import annotations

from ..core import keys
from ..core.settings import Settings
from ..records import users
from ..storage.store import Store
from . import outbox
from .jobs import MailJob

#: the account actions that are mailed (Mastodon's Admin::AccountAction types)
ACTIONS = ("none", "disable", "sensitive", "silence", "suspend")


async def _address(store: Store, uid: int) -> str | None:
    raw = await store.hget(keys.secrets(uid), "email")
    return raw.decode() if raw else None


async def moderation_action(
    store: Store, settings: Settings, uid: int, action: str, text: str = ""
) -> bool:
    """Tell the local account ``uid`` of a moderator's ``action`` (``none``:
    a warning) and its ``text``; False if nothing was queued (e-mail off, a
    remote account, no address)."""
    if action not in ACTIONS:
        return False
    user = await users.get_user(store, uid)
    to = None if user.remote else await _address(store, uid)
    if to is None:
        return False
    return await outbox.queue(store, settings, MailJob(uid, "warning", to, f"{action}\n{text}"), to)


async def approved_mail(store: Store, settings: Settings, uid: int) -> MailJob | None:
    """The mail telling ``uid`` that its sign-up was approved, for the
    approval to queue in the step that finishes it (None: e-mail off, no
    address, or the address had its share of mails)."""
    to = await _address(store, uid)
    if to is None:
        return None
    job = MailJob(uid, "approved", to)
    return job if await outbox.admitted(store, settings, job, to) else None


async def send_account_approved(store: Store, settings: Settings, uid: int) -> bool:
    """Tell ``uid`` that the moderators approved its sign-up (for the
    approval flow to call when an account is approved); False if nothing
    was queued."""
    to = await _address(store, uid)
    if to is None:
        return False
    return await outbox.queue(store, settings, MailJob(uid, "approved", to), to)
