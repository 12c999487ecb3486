"""Boosts (Mastodon's reblogs).

A boost is a status of its own (its record names the original in the
``reblog_of`` extra), delivered to the booster's followers and lists like a
post but never to the public timeline: to the homes the home rule lets it
into (redpoll.timelines.home_rule: not where the original or another boost
of it is among the home's newest limits.REBLOG_WINDOW entries, so a home
never shows the same status twice because of boosts, nor for those who
follow the booster with ``reblogs=false``), through deliver_boost.lua.

Boosting changes, like a favourite, three records on three slots: who boosted
the original and its count (reblog_status.lua, the truth), the user's own
index (the ``reblogged`` flag) and the author's ``reblog`` notification,
each versioned by the operation's id; then the boost status is written and
delivered. All of it is journaled: queued as a held job first, replayed by a
worker if the call is cut short (every step idempotent).

Unboosting deletes the boost status (deleting.delete_status, which takes it
out of every timeline); deleting a boost, by either way, calls
deleting.forget_boost, which undoes the three records. Deleting an original
deletes its boosts (deleting.remove_boosts_of); a boost racing that delete
checks the original again once its status exists and deletes itself if the
original is gone, so no boost outlives its original.
"""

from __future__ import annotations

import asyncio

from ..bus import events
from ..bus.queue import JobQueue
from ..core import keys, limits, validate
from ..core.errors import Forbidden, StatusNotFound, ValidationError
from ..core.models import Status, now_ms
from ..core.settings import Settings
from ..instance import activity
from ..records.statuses import get_status_or_none
from ..records.users import get_users
from ..relations import visibility
from ..storage.store import Store
from ..timelines import fanout
from ..timelines.jobs import FanoutJob
from ..trends import statuses as trend_statuses
from . import deleting, posting
from .jobs import BoostJob, PostJob


async def _resolve(store: Store, sid: int) -> Status:
    """The status to boost: a boost of a boost boosts the original."""
    status = await get_status_or_none(store, sid)
    if status is not None and status.reblog_of:
        status = await get_status_or_none(store, status.reblog_of)
    if status is None:
        raise StatusNotFound(f"status {sid} does not exist")
    return status


async def boost(store: Store, queue: JobQueue, settings: Settings, uid, sid) -> int:
    """``uid`` boosts status ``sid``; the id of the boost status (the one
    made before, when boosted already). StatusNotFound, nothing written, for
    a missing or deleted status."""
    uid = validate.an_id(uid, "user_id")
    original = await _resolve(store, validate.an_id(sid, "status_id"))
    if not visibility.can_boost(uid, original):
        raise Forbidden(f"a {visibility.of(original)} status cannot be boosted")
    standing = await store.zscore(keys.reblogged_by(original.id), uid)
    if standing is not None:
        return await _settled(store, int(standing))
    # the user's bound, checked before anything is written (as favourites:
    # the truth is on the status's slot, the index on the user's, so boosts
    # of one user racing each other may pass it by their number in flight)
    login, count = await store.batch(
        [("HGET", keys.user(uid), "login"), ("ZCARD", keys.reblogs(uid))]
    )
    if login is None:
        raise StatusNotFound(f"user {uid} does not exist")
    if int(count) >= limits.REBLOGS_MAX:
        raise ValidationError("id", f"at most {limits.REBLOGS_MAX} boosts")
    await queue.check_capacity()
    op = await store.incr(keys.INTERACTION_SEQ)
    bid = await store.incr(keys.STATUS_SEQ)
    job = BoostJob(uid=uid, sid=original.id, op=op, bid=bid, login=login.decode(), at=now_ms())
    held = await queue.hold(job)
    try:
        standing, next_job = await apply(store, queue, settings, job)
    except StatusNotFound:
        await queue.release(held)
        raise
    await queue.release(held, next_job)
    if standing != bid:  # another call's boost: its status may still be being written
        return await _settled(store, standing)
    return standing


async def _settled(store: Store, bid: int) -> int:
    """``bid``, once its status can be read: a boost that another call made
    (racing this one) is recorded before its status is written, and the
    caller answers with that status. Waited for at most
    limits.BOOST_SETTLE_S (a call cut short before writing it leaves it to
    its journal's replay)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + limits.BOOST_SETTLE_S
    while await get_status_or_none(store, bid) is None and loop.time() < until:
        await asyncio.sleep(0.02)
    return bid


async def apply(
    store: Store, queue: JobQueue, settings: Settings, job: BoostJob
) -> tuple[int, FanoutJob | None]:
    """The journal's steps (idempotent): the truth, the user's index, the
    notification, then (if this boost is the standing one) the boost status
    and its first delivery step. Returns the standing boost id and the
    fan-out job that continues the delivery."""
    uid, orig, op, bid = job.uid, job.sid, job.op, job.bid
    state, _, standing = await deleting.record_reblog(store, uid, orig, op, True, bid)
    await trend_statuses.note(store, orig)  # among the trending candidates (idempotent)
    if state:  # the day's interactions (idempotent: once per booster and status)
        await activity.count(store, "interactions", f"b{uid}:{orig}", job.at)
    if not state or int(standing) != bid:
        return int(standing), None
    original = await get_status_or_none(store, orig)
    # a boost is public, but a self-boost of a private status stays private
    # (visibility.can_boost allows no other boost of a hidden status)
    audience = (
        visibility.PRIVATE
        if original is not None and visibility.of(original) == visibility.PRIVATE
        else visibility.PUBLIC
    )
    status = Status(
        id=bid,
        text="",
        created_at=job.at,
        user_id=uid,
        login=job.login,
        extra={"reblog_of": str(orig), "visibility": audience},
    )
    # the status and the booster's profile and count, as a post's (one step
    # each, idempotent; a boost deleted meanwhile is not revived)
    if not await posting.create(store, PostJob(sid=bid, author=uid, record=status.to_hash())):
        return bid, None
    step = await fanout.advance(
        store, settings, FanoutJob(bid, uid, listed=False, boost_of=orig, audience=audience)
    )
    if step.taken_back:
        return bid, None  # the boost was deleted meanwhile
    if await get_status_or_none(store, orig) is None:
        # the original was deleted meanwhile: its delete may have looked for
        # boosts before this one existed, so this boost takes itself down
        await _delete(store, queue, bid, uid)
        return bid, None
    next_job = step.next
    original = await get_status_or_none(store, orig)
    if original is not None:  # at least once: a replay may publish it again
        await events.publish(store, events.update_event(status, reblog=original))
    return bid, next_job


async def _delete(store: Store, queue: JobQueue, bid: int, uid: int) -> None:
    try:
        await deleting.delete_status(store, queue, bid, uid)
    except StatusNotFound:
        pass  # deleted already


async def unboost(store: Store, queue: JobQueue, uid, sid) -> bool:
    """``uid`` takes back their boost of ``sid`` (or of what the boost ``sid``
    boosts): the boost status is deleted, which takes it out of every timeline
    and undoes the count, flag and notification (deleting.forget_boost). True if
    there was a boost."""
    uid = validate.an_id(uid, "user_id")
    original = await _resolve(store, validate.an_id(sid, "status_id"))
    if not visibility.can_boost(uid, original):
        raise Forbidden(f"a {visibility.of(original)} status cannot be boosted")
    standing = await store.zscore(keys.reblogged_by(original.id), uid)
    if standing is None:
        return False
    await _delete(store, queue, int(standing), uid)
    return True


async def replay(store: Store, settings, job: BoostJob) -> FanoutJob | None:
    """Worker handler: finish a boost whose call was cut short; its fan-out
    continues as the chained job."""
    try:
        _, next_job = await apply(store, JobQueue(store), settings, job)
    except StatusNotFound:
        return None
    return next_job


async def reblogged_by(store: Store, sid, *, max_id=None, limit=None):
    """Who boosted a status, newest first, and the cursor (a boost id)."""
    sid = validate.an_id(sid, "status_id")
    top = validate.optional_id(max_id, "max_id")
    size = validate.page_limit(limit, limits.ACCOUNTS_PAGE_DEFAULT, limits.ACCOUNTS_PAGE_MAX)
    rows = await store.zrevrangebyscore(
        keys.reblogged_by(sid),
        f"({top}" if top else "+inf",
        "-inf",
        start=0,
        num=size,
        withscores=True,
    )
    return await get_users(store, [int(m) for m, _ in rows]), (int(rows[-1][1]) if rows else None)
