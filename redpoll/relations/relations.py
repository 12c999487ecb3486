"""Blocks and mutes: one user keeping another away.

A block (:func:`block`) is journaled: a ``BlockJob`` is held around its
steps and replayed whole by a worker if the call is cut short. Every step is
idempotent: both sides' block sets (``block.lua``, each side's slot), then
the follows both ways undone (edges.remove, as an unfollow: the other's
statuses leave each home and list timeline now) with their notifications,
and each out of the other's lists (redpoll.relations.unlisting).
Unblocking takes both entries out (``unblock.lua`` per side; a cut-short
unblock leaves the block standing on one side, and the call is simply
repeated: the answer says what stands).

A mute (:func:`mute`) is one entry in the muter's slot (one MULTI: the
paging set and the terms together), and, written before it, one in the
muted account's index of its muters (keys.muted_by, read by a Move): an expiry (0 = never) and whether
notifications are muted too. An expired mute stops applying at read time
without any job; the next mute or unmute of that account rewrites it.

Reads never decide here: redpoll.relations.visibility asks :func:`hidden_among` for
the accounts a viewer must not see among those a page names.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bus import events
from ..bus.queue import JobQueue
from ..core import keys, limits, validate
from ..core.errors import UserNotFound, ValidationError
from ..core.models import User, now_ms
from ..notifications import notifications
from ..storage.store import Store
from . import edges, follow_requests, unlisting
from .jobs import BlockJob


def _pair(a, b) -> tuple[int, int]:
    a, b = validate.an_id(a, "user_id"), validate.an_id(b, "target_id")
    if a == b:
        raise ValidationError("target_id", "a user cannot block or mute themselves")
    return a, b


async def _require(store: Store, uid: int) -> None:
    if not await store.batch([("EXISTS", keys.user(uid))]) == [1]:
        raise UserNotFound(f"user {uid} does not exist")


# --- blocks ---------------------------------------------------------------------------
async def block(store: Store, queue: JobQueue, a, b) -> None:
    """``a`` blocks ``b``: no follows either way any more, neither sees the
    other (redpoll.relations.visibility), follows and mention notifications between
    them are refused. Blocking again changes nothing."""
    a, b = _pair(a, b)
    await _require(store, b)
    (count,) = await store.batch([("ZCARD", keys.blocking(a))])
    if count >= limits.BLOCKS_MAX:
        raise ValidationError("id", f"you block {limits.BLOCKS_MAX} accounts already")
    (op,) = await store.batch([("INCR", keys.INTERACTION_SEQ)])
    job = BlockJob(uid=a, target=b, op=int(op))
    held = await queue.hold(job)
    await apply_block(store, job)
    await queue.release(held)


async def apply_block(store: Store, job: BlockJob) -> None:
    """The block's steps (idempotent: ZADD NX, edge removals that find
    nothing the second time); also what a worker replays."""
    a, b = job.uid, job.target
    await store.batch([("ZADD", keys.blocking(a), "NX", job.op, b)])
    await store.batch([("ZADD", keys.blocked_by(b), "NX", job.op, a)])
    for src, dst in ((a, b), (b, a)):
        await follow_requests.withdraw(store, src, dst)
        if await edges.remove(store, edges.follow_edge(src, dst)):
            await notifications.set_notify(store, src, dst, False)
        await unlisting.unlist(store, src, dst)  # after the follow went
        await notifications.sync_follow(store, src, dst)
    await announce(store, a, b)


async def unblock(store: Store, a, b) -> None:
    """``a`` no longer blocks ``b`` (follows are not restored). Idempotent."""
    a, b = _pair(a, b)
    await _require(store, b)
    await store.batch([("ZREM", keys.blocking(a), b)])
    await store.batch([("ZREM", keys.blocked_by(b), a)])
    await announce(store, a, b)


async def blocks_between(store: Store, a: int, b: int) -> bool:
    """Either blocks the other (one slot: a's two sets)."""
    found = await store.batch([("ZSCORE", keys.blocking(a), b), ("ZSCORE", keys.blocked_by(a), b)])
    return any(x is not None for x in found)


async def blocked_page(store: Store, uid, max_id=None, limit=None) -> list[tuple[int, int]]:
    """(account id, block id) newest first, below ``max_id`` (a block id)."""
    return await _page(store, keys.blocking(validate.an_id(uid, "user_id")), max_id, limit)


# --- mutes ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Mute:
    expires_at: int  # ms since the epoch; 0 = never
    notifications: bool

    def active(self, now: int) -> bool:
        return self.expires_at == 0 or self.expires_at > now

    @classmethod
    def parse(cls, raw) -> Mute | None:
        if raw is None:
            return None
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        expires, _, notes = text.partition(":")
        return cls(int(expires), notes == "1")


async def mute(store: Store, a, b, duration_s=0, mute_notifications: bool = True) -> Mute:
    """``a`` mutes ``b`` for ``duration_s`` seconds (0: until unmuted);
    ``mute_notifications``: b's notifications are hidden too. Muting again
    sets the new terms (one MULTI in a's slot: the set and the terms)."""
    a, b = _pair(a, b)
    if (
        isinstance(duration_s, bool)
        or not isinstance(duration_s, int)
        or not 0 <= duration_s <= limits.MUTE_DURATION_MAX_S
    ):
        raise ValidationError("duration", f"must be 0 to {limits.MUTE_DURATION_MAX_S} seconds")
    await _require(store, b)
    count, known = await store.batch([("ZCARD", keys.muting(a)), ("ZSCORE", keys.muting(a), b)])
    if known is None and count >= limits.MUTES_MAX:
        raise ValidationError("id", f"you mute {limits.MUTES_MAX} accounts already")
    terms = Mute(now_ms() + duration_s * 1000 if duration_s else 0, bool(mute_notifications))
    (op,) = await store.batch([("INCR", keys.INTERACTION_SEQ)])
    # b's index of its muters first (another slot; a hint, the terms decide)
    await store.batch([("ZADD", keys.muted_by(b), int(op), a)])
    pipe = store.pipeline(transaction=True)  # one slot: a's
    pipe.zadd(keys.muting(a), {str(b): int(op)})
    pipe.hset(keys.mute_terms(a), str(b), f"{terms.expires_at}:{int(terms.notifications)}")
    await pipe.execute()
    await announce(store, a, b)
    return terms


async def unmute(store: Store, a, b) -> None:
    a, b = _pair(a, b)
    await _require(store, b)
    pipe = store.pipeline(transaction=True)
    pipe.zrem(keys.muting(a), str(b))
    pipe.hdel(keys.mute_terms(a), str(b))
    await pipe.execute()
    await store.batch([("ZREM", keys.muted_by(b), a)])  # after: the index never misses one
    await announce(store, a, b)


async def muted_page(store: Store, uid, max_id=None, limit=None) -> list[tuple[int, int]]:
    """(account id, mute id) of active mutes, newest first, below ``max_id``."""
    return [(target, mark) for target, mark, _ in await muted_terms_page(store, uid, max_id, limit)]


async def muted_terms_page(
    store: Store, uid, max_id=None, limit=None
) -> list[tuple[int, int, int]]:
    """(account id, mute id, when the mute ends in ms, 0: never) of active
    mutes, newest first, below ``max_id``."""
    uid = validate.an_id(uid, "user_id")
    rows = await _page(store, keys.muting(uid), max_id, limit)
    if not rows:
        return []
    terms = await store.batch([("HMGET", keys.mute_terms(uid), *[r[0] for r in rows])])
    now = now_ms()
    return [
        (target, mark, m.expires_at)
        for (target, mark), t in zip(rows, terms[0])
        if (m := Mute.parse(t)) and m.active(now)
    ]


# --- what reads ask ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Relation:
    """How the viewer stands to one account."""

    blocking: bool = False
    blocked_by: bool = False
    mute: Mute | None = None


async def relation(store: Store, viewer: int, target: int) -> Relation:
    blk, blkby, terms = await store.batch(
        [
            ("ZSCORE", keys.blocking(viewer), target),
            ("ZSCORE", keys.blocked_by(viewer), target),
            ("HGET", keys.mute_terms(viewer), target),
        ]
    )
    m = Mute.parse(terms)
    return Relation(blk is not None, blkby is not None, m if m and m.active(now_ms()) else None)


def hidden_commands(viewer: int, uids: list[int]) -> list[tuple]:
    """The reads :func:`hidden_from` needs (one slot: the viewer's), to be
    batched with a caller's own."""
    return [
        ("ZMSCORE", keys.blocking(viewer), *uids),
        ("ZMSCORE", keys.blocked_by(viewer), *uids),
        ("HMGET", keys.mute_terms(viewer), *uids),
    ]


def hidden_from(
    uids: list[int], replies: list, *, muted: bool, notifications_only=False
) -> set[int]:
    """Among ``uids``, those blocked either way, and (``muted``) those muted
    now (``notifications_only``: muted with notifications), from the
    replies to :func:`hidden_commands`."""
    blk, blkby, terms = replies
    out = {u for u, x, y in zip(uids, blk, blkby) if x is not None or y is not None}
    if muted and any(t is not None for t in terms):
        now = now_ms()
        for u, t in zip(uids, terms):
            m = Mute.parse(t)
            if m and m.active(now) and (m.notifications or not notifications_only):
                out.add(u)
    return out


async def shown_accounts(store: Store, viewer: int | None, users: list[User]) -> list[User]:
    """``users`` as a viewer may be shown them in a list of accounts: none
    suspended, none blocked either way with the viewer (one round trip)."""
    users = [u for u in users if not u.suspended]
    if viewer is None or not users:
        return users
    ids = [u.id for u in users]
    hidden = hidden_from(ids, await store.batch(hidden_commands(viewer, ids)), muted=False)
    return [u for u in users if u.id not in hidden]


async def pair_state(store: Store, a: int, b: int) -> tuple[tuple[bool, bool], tuple[bool, bool]]:
    """How ``a`` and ``b`` stand now, each way: (a follows b, b follows a),
    (b is hidden from a, a is hidden from b) (:func:`hidden_from`, mutes
    included). One round trip; each side's reads are in its own slot."""
    replies = await store.batch(
        [
            ("ZSCORE", keys.following(a), b),
            *hidden_commands(a, [b]),
            ("ZSCORE", keys.following(b), a),
            *hidden_commands(b, [a]),
        ]
    )
    a_side, b_side = replies[:4], replies[4:]
    return (
        (a_side[0] is not None, b_side[0] is not None),
        (
            bool(hidden_from([b], a_side[1:], muted=True)),
            bool(hidden_from([a], b_side[1:], muted=True)),
        ),
    )


async def announce(store: Store, a: int, b: int) -> str:
    """Tell the open streams of every process how ``a`` and ``b`` stand now
    (a :class:`redpoll.bus.events.RelationEvent`, read after the caller's
    change): a follow, unfollow, removal, block or mute reaches them at
    once. Idempotent, as the event carries state rather than a change: a
    step replayed after a crash announces again; a stale announcement (two
    changes racing) is put right by the streams' membership refresh."""
    follows, hides = await pair_state(store, a, b)
    return await events.publish(store, events.RelationEvent((a, b), follows, hides).to_json())


async def announce_follow(store: Store, a: int, b: int, follows: bool) -> str:
    """Tell the open streams that ``a`` now follows ``b`` (or no longer
    does), without a read: the rest of how they stand is left as it was (a
    follow or unfollow changes no block or mute, nor whether b follows a)."""
    return await events.publish(
        store, events.RelationEvent((a, b), (follows, None), (None, None)).to_json()
    )


async def hidden_ids(store: Store, viewer: int) -> frozenset[int]:
    """Every account the viewer blocks, is blocked by, or mutes now (an open
    stream's filter; bounded by BLOCKS_MAX and MUTES_MAX)."""
    blk, blkby, terms = await store.batch(
        [
            ("ZRANGE", keys.blocking(viewer), 0, -1),
            ("ZRANGE", keys.blocked_by(viewer), 0, -1),
            ("HGETALL", keys.mute_terms(viewer)),
        ]
    )
    now = now_ms()
    if isinstance(terms, list):  # RESP2 flat list
        terms = dict(zip(terms[0::2], terms[1::2]))
    muted = {int(k) for k, v in (terms or {}).items() if (m := Mute.parse(v)) and m.active(now)}
    return frozenset({int(x) for x in blk} | {int(x) for x in blkby} | muted)


async def _page(store: Store, key: str, max_id, limit) -> list[tuple[int, int]]:
    limit = validate.page_limit(limit)
    top = f"({int(max_id)}" if max_id else "+inf"
    (rows,) = await store.batch(
        [("ZRANGE", key, top, "-inf", "BYSCORE", "REV", "LIMIT", 0, limit, "WITHSCORES")]
    )
    if rows and not isinstance(rows[0], (list, tuple)):
        rows = list(zip(rows[0::2], rows[1::2]))
    return [(int(m), int(float(s))) for m, s in rows]
