"""Private notes: what one writes about an account for oneself alone
(Mastodon's AccountNote), shown only to its writer, in
Relationship.note. One hash field per account on the writer's slot."""

from __future__ import annotations

from ..core import keys, limits, validate
from ..core.errors import UserNotFound
from ..records.users import get_users
from ..storage.store import Store


async def set_note(store: Store, uid: int, target: int, comment) -> str:
    """``uid``'s note on ``target`` is now ``comment`` (at most
    limits.ACCOUNT_NOTE_MAX_CHARS; empty: no note); the note as kept. One
    command (HSET or HDEL)."""
    text = validate.text(
        comment if comment is not None else "",
        "comment",
        limits.ACCOUNT_NOTE_MAX_CHARS,
        allow_empty=True,
    ).strip()
    if not (await get_users(store, [target])):
        raise UserNotFound(f"user {target} does not exist")
    if text:
        await store.hset(keys.account_notes(uid), str(target), text)
    else:
        await store.hdel(keys.account_notes(uid), str(target))
    return text


async def note(store: Store, uid: int, target: int) -> str:
    raw = await store.hget(keys.account_notes(uid), str(target))
    return raw.decode() if raw else ""
