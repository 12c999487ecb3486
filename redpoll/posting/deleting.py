"""Deleting a status, by its poster only: its record, its profile entry and
its count go at once; its id leaves the home and list timelines it was
delivered to as it was sent out, in batches.

All or nothing, by a journal as posting is: after the owner check (a read),
the delete is queued as a held job (``jobs.DeleteJob``, one atomic step);
the call runs its first step (:func:`apply_delete`) and hands the cleanup of
follower and list timelines on to a chain of jobs. Cut short before the
journal exists, the status is untouched; after, a worker replays the journal
(every step idempotent) and the status ends fully deleted.

The status hash becomes a tombstone in the first step (delete_mark.lua): it
vanishes from every read at once, and a late replay of its post journal
finds the tombstone and stops. The delete is counted once, by the journal
whose entry id marked the status, in the step that finishes it.
"""

from __future__ import annotations

from ..bus import events
from ..bus.queue import JobQueue
from ..conversations import conversation
from ..conversations.jobs import IndexJob
from ..core import keys, limits, validate
from ..core.errors import Forbidden, StatusNotFound
from ..core.models import Status, now_ms
from ..media import uploads
from ..notifications import notifications
from ..polls import polls
from ..quotes import quotes
from ..records import writes
from ..storage.store import Store
from ..timelines import placement
from ..timelines.jobs import CleanupJob
from .jobs import DeleteJob


async def delete_status(store: Store, queue: JobQueue, sid, by_user) -> None:
    """Delete a status as its author. A status already marked deleted is
    not found: its delete journal finishes that delete."""
    sid = validate.an_id(sid, "status_id")
    by_user = validate.an_id(by_user, "user_id")
    raw = await store.hgetall(keys.status(sid))
    if not raw or b"deleted" in raw:
        raise StatusNotFound(f"status {sid} does not exist")
    if raw.get(b"uid") != str(by_user).encode():
        raise Forbidden(f"status {sid} belongs to another user")
    snapshot = {k.decode(): v.decode() for k, v in raw.items()}
    job = DeleteJob(sid=sid, author=by_user, snapshot=snapshot)
    held = await queue.hold(job)  # from here on, the delete happens in full
    cleanup, mine = await apply_delete(store, job, held.entry_id)
    await queue.release(held, cleanup, count="deleted" if mine else "")


async def apply_delete(
    store: Store, job: DeleteJob, marker: bytes | str
) -> tuple[CleanupJob | None, bool]:
    """The journal's first step (idempotent): mark the status (a tombstone),
    uncount it and take it out of the author's profile and home and the
    public timeline, publish the delete event. Returns the cleanup job and
    whether this journal (``marker``, its entry id) marked the status."""
    try:
        mine, author = await writes.of(store).mark_deleted(job.sid, job.author, marker)
    except StatusNotFound:
        return None, False  # no such status (its tombstone expired): nothing left to do
    author = int(author)
    now = now_ms()
    await store.run(
        "delete_own",
        [
            keys.profile(author),
            keys.home(author),
            keys.user(author),
            keys.deleted_by(author),
            keys.ruled_posts(author),
        ],
        [job.sid, now, now - limits.DELETED_TOMBSTONE_S * 1000],
    )
    # out of full-text search: a job for now, in the due set (a worker moves it onto its stream
    # within limits.DUE_JOBS_POLL_S; queued again before that, it stays one)
    await JobQueue(store).enqueue_at(IndexJob(job.sid, author), now_ms())
    timelines = placement.of(store)
    await timelines.undeliver(job.sid, [timelines.public_key(job.sid)])
    # out of its thread, hashtags and the mentioned's homes (idempotent)
    status = Status.from_hash(job.snapshot)
    await conversation.after_delete(store, status)
    if status.reblog_of:  # a boost: its count, flag, notification go
        await forget_boost(store, status)
    else:  # an original: its boosts go with it, and its uploads (records now, files by a job)
        await remove_boosts_of(store, JobQueue(store), job.sid)
        await uploads.forget_status(store, JobQueue(store), status)
        await polls.forget(store, JobQueue(store), status)  # its votes, its end's job
        await quotes.forget(store, status)  # its quote of another, its own quotes (idempotent)
    # its history (redpoll.posting.editing), after its uploads were read from it: those
    # an edit dropped are listed there only
    await store.delete(keys.status_edits(job.sid))
    if mine:
        await events.publish(store, events.delete_event(Status.from_hash(job.snapshot)))
    return CleanupJob(job.sid, author), bool(mine)


#: the notification kind of a boost (redpoll.posting.boosts)
BOOST_KIND = "reblog"


async def record_reblog(
    store: Store, uid: int, orig: int, op: int, on: bool, bid: int = 0
) -> tuple[int, int, int]:
    """A boost (``on``) or its undo as operation ``op``, in the three records
    it changes: the truth on the original's slot (reblog_status.lua), the
    booster's index (favourite_user.lua) and the author's notification.
    Each step is idempotent and versioned, so a replay or a race ends at
    the last operation applied. Returns (state, version, standing boost id);
    StatusNotFound (nothing written) for a missing original when boosting."""
    try:
        state, version, standing, author, _ = await store.run(
            "reblog_status",
            [
                keys.status(orig),
                keys.reblogged_by(orig),
                keys.reblog_versions(orig),
                keys.status_counts(orig),
                keys.versions_undone(keys.reblog_versions(orig)),
            ],
            [uid, op, "1" if on else "0", bid, limits.VERSIONS_UNDONE_KEPT],
        )
    except StatusNotFound:  # the script's NOTFOUND (errors.SCRIPT_ERRORS)
        raise StatusNotFound(f"status {orig} does not exist") from None
    await store.run(
        "favourite_user",
        [
            keys.reblogs(uid),
            keys.reblog_applied(uid),
            keys.versions_undone(keys.reblog_applied(uid)),
        ],
        [orig, state, version, standing, limits.VERSIONS_UNDONE_KEPT],
    )
    if author:
        await notifications.apply(
            store, int(author), BOOST_KIND, uid, orig, int(version), bool(state), status=orig
        )
    return state, version, standing


async def forget_boost(store: Store, boost: Status) -> None:
    """A boost status is being deleted: take it out of its original's
    boosters and count, the booster's flag and the author's notification
    (idempotent; versioned like any unboost)."""
    op = await store.incr(keys.INTERACTION_SEQ)
    await record_reblog(store, boost.user_id, boost.reblog_of, op, False)


async def remove_boosts_of(store: Store, queue: JobQueue, sid: int) -> None:
    """An original is being deleted: delete every boost of it (bounded)."""
    rows = await store.zrange(
        keys.reblogged_by(sid), 0, limits.BOOSTS_REMOVED_PER_DELETE - 1, withscores=True
    )
    for uid, bid in rows:
        try:
            await delete_status(store, queue, int(bid), int(uid))
        except StatusNotFound:
            pass  # deleted already
