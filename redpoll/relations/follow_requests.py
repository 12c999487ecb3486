"""Locked accounts and follow requests.

Following a locked account (``locked`` on its record) makes a request
instead of a follow (:func:`request`, from follows.follow): the request in
both sides' sets (each side's slot, ``ZADD NX``: idempotent) and a
``follow_request`` notification. Authorizing one is a follow
(follows.authorize_request) that then takes the request out here;
:func:`reject` and withdrawing (unfollow) take it out of both sets (and
the account out of the requester's lists: redpoll.relations.unlisting).
"""

from __future__ import annotations

from ..core import keys, limits, validate
from ..core.errors import ValidationError
from ..notifications import notifications
from ..storage.store import Store
from . import unlisting

KIND = "follow_request"


async def request(store: Store, a: int, b: int) -> bool:
    """``a`` asks to follow the locked ``b``; False if already pending."""
    (count,) = await store.batch([("ZCARD", keys.follow_requests(b))])
    if count >= limits.FOLLOW_REQUESTS_MAX:
        raise ValidationError("id", "this account has too many pending follow requests")
    (op,) = await store.batch([("INCR", keys.INTERACTION_SEQ)])
    (added,) = await store.batch([("ZADD", keys.follow_requests(b), "NX", op, a)])
    await store.batch([("ZADD", keys.follow_requested(a), "NX", op, b)])
    if added:
        await notifications.apply(store, b, KIND, a, b, int(op), True)
    return bool(added)


async def keep_options(
    store: Store, a: int, b: int, reblogs: bool | None, notify: bool | None
) -> None:
    """The options ``a`` asked for with a pending request to follow ``b``
    (None: the default, boosts shown and no status notifications), kept
    until the request is authorized (:func:`options`) or dropped. One HSET
    on b's slot; written after the request, so a call cut short between
    leaves the defaults, never more."""
    value = f"{0 if reblogs is False else 1}{1 if notify else 0}"
    await store.batch([("HSET", keys.follow_request_options(b), a, value)])


async def options(store: Store, a: int, b: int) -> tuple[bool, bool]:
    """(reblogs, notify) of ``a``'s request to follow ``b``."""
    (raw,) = await store.batch([("HGET", keys.follow_request_options(b), a)])
    raw = raw.decode() if isinstance(raw, bytes) else (raw or "10")
    return raw[:1] == "1", raw[1:2] == "1"


async def drop(store: Store, a: int, b: int) -> bool:
    """Take ``a``'s request to follow ``b`` out of both sets and its notification."""
    removed, _ = await store.batch(
        [("ZREM", keys.follow_requests(b), a), ("HDEL", keys.follow_request_options(b), a)]
    )
    await store.batch([("ZREM", keys.follow_requested(a), b)])
    (op,) = await store.batch([("INCR", keys.INTERACTION_SEQ)])
    await notifications.apply(store, b, KIND, a, b, int(op), False)
    return bool(removed)


async def withdraw(store: Store, a: int, b: int) -> bool:
    """Take back ``a``'s request to follow ``b``, if there is one (one read
    when there is none: every unfollow asks)."""
    out, inc = await store.batch(
        [("ZSCORE", keys.follow_requested(a), b), ("ZSCORE", keys.follow_requests(b), a)]
    )
    if out is None and inc is None:
        return False
    return await drop(store, a, b)


async def pending(store: Store, a: int, b: int) -> bool:
    """Whether ``a``'s request to follow ``b`` is pending (b's slot)."""
    (score,) = await store.batch([("ZSCORE", keys.follow_requests(b), a)])
    return score is not None


async def reject(store: Store, owner, requester) -> bool:
    """``owner`` refuses ``requester``'s request: it goes, and ``owner``
    leaves the requester's lists (after it went; refusing again repeats
    both: unlisting)."""
    owner = validate.an_id(owner, "user_id")
    requester = validate.an_id(requester, "account_id")
    dropped = await drop(store, requester, owner)
    await unlisting.unlist(store, requester, owner)
    return dropped


async def pending_page(store: Store, uid, max_id=None, limit=None) -> list[tuple[int, int]]:
    """(requester id, request id), newest first, below ``max_id`` (a request id)."""
    uid = validate.an_id(uid, "user_id")
    limit = validate.page_limit(limit)
    top = f"({int(max_id)}" if max_id else "+inf"
    (rows,) = await store.batch(
        [
            (
                "ZRANGE",
                keys.follow_requests(uid),
                top,
                "-inf",
                "BYSCORE",
                "REV",
                "LIMIT",
                0,
                limit,
                "WITHSCORES",
            )
        ]
    )
    if rows and not isinstance(rows[0], (list, tuple)):
        rows = list(zip(rows[0::2], rows[1::2]))
    return [(int(m), int(float(s))) for m, s in rows]


async def state(store: Store, a: int, b: int) -> tuple[bool, bool]:
    """(a has asked to follow b, b has asked to follow a): one slot, a's."""
    out, inc = await store.batch(
        [("ZSCORE", keys.follow_requested(a), b), ("ZSCORE", keys.follow_requests(a), b)]
    )
    return out is not None, inc is not None


async def count(store: Store, uid: int) -> int:
    (n,) = await store.batch([("ZCARD", keys.follow_requests(uid))])
    return int(n)
