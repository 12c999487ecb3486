"""Reports and moderation: what ``redpoll admin`` and
``POST /api/v1/reports`` do.

* A report is written in one MULTI (every report key carries the hash tag
  ``{reports}``: one slot): its id, its record, the two indexes.
* A suspension sets ``susp`` on the user record (with ``rev``: kept records
  are re-read, redpoll.records.users), revokes every token of the account
  (``utok:{uid}``), then ends its open streams in every process
  (events.end_streams). Each step is idempotent: a suspension cut short is
  finished by running it again, and reads hide the account from the first
  step on (redpoll.relations.visibility asks the record). Nothing is deleted, so
  :func:`unsuspend` restores everything but the tokens (sign in again).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from ..accounts import account
from ..bus import events
from ..bus.queue import Held, JobQueue
from ..collections import collections as featured_collections
from ..core import keys, limits, validate
from ..core.errors import NotFound, StatusNotFound, UserNotFound, ValidationError
from ..core.models import User, now_ms
from ..instance import activity, instance
from ..interactions import bookmarks, favourites
from ..lists import lists
from ..media import keys as media_keys
from ..media import profile_images, uploads
from ..posting import boosts, deleting
from ..records import statuses, users
from ..relations import follow_requests, follows, relations, visibility
from ..storage import topology
from ..storage.store import Store
from .jobs import PurgeAccountJob

CATEGORIES = ("spam", "legal", "violation", "other")


class ReportNotFound(NotFound):
    """No report by that id."""


@dataclass(frozen=True, slots=True)
class Report:
    id: int
    reporter: int
    account: int
    statuses: tuple[int, ...]
    comment: str
    category: str
    created_at: int
    resolved_at: int | None = None
    #: set by moderators (redpoll.admin.reports): who took the action that
    #: resolved it (0: the operator), who is assigned to it, when it last
    #: changed, the server rules it is about
    action_taken_by: int | None = None
    assigned: int | None = None
    updated_at: int | None = None
    rule_ids: tuple[int, ...] = ()

    @classmethod
    def from_hash(cls, raw: dict) -> Report:
        h = {k.decode(): v.decode() for k, v in raw.items()}
        return cls(
            int(h["id"]),
            int(h["reporter"]),
            int(h["account"]),
            tuple(json.loads(h["statuses"])),
            h["comment"],
            h["category"],
            int(h["at"]),
            int(h["resolved"]) if h.get("resolved") else None,
            int(h["taken_by"]) if h.get("taken_by") else None,
            int(h["assigned"]) if h.get("assigned") else None,
            int(h["updated"]) if h.get("updated") else None,
            tuple(json.loads(h["rules"])) if h.get("rules") else (),
        )


async def report(
    store: Store,
    reporter,
    account,
    status_ids=(),
    comment: str = "",
    category: str = "other",
    rule_ids=(),
) -> Report:
    """File a report; ValidationError (nothing written) for bad input.
    ``rule_ids``: the server's rules it breaks; given, the category is
    ``violation`` (as Mastodon's ReportService), and each must be a rule."""
    reporter = validate.an_id(reporter, "user_id")
    account = validate.an_id(account, "account_id")
    if not isinstance(comment, str) or len(comment) > limits.REPORT_COMMENT_MAX_CHARS:
        raise ValidationError("comment", f"at most {limits.REPORT_COMMENT_MAX_CHARS} characters")
    if category not in CATEGORIES:
        raise ValidationError("category", "must be one of " + ", ".join(CATEGORIES))
    rules = sorted({validate.an_id(r, "rule_ids") for r in rule_ids or ()})
    if rules:
        category = "violation"
        if set(rules) - {r.id for r in await instance.rules(store)}:
            raise ValidationError("rule_ids", "must be rules of this server")
    ids = [validate.an_id(s, "status_ids") for s in status_ids]
    if len(ids) > limits.REPORT_STATUSES_MAX:
        raise ValidationError("status_ids", f"at most {limits.REPORT_STATUSES_MAX} statuses")
    await users.get_user(store, account)  # UserNotFound: 404
    if ids:
        # read through what the reporter may see (redpoll.relations.visibility): a
        # status hidden from them is refused as a missing one is, so that a
        # report cannot tell whether it exists
        seen = await visibility.visible(store, reporter, await statuses.get_statuses(store, ids))
        if {s.id for s in seen if s.user_id == account} != set(ids):
            raise ValidationError("status_ids", "must be statuses of the reported account")
    (rid,) = await store.batch([("INCR", keys.REPORT_SEQ)])
    rid = int(rid)
    at = now_ms()
    pipe = store.pipeline(transaction=True)  # one slot: {reports}
    pipe.hset(
        keys.report(rid),
        mapping={
            "id": rid,
            "reporter": reporter,
            "account": account,
            "statuses": json.dumps(ids),
            "comment": comment,
            "category": category,
            "at": at,
            **({"rules": json.dumps(rules)} if rules else {}),
        },
    )
    pipe.zadd(keys.REPORTS, {str(rid): rid})
    pipe.zadd(keys.REPORTS_OPEN, {str(rid): rid})
    await pipe.execute()
    await activity.count(store, "reports", rid, at)  # the day's opened reports (idempotent)
    return Report(rid, reporter, account, tuple(ids), comment, category, at, rule_ids=tuple(rules))


async def reports(store: Store, *, unresolved: bool = False, limit: int = 100) -> list[Report]:
    """Newest first."""
    key = keys.REPORTS_OPEN if unresolved else keys.REPORTS
    ids = await store.zrevrange(key, 0, limit - 1)
    rows = await store.batch([("HGETALL", keys.report(int(i))) for i in ids])
    out = []
    for raw in rows:
        if isinstance(raw, list):  # RESP2
            raw = dict(zip(raw[0::2], raw[1::2]))
        if raw:
            out.append(Report.from_hash(raw))
    return out


async def resolve(store: Store, rid) -> Report:
    rid = validate.an_id(rid, "report_id")
    pipe = store.pipeline(transaction=True)
    pipe.hsetnx(keys.report(rid), "resolved", now_ms())
    pipe.zrem(keys.REPORTS_OPEN, str(rid))
    pipe.hgetall(keys.report(rid))
    *_, raw = await pipe.execute()
    if not raw or b"id" not in raw:
        await store.delete(keys.report(rid))  # HSETNX made a stray hash
        raise ReportNotFound(f"report {rid} does not exist")
    await activity.count(store, "resolved", rid)  # the day's resolved reports (idempotent)
    return Report.from_hash(raw)


# --- accounts --------------------------------------------------------------------------
async def _set(store: Store, uid: int, **fields) -> None:
    """Change the user record and its ``rev`` in one transaction (one slot)."""
    pipe = store.pipeline(transaction=True)
    drop = [k for k, v in fields.items() if v is None]
    keep = {k: v for k, v in fields.items() if v is not None}
    if keep:
        pipe.hset(keys.user(uid), mapping=keep)
    if drop:
        pipe.hdel(keys.user(uid), *drop)
    pipe.hincrby(keys.user(uid), "rev", 1)
    await pipe.execute()


async def revoke_tokens(store: Store, uid: int) -> int:
    """Revoke every token issued to ``uid`` and close its open streams
    (idempotent). How many tokens were still valid."""
    digests = await store.smembers(keys.user_tokens(uid))
    gone = 0
    for d in digests:
        gone += await store.delete(keys.token(d.decode()))
    await store.srem(keys.user_tokens(uid), *digests) if digests else None
    await store.delete(keys.push_subscriptions(uid))  # each token's; idempotent
    await events.end_streams(store, user_id=uid)
    return gone


async def suspend(store: Store, login: str) -> User:
    return await suspend_account(store, (await users.lookup(store, login)).id)


async def suspend_account(store: Store, uid: int) -> User:
    """:func:`suspend` by id (another server's account too: its login,
    ``name@host``, is no local login)."""
    user = await users.get_user(store, uid)
    await _set(store, user.id, susp="1")
    await revoke_tokens(store, user.id)
    return await users.get_user(store, user.id)


async def unsuspend(store: Store, login: str) -> User:
    return await unsuspend_account(store, (await users.lookup(store, login)).id)


async def unsuspend_account(store: Store, uid: int) -> User:
    user = await users.get_user(store, uid)
    await _set(store, user.id, susp=None)
    return await users.get_user(store, user.id)


async def reset_password(store: Store, login: str, password: str) -> User:
    """A new password; every token of the account is revoked."""
    user = await users.lookup(store, login)
    password = validate.text(password, "password", limits.PASSWORD_MAX_CHARS)
    if len(password) < limits.PASSWORD_MIN_CHARS:
        raise ValidationError("password", f"is shorter than {limits.PASSWORD_MIN_CHARS} characters")
    hashed = await asyncio.to_thread(account._hasher.hash, password)
    await store.hset(keys.secrets(user.id), "password", hashed)
    await revoke_tokens(store, user.id)
    return user


# --- deleting an account -----------------------------------------------------------------
async def _members(store: Store, key: str) -> list[int]:
    return [int(m) for m in await store.zrange(key, 0, -1)]


async def delete_account(store: Store, queue, login: str, uid: int | None = None) -> int:
    """Delete an account for good: its statuses from every timeline, its
    follows both ways, its favourites and boosts (others' counts stay exact
    because each goes through its undo), its place in others' lists, blocks,
    mutes and requests, then every key carrying its hash tag. Idempotent, step by
    step: cut short, it is run again (the account stays suspended, so hidden,
    from the first step). Returns the user id; the caller drains the jobs.
    ``uid``: the account by id (another server's, whose ``login`` is no
    local login), else looked up by ``login``."""
    user = await (users.get_user(store, uid) if uid is not None else users.lookup(store, login))
    uid = user.id
    await _set(store, uid, susp="1")
    await revoke_tokens(store, uid)
    for orig in await _members(store, keys.reblogs(uid)):
        try:
            await boosts.unboost(store, queue, uid, orig)
        except StatusNotFound:
            pass
    for sid in await _members(store, keys.favourites(uid)):
        try:
            await favourites.set_favourite(store, queue, uid, sid, False)
        except StatusNotFound:
            pass
    for sid in await _members(store, keys.bookmarks(uid)):
        await bookmarks.set_bookmark(store, uid, sid, False)
    for sid in reversed(await _members(store, keys.profile(uid))):
        try:
            await deleting.delete_status(store, queue, sid, uid)
        except StatusNotFound:
            pass
    for other in await _members(store, keys.following(uid)):
        await follows.unfollow(store, queue, uid, other)
    for other in await _members(store, keys.followers(uid)):
        try:
            await follows.unfollow(store, queue, other, uid)
        except UserNotFound:
            pass
    for other in await _members(store, keys.follow_requested(uid)):
        await follow_requests.withdraw(store, uid, other)
    for other in await _members(store, keys.follow_requests(uid)):
        await follow_requests.withdraw(store, other, uid)
    for other in await _members(store, keys.blocking(uid)):
        await store.batch([("ZREM", keys.blocked_by(other), uid)])
    for other in await _members(store, keys.blocked_by(uid)):
        await store.batch([("ZREM", keys.blocking(other), uid)])
    for other in await _members(store, keys.muting(uid)):
        await store.batch([("ZREM", keys.muted_by(other), uid)])
    for other in await _members(store, keys.muted_by(uid)):  # others' mutes of it
        await relations.unmute(store, other, uid)
    for member in await store.zrange(keys.listed_in(uid), 0, -1):
        owner, lid = keys.parse_listed_member(member)
        try:
            await lists.remove_member(store, queue, owner, lid, uid)
        except NotFound:
            pass
    return uid


async def purge_account(store: Store, queue: JobQueue, uid: int, login: str) -> int:
    """The last step of :func:`delete_account`, once its jobs have drained:
    :func:`purge_account_keys` under a journal (jobs.PurgeAccountJob) held
    with a claim on the account (keys.purge_claim), so the account leaves
    the user count exactly once: when the journal is released, here or, if
    this call is cut short, by the worker that replays it. A second run
    (the operator's re-run) purges again, idempotently, and counts nothing.
    How many keys went."""
    job = PurgeAccountJob(uid, login)
    shard = job.shard()
    held = await queue.hold_once(
        job, shard, keys.purge_claim(shard, uid), "%s", limits.PURGE_CLAIM_TTL_S
    )
    gone = await purge_account_keys(store, uid, login)
    if isinstance(held, Held):
        await queue.release(held, count="users_gone")
    return gone


async def purge_account_keys(store: Store, uid: int, login: str) -> int:
    """The work of :func:`purge_account`: every key carrying the account's hash tag (every master's), the indexes
    that name it, and last its record and login, so that a run cut short
    finds the account again and finishes. Idempotent. How many keys went."""
    record = keys.user(uid)
    gone = 0
    # its uploads, avatar and header: records now, files by a job (before
    # the user record goes, which names the avatar's and header's)
    await uploads.forget_account(
        store,
        JobQueue(store),
        uid,
        await topology.of(store).keys_matching(media_keys.record_pattern(uid)),
        await profile_images.names_of(store, uid),
    )
    gone += await featured_collections.forget(store, uid)  # keys of its own module
    mine = keys.user_key_prefixes()
    for key in await topology.of(store).keys_matching(keys.tagged(uid)):
        if key.split("{", 1)[0] in mine and key not in (record, keys.secrets(uid)):
            gone += await store.delete(key)
    await store.run("index_account", [keys.SEARCH_ACCOUNTS, keys.SEARCH_INDEXED], [uid, 2**50])
    await store.batch([("HDEL", keys.SEARCH_INDEXED, uid)])
    await store.zrem(keys.POPULAR_ACCOUNTS, uid)  # out of the suggestions' most followed
    await store.zrem(keys.ACTIVE_ACCOUNTS, uid)  # out of the directory's order
    await activity.forget(store, uid)  # out of the retention cohorts (day counts stay)
    (email,) = await store.batch([("HGET", keys.secrets(uid), "email")])
    if email:
        await store.delete(keys.email(email.decode().lower()))
    gone += await store.delete(keys.secrets(uid))
    gone += await store.delete(record)
    gone += await store.delete(keys.login(login.lower()))
    return gone
