"""Following and unfollowing: both accounts' sets and counters kept equal;
a follow copies the followed account's newest statuses into the follower's
home, an unfollow takes them out and a job refills the home from the
accounts still followed. Doing either twice changes nothing."""

from __future__ import annotations

from collections.abc import Callable

from ..bus.queue import JobQueue
from ..core import keys, limits, validate
from ..core.errors import Forbidden, RedpollError, UserNotFound, ValidationError
from ..core.models import User, now_us
from ..notifications import notifications
from ..records.users import get_users
from ..storage.store import Store
from ..timelines.jobs import RefillJob
from . import edges, follow_requests, relations, unlisting
from .jobs import FollowNoteJob


def _checks(a: int, b: int, *, unblocked: bool = False) -> list[tuple]:
    """The reads :func:`_verdict` judges: both users exist; ``unblocked``:
    the blocks both ways, b's ``locked`` and whether a follows b."""
    commands = [("EXISTS", keys.user(a)), ("EXISTS", keys.user(b))]
    if unblocked:
        commands += [
            ("ZSCORE", keys.blocking(a), b),
            ("ZSCORE", keys.blocked_by(a), b),
            ("HGET", keys.user(b), "locked"),
            ("ZSCORE", keys.following(a), b),
        ]
    return commands


def _verdict(a: int, b: int, replies: list, *, unblocked: bool = False) -> bool:
    """Both users exist; ``unblocked``: and neither blocks the other
    (redpoll.relations.relations; Forbidden, as Mastodon's 403). Whether a follow of
    ``b`` by ``a`` needs b's approval (``b`` is locked and ``a`` does not
    follow it yet)."""
    for uid, found in zip((a, b), replies):
        if not found:
            raise UserNotFound(f"user {uid} does not exist")
    if unblocked and any(x is not None for x in replies[2:4]):
        raise Forbidden("one of you blocks the other")
    return unblocked and replies[4] == b"1" and replies[5] is None


async def _require(store: Store, a: int, b: int, *, unblocked: bool = False) -> bool:
    """:func:`_verdict` of :func:`_checks`, read in one round trip."""
    return _verdict(
        a, b, await store.batch(_checks(a, b, unblocked=unblocked)), unblocked=unblocked
    )


def _pair(a, b) -> tuple[int, int]:
    a = validate.an_id(a, "user_id")
    b = validate.an_id(b, "target_id")
    if a == b:
        raise ValidationError("target_id", "a user cannot follow or unfollow themselves")
    return a, b


async def follow(store: Store, queue: JobQueue, a, b, *, approved: bool = False) -> bool:
    """``a`` follows ``b``; b's newest statuses are merged into a's home at
    once and b gets a ``follow`` notification from a worker, moments later
    (Mastodon notifies from a job too). Following again is a no-op that
    returns False. The notification is journaled: held as a job before the
    change, handed to the workers after it (one step: ``release`` with the
    job as the next one), taken over by a worker if the call is cut short in
    between; the job syncs the notification with the follow as it is then,
    so replays and races end the same. A locked ``b`` gets a follow request
    instead (follow_requests.py; False), unless ``approved`` (b authorizing
    it)."""
    a, b = _pair(a, b)
    note = FollowNoteJob(a, b)
    # the journal is held in the round trip of the checks (one trip fewer);
    # an unknown user, a block or a request: it is released at once, and
    # nothing else is written but the request
    held, replies = await queue.hold_after(note, _checks(a, b, unblocked=True))
    try:
        needs_approval = _verdict(a, b, replies, unblocked=True) and not approved
    except RedpollError:
        await queue.release(held)
        raise
    if needs_approval:
        await queue.release(held)
        await follow_requests.request(store, a, b)
        return False
    # The release goes in the round trip of the change (edges.add's
    # ``then``), before the call knows whether the follow is new: its job
    # carries the follow's own score, and the worker syncs the notification
    # only if the follow it finds is this one (or later). Following again
    # changes nothing: the first follow's job saw to it. The job also puts a
    # large ``b`` in a's set of accounts caught up with at read (redpoll.timelines.hybrid;
    # the backfill already brought b's newest).
    at = now_us()
    release = queue.release_call(held, next_job=FollowNoteJob(a, b, since=at))
    try:
        added = await edges.add(store, edges.follow_edge(a, b, at=at), then=release)
    except RedpollError:  # an unknown user: nothing was written
        await queue.release(held)  # (nothing if the release above ran: it acks once)
        raise
    # open streams of a show b's posts from now on: in the event log before
    # the call returns, so before anything b posts after it
    await relations.announce_follow(store, a, b, True)
    return added


async def note_due(store: Store, job: FollowNoteJob) -> bool:
    """Whether a worker syncs the notification of ``job`` (see
    FollowNoteJob.since): a journal taken over always does; one queued by a
    follow only if that follow (or a later one) is there."""
    if not job.since:
        return True
    score = await store.zscore(keys.following(job.uid), job.target)
    return score is not None and score >= job.since


async def unfollow(store: Store, queue: JobQueue, a, b) -> bool:
    """``a`` stops following ``b``; b's statuses leave a's home now, a job
    refills the home from the people a still follows, b leaves a's lists
    (unlisting.unlist, under the journal), and b's ``follow`` notification
    about a goes, from a worker (journaled as :func:`follow`). Unfollowing a
    stranger is a no-op that returns False (it still takes b out of a's
    lists, should an unfollow cut short have left it there)."""
    a, b = _pair(a, b)
    await _require(store, a, b)  # an unknown user: nothing written, not even a journal
    await follow_requests.withdraw(store, a, b)  # a pending request goes too
    note = FollowNoteJob(a, b)
    held = await queue.hold(note)
    try:
        changed = await edges.remove(store, edges.follow_edge(a, b))
    except RedpollError:
        await queue.release(held)
        raise
    try:
        await unlisting.unlist(store, a, b)  # after the follow went: see unlisting
    except RedpollError:
        await queue.release(held)
        raise
    if changed:
        await queue.enqueue(RefillJob(a))
        # open streams of a lose b's private posts now (after the change)
        await relations.announce_follow(store, a, b, False)
    await notifications.set_notify(store, a, b, False)  # no status notifications any more
    # a worker takes the notification back and tidies a's set of large
    # accounts (a page ignores those not followed); a stranger had none
    await queue.release(held, next_job=note if changed else None)
    return changed


async def authorize_request(store: Store, queue: JobQueue, owner, requester) -> bool:
    """``owner`` lets ``requester`` follow, with the options the request
    asked for (follow_requests.keep_options); False if no request was
    pending. The show-reblogs option is set first (the follow's backfill
    asks it), then the follow is made (as the target allows it:
    idempotent, so two authorizations at once make one follow), then the
    notify option, and only then is the request taken out (the requester's
    lists that held the owner meanwhile take its private statuses in between:
    unlisting.merge_listed): cut short anywhere, the request is
    still pending and authorizing it again ends the same."""
    owner = validate.an_id(owner, "user_id")
    requester = validate.an_id(requester, "account_id")
    if not await follow_requests.pending(store, requester, owner):
        return False
    reblogs, notify = await follow_requests.options(store, requester, owner)
    await set_show_reblogs(store, requester, owner, reblogs)  # the backfill reads it
    await follow(store, queue, requester, owner, approved=True)
    await unlisting.merge_listed(store, requester, owner)  # lists that held it while pending
    await notifications.set_notify(store, requester, owner, notify)
    await follow_requests.drop(store, requester, owner)
    return True


async def mend_edge(store: Store, a: int, b: int) -> None:
    """Make the followers' side of the follow ``a`` -> ``b`` agree with the
    following side (the truth, relations.edges): a follower entry without
    its follow goes, a follow without its follower entry gets one; each
    side's counter with it (edge_set.lua). Idempotent."""
    await edges.resync(store, edges.follow_edge(a, b))


async def is_following(store: Store, a, b) -> bool:
    a, b = validate.an_id(a, "user_id"), validate.an_id(b, "target_id")
    return await store.zscore(keys.following(a), b) is not None


async def following_ids(store: Store, uid) -> frozenset[int]:
    """Every user ``uid`` follows (a stream's home filter)."""
    uid = validate.an_id(uid, "user_id")
    return frozenset(int(i) for i in await store.zrange(keys.following(uid), 0, -1))


async def _page(store: Store, key: str, max_score, limit) -> list[tuple[int, int]]:
    limit = validate.page_limit(limit)
    top = f"({int(max_score)}" if max_score else "+inf"
    rows = await store.zrevrangebyscore(key, top, "-inf", start=0, num=limit, withscores=True)
    return [(int(m), int(s)) for m, s in rows]


async def followers(
    store: Store, uid, *, max_score=None, limit=None
) -> tuple[list[User], int | None]:
    """Followers, newest follow first, and the cursor for the next page."""
    uid = validate.an_id(uid, "user_id")
    rows = await _page(store, keys.followers(uid), max_score, limit)
    return await get_users(store, [m for m, _ in rows]), (rows[-1][1] if rows else None)


async def following(
    store: Store, uid, *, max_score=None, limit=None
) -> tuple[list[User], int | None]:
    uid = validate.an_id(uid, "user_id")
    rows = await _page(store, keys.following(uid), max_score, limit)
    return await get_users(store, [m for m, _ in rows]), (rows[-1][1] if rows else None)


async def familiar_followers(
    store: Store, viewer: int, targets: list[int], also: Callable[[int], str] | None = None
) -> dict[int, list[int]]:
    """For each of ``targets``: the accounts ``viewer`` follows that follow
    it, newest follow of the viewer's first (Mastodon's familiar
    followers), among the viewer's limits.FAMILIAR_FOLLOWERS_SCAN newest
    follows, at most limits.FAMILIAR_FOLLOWERS_MAX each. ``also``: the key
    of a target's other followers' set (a local account's remote followers,
    kept apart by redpoll.federation), looked in too. Two round trips: the
    viewer's follows, then one ZMSCORE per target and set on its own slot."""
    followed = [
        int(m)
        for m in await store.zrevrange(
            keys.following(viewer), 0, limits.FAMILIAR_FOLLOWERS_SCAN - 1
        )
    ]
    if not followed or not targets:
        return {t: [] for t in targets}
    sets = [keys.followers] + ([also] if also is not None else [])
    replies = await store.batch([("ZMSCORE", key(t), *followed) for t in targets for key in sets])
    out: dict[int, list[int]] = {}
    for at, t in enumerate(targets):
        found = replies[at * len(sets) : (at + 1) * len(sets)]
        out[t] = [
            f
            for i, f in enumerate(followed)
            if f != t and any(scores[i] is not None for scores in found)
        ][: limits.FAMILIAR_FOLLOWERS_MAX]
    return out


async def set_show_reblogs(store: Store, uid: int, target: int, show: bool) -> None:
    """``follow(reblogs=...)``: whether ``target``'s boosts reach uid's home
    (one SET on uid's slot, a fact of the home rule: redpoll.timelines.home_rule)."""
    if show:
        await store.srem(keys.hidden_reblogs(uid), target)
    else:
        await store.sadd(keys.hidden_reblogs(uid), target)


async def shows_reblogs(store: Store, uid: int, target: int) -> bool:
    return not await store.sismember(keys.hidden_reblogs(uid), target)
