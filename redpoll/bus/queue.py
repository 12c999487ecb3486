"""Deferred work on Redis Streams consumer groups (see docs/decisions.md).

At-least-once: an entry stays pending until its handler finishes; a worker
that dies leaves it pending and another worker claims it (XAUTOCLAIM) once it
has been idle ``job_claim_ms``. Handlers are idempotent, so running twice is
harmless. A chained job (fan-out batch N+1) is queued in the same atomic step
that finishes batch N (``job_next.lua``), on the same stream, and that step
also counts what the job did (``stats:{shard}``), exactly once.

Jobs are small typed records, one class per kind, each with its own time
limit and retry budget; on the wire an entry's one field ``j`` holds the
record as JSON, ``{"kind": ..., <its fields by name>}``. A kind lives in
the feature it belongs to: its record in the package's ``jobs.py`` (a
subclass of :class:`Job` naming its ``kind`` registers itself in
:data:`KINDS`), its handler in the package's ``handlers.py``, whose
``TABLE`` the worker merges (redpoll.engine.worker). A record whose handler
needs a package above the one that queues it lives in the lower package
(the push of a notification: redpoll.notifications.jobs.PushJob, handled
by redpoll.push.handlers).

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
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from redis.exceptions import ResponseError

from ..core import keys, limits
from ..core.errors import QueueFull
from ..core.settings import Settings
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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if not kind:
            return  # a base of kinds (StatusJob)
        known = KINDS.get(kind)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise TypeError(f"job kind {kind!r} is declared by {known!r} already")
        KINDS[kind] = cls

    def check(self) -> None:
        """Refuse (MalformedJob) a decoded record whose fields' values its
        types do not say; a kind adds its own rules."""

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


#: Every kind by its name, filled as the features' jobs modules are imported
#: (the worker imports them all: redpoll.engine.worker).
KINDS: dict[str, type[Job]] = {}


@dataclass(frozen=True)
class StatusJob(Job):
    sid: int
    author: int

    def subject(self) -> str:
        return f"status:{self.sid}"


class MalformedJob(ValueError):
    pass


@dataclass(frozen=True)
class Done:
    """What a finished job leaves: its continuation, and what to count."""

    next: Job | None = None
    count: str = ""


#: A kind's handler: (store, settings, the job, its stream entry's id) -> Done.
#: Each is thin and safe to run twice; a status or user that has vanished
#: means its job has nothing left to do and succeeds.
Handler = Callable[[Store, Settings, Any, bytes], Awaitable[Done]]


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
    """The job of a stream entry; MalformedJob if it is not one: an unknown
    kind, unknown fields, or a field whose value its type does not allow
    (an ``int`` field holds an integer, a ``tuple[int, ...]`` integers)."""
    try:
        data = json.loads(fields[b"j"])
        if isinstance(data, dict) and "t" in data and "kind" not in data:
            data = _from_old_format(data)
        cls = KINDS[data.pop("kind")]
        types = {f.name: f.type for f in dataclasses.fields(cls)}
        if set(data) - set(types):
            raise MalformedJob(f"unknown fields {sorted(set(data) - set(types))}")
        for name, value in data.items():
            kind = types[name]
            if kind == "int" and type(value) is not int:
                raise MalformedJob(f"{name} must be an integer")
            if str(kind).startswith("tuple[") and isinstance(value, list):  # JSON has no tuples
                if kind == "tuple[int, ...]" and any(type(v) is not int for v in value):
                    raise MalformedJob(f"{name} must be integers")
                data[name] = tuple(value)
        job = cls(**data)
        job.check()
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
