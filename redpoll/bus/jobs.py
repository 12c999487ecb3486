"""Deferred work on Redis Streams consumer groups (see docs/decisions.md).

At-least-once: an entry stays pending until its handler finishes; a worker
that dies leaves it pending and another worker claims it (XAUTOCLAIM) once it
has been idle ``job_claim_ms``. Handlers are idempotent, so running twice is
harmless. A chained job (fan-out batch N+1) is queued in the same atomic step
that finishes batch N (``job_next.lua``), on the same stream, and that step
also counts what the job did (``stats:{shard}``), exactly once.

Jobs are small typed records, one class per kind, each with its own time
limit and retry budget; on the wire an entry's one field ``j`` holds the
record as JSON, ``{"kind": ..., <its fields by name>}``.

A *journal* is a job queued before the work it describes and held by its
producer (``JobQueue.hold``): posting and deleting queue theirs first, then
do the work in the call; if the call is cut short, a worker replays the
journal after ``job_claim_ms`` and finishes the effect (every step of the
replay is idempotent).
"""

from __future__ import annotations

import dataclasses
import json
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from redis.exceptions import ResponseError

from ..core import keys, limits
from ..core.errors import QueueFull
from ..storage.store import Store

#: Consumer name under which producers hold the jobs they run themselves.
HOLDER = "producer"


@dataclass(frozen=True)
class Job:
    """One kind of deferred work. Subclasses name their ``kind`` and may set
    their own ``time_limit_s`` (one run), ``max_attempts`` (runs before
    the job is parked in keys.DEAD_JOBS) and ``lane``: "local" (the
    default) or "ingress", for work done for other servers' requests,
    which runs on shards and worker slots of its own (keys.lane_shards)."""

    kind: ClassVar[str] = ""
    time_limit_s: ClassVar[float] = 60.0
    max_attempts: ClassVar[int] = limits.JOB_MAX_ATTEMPTS
    lane: ClassVar[str] = "local"

    def shard(self) -> int:
        """Jobs of one lane about one thing (a status, a user) use the same
        shard of the lane."""
        shards = keys.lane_shards(self.lane)
        return shards[zlib.crc32(self.subject().encode()) % len(shards)]

    def subject(self) -> str:
        raise NotImplementedError

    def to_json(self) -> str:
        # the fields as they are (vars: the instance's fields, no ClassVars):
        # they hold plain values, so asdict's deep copy only cost time (~20
        # µs a job, twice a follow)
        return json.dumps({"kind": self.kind, **vars(self)}, separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True)
class StatusJob(Job):
    sid: int
    author: int

    def subject(self) -> str:
        return f"status:{self.sid}"


@dataclass(frozen=True)
class PostJob(StatusJob):
    """The journal of a post: the status's record, written by its first run
    (posting.apply_post), which also delivers the first batch."""

    kind: ClassVar[str] = "post"
    record: dict = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class EditJob(StatusJob):
    """The journal of an edit (posting.editing): the status as it was and as
    the edit makes it (Status.to_hash) and when the edit was made (its
    ``edited_at``). Its first run is the call itself; a replay does what
    follows the edit if, and only if, the record holds this edit."""

    kind: ClassVar[str] = "edit"
    old: dict = dataclasses.field(default_factory=dict)
    new: dict = dataclasses.field(default_factory=dict)
    at: int = 0


@dataclass(frozen=True)
class DeleteJob(StatusJob):
    """The journal of a delete; ``snapshot`` is the status's hash as it was
    (for the delete event)."""

    kind: ClassVar[str] = "delete"
    snapshot: dict = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class FanoutJob(StatusJob):
    """Deliver a status to the next batch of targets after ``after``;
    ``listed`` False for an unlisted status (kept off the public timeline)."""

    kind: ClassVar[str] = "fanout"
    phase: str = "home"
    after: int = 0
    listed: bool = True
    #: a reply: only followers who also follow this account get it
    #: (Status.replies_to_other)
    only_following: int | None = None
    #: a boost of this status (boosts.py): the homes that take it (the home
    #: rule) get it through deliver_boost.lua
    boost_of: int | None = None
    #: the status's visibility (redpoll.relations.visibility): who the fan-out reaches
    audience: str = "public"


@dataclass(frozen=True)
class PollEndJob(StatusJob):
    """A poll's end (redpoll.polls), queued for its time (``at``, ms) with
    ``JobQueue.enqueue_at``: its voters and author get a ``poll``
    notification. ``gen``: the generation of its options; a job whose poll
    was edited (another time or generation) or deleted meanwhile does
    nothing."""

    kind: ClassVar[str] = "poll_end"
    time_limit_s: ClassVar[float] = 300.0
    gen: int = 0
    at: int = 0


@dataclass(frozen=True)
class PollUpdateJob(StatusJob):
    """Tell other servers a local poll's counts (redpoll.federation: an
    Update of its Question), queued with ``JobQueue.enqueue_at`` for the
    end of the window ``at`` (ms) a vote fell in: the votes of one window
    make one Update (the same job queued again is one entry)."""

    kind: ClassVar[str] = "poll_update"
    at: int = 0


@dataclass(frozen=True)
class PollVoteJob(StatusJob):
    """The journal of local account ``uid``'s vote in the poll of status
    ``sid`` while federation is on: held before the vote, released after
    what follows it for other servers (redpoll.federation.outbox.after_vote:
    the vote sent to the poll's server, or the poll's next Update queued),
    which a worker does if the call was cut short (idempotent: it sends
    what the votes hash holds, under the same activity ids)."""

    kind: ClassVar[str] = "poll_vote"
    uid: int = 0


@dataclass(frozen=True)
class CleanupJob(StatusJob):
    """Take a deleted status out of the next batch of targets."""

    kind: ClassVar[str] = "cleanup"
    phase: str = "home"
    after: int = 0


@dataclass(frozen=True)
class RefillJob(Job):
    """Refill a home (``lid`` None) or a list timeline after an unfollow."""

    kind: ClassVar[str] = "refill"
    time_limit_s: ClassVar[float] = 120.0
    uid: int
    lid: int | None = None

    def subject(self) -> str:
        return f"user:{self.uid}" if self.lid is None else f"list:{self.uid}:{self.lid}"


@dataclass(frozen=True)
class FavouriteJob(Job):
    """The journal of a favourite (``on``) or unfavourite (favourites.py),
    ordered by its operation id ``op``."""

    kind: ClassVar[str] = "favourite"
    uid: int
    sid: int
    op: int
    on: bool

    def subject(self) -> str:
        return f"status:{self.sid}"


@dataclass(frozen=True)
class FollowNoteJob(Job):
    """The journal of a follow or unfollow's notification (follows.py).
    ``since``: queued with the follow's change in one round trip, before
    the call knows whether the follow is new: the worker syncs only if the
    follow's score is at least ``since`` (the score the call wrote, so the
    follow is this call's or a later one's); 0 (a journal taken over, an
    unfollow): always."""

    kind: ClassVar[str] = "follow_note"
    uid: int
    target: int
    since: int = 0

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class BlockJob(Job):
    """The journal of a block (relations.py): both sides' block sets, then
    the follows both ways undone; every step idempotent, replayed whole."""

    kind: ClassVar[str] = "block"
    uid: int
    target: int
    op: int

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class TagFollowJob(Job):
    """The journal of following or unfollowing a hashtag (tags.py)."""

    kind: ClassVar[str] = "tag_follow"
    uid: int
    tag: str

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class BoostJob(Job):
    """The journal of a boost (boosts.py): ``bid`` the boost status's id,
    ``op`` the operation id, ``at`` its time, ``login`` the booster's."""

    kind: ClassVar[str] = "boost"
    uid: int
    sid: int
    op: int
    bid: int
    login: str
    at: int

    def subject(self) -> str:
        return f"status:{self.sid}"


@dataclass(frozen=True)
class SignUpJob(Job):
    """The journal of a sign-up (users.py), held from the id's draw to the
    user's record: released with the user counted; if its caller died, a
    worker settles it (account.settle_sign_up): counted if the user was
    written, else made void and the login freed."""

    kind: ClassVar[str] = "sign_up"
    uid: int
    login: str

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class PurgeAccountJob(Job):
    """The journal of an account's purge (moderation.purge_account): every
    step idempotent, replayed whole; released with the account counted out
    of the users, once (held with a claim, job_hold_once.lua)."""

    kind: ClassVar[str] = "purge_account"
    uid: int
    login: str

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class MediaJob(Job):
    """The journal of an upload (redpoll.media.uploads), held from before
    its record is written until it is ready: if its producer dies, a worker
    settles it: a finished upload stays, an unfinished one is given up (its
    record a tombstone, its files deleted)."""

    kind: ClassVar[str] = "media"
    owner: int
    mid: int

    def subject(self) -> str:
        return f"user:{self.owner}"


@dataclass(frozen=True)
class ProfileImageJob(Job):
    """The journal of a new avatar or header (redpoll.media.profile_images):
    ``files`` the new stored names, ``old`` those it replaces (space-separated).
    Settled by a worker if its producer died: of both, the files the user
    record does not name are deleted."""

    kind: ClassVar[str] = "profile_image"
    uid: int
    image: str
    files: str
    old: str = ""

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class MediaFilesJob(Job):
    """Delete stored media files whose records are gone (a deleted status,
    a replaced avatar, a purged account); idempotent."""

    kind: ClassVar[str] = "media_files"
    owner: int
    names: tuple[str, ...] = ()

    def subject(self) -> str:
        return f"user:{self.owner}"


@dataclass(frozen=True)
class MediaSweepJob(Job):
    """Remove uploads never attached to a status once they are
    limits.MEDIA_UNATTACHED_TTL_S old, as of ``now`` (ms; 0: the clock)."""

    kind: ClassVar[str] = "media_sweep"
    time_limit_s: ClassVar[float] = 300.0
    now: int = 0

    def subject(self) -> str:
        return "media:sweep"


@dataclass(frozen=True)
class ScheduledStatusJob(Job):
    """Post the scheduled status ``id`` of ``uid`` (redpoll.scheduling),
    queued for its time (JobQueue.enqueue_at; the same record at any time,
    so moving the time is one ZADD). ``media``: the uploads held for it,
    released by a run that finds the scheduled status gone."""

    kind: ClassVar[str] = "scheduled_status"
    uid: int
    id: int
    media: tuple[int, ...] = ()

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class InboxJob(Job):
    """An activity another server sent (redpoll.federation.inbox), its
    signature checked: ``uid`` is the signer's account, ``activity`` the
    body as received. In the ingress lane."""

    kind: ClassVar[str] = "inbox"
    lane: ClassVar[str] = "ingress"
    uid: int
    activity: str

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class MoveJob(Job):
    """Remote account ``old`` moved to ``new`` (redpoll.federation.moves):
    one step of carrying its local blockers, muters and followers over, in
    ``phase`` ("blocks", "mutes", "follows") after the score ``after`` of
    the last one done; each step queues the next (job_next.lua)."""

    kind: ClassVar[str] = "move"
    time_limit_s: ClassVar[float] = 300.0
    #: the phases in their order
    PHASES: ClassVar[tuple[str, ...]] = ("blocks", "mutes", "follows")
    old: int
    new: int
    phase: str = "blocks"
    after: int = 0

    def subject(self) -> str:
        return f"user:{self.old}"


@dataclass(frozen=True)
class DeliverJob(Job):
    """POST ``body`` (an activity) to ``inbox``, signed by local account
    ``sender`` (0: the server's actor); ``attempt`` counts tries before
    (redpoll.federation.delivery)."""

    kind: ClassVar[str] = "deliver"
    time_limit_s: ClassVar[float] = 30.0
    max_attempts: ClassVar[int] = 3  # its own retries are jobs for later
    sender: int
    inbox: str
    body: str
    attempt: int = 0

    def subject(self) -> str:
        return f"inbox:{self.inbox}"


@dataclass(frozen=True)
class PushJob(Job):
    """Send notification ``nid`` of ``uid`` to their Web Push subscriptions
    (redpoll.push.delivery), deciding at send time whether each gets it;
    ``sub`` names the one subscription (its token digest) a retry is for
    ('' for all), ``attempt`` counts the tries before."""

    kind: ClassVar[str] = "push"
    time_limit_s: ClassVar[float] = 60.0
    max_attempts: ClassVar[int] = 3  # its own retries are jobs for later
    uid: int
    nid: int
    sub: str = ""
    attempt: int = 0

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class ContextJob(Job):
    """Fetch the thread of remote status ``sid`` from its server
    (redpoll.federation.threads). In the ingress lane."""

    kind: ClassVar[str] = "context"
    lane: ClassVar[str] = "ingress"
    sid: int

    def subject(self) -> str:
        return f"status:{self.sid}"


@dataclass(frozen=True)
class DomainBlockJob(Job):
    """The journal of member ``uid``'s block of ``domain``
    (redpoll.federation.member_blocks): held while the block and its
    cleanup run in the call; replayed, the cleanup runs again (each of its
    steps idempotent), if the domain is blocked still."""

    kind: ClassVar[str] = "domain_block"
    time_limit_s: ClassVar[float] = 300.0
    uid: int
    domain: str

    def subject(self) -> str:
        return f"user:{self.uid}"


KINDS: dict[str, type[Job]] = {
    cls.kind: cls
    for cls in (
        PostJob,
        DeleteJob,
        FanoutJob,
        CleanupJob,
        RefillJob,
        FavouriteJob,
        FollowNoteJob,
        TagFollowJob,
        BoostJob,
        BlockJob,
        SignUpJob,
        PurgeAccountJob,
        MediaJob,
        ProfileImageJob,
        MediaFilesJob,
        MediaSweepJob,
        EditJob,
        InboxJob,
        DeliverJob,
        ScheduledStatusJob,
        PollEndJob,
        PushJob,
        ContextJob,
        PollUpdateJob,
        PollVoteJob,
        MoveJob,
        DomainBlockJob,
    )
}


class MalformedJob(ValueError):
    pass


class NotYet(Exception):
    """A handler's answer that its job cannot be decided yet: left pending
    and taken up again after job_claim_ms, not logged as a failure."""


def entry_ms(entry_id: bytes | str) -> int:
    """When a stream entry was added (the first part of its id)."""
    raw = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(raw.split("-", 1)[0])


def encode(job: Job) -> str:
    return job.to_json()


def decode(fields: dict) -> Job:
    """The job of a stream entry; MalformedJob if it is not one."""
    try:
        data = json.loads(fields[b"j"])
        if isinstance(data, dict) and "t" in data and "kind" not in data:
            data = _from_old_format(data)
        cls = KINDS[data.pop("kind")]
        names = {f.name: f.type for f in dataclasses.fields(cls)}
        if set(data) - set(names):
            raise MalformedJob(f"unknown fields {sorted(set(data) - set(names))}")
        job = cls(**data)
        for name in ("names", "media"):  # JSON has no tuples
            if isinstance(getattr(job, name, None), list):
                job = dataclasses.replace(job, **{name: tuple(getattr(job, name))})
        if isinstance(job, ScheduledStatusJob) and any(type(m) is not int for m in job.media):
            raise MalformedJob("media must be integers")
        if isinstance(job, MoveJob):  # (an EditJob's old and new are dicts)
            if type(job.old) is not int or type(job.new) is not int:
                raise MalformedJob("old and new must be integers")
            if job.phase not in MoveJob.PHASES:
                raise MalformedJob(f"phase must be one of {', '.join(MoveJob.PHASES)}")
        for name in (
            "sid",
            "author",
            "uid",
            "after",
            "op",
            "target",
            "bid",
            "since",
            "owner",
            "mid",
            "now",
            "sender",
            "attempt",
            "id",
            "gen",
            "at",
            "nid",
        ):
            if hasattr(job, name) and type(getattr(job, name)) is not int:
                raise MalformedJob(f"{name} must be an integer")
        return job
    except MalformedJob:
        raise
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise MalformedJob(repr(exc)) from None


#: The one-letter keys jobs had before they were typed records, so that
#: jobs queued by an older version still run after an upgrade.
_OLD_NAMES = {"t": "kind", "aid": "author", "ph": "phase", "cur": "after", "rt": "only_following"}


def _from_old_format(data: dict) -> dict:
    new = {_OLD_NAMES.get(k, k): v for k, v in data.items() if k != "unl"}
    if data.get("t") == "fanout":
        new["listed"] = not data.get("unl")
    if data.get("t") == "favourite":
        new["on"] = bool(data.get("on"))
    return new


def shard_of(job: Job) -> str:
    return keys.job_stream(job.shard())


async def add(store: Store, job: Job) -> str:
    """Queue ``job`` (one XADD) on a database whose groups exist (an engine
    made them when it opened; a worker that finds them gone makes them
    again, from the start of the stream): for a caller with no JobQueue."""
    entry = await store.xadd(shard_of(job), {"j": encode(job)})
    return entry.decode() if isinstance(entry, bytes) else entry


@dataclass(frozen=True)
class Held:
    """A job its producer is running itself (see ``JobQueue.hold``)."""

    stream: str  # the held stream the entry sits in
    entry_id: bytes
    next_stream: str  # where its continuation goes
    shard: int


@dataclass(frozen=True)
class Claimed:
    """JobQueue.hold_once found the key claimed already: by this entry."""

    value: bytes


class JobQueue:
    def __init__(self, store: Store):
        self.store = store
        self._depth_checked_at = 0.0
        self._groups_ready = False

    async def ensure_groups(self, force: bool = False) -> None:
        """Create the consumer groups (once per process, or again when a
        worker finds them gone, e.g. after the data was flushed)."""
        if self._groups_ready and not force:
            return
        for stream in keys.all_job_streams() + keys.all_held_job_streams():
            try:
                await self.store.xgroup_create(stream, keys.JOB_GROUP, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        self._groups_ready = True

    async def depth(self) -> int:
        """Jobs queued or running, over all shards."""
        pipe = self.store.pipeline()
        for stream in keys.all_job_streams() + keys.all_held_job_streams():
            pipe.xlen(stream)
        return sum(await pipe.execute())

    async def counts(self) -> dict[str, int]:
        """What finished jobs counted (job_next.lua), summed over shards."""
        pipe = self.store.pipeline()
        for shard in keys.job_shards():
            pipe.hgetall(keys.job_counts(shard))
        total: dict[str, int] = {}
        for raw in await pipe.execute():
            for name, value in raw.items():
                total[name.decode()] = total.get(name.decode(), 0) + int(value)
        return total

    async def check_capacity(self) -> None:
        """Refuse new work when the queue is full; checked at most once a second."""
        now = time.monotonic()
        if now - self._depth_checked_at < 1.0:
            return
        depth = await self.depth()
        if depth >= limits.QUEUE_MAX_JOBS:
            raise QueueFull(f"{depth} jobs are waiting; try again later")
        self._depth_checked_at = now

    async def enqueue(self, job: Job) -> str:
        await self.ensure_groups()
        return await add(self.store, job)

    # --- jobs for later -----------------------------------------------------------
    # A job queued for a time waits in its shard's due set (keys.due_jobs),
    # its JSON the member: queuing the same job again only moves its time, and
    # cancel removes it. Workers move due jobs onto the stream with
    # job_due.lua (atomic: queued once, however many workers look), so a job
    # for later runs at-least-once like any other, at most about
    # limits.DUE_JOBS_POLL_S after its time.

    @staticmethod
    def at_call(job: Job, due_ms: int) -> tuple:
        """:meth:`enqueue_at` as a Redis command (name, *args), for a caller
        that sends it in the transaction of its change."""
        return ("zadd", keys.due_jobs(job.shard()), {encode(job): int(due_ms)})

    async def enqueue_at(self, job: Job, due_ms: int) -> None:
        """Queue ``job`` to run at ``due_ms`` (ms since the epoch); again for
        the same job: at the new time."""
        await self.store.zadd(keys.due_jobs(job.shard()), {encode(job): int(due_ms)})

    async def cancel_at(self, job: Job) -> bool:
        """Take a job queued for later back; False if it was not waiting
        (already moved onto the stream, or never queued)."""
        return bool(await self.store.zrem(keys.due_jobs(job.shard()), encode(job)))

    async def due_at(self, job: Job) -> int | None:
        """When ``job`` is queued for (ms), or None if it is not waiting."""
        score = await self.store.zscore(keys.due_jobs(job.shard()), encode(job))
        return None if score is None else int(score)

    async def promote_due(self, now_ms: int | None = None) -> int:
        """Move every job due by ``now_ms`` (default: the clock) onto its
        shard's stream; how many moved."""
        now = int(time.time() * 1000) if now_ms is None else int(now_ms)
        moved = 0
        for shard in keys.job_shards():
            while True:
                n = int(
                    await self.store.run(
                        "job_due",
                        [keys.due_jobs(shard), keys.job_stream(shard)],
                        [now, limits.DUE_JOBS_PER_STEP],
                    )
                )
                moved += n
                if n < limits.DUE_JOBS_PER_STEP:
                    break
        return moved

    async def hold(self, job: Job) -> Held:
        """Queue ``job`` as already taken by this process, which then does the
        work and calls :meth:`release`. If this process dies first, a worker
        takes the job over after ``job_claim_ms`` (``job_hold.lua``)."""
        await self.ensure_groups()
        shard = job.shard()
        held = keys.held_job_stream(shard)
        entry = await self.store.run("job_hold", [held], [keys.JOB_GROUP, HOLDER, "j", encode(job)])
        return Held(held, entry, keys.job_stream(shard), shard)

    async def hold_after(self, job: Job, commands: Sequence[tuple]) -> tuple[Held, list]:
        """:meth:`hold`, in one round trip with a caller's ``commands`` (the
        reads it checks before its change), sent first: the held job and
        their replies. A caller whose checks fail releases the job at once."""
        await self.ensure_groups()
        shard = job.shard()
        held = keys.held_job_stream(shard)
        *replies, entry = await self.store.batch_run(
            commands, "job_hold", [held], [keys.JOB_GROUP, HOLDER, "j", encode(job)]
        )
        return Held(held, entry, keys.job_stream(shard), shard), replies

    async def hold_once(
        self, job: Job, shard: int, claim_key: str, claim_value: str, ttl_s: int
    ) -> Held | Claimed:
        """:meth:`hold` on ``shard``, and claim ``claim_key`` (same slot) in
        the same step (``job_hold_once.lua``); ``claim_value`` holds '%s'
        where the entry id goes. Claimed (the value found) if it was taken."""
        await self.ensure_groups()
        held = keys.held_job_stream(shard)
        won, value = await self.store.run(
            "job_hold_once",
            [held, claim_key],
            [keys.JOB_GROUP, HOLDER, claim_value, ttl_s, "j", encode(job)],
        )
        if not won:
            return Claimed(value)
        return Held(held, value, keys.job_stream(shard), shard)

    async def entry(self, stream: str, entry_id: bytes | str) -> Job | None:
        """The job of one entry still in ``stream``, or None (finished)."""
        rows = await self.store.xrange(stream, entry_id, entry_id)
        return decode(rows[0][1]) if rows else None

    async def release(self, held: Held, next_job: Job | None = None, count: str = "") -> None:
        await self.store.run(*self.release_call(held, next_job, count))

    @staticmethod
    def release_call(held: Held, next_job: Job | None = None, count: str = "") -> tuple:
        """:meth:`release` as a (name, keys, args) script call, for a caller
        that sends it in the round trip of its change (Store.run_many)."""
        return JobQueue.finish_call(held.stream, held.entry_id, held.shard, next_job, count)

    @staticmethod
    def finish_call(
        stream: str, entry_id: bytes, shard: int, next_job: Job | None = None, count: str = ""
    ) -> tuple:
        args: list[Any] = [keys.JOB_GROUP, entry_id, count]
        if next_job is not None:
            args += ["j", encode(next_job)]
        return ("job_next", [stream, keys.job_stream(shard), keys.job_counts(shard)], args)

    async def finish(
        self, stream: str, entry_id: bytes, shard: int, next_job: Job | None = None, count: str = ""
    ) -> None:
        """Acknowledge and delete an entry and, atomically and only if this
        call was the one that acknowledged it, count ``count`` and queue
        ``next_job`` (on the shard's stream)."""
        await self.store.run(*self.finish_call(stream, entry_id, shard, next_job, count))

    async def park(
        self, stream: str, entry_id: bytes, shard: int, fields: dict, reason: str
    ) -> None:
        """Move a job that keeps failing aside (idempotent: XADD then finish)."""
        await self.store.xadd(
            keys.DEAD_JOBS, {**fields, b"reason": reason.encode()}, maxlen=10_000, approximate=True
        )
        await self.finish(stream, entry_id, shard)

    async def pending(self) -> int:
        pipe = self.store.pipeline()
        for stream in keys.all_job_streams() + keys.all_held_job_streams():
            pipe.xpending(stream, keys.JOB_GROUP)
        total = 0
        for info in await pipe.execute():
            total += info["pending"] if isinstance(info, dict) else 0
        return total


@dataclass(frozen=True, slots=True)
class JobFigures:
    queued: int  # entries in the job streams (waiting or running)
    pending: int  # of those, taken by a worker and not yet acknowledged
    oldest_age_s: float  # age of the oldest of them; 0 when none
    parked: int  # jobs moved aside after too many failures


async def job_figures(store: Store) -> JobFigures:
    """One round trip (per node on a cluster): XLEN, XPENDING and the first
    entry of every job stream, and the parked jobs' stream length."""
    streams = keys.all_job_streams() + keys.all_held_job_streams()
    pipe = store.pipeline()
    for stream in streams:
        pipe.xlen(stream)
        pipe.xpending(stream, keys.JOB_GROUP)
        pipe.xrange(stream, count=1)
    pipe.xlen(keys.DEAD_JOBS)
    replies = await pipe.execute(raise_on_error=False)
    queued = pending = 0
    oldest_ms: int | None = None
    for i in range(len(streams)):
        length, info, first = replies[3 * i : 3 * i + 3]
        queued += length if isinstance(length, int) else 0
        if isinstance(info, dict):
            pending += info.get("pending", 0)
        if isinstance(first, list) and first:
            entry_id = first[0][0]
            ms = int((entry_id.decode() if isinstance(entry_id, bytes) else entry_id).split("-")[0])
            oldest_ms = ms if oldest_ms is None else min(oldest_ms, ms)
    age = 0.0 if oldest_ms is None else max(0.0, time.time() - oldest_ms / 1000)
    parked = replies[-1] if isinstance(replies[-1], int) else 0
    return JobFigures(queued, pending, round(age, 3), parked)
