"""A Move: a remote account moved to another (Mastodon's Move and MoveWorker).

The inbox takes a Move (inbox._move) only from the old account itself, to
another account, not of this server, not on a suspended domain, whose actor
(fetched now) names the old one in ``alsoKnownAs``. :func:`accept` records
it (fed_move.lua, atomic: the old record's ``moved`` and new revision, the
actor's ``moved_to`` and the Move's claim) and queues its job; only the
first Move of an account in limits.FED_MOVE_COOLDOWN_S does (the same Move
retried does it again, idempotently; another does nothing).

The job (jobs.MoveJob) walks three sets of the old account, at most
limits.FED_MOVE_BATCH members a step, from a cursor (the score of the last
one done), each step queueing the next (job_next.lua):

- ``blocks``: a local account that blocks the old one blocks the new one
  (its server is sent the Block), unless it follows the new one.
- ``mutes``: one that mutes it mutes the new one with the same terms (what
  is left of its time, its notifications), unless it mutes or follows it.
- ``follows``: a local follower follows the new account with the old
  follow's options (boosts shown, notify; a locked account gets a follow
  request, as any follow of a remote account here), its server is sent the
  Follow, the new account joins the follower's lists that held the old one,
  the old server is sent the Undo of the Follow, and the follow of the old
  account ends, last. A follower that blocks the new account, or whom it
  blocks, is left as it was (still following the old one), as Mastodon.

Every step is idempotent, so the job is retried and a run cut short at any
await is finished by the next run: a follow, list membership, block or mute
already there changes nothing (follow options are set to the same), an
activity sent again is taken again there, to the same effect (a Follow, a
Block, an Undo finding no follow to end), and the follow of the old account, whose
end takes the follower out of the walk, ends last (follows.unfollow,
journaled itself)."""

from __future__ import annotations

import dataclasses
import logging

from ..bus.queue import JobQueue
from ..core import keys as core_keys
from ..core import limits
from ..core.errors import Forbidden, RedpollError, UserNotFound, ValidationError
from ..core.models import User, now_ms
from ..core.settings import Settings
from ..lists import lists
from ..notifications import notifications
from ..records import users
from ..relations import follows, relations, relationship
from ..storage.store import Store
from . import followers, keys, outbox
from .jobs import MoveJob

log = logging.getLogger("redpoll.federation")

PHASES = MoveJob.PHASES


async def accept(store: Store, queue: JobQueue, old: User, new: User, move_id: str) -> bool:
    """Record that ``old`` moved to ``new`` and queue the job that carries
    its local followers, blocks and mutes over; False (nothing done) if
    another Move of ``old`` was taken within limits.FED_MOVE_COOLDOWN_S.
    The record and the claim are one script (atomic); the job is queued
    after it, so a run cut short in between is finished by the same Move's
    retry (the claim is its own: recorded again, queued)."""
    if not await store.run(
        "fed_move",
        [core_keys.user(old.id), keys.actor(old.id), keys.move_claim(old.id)],
        [new.id, move_id, limits.FED_MOVE_COOLDOWN_S],
    ):
        return False
    await queue.enqueue(MoveJob(old.id, new.id))
    return True


def _walked(phase: str, old: int) -> str:
    return {
        "blocks": core_keys.blocked_by(old),
        "mutes": core_keys.muted_by(old),
        "follows": core_keys.followers(old),
    }[phase]


async def step(
    store: Store,
    queue: JobQueue,
    settings: Settings,
    job: MoveJob,
    batch: int = limits.FED_MOVE_BATCH,
) -> MoveJob | None:
    """One step of a Move's job: the next ``batch`` members of its phase's
    set after its cursor, each carried over (idempotent); the job for the
    next step, or None when the Move is done."""
    rows = await store.zrangebyscore(
        _walked(job.phase, job.old), f"({job.after}", "+inf", start=0, num=batch, withscores=True
    )
    carry = {"blocks": _block, "mutes": _mute, "follows": _follow}[job.phase]
    for member, _ in rows:
        try:
            local = await users.get_user(store, int(member))
        except UserNotFound:
            continue  # gone meanwhile
        if local.remote or local.id == job.new:
            continue
        await carry(store, queue, settings, local.id, job.old, job.new)
    if len(rows) == batch:
        return dataclasses.replace(job, after=int(rows[-1][1]))
    following = PHASES.index(job.phase) + 1
    return MoveJob(job.old, job.new, PHASES[following]) if following < len(PHASES) else None


async def _block(
    store: Store, queue: JobQueue, settings: Settings, uid: int, old: int, new: int
) -> None:
    """``uid`` blocks ``old``: it blocks ``new`` too, unless it follows it.
    Its server is sent the Block before the block here,
    so a run that finds the block done has sent it; the new account's
    follow of ``uid`` ends after (idempotent)."""
    if await follows.is_following(store, uid, new):
        return
    blocking, count = await store.batch(
        [("ZSCORE", core_keys.blocking(uid), new), ("ZCARD", core_keys.blocking(uid))]
    )
    if blocking is None:
        if count >= limits.BLOCKS_MAX:
            return  # no room for it: nothing sent either
        await outbox.follow(store, queue, settings, uid, new, True, kind="Block")
        await relations.block(store, queue, uid, new)  # journaled, idempotent
    await followers.end_remote_follow(store, uid, new)


async def _mute(
    store: Store, queue: JobQueue, settings: Settings, uid: int, old: int, new: int
) -> None:
    """``uid`` mutes ``old`` (its terms decide: the index may name a mute
    since lifted): it mutes ``new`` with what is left of the same terms,
    unless it mutes or follows it already (one MULTI: idempotent)."""
    terms, muting = await store.batch(
        [("HGET", core_keys.mute_terms(uid), old), ("ZSCORE", core_keys.muting(uid), new)]
    )
    mute = relations.Mute.parse(terms)
    if (
        mute is None
        or not mute.active(now_ms())
        or muting is not None
        or await follows.is_following(store, uid, new)
    ):
        return
    left = 0 if not mute.expires_at else max(1, (mute.expires_at - now_ms() + 999) // 1000)
    try:
        await relations.mute(store, uid, new, left, mute.notifications)
    except ValidationError as exc:  # at the most mutes
        log.info("mute of %s not carried to %s for %s: %s", old, new, uid, exc)


async def _follow(
    store: Store, queue: JobQueue, settings: Settings, uid: int, old: int, new: int
) -> None:
    """Follower ``uid`` of ``old`` follows ``new`` instead (see the module)."""
    if await relations.blocks_between(store, uid, new):
        return  # as Mastodon: not made to follow it, and left following the old one
    reblogs = await follows.shows_reblogs(store, uid, old)
    notify = await notifications.notifies(store, uid, old)
    try:  # a follow, or a request to a locked account; again: the same options
        await relationship.follow(store, queue, uid, new, reblogs, notify)
    except (Forbidden, ValidationError) as exc:  # blocked meanwhile; too many requests
        log.info("follower %s of %s not moved to %s: %s", uid, old, new, exc)
        return
    await outbox.follow(
        store, queue, settings, uid, new, True
    )  # (sent again: the same follow there)
    owned = await lists.get_lists(store, uid)  # (at most limits.LISTS_PER_USER: one batch)
    held = (
        await store.batch([("ZSCORE", core_keys.list_members(uid, item.id), old) for item in owned])
        if owned
        else []
    )
    for item, score in zip(owned, held):
        if score is not None:
            try:
                await lists.add_member(store, uid, item.id, new)
            except RedpollError as exc:  # the list went meanwhile
                log.info("list %s of %s not given %s: %s", item.id, uid, new, exc)
    await outbox.follow(store, queue, settings, uid, old, False)  # the Undo, before the end
    await follows.unfollow(store, queue, uid, old)  # last: out of the walk (journaled)
