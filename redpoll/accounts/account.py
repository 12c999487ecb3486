"""An account's own changes: signing up with a case-insensitive unique login,
its profile, its password."""

from __future__ import annotations

import asyncio
import functools
from secrets import token_urlsafe

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from ..bus.queue import JobQueue, NotYet, entry_ms
from ..core import keys, limits, validate
from ..core.errors import LoginTaken, UserNotFound, ValidationError
from ..core.models import QUOTE_POLICIES, VISIBILITIES, User, now_ms
from ..instance import activity
from ..records.users import claim_uid, get_user, lookup, require_users
from ..storage.store import Store
from . import account_index
from .jobs import SignUpJob

_hasher = PasswordHasher()  # argon2id with the library's recommended costs


async def sign_up(
    store: Store,
    queue: JobQueue,
    login: str,
    *,
    display_name: str = "",
    bio: str = "",
    password: str | None = None,
    email: str | None = None,
    fields: dict[str, str] | None = None,
    private: dict[str, str] | None = None,
) -> User:
    """Create a user. Of many concurrent sign-ups for one login (any case), one wins.
    ``fields``: more fields of the record, written with it (a sign-up waiting
    for approval, the invite it came with: redpoll.accounts.auth);
    ``private``: more fields of its secrets (the reason it gave).

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
    display_name = validate.text(
        display_name, "display_name", limits.DISPLAY_NAME_MAX_CHARS, allow_empty=True
    )
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
    secrets.update(private or {})
    uid = await store.incr(keys.USER_SEQ)
    held = await queue.hold(SignUpJob(uid, login))
    claim = f"{uid}:{now_ms()}"
    if not await store.run("swap_login", [index], [pending, claim]):
        # our claim was taken over: this sign-up stalled past ORPHAN_CLAIM_MS
        await queue.release(held)
        raise LoginTaken(f"login {login!r} is taken")
    record = {
        "id": uid,
        "login": login,
        "name": display_name or login,
        "bio": bio,
        "at": now_ms(),
        "followers": 0,
        "following": 0,
        "posts": 0,
        # its public posts may be found by full-text search: a new account's
        # default, as the sign-up of Mastodon 4.2 on (redpoll.search.index)
        "idx": 1,
        **(fields or {}),
    }
    args = [len(record)]
    for pairs in (record, secrets):
        for name, value in pairs.items():
            args += [name, value]
    await store.run(
        "create_user", [keys.user(uid), keys.secrets(uid), keys.sign_up_void(uid)], args
    )
    # the search index is another slot: a call cut short here is finished
    # by the journal's replay (settle_sign_up indexes the user again)
    await account_index.index_account(store, uid, 1, login, record["name"])
    await activity.joined(store, uid, int(record["at"]))  # (idempotent: replayed too)
    await queue.release(held, count="users")
    return User.from_hash({k: str(v) for k, v in record.items()})


async def settle_sign_up(
    store: Store, job: SignUpJob, entry_id: bytes, settle_after_ms: int
) -> bool:
    """A sign-up whose caller never released its journal (entry ``entry_id``):
    it died, or stalled past the claim time. True if its user was written
    (then indexed again, idempotent, and the caller of this counts it). If
    not, and the journal is younger than ``settle_after_ms``, NotYet (the
    caller may only be slow); else False, and the user never will be
    written: its id is void (create_user.lua refuses it) and its login
    claim is freed if still its own. Each step idempotent."""
    if (
        not await store.exists(keys.user(job.uid))
        and now_ms() - entry_ms(entry_id) < settle_after_ms
    ):
        raise NotYet(f"sign-up of user {job.uid} may still be running")
    if await store.run("settle_sign_up", [keys.user(job.uid), keys.sign_up_void(job.uid)]):
        rev, login, name, at = await store.hmget(keys.user(job.uid), ["rev", "login", "name", "at"])
        if rev is not None:  # (else deleted meanwhile: nothing to index)
            await account_index.index_account(
                store, job.uid, int(rev), login.decode(), name.decode()
            )
            await activity.joined(store, job.uid, int(at))
        return True
    await store.run("drop_login_claim", [keys.login(job.login.lower())], [f"{job.uid}:"])
    return False


async def _take_over_orphan_claim(store: Store, index: str, claim: str, login: str) -> None:
    """A claim is orphaned when its user was never written and it is old enough
    that its sign-up cannot still be running."""
    holder = await store.get(index)
    if holder is None:  # released meanwhile: race for it again
        if await store.set(index, claim, nx=True):
            return
        raise LoginTaken(f"login {login!r} is taken")
    uid = claim_uid(holder)
    if uid and await store.exists(keys.user(uid)):
        raise LoginTaken(f"login {login!r} is taken")
    claimed_at = int(holder.split(b":", 1)[1])
    if now_ms() - claimed_at < limits.ORPHAN_CLAIM_MS:
        raise LoginTaken(f"login {login!r} is taken")
    if not await store.run("swap_login", [index], [holder, claim]):
        raise LoginTaken(f"login {login!r} is taken")


async def update_profile(
    store: Store,
    uid,
    *,
    display_name: str | None = None,
    bio: str | None = None,
    bot: bool | None = None,
    discoverable: bool | None = None,
    fields: list[tuple[str, str]] | None = None,
    privacy: str | None = None,
    locked: bool | None = None,
    indexable: bool | None = None,
    quote_policy: str | None = None,
    attribution_domains: list[str] | None = None,
) -> User:
    """Change what is given (None: keep). ``fields`` replaces the profile's
    name/value pairs (an empty list clears them); ``privacy`` is the
    visibility of posts that name none (redpoll.relations.visibility),
    ``quote_policy`` who may quote a post that names none (public,
    followers, nobody); ``attribution_domains`` replaces the websites
    allowed to credit the account."""
    uid = validate.an_id(uid, "user_id")
    changes: dict[str, str] = {}
    if display_name is not None:
        changes["name"] = validate.text(
            display_name, "display_name", limits.DISPLAY_NAME_MAX_CHARS, allow_empty=True
        )
    if bio is not None:
        changes["bio"] = validate.text(bio, "bio", limits.BIO_MAX_CHARS, allow_empty=True)
    for name, flag in (
        ("bot", bot),
        ("disc", discoverable),
        ("locked", locked),
        ("idx", indexable),
    ):
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
    if quote_policy is not None:
        if quote_policy not in QUOTE_POLICIES:
            raise ValidationError(
                "source[quote_policy]", "must be one of " + ", ".join(QUOTE_POLICIES)
            )
        changes["qpol"] = quote_policy
    if attribution_domains is not None:
        changes["attr"] = validate.attribution_domains(attribution_domains)
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


async def password_hash(password: str) -> str:
    """The argon2id hash a password is stored as (slow: off the event loop)."""
    return await asyncio.to_thread(_hasher.hash, password)


async def set_password(store: Store, uid: int, password: str) -> None:
    """Store a new password (its argon2id hash) for ``uid``."""
    await store.hset(keys.secrets(uid), "password", await password_hash(password))


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
    (None), a suspended or disabled one (redpoll.moderation.moderation,
    redpoll.admin.accounts: it cannot sign in) and one
    without a password are checked against a dummy hash and refused: every
    refusal takes the time of a hash check, so the time does not tell which
    logins and e-mails are registered."""
    stored = None
    if user is not None and not user.suspended and not user.disabled:
        raw = await store.hget(keys.secrets(user.id), "password")
        stored = raw.decode() if raw is not None else None
    # argon2 is deliberately slow: off the event loop
    return user if await asyncio.to_thread(_verify, stored, password) else None
