"""Users: sign-up with case-insensitive unique logins, reading, passwords."""
from __future__ import annotations

import asyncio
import functools
from secrets import token_urlsafe
from typing import Iterable

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from . import account_index
from ..core import keys, limits, validate
from ..core.errors import LoginTaken, UserNotFound, ValidationError
from ..bus.jobs import JobQueue, NotYet, SignUpJob, entry_ms
from ..core.models import VISIBILITIES, User, now_ms
from ..storage.store import Store

_hasher = PasswordHasher()  # argon2id with the library's recommended costs


async def sign_up(store: Store, queue: JobQueue, login: str, *, display_name: str = "",
                  bio: str = "", password: str | None = None, email: str | None = None) -> User:
    """Create a user. Of many concurrent sign-ups for one login (any case), one wins.

    Steps: claim the lowercased login with SET NX (the atomic uniqueness
    lock) as "0:<ms>" (no id yet), so a taken login or bad input is refused
    before any write, not even an id from the counter; then hash the
    password, draw the id, hold the sign-up's journal (jobs.SignUpJob) and put the id in the claim
    (compare-and-set); then write the record and the secrets in one script on
    the user's slot, index the name for search, and release the journal,
    which counts the user (job_next.lua: exactly once). A claim whose user
    record never got written (the caller died in between) is taken over by
    the next sign-up for that login once it is ``limits.ORPHAN_CLAIM_MS``
    old; the journal of a caller that died is settled by a worker
    (:func:`settle_sign_up`): counted if the user was written, else, once
    it is old enough that its caller cannot be merely slow, void.
    """
    login = validate.login(login)
    display_name = validate.text(display_name, "display_name", limits.DISPLAY_NAME_MAX_CHARS,
                                 allow_empty=True)
    bio = validate.text(bio, "bio", limits.BIO_MAX_CHARS, allow_empty=True)
    if password is not None:
        password = validate.text(password, "password", 1024)
    if email is not None:
        email = validate.text(email, "email", 254)
    index = keys.login(login.lower())
    pending = f"0:{now_ms()}"
    if not await store.set(index, pending, nx=True):
        await _take_over_orphan_claim(store, index, pending, login)
    secrets = {}
    if password is not None:
        # argon2 is deliberately slow: keep it off the event loop, and out of
        # the journal's time (below), which only holds a few quick writes
        secrets["password"] = await asyncio.to_thread(_hasher.hash, password)
    if email is not None:
        secrets["email"] = email
    uid = await store.incr(keys.USER_SEQ)
    held = await queue.hold(SignUpJob(uid, login))
    claim = f"{uid}:{now_ms()}"
    if not await store.run("swap_login", [index], [pending, claim]):
        # our claim was taken over: this sign-up stalled past ORPHAN_CLAIM_MS
        await queue.release(held)
        raise LoginTaken(f"login {login!r} is taken")
    record = {"id": uid, "login": login, "name": display_name or login, "bio": bio,
              "at": now_ms(), "followers": 0, "following": 0, "posts": 0}
    args = [len(record)]
    for pairs in (record, secrets):
        for name, value in pairs.items():
            args += [name, value]
    await store.run("create_user", [keys.user(uid), keys.secrets(uid), keys.sign_up_void(uid)],
                    args)
    # the search index is another slot: a call cut short here is finished
    # by the journal's replay (settle_sign_up indexes the user again)
    await account_index.index_account(store, uid, 1, login, record["name"])
    await queue.release(held, count="users")
    return User.from_hash({k: str(v) for k, v in record.items()})


async def settle_sign_up(store: Store, job: SignUpJob, entry_id: bytes,
                         settle_after_ms: int) -> bool:
    """A sign-up whose caller never released its journal (entry ``entry_id``):
    it died, or stalled past the claim time. True if its user was written
    (then indexed again, idempotent, and the caller of this counts it). If
    not, and the journal is younger than ``settle_after_ms``, NotYet (the
    caller may only be slow); else False, and the user never will be
    written: its id is void (create_user.lua refuses it) and its login
    claim is freed if still its own. Each step idempotent."""
    if (not await store.exists(keys.user(job.uid))
            and now_ms() - entry_ms(entry_id) < settle_after_ms):
        raise NotYet(f"sign-up of user {job.uid} may still be running")
    if await store.run("settle_sign_up", [keys.user(job.uid), keys.sign_up_void(job.uid)]):
        rev, login, name = await store.hmget(keys.user(job.uid), ["rev", "login", "name"])
        if rev is not None:  # (else deleted meanwhile: nothing to index)
            await account_index.index_account(store, job.uid, int(rev), login.decode(), name.decode())
        return True
    await store.run("drop_login_claim", [keys.login(job.login.lower())], [f"{job.uid}:"])
    return False


def _claim_uid(claim: bytes) -> int:
    return int(claim.split(b":", 1)[0])


async def _take_over_orphan_claim(store: Store, index: str, claim: str, login: str) -> None:
    """A claim is orphaned when its user was never written and it is old enough
    that its sign-up cannot still be running."""
    holder = await store.get(index)
    if holder is None:  # released meanwhile: race for it again
        if await store.set(index, claim, nx=True):
            return
        raise LoginTaken(f"login {login!r} is taken")
    uid = _claim_uid(holder)
    if uid and await store.exists(keys.user(uid)):
        raise LoginTaken(f"login {login!r} is taken")
    claimed_at = int(holder.split(b":", 1)[1])
    if now_ms() - claimed_at < limits.ORPHAN_CLAIM_MS:
        raise LoginTaken(f"login {login!r} is taken")
    if not await store.run("swap_login", [index], [holder, claim]):
        raise LoginTaken(f"login {login!r} is taken")


async def get_user(store: Store, uid) -> User:
    uid = validate.an_id(uid, "user_id")
    raw = await store.hgetall(keys.user(uid))
    if not raw:
        raise UserNotFound(f"user {uid} does not exist")
    return User.from_hash(raw)


async def get_users(store: Store, uids: Iterable[int]) -> list[User]:
    """Users in the order asked, unknown ids skipped; one round trip. A
    record decoded before at the 'rev' just read is reused (redpoll.core.memo)."""
    uids = [validate.an_id(u, "user_id") for u in uids]
    if not uids:
        return []
    epoch, *rows = await store.batch([("GET", keys.EPOCH),
                                      *(("HGETALL", keys.user(uid)) for uid in uids)])
    await store.memos_valid(epoch)  # rows are whole: they are decoded either way
    return decode_rows(store, uids, rows)


def rev_reads(uids: Iterable[int]) -> list[tuple]:
    """Commands reading each user's 'rev' (bumped by every change to the
    record), for a caller to send in its own batch before :func:`current`,
    after ``GET keys.EPOCH`` (checked with ``store.memos_valid``)."""
    return [("HGET", keys.user(uid), "rev") for uid in uids]


async def current(store: Store, uids: Iterable[int], revs: dict[int, bytes | None]
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
    uid = _claim_uid(claim)
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


async def update_profile(store: Store, uid, *, display_name: str | None = None,
                         bio: str | None = None, bot: bool | None = None,
                         discoverable: bool | None = None,
                         fields: list[tuple[str, str]] | None = None,
                         privacy: str | None = None, locked: bool | None = None) -> User:
    """Change what is given (None: keep). ``fields`` replaces the profile's
    name/value pairs (an empty list clears them); ``privacy`` is the
    visibility of posts that name none (redpoll.relations.visibility)."""
    uid = validate.an_id(uid, "user_id")
    changes: dict[str, str] = {}
    if display_name is not None:
        changes["name"] = validate.text(display_name, "display_name",
                                        limits.DISPLAY_NAME_MAX_CHARS, allow_empty=True)
    if bio is not None:
        changes["bio"] = validate.text(bio, "bio", limits.BIO_MAX_CHARS, allow_empty=True)
    for name, flag in (("bot", bot), ("disc", discoverable), ("locked", locked)):
        if flag is not None:
            if not isinstance(flag, bool):
                raise ValidationError(name, "must be a boolean")
            changes[name] = "1" if flag else "0"
    if fields is not None:
        changes["fields"] = validate.profile_fields(fields)
    if privacy is not None:
        if privacy not in VISIBILITIES:
            raise ValidationError("privacy", "must be one of " + ", ".join(VISIBILITIES))
        changes["privacy"] = privacy
    if changes:
        await require_users(store, uid)
        # one transaction (a single slot): the fields and the record's rev
        # change together, so no reader keeps the old record (users.current)
        pipe = store.pipeline(transaction=True)
        pipe.hset(keys.user(uid), mapping=changes)
        pipe.hincrby(keys.user(uid), "rev", 1)
        pipe.hmget(keys.user(uid), ["login", "name"])
        _, rev, (login, name) = await pipe.execute()
        if "name" in changes:
            # another slot, after the record (see search.py): idempotent, and
            # a late call never overwrites a newer rename
            await account_index.index_account(store, uid, rev, login.decode(), name.decode())
    return await get_user(store, uid)


async def check_password(store: Store, login: str, password: str) -> User | None:
    """The user if the password matches, else None (also for unknown logins)."""
    try:
        user = await lookup(store, login)
    except (UserNotFound, ValidationError):
        user = None
    return await verify_password(store, user, password)


@functools.cache
def _dummy_hash() -> str:
    """A hash of a random password nobody knows, made with the same costs
    as every user's (on first use, off the event loop)."""
    return _hasher.hash(token_urlsafe(32))


def _verify(stored: str | None, password: str) -> bool:
    try:
        _hasher.verify(stored or _dummy_hash(), password)
    except (VerificationError, InvalidHashError):
        return False
    return stored is not None


async def verify_password(store: Store, user: User | None, password: str) -> User | None:
    """``user`` if the password is its password, else None. No account
    (None), a suspended one (redpoll.moderation.moderation: it cannot sign in) and one
    without a password are checked against a dummy hash and refused: every
    refusal takes the time of a hash check, so the time does not tell which
    logins and e-mails are registered."""
    stored = None
    if user is not None and not user.suspended:
        raw = await store.hget(keys.secrets(user.id), "password")
        stored = raw.decode() if raw is not None else None
    # argon2 is deliberately slow: off the event loop
    return user if await asyncio.to_thread(_verify, stored, password) else None
