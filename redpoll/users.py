"""Users: sign-up with case-insensitive unique logins, reading, passwords."""
from __future__ import annotations

import asyncio
from typing import Iterable

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from . import keys, limits, search, validate
from .errors import LoginTaken, UserNotFound, ValidationError
from .models import User, now_ms
from .store import Store

_hasher = PasswordHasher()  # argon2id with the library's recommended costs


async def sign_up(store: Store, login: str, *, display_name: str = "", bio: str = "",
                  password: str | None = None, email: str | None = None) -> User:
    """Create a user. Of many concurrent sign-ups for one login (any case), one wins.

    Steps: claim the lowercased login with SET NX (the atomic uniqueness lock),
    then write the record and the secrets in one MULTI on the user's slot. A
    claim whose user record never got written (the caller died in between) is
    taken over by the next sign-up for that login.
    """
    login = validate.login(login)
    display_name = validate.text(display_name, "display_name", limits.DISPLAY_NAME_MAX_CHARS,
                                 allow_empty=True)
    bio = validate.text(bio, "bio", limits.BIO_MAX_CHARS, allow_empty=True)
    if password is not None:
        password = validate.text(password, "password", 1024)
    if email is not None:
        email = validate.text(email, "email", 254)
    client = store.client
    uid = await client.incr(keys.USER_SEQ)
    index = keys.login(login.lower())
    claim = f"{uid}:{now_ms()}"
    if not await client.set(index, claim, nx=True):
        await _take_over_orphan_claim(store, index, claim, login)
    secrets = {}
    if password is not None:
        # argon2 is deliberately slow: keep it off the event loop
        secrets["password"] = await asyncio.to_thread(_hasher.hash, password)
    if email is not None:
        secrets["email"] = email
    record = {"id": uid, "login": login, "name": display_name or login, "bio": bio,
              "at": now_ms(), "followers": 0, "following": 0, "posts": 0}
    args = [len(record)]
    for pairs in (record, secrets):
        for name, value in pairs.items():
            args += [name, value]
    await store.run("create_user", [keys.user(uid), keys.secrets(uid)], args)
    await client.hincrby(keys.STATS, "users", 1)
    # the search index is another slot: a call cut short here leaves the
    # user findable by exact login only until its next profile change
    await search.index_account(store, uid, 1, login, record["name"])
    return User.from_hash({k: str(v) for k, v in record.items()})


def _claim_uid(claim: bytes) -> int:
    return int(claim.split(b":", 1)[0])


async def _take_over_orphan_claim(store: Store, index: str, claim: str, login: str) -> None:
    """A claim is orphaned when its user was never written and it is old enough
    that its sign-up cannot still be running."""
    holder = await store.client.get(index)
    if holder is None or await store.client.exists(keys.user(_claim_uid(holder))):
        raise LoginTaken(f"login {login!r} is taken")
    claimed_at = int(holder.split(b":", 1)[1])
    if now_ms() - claimed_at < limits.ORPHAN_CLAIM_MS:
        raise LoginTaken(f"login {login!r} is taken")
    if not await store.run("swap_login", [index], [holder, claim]):
        raise LoginTaken(f"login {login!r} is taken")


async def get_user(store: Store, uid) -> User:
    uid = validate.an_id(uid, "user_id")
    raw = await store.client.hgetall(keys.user(uid))
    if not raw:
        raise UserNotFound(f"user {uid} does not exist")
    return User.from_hash(raw)


async def get_users(store: Store, uids: Iterable[int]) -> list[User]:
    """Users in the order asked, unknown ids skipped; one round trip.

    A page shows the same few authors again and again: a record read with
    exactly the bytes of one decoded before is taken from
    ``store.user_records`` (keyed by those bytes, so never stale)."""
    uids = [validate.an_id(u, "user_id") for u in uids]
    if not uids:
        return []
    return decode_rows(store, await store.hash_rows([keys.user(uid) for uid in uids]))


def rev_reads(uids: Iterable[int]) -> list[tuple]:
    """Commands reading each user's 'rev' (bumped by every change to the
    record), for a caller to send in its own batch before :func:`current`."""
    return [("HGET", keys.user(uid), "rev") for uid in uids]


async def current(store: Store, uids: Iterable[int], revs: dict[int, bytes | None]
                  ) -> dict[int, User]:
    """Users as they are now, by id (unknown ids left out). ``revs`` holds the
    'rev' just read for some of them (:func:`rev_reads`): a user decoded
    earlier in this process at that same rev is taken from
    ``store.user_revs``; the others are read whole, in one round trip."""
    kept = store.user_revs
    out: dict[int, User] = {}
    stale = []
    for uid in uids:
        rev = revs.get(uid)
        hit = kept.get(uid) if rev is not None else None
        if hit is not None and hit[0] == rev:
            out[uid] = hit[1]
        else:
            stale.append(uid)
    if stale:
        rows = await store.hash_rows([keys.user(uid) for uid in stale])
        for uid, row, user in zip(stale, rows, _decode_each(store, rows)):
            if user is None:
                continue
            out[uid] = user
            fields = row[0::2]
            if b"rev" in fields:
                kept.put(uid, (row[2 * fields.index(b"rev") + 1], user))
    return out


def _decode_each(store: Store, rows: list[list]) -> list[User | None]:
    records = store.user_records
    out: list[User | None] = []
    for row in rows:
        if not row:
            out.append(None)
            continue
        seen = tuple(row)
        user = records.get(seen)
        if user is None:
            user = User.from_hash(dict(zip(row[0::2], row[1::2])))
            records.put(seen, user)
        out.append(user)
    return out


def decode_rows(store: Store, rows: list[list]) -> list[User]:
    """User records from HGETALL rows as Redis sent them; empty rows (no
    such user) are skipped."""
    return [user for user in _decode_each(store, rows) if user is not None]


async def lookup(store: Store, login: str) -> User:
    """Find a user by login, any case."""
    login = validate.login(login)
    claim = await store.client.get(keys.login(login.lower()))
    if claim is None:
        raise UserNotFound(f"no user with login {login!r}")
    return await get_user(store, _claim_uid(claim))


async def require_users(store: Store, *uids: int) -> None:
    pipe = store.pipeline()
    for uid in uids:
        pipe.exists(keys.user(uid))
    for uid, found in zip(uids, await pipe.execute()):
        if not found:
            raise UserNotFound(f"user {uid} does not exist")


async def update_profile(store: Store, uid, *, display_name: str | None = None,
                         bio: str | None = None, bot: bool | None = None,
                         discoverable: bool | None = None,
                         fields: list[tuple[str, str]] | None = None) -> User:
    """Change what is given (None: keep). ``fields`` replaces the profile's
    name/value pairs (an empty list clears them)."""
    uid = validate.an_id(uid, "user_id")
    changes: dict[str, str] = {}
    if display_name is not None:
        changes["name"] = validate.text(display_name, "display_name",
                                        limits.DISPLAY_NAME_MAX_CHARS, allow_empty=True)
    if bio is not None:
        changes["bio"] = validate.text(bio, "bio", limits.BIO_MAX_CHARS, allow_empty=True)
    for name, flag in (("bot", bot), ("disc", discoverable)):
        if flag is not None:
            if not isinstance(flag, bool):
                raise ValidationError(name, "must be a boolean")
            changes[name] = "1" if flag else "0"
    if fields is not None:
        changes["fields"] = validate.profile_fields(fields)
    if changes:
        await require_users(store, uid)
        # one transaction (a single slot): the fields and the record's rev
        # change together, so no reader keeps the old record (users.current)
        pipe = store.client.pipeline(transaction=True)
        pipe.hset(keys.user(uid), mapping=changes)
        pipe.hincrby(keys.user(uid), "rev", 1)
        pipe.hmget(keys.user(uid), ["login", "name"])
        _, rev, (login, name) = await pipe.execute()
        if "name" in changes:
            # another slot, after the record (see search.py): idempotent, and
            # a late call never overwrites a newer rename
            await search.index_account(store, uid, rev, login.decode(), name.decode())
    return await get_user(store, uid)


async def check_password(store: Store, login: str, password: str) -> User | None:
    """The user if the password matches, else None (also for unknown logins)."""
    try:
        user = await lookup(store, login)
    except (UserNotFound, ValidationError):
        return None
    stored = await store.client.hget(keys.secrets(user.id), "password")
    if stored is None:
        return None
    try:
        await asyncio.to_thread(_hasher.verify, stored.decode(), password)
    except (VerificationError, InvalidHashError):
        return None
    return user
