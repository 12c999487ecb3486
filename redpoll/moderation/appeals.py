"""Strikes as their members and moderators reach them: a member reads the
warnings about their own account and appeals one (redpoll.moderation
.warnings); moderators read an account's warnings (``manage_users``) and
the appeals, and approve or reject one (``manage_appeals``, Mastodon's
AppealPolicy). Approving undoes the strike's action as Mastodon's
AppealService does (disable, sensitive, silence, suspend lifted; a plain
warning has nothing to undo). Each decision goes to the audit log.

Role checks come first and write nothing when they refuse. A decision is
one script (the appeal's state), then the undo (idempotent: staff
.set_fields, moderation.unsuspend_account), then the audit entry: a call
cut short after the first step leaves the appeal decided and the action
maybe not undone; the moderator lifts it on the account's page."""

from __future__ import annotations

from ..admin import audit, roles, staff
from ..core.errors import UserNotFound
from ..records import users
from ..storage.store import Store
from . import moderation, warnings
from .warnings import Warning


async def mine(store: Store, uid: int) -> list[Warning]:
    return await warnings.of_account(store, uid)


async def my_warning(store: Store, uid: int, wid) -> Warning:
    return await warnings.get(store, uid, wid)


async def appeal(store: Store, uid: int, wid, text: str) -> Warning:
    return await warnings.appeal(store, uid, wid, text)


async def of_account(store: Store, actor: int | None, uid) -> list[Warning]:
    roles.require(await staff.role_of(store, actor), "manage_users")
    user = await users.get_user(store, uid)
    return await warnings.of_account(store, user.id)


async def appealed(store: Store, actor: int | None, state: str | None = None) -> list[Warning]:
    roles.require(await staff.role_of(store, actor), "manage_appeals")
    return await warnings.appealed(store, state)


async def _undo(store: Store, w: Warning) -> None:
    try:
        user = await users.get_user(store, w.account)
    except UserNotFound:
        return
    if w.action == "disable" and user.disabled:
        await staff.set_fields(store, user.id, dis="")
    elif w.action == "sensitive" and user.sensitized:
        await staff.set_fields(store, user.id, sens="")
    elif w.action == "silence" and user.silenced:
        await staff.set_fields(store, user.id, sil="")
    elif w.action == "suspend" and user.suspended:
        await moderation.unsuspend_account(store, user.id)


async def decide(store: Store, actor: int | None, wid, approve: bool) -> Warning:
    """Approve (undoing the action) or reject the pending appeal of the
    warning ``wid``; Conflict when it has none pending."""
    roles.require(await staff.role_of(store, actor), "manage_appeals")
    uid = await warnings.owner(store, wid)
    found = await warnings.decide(store, uid, int(wid), approve, actor)
    if approve:
        await _undo(store, found)
    try:
        login = (await users.get_user(store, uid)).login
    except UserNotFound:
        login = ""
    await audit.record(
        store,
        actor,
        "approve_appeal" if approve else "reject_appeal",
        "Appeal",
        found.id,
        login,
        found.action,
    )
    return found
