"""User records: reading one or many (with the memo rule), by login, as
they are now at a rev just read."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ..core import keys, validate
from ..core.errors import UserNotFound
from ..core.models import User
from ..storage.store import Store


def claim_uid(claim: bytes) -> int:
    return int(claim.split(b":", 1)[0])


async def get_user(store: Store, uid) -> User:
    uid = validate.an_id(uid, "user_id")
    raw = await store.hgetall(keys.user(uid))
    if not raw:
        raise UserNotFound(f"user {uid} does not exist")
    user = User.from_hash(raw)
    return (await _with_moved(store, {uid: user}))[uid] if user.moved_to else user


async def _with_moved(store: Store, found: dict[int, User]) -> dict[int, User]:
    """``found`` with each account that moved carrying the record of the one
    it moved to (User.moved) as it is now, read whole in one round trip (a
    kept record holds none: that account changes on its own); that one's
    own move is not followed (Mastodon shows one step)."""
    targets = list(dict.fromkeys(u.moved_to for u in found.values() if u.moved_to))
    if not targets:
        return found
    rows = await store.hash_rows([keys.user(t) for t in targets])
    now = {
        t: User.from_hash(dict(zip(row[0::2], row[1::2]))) for t, row in zip(targets, rows) if row
    }
    return {
        uid: dataclasses.replace(u, moved=now.get(u.moved_to)) if u.moved_to else u
        for uid, u in found.items()
    }


async def get_users(store: Store, uids: Iterable[int]) -> list[User]:
    """Users in the order asked, unknown ids skipped. Each one's 'rev' is
    read first: a record kept at it is reused (redpoll.core.memo's rule), the
    others are read whole in a second round trip (:func:`current`), so a
    page of accounts seen before costs small replies, not whole records."""
    uids = [validate.an_id(u, "user_id") for u in uids]
    if not uids:
        return []
    epoch, *revs = await store.batch([("GET", keys.EPOCH), *rev_reads(uids)])
    await store.memos_valid(epoch)
    found = await current(store, uids, dict(zip(uids, revs)))
    return [found[uid] for uid in uids if uid in found]


def rev_reads(uids: Iterable[int]) -> list[tuple]:
    """Commands reading each user's 'rev' (bumped by every change to the
    record), for a caller to send in its own batch before :func:`current`,
    after ``GET keys.EPOCH`` (checked with ``store.memos_valid``)."""
    return [("HGET", keys.user(uid), "rev") for uid in uids]


async def current(
    store: Store, uids: Iterable[int], revs: dict[int, bytes | None]
) -> dict[int, User]:
    """Users as they are now, by id (unknown ids left out). ``revs`` holds the
    'rev' just read for some of them (:func:`rev_reads`): a user kept at
    that same rev is taken from ``store.users`` (redpoll.core.memo's rule); the
    others are read whole, in one round trip."""
    memo = store.users
    out: dict[int, User] = {}
    stale = []
    for uid in uids:
        hit = memo.get(uid, revs.get(uid))
        if hit is not None:
            out[uid] = hit
        else:
            stale.append(uid)
    if stale:
        rows = await store.hash_rows([keys.user(uid) for uid in stale])
        for user in decode_rows(store, stale, rows):
            out[user.id] = user
    if any(u.moved_to for u in out.values()):
        return await _with_moved(store, out)
    return out


def decode_rows(store: Store, uids: list[int], rows: list[list]) -> list[User]:
    """User records from whole HGETALL rows of ``uids`` as Redis sent them,
    read in a request that checked ``store.memos_valid``; empty rows (no such
    user) are skipped. A row at the 'rev' a record was kept at gives that
    record (no decoding); others are decoded and kept."""
    memo = store.users
    out: list[User] = []
    for uid, row in zip(uids, rows):
        if not row:
            memo.discard(uid)
            continue
        fields = row[0::2]
        rev = row[2 * fields.index(b"rev") + 1] if b"rev" in fields else None
        user = memo.get(uid, rev)
        if user is None:
            user = User.from_hash(dict(zip(fields, row[1::2])))
            memo.put(uid, rev, user)
        out.append(user)
    return out


async def lookup(store: Store, login: str) -> User:
    """Find a user by login, any case."""
    login = validate.login(login)
    claim = await store.get(keys.login(login.lower()))
    if claim is None:
        raise UserNotFound(f"no user with login {login!r}")
    uid = claim_uid(claim)
    if not uid:  # claimed by a sign-up still running (or dead)
        raise UserNotFound(f"no user with login {login!r}")
    return await get_user(store, uid)


async def require_users(store: Store, *uids: int) -> None:
    pipe = store.pipeline()
    for uid in uids:
        pipe.exists(keys.user(uid))
    for uid, found in zip(uids, await pipe.execute()):
        if not found:
            raise UserNotFound(f"user {uid} does not exist")
