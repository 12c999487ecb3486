"""Deferred work on Redis Streams consumer groups (see docs/decisions.md).

At-least-once: an entry stays pending until its handler finishes; a worker
that dies leaves it pending and another worker claims it (XAUTOCLAIM) once it
has been idle ``job_claim_ms``. Handlers are idempotent, so running twice is
harmless. A chained job (fan-out batch N+1) is queued in the same atomic step
that finishes batch N (``job_next.lua``), on the same stream.
"""
from __future__ import annotations

import json
import time
import zlib
from dataclasses import dataclass
from typing import Any

from redis.exceptions import ResponseError

from . import keys, limits
from .errors import QueueFull
from .store import Store

Job = dict[str, Any]

#: Consumer name under which producers hold the jobs they run themselves.
HOLDER = "producer"


def encode(job: Job) -> str:
    return json.dumps(job, separators=(",", ":"), sort_keys=True)


def decode(fields: dict) -> Job:
    return json.loads(fields[b"j"])


def shard_index(job: Job) -> int:
    """Jobs about one thing (a status, a user) always use the same shard."""
    basis = f"{job.get('sid', '')}:{job.get('uid', '')}:{job.get('lid', '')}"
    return zlib.crc32(basis.encode()) % limits.JOB_SHARDS


def shard_of(job: Job) -> str:
    return keys.job_stream(shard_index(job))


@dataclass(frozen=True)
class Held:
    """A job its producer is running itself (see ``JobQueue.hold``)."""
    stream: str      # the held stream the entry sits in
    entry_id: bytes
    next_stream: str  # where its continuation goes


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
                await self.store.client.xgroup_create(stream, keys.JOB_GROUP, id="0", mkstream=True)
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
        entry = await self.store.client.xadd(shard_of(job), {"j": encode(job)})
        return entry.decode() if isinstance(entry, bytes) else entry

    async def hold(self, job: Job) -> Held:
        """Queue ``job`` as already taken by this process, which then does the
        work and calls :meth:`release`. If this process dies first, a worker
        takes the job over after ``job_claim_ms`` (``job_hold.lua``)."""
        await self.ensure_groups()
        shard = shard_index(job)
        held = keys.held_job_stream(shard)
        entry = await self.store.run("job_hold", [held], [keys.JOB_GROUP, HOLDER, "j", encode(job)])
        return Held(held, entry, keys.job_stream(shard))

    async def release(self, held: Held, next_job: Job | None = None) -> None:
        await self.finish(held.stream, held.entry_id, next_job, held.next_stream)

    async def finish(self, stream: str, entry_id: bytes, next_job: Job | None = None,
                     next_stream: str | None = None) -> None:
        """Acknowledge and delete an entry and, atomically, queue ``next_job``
        (only if this call was the one that acknowledged it)."""
        args: list[Any] = [keys.JOB_GROUP, entry_id]
        if next_job is not None:
            args += ["j", encode(next_job)]
        await self.store.run("job_next", [stream, next_stream or stream], args)

    async def park(self, stream: str, entry_id: bytes, fields: dict, reason: str) -> None:
        """Move a job that keeps failing aside (idempotent: XADD then finish)."""
        await self.store.client.xadd(keys.DEAD_JOBS, {**fields, b"reason": reason.encode()},
                                     maxlen=10_000, approximate=True)
        await self.finish(stream, entry_id)

    async def pending(self) -> int:
        pipe = self.store.pipeline()
        for stream in keys.all_job_streams() + keys.all_held_job_streams():
            pipe.xpending(stream, keys.JOB_GROUP)
        total = 0
        for info in await pipe.execute():
            total += info["pending"] if isinstance(info, dict) else 0
        return total
