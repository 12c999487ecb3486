"""Favourites: favourite / unfavourite a status.

Three records change, on three slots: who favourited the status and its
count (the truth, favourite_status.lua on the status's slot), the user's own
index (favourite_user.lua) and the author's ``favourite`` notification
(notify.lua). All or nothing by a journal: the action is first queued as a
held job (``JobQueue.hold``, one atomic step), the call then runs the steps
and releases it; cut short in between, a worker replays the journal. Every
step is idempotent and carries the operation's id, so a replay, or two
clicks racing, leave the three records agreeing with the last operation
applied to the truth.
"""

from __future__ import annotations

from ..bus.queue import JobQueue
from ..core import keys, limits, validate
from ..core.errors import StatusNotFound, ValidationError
from ..core.models import User
from ..instance import activity
from ..notifications import notifications
from ..records.users import get_users
from ..storage.store import Store
from ..trends import statuses as trend_statuses
from .jobs import FavouriteJob

KIND = "favourite"


async def set_favourite(store: Store, queue: JobQueue, uid, sid, on: bool) -> bool:
    """``uid`` favourites (``on``) or unfavourites status ``sid``; twice is
    still once. True if this call changed the status's favourites.
    StatusNotFound (nothing written) for a missing or deleted status when
    favouriting; unfavouriting one is allowed and cleans up."""
    uid = validate.an_id(uid, "user_id")
    sid = validate.an_id(sid, "status_id")
    if on:
        found, deleted = await store.hmget(keys.status(sid), ["id", "deleted"])
        if found is None or deleted is not None:
            raise StatusNotFound(f"status {sid} does not exist")
        # the user's bound (limits.FAVOURITES_MAX), checked before anything is
        # written: the truth is on the status's slot, the index on the user's,
        # so this check is not in the same step as the add; favourites of one
        # user racing each other may pass it by at most their number in flight
        count, mine = await store.batch(
            [("ZCARD", keys.favourites(uid)), ("ZSCORE", keys.favourites(uid), sid)]
        )
        if mine is None and int(count) >= limits.FAVOURITES_MAX:
            raise ValidationError("id", f"at most {limits.FAVOURITES_MAX} favourites")
    await queue.check_capacity()
    op = await store.incr(keys.INTERACTION_SEQ)
    job = FavouriteJob(uid, sid, op, bool(on))
    held = await queue.hold(job)
    try:
        changed = await apply(store, job)
    except StatusNotFound:
        await queue.release(held)  # deleted meanwhile: nothing was written
        raise
    await queue.release(held)
    return changed


async def apply(store: Store, job: FavouriteJob) -> bool:
    """The journal's steps, in order; idempotent (a replay after a crash).
    True if the truth changed in this run."""
    uid, sid, op, on = job.uid, job.sid, job.op, job.on
    try:
        state, version, fid, author, changed = await store.run(
            "favourite_status",
            [
                keys.status(sid),
                keys.favourited_by(sid),
                keys.favourite_versions(sid),
                keys.status_counts(sid),
                keys.versions_undone(keys.favourite_versions(sid)),
            ],
            [uid, op, "1" if on else "0", limits.VERSIONS_UNDONE_KEPT],
        )
    except StatusNotFound:  # the script's NOTFOUND (errors.SCRIPT_ERRORS)
        raise StatusNotFound(f"status {sid} does not exist") from None
    await store.run(
        "favourite_user",
        [
            keys.favourites(uid),
            keys.favourite_applied(uid),
            keys.versions_undone(keys.favourite_applied(uid)),
        ],
        [sid, state, version, fid, limits.VERSIONS_UNDONE_KEPT],
    )
    await trend_statuses.note(store, sid)  # among the trending candidates (idempotent)
    if on:  # the day's interactions (idempotent: once per account and status)
        await activity.count(store, "interactions", f"f{uid}:{sid}")
    if author:
        await notifications.apply(
            store, int(author), KIND, uid, sid, int(version), bool(state), status=sid
        )
    return bool(changed)


async def replay(store: Store, settings, job: FavouriteJob) -> None:
    """Worker handler: finish a journal whose call was cut short."""
    try:
        await apply(store, job)
    except StatusNotFound:
        pass  # the status was deleted: nothing to favourite any more
    return None


async def favourited_by(
    store: Store, sid, *, max_id=None, limit=None
) -> tuple[list[User], int | None]:
    """Who favourited a status, newest first, and the cursor (a favourite id)
    for the next page."""
    sid = validate.an_id(sid, "status_id")
    top = validate.optional_id(max_id, "max_id")
    size = validate.page_limit(limit, 40, 80)
    rows = await store.zrevrangebyscore(
        keys.favourited_by(sid),
        f"({top}" if top else "+inf",
        "-inf",
        start=0,
        num=size,
        withscores=True,
    )
    users = await get_users(store, [int(m) for m, _ in rows])
    return users, (int(rows[-1][1]) if rows else None)


async def favourites_page(
    store: Store, uid, *, max_id=None, min_id=None, since_id=None, limit=None
) -> list[tuple[int, int]]:
    """(status id, favourite id) of the user's favourites, newest favourite
    first, by favourite-id cursors (what the Link header carries)."""
    return await scored_page(
        store,
        keys.favourites(validate.an_id(uid, "user_id")),
        max_id=max_id,
        min_id=min_id,
        since_id=since_id,
        limit=limit,
    )


async def scored_page(
    store: Store, key: str, *, max_id=None, min_id=None, since_id=None, limit=None
) -> list[tuple[int, int]]:
    """(member, score) rows of a ZSET scored by id, newest first, by
    Mastodon's cursors on the score."""
    top = validate.optional_id(max_id, "max_id")
    low = validate.optional_id(min_id, "min_id")
    since = validate.optional_id(since_id, "since_id")
    size = validate.page_limit(limit)
    upper = f"({top}" if top else "+inf"
    if low:
        rows = await store.zrangebyscore(key, f"({low}", upper, start=0, num=size, withscores=True)
        rows.reverse()
    else:
        rows = await store.zrevrangebyscore(
            key, upper, f"({since}" if since else "-inf", start=0, num=size, withscores=True
        )
    return [(int(m), int(s)) for m, s in rows]
