"""The background worker: runs fan-out, cleanup and refill jobs.

Each job is thin and safe to run twice; a status or user that has vanished
means the job has nothing left to do and succeeds.
"""
from __future__ import annotations

import asyncio
import logging
import os
import socket
from typing import Awaitable, Callable

from redis.exceptions import (ConnectionError as RedisConnectionError, ResponseError,
                              TimeoutError as RedisTimeoutError)

from . import conversation, delivery, favourites, keys, limits, notifications, refill, tags
from .health import DATABASE
from .statuses import get_status_or_none
from .jobs import Job, JobQueue, decode
from .settings import Settings
from .store import Store

log = logging.getLogger("redpoll.worker")

Handler = Callable[[Store, Settings, Job], Awaitable[Job | None]]


async def _gone(store: Store, sid: int) -> bool:
    """Deleted (marked or already removed)."""
    found, deleted = await store.client.hmget(keys.status(sid), ["id", "deleted"])
    return found is None or deleted is not None


async def _fanout(store: Store, settings: Settings, job: Job) -> Job | None:
    sid, author = int(job["sid"]), int(job["aid"])
    if await _gone(store, sid):
        return None  # deleted meanwhile: its cleanup chain takes over
    start = delivery.Cursor.from_job(job)
    if start == delivery.Cursor():  # the post's own first step, replayed
        status = await get_status_or_none(store, sid)
        if status is not None:
            await conversation.after_post(store, status)
    cursor = await delivery.step(store, "deliver", sid, author, start, settings.fanout_batch,
                                 listed=not job.get("unl"),
                                 only_following=int(job["rt"]) if job.get("rt") else None)
    if await _gone(store, sid):
        # Deleted while this batch was being delivered: its cleanup chain may
        # already have passed these timelines, so take the id back out here.
        await delivery.step(store, "undeliver", sid, author, start, settings.fanout_batch)
        return None
    return None if cursor is None else {**job, **cursor.to_job()}


async def _cleanup(store: Store, settings: Settings, job: Job) -> Job | None:
    sid, author = int(job["sid"]), int(job["aid"])
    cursor = await delivery.step(store, "undeliver", sid, author, delivery.Cursor.from_job(job),
                                 settings.fanout_batch)
    return None if cursor is None else {**job, **cursor.to_job()}


async def _refill(store: Store, settings: Settings, job: Job) -> Job | None:
    if "lid" in job:
        await refill.refill_list(store, int(job["uid"]), int(job["lid"]))
    else:
        await refill.refill_home(store, int(job["uid"]))
    return None


HANDLERS: dict[str, Handler] = {"fanout": _fanout, "cleanup": _cleanup, "refill": _refill,
                                favourites.KIND: favourites.replay,
                                notifications.FOLLOW_JOB: notifications.replay_follow,
                                tags.JOB: tags.replay}


class Worker:
    """Consumes every job shard with ``concurrency`` readers per shard."""

    def __init__(self, store: Store, settings: Settings, name: str | None = None):
        self.store = store
        self.settings = settings
        self.queue = JobQueue(store)
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.done = 0

    async def run(self, stop: asyncio.Event) -> None:
        await self.queue.ensure_groups()
        tasks = [asyncio.create_task(self._consume(shard, f"{self.name}-{i}", stop))
                 for shard in range(limits.JOB_SHARDS)
                 for i in range(self.settings.worker_concurrency)]
        try:
            await stop.wait()
        finally:
            # Let running jobs finish their step: an interrupted one would only be
            # re-run after the claim timeout, but there is no reason to wait for that.
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _consume(self, shard: int, consumer: str, stop: asyncio.Event) -> None:
        stream, held = keys.job_stream(shard), keys.held_job_stream(shard)
        client = self.store.client
        claim_every = max(self.settings.job_claim_ms / 2000, 0.05)
        last_claim = 0.0
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            try:
                entries = []
                if loop.time() - last_claim >= claim_every:
                    last_claim = loop.time()
                    # held jobs are only ever claimed: their producer died
                    for source in (held, stream):
                        entries += [(source, *e) for e in await self._claim(source, consumer)]
                if not entries:
                    reply = await client.xreadgroup(
                        keys.JOB_GROUP, consumer, {stream: ">"},
                        count=limits.WORKER_READ_COUNT, block=200)
                    entries = [(stream, *e) for e in (reply[0][1] if reply else [])]
                for source, entry_id, fields in entries:
                    await self._handle(source, stream, entry_id, fields)
                DATABASE.back("worker")
            except asyncio.CancelledError:
                raise
            except ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    log.exception("worker loop error on %s", stream)
                else:  # the streams were lost (flush, data loss): recreate
                    log.warning("job groups missing on %s; recreating them", stream)
                    await self.queue.ensure_groups(force=True)
                await asyncio.sleep(0.5)
            except (RedisConnectionError, RedisTimeoutError) as exc:
                # server away or restarting: logged once per outage (redpoll.health)
                DATABASE.lost("worker", exc)
                await asyncio.sleep(0.5)
            except Exception:  # anything else: retry soon
                log.exception("worker loop error on %s", stream)
                await asyncio.sleep(0.5)

    async def _claim(self, stream: str, consumer: str) -> list:
        """Take over jobs left pending by a worker that died."""
        reply = await self.store.client.xautoclaim(
            stream, keys.JOB_GROUP, consumer, min_idle_time=self.settings.job_claim_ms,
            start_id="0-0", count=limits.WORKER_READ_COUNT)
        entries = [e for e in reply[1] if e and e[1]]
        if not entries:
            return []
        fresh = []
        for entry_id, fields in entries:
            info = await self.store.client.xpending_range(
                stream, keys.JOB_GROUP, min=entry_id, max=entry_id, count=1)
            if info and info[0]["times_delivered"] > limits.JOB_MAX_ATTEMPTS:
                log.error("parking job %s after %s attempts", entry_id, limits.JOB_MAX_ATTEMPTS)
                await self.queue.park(stream, entry_id, fields, "too many attempts")
            else:
                fresh.append((entry_id, fields))
        return fresh

    async def _handle(self, stream: str, next_stream: str, entry_id: bytes, fields: dict) -> None:
        try:
            job = decode(fields)
            handler = HANDLERS[job["t"]]
        except (KeyError, ValueError, TypeError) as exc:
            # TypeError: JSON that is not an object, or an unhashable type. It
            # must not escape: it would abort the rest of the batch read with
            # it, and those jobs would be re-claimed until parked as dead.
            await self.queue.park(stream, entry_id, fields, f"malformed job: {exc!r}")
            return
        try:
            next_job = await handler(self.store, self.settings, job)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            DATABASE.lost("worker", exc)  # left pending, as below
            return
        except Exception:
            # left pending: retried after job_claim_ms by whichever worker claims it
            log.exception("job %s failed; it will be retried", job)
            return
        await self.queue.finish(stream, entry_id, next_job, next_stream)
        self.done += 1
