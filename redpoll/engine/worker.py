"""The background worker: reads the job queue (redpoll.bus.queue) and runs
each job with its kind's handler, from the tables the features export
(each package's ``handlers.TABLE``, merged in :data:`HANDLERS`).

Each job is thin and safe to run twice; a status or user that has vanished
means the job has nothing left to do and succeeds. A run is cut off after
its kind's ``time_limit_s`` (and retried, like a failure); a job retried
more than its kind's ``max_attempts`` is parked in keys.DEAD_JOBS.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket

from redis.exceptions import ResponseError

from ..accounts import handlers as accounts_handlers
from ..annual import handlers as annual_handlers
from ..bus.queue import Handler, JobQueue, MalformedJob, NotYet, decode
from ..cards import handlers as cards_handlers
from ..conversations import handlers as conversations_handlers
from ..core import keys, limits
from ..core.health import DATABASE, OUTAGE, Backoff
from ..core.settings import Settings
from ..federation import handlers as federation_handlers
from ..federation import outbox as fed_outbox
from ..federation import remote_media
from ..interactions import handlers as interactions_handlers
from ..mail import handlers as mail_handlers
from ..media import handlers as media_handlers
from ..media import uploads
from ..media.jobs import MediaSweepJob
from ..media.storage import open_storage
from ..moderation import handlers as moderation_handlers
from ..portability import handlers as portability_handlers
from ..posting import handlers as posting_handlers
from ..push import handlers as push_handlers
from ..relations import handlers as relations_handlers
from ..scheduling import handlers as scheduling_handlers
from ..search import handlers as search_handlers
from ..storage.store import Store
from ..timelines import handlers as timelines_handlers
from .areas.archives import ArchiveRenderer
from .areas.base import Deps
from .areas.imports import ImportActions

log = logging.getLogger("redpoll.worker")


def merged(*tables: dict[type, Handler]) -> dict[type, Handler]:
    """The features' tables of kinds as one; a kind handled twice is refused."""
    out: dict[type, Handler] = {}
    for table in tables:
        for kind, handler in table.items():
            if kind in out:
                raise TypeError(f"job {kind.__name__} has two handlers")
            out[kind] = handler
    return out


def import_actions(store: Store, settings: Settings) -> ImportActions:
    """What a CSV import's job does for each row: the engine's own actions
    (redpoll.engine.areas.imports), bound to the worker's store."""
    return ImportActions(Deps(store, JobQueue(store), settings, open_storage(settings)))


def archive_renderer(store: Store, settings: Settings) -> ArchiveRenderer:
    """What renders an archive's actor and notes for its job: the
    federation's documents (redpoll.engine.areas.archives)."""
    return ArchiveRenderer(Deps(store, JobQueue(store), settings, open_storage(settings)))


#: Every kind's handler, from the features' tables.
HANDLERS = merged(
    accounts_handlers.TABLE,
    cards_handlers.table(remote_media.media_rejected),
    annual_handlers.TABLE,
    conversations_handlers.TABLE,
    federation_handlers.TABLE,
    interactions_handlers.TABLE,
    mail_handlers.TABLE,
    media_handlers.TABLE,
    moderation_handlers.TABLE,
    portability_handlers.table(import_actions, archive_renderer),
    posting_handlers.TABLE,
    push_handlers.TABLE,
    relations_handlers.TABLE,
    scheduling_handlers.TABLE,
    search_handlers.TABLE,
    timelines_handlers.TABLE,
)


class Worker:
    """Consumes every job shard, of the local lane and of the ingress lane,
    with ``worker_concurrency`` readers per shard."""

    def __init__(
        self, store: Store, settings: Settings, name: str | None = None, periodic: bool = True
    ):
        self.store = store
        #: also queue the periodic jobs (the media sweep); not a drain's
        self.periodic = periodic
        self.settings = settings
        self.queue = JobQueue(store)
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.done = 0
        #: the loops waiting in a blocking read, holding no job: a stop
        #: cancels them (:meth:`_waiting`) instead of waiting their block out
        self._reading: set[asyncio.Task] = set()

    async def run(self, stop: asyncio.Event) -> None:
        if not await self._groups(stop):
            return  # stopped before the database answered
        # every shard of both lanes has its own readers: ingress work (other
        # servers' requests) waiting on a slow peer holds only its lane's
        tasks = [
            asyncio.create_task(self._consume(shard, f"{self.name}-{i}", stop))
            for shard in keys.job_shards()
            for i in range(self.settings.worker_concurrency)
        ]
        if self.periodic:
            tasks.append(asyncio.create_task(self._sweeps(stop)))
        tasks.append(asyncio.create_task(self._due(stop)))
        if self.periodic and self.settings.public_url:
            tasks.append(asyncio.create_task(self._outbox(stop)))
        try:
            await stop.wait()
        finally:
            # Let running jobs finish their step: an interrupted one would only be
            # re-run after the claim timeout, but there is no reason to wait for that.
            # A loop still blocked in its read is cancelled: its block (up to
            # 500 ms) would only delay the stop. (A read that got entries just
            # as it was cancelled leaves them pending: claimed again, as a
            # crashed worker's are; redis-py drops the connection it cancels.)
            for task in list(self._reading):
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _groups(self, stop: asyncio.Event) -> bool:
        """The job groups made (JobQueue.ensure_groups), tried again with
        a back-off while the database is away or the client fails otherwise
        (a worker started in an outage, or cut off while it starts, waits for
        it instead of ending with no reader left); False if stopped first."""
        backoff = Backoff()
        while not stop.is_set():
            try:
                await self.queue.ensure_groups()
                return True
            except OUTAGE as exc:
                DATABASE.lost("worker", exc)
                await backoff.wait()
            except Exception:  # e.g. redis-py's cluster client racing a node's return
                # (AttributeError on a connection it closed): tried again, as an outage
                log.exception("could not make the job groups; trying again")
                await backoff.wait()
        return False

    async def _waiting(self, read):
        """Await ``read`` (a blocking read) as a loop that a stop may cancel."""
        task = asyncio.current_task()
        self._reading.add(task)
        try:
            return await read
        finally:
            self._reading.discard(task)

    async def _sweeps(self, stop: asyncio.Event) -> None:
        """Queue the sweep of never-attached uploads once per interval (one
        worker process of all does it: uploads.sweep_due)."""
        while not stop.is_set():
            try:
                if await uploads.sweep_due(self.store):
                    await self.queue.enqueue(MediaSweepJob())
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # an outage: the next interval tries again
                log.warning("could not queue the media sweep: %s", exc)
            try:
                await asyncio.wait_for(stop.wait(), limits.MEDIA_SWEEP_INTERVAL_S / 10)
            except TimeoutError:
                pass

    async def _due(self, stop: asyncio.Event) -> None:
        """Move jobs queued for later onto their streams once they are due
        (JobQueue.promote_due; every worker looks, job_due.lua queues each
        once)."""
        backoff = Backoff()
        while not stop.is_set():
            try:
                await self.queue.promote_due()
                backoff.reset()
            except asyncio.CancelledError:
                raise
            except OUTAGE as exc:
                DATABASE.lost("worker", exc)
                await backoff.wait()
                continue
            except Exception:  # anything else: the next look tries again
                log.exception("could not move due jobs")
            try:
                await asyncio.wait_for(stop.wait(), limits.DUE_JOBS_POLL_S)
            except TimeoutError:
                pass

    async def _outbox(self, stop: asyncio.Event) -> None:
        """Send local posts, edits, deletes and boosts to the servers of the
        authors' remote followers (redpoll.federation.outbox): the event
        log read by one consumer group, entries taken over from a worker
        that died after job_claim_ms."""
        base = (self.settings.public_url or "").rstrip("/")
        consumer = f"{self.name}-outbox"
        backoff = Backoff()
        claim_every = max(self.settings.job_claim_ms / 2000, 0.05)
        loop = asyncio.get_running_loop()
        last_claim = 0.0
        while not stop.is_set():
            try:
                await fed_outbox.ensure_group(self.store)
                entries = []
                if loop.time() - last_claim >= claim_every:
                    last_claim = loop.time()
                    reply = await self.store.xautoclaim(
                        keys.EVENT_LOG,
                        fed_outbox.keys.OUTBOX_GROUP,
                        consumer,
                        min_idle_time=self.settings.job_claim_ms,
                        start_id="0-0",
                        count=limits.WORKER_READ_COUNT,
                    )
                    entries = [e for e in reply[1] if e and e[1]]
                if not entries:
                    reply = await self._waiting(
                        self.store.xreadgroup(
                            fed_outbox.keys.OUTBOX_GROUP,
                            consumer,
                            {keys.EVENT_LOG: ">"},
                            count=limits.WORKER_READ_COUNT,
                            block=500,
                        )
                    )
                    entries = reply[0][1] if reply else []
                for entry_id, fields in entries:
                    payload = fields.get(b"e")
                    if payload is not None:
                        await fed_outbox.handle(self.store, self.queue, base, payload)
                    await self.store.xack(keys.EVENT_LOG, fed_outbox.keys.OUTBOX_GROUP, entry_id)
                backoff.reset()
            except asyncio.CancelledError:
                raise
            except OUTAGE as exc:
                DATABASE.lost("worker", exc)
                await backoff.wait()
            except Exception:  # left pending: claimed again after job_claim_ms
                log.exception("federation outbox error")
                await asyncio.sleep(0.5)

    async def _consume(self, shard: int, consumer: str, stop: asyncio.Event) -> None:
        stream, held = keys.job_stream(shard), keys.held_job_stream(shard)
        client = self.store
        claim_every = max(self.settings.job_claim_ms / 2000, 0.05)
        # an idle read waits until the next claim is due, at most WORKER_IDLE_WAIT_MS
        wait_ms = max(50, min(limits.WORKER_IDLE_WAIT_MS, int(claim_every * 1000)))
        last_claim = 0.0
        loop = asyncio.get_running_loop()
        backoff = Backoff()
        while not stop.is_set():
            try:
                entries = []
                if loop.time() - last_claim >= claim_every:
                    last_claim = loop.time()
                    # held jobs are only ever claimed: their producer died
                    for source in (held, stream):
                        entries += [
                            (source, *e) for e in await self._claim(source, shard, consumer)
                        ]
                if not entries:
                    reply = await self._waiting(
                        client.xreadgroup(
                            keys.JOB_GROUP,
                            consumer,
                            {stream: ">"},
                            count=limits.WORKER_READ_COUNT,
                            block=wait_ms,
                        )
                    )
                    entries = [(stream, *e) for e in (reply[0][1] if reply else [])]
                for source, entry_id, fields in entries:
                    await self._handle(source, shard, entry_id, fields)
                DATABASE.back("worker")
                backoff.reset()
            except asyncio.CancelledError:
                raise
            except OUTAGE as exc:
                # server or cluster away or restarting: logged once per
                # outage (redpoll.core.health), retried less and less often
                DATABASE.lost("worker", exc)
                await backoff.wait()
            except ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    log.exception("worker loop error on %s", stream)
                else:  # the streams were lost (flush, data loss): recreate
                    log.warning("job groups missing on %s; recreating them", stream)
                    await self.queue.ensure_groups(force=True)
                await asyncio.sleep(0.5)
            except Exception:  # anything else: retry soon
                log.exception("worker loop error on %s", stream)
                await asyncio.sleep(0.5)

    async def _claim(self, stream: str, shard: int, consumer: str) -> list:
        """Take over jobs left pending by a worker that died."""
        reply = await self.store.xautoclaim(
            stream,
            keys.JOB_GROUP,
            consumer,
            min_idle_time=self.settings.job_claim_ms,
            start_id="0-0",
            count=limits.WORKER_READ_COUNT,
        )
        entries = [e for e in reply[1] if e and e[1]]
        if not entries:
            return []
        fresh = []
        for entry_id, fields in entries:
            info = await self.store.xpending_range(
                stream, keys.JOB_GROUP, min=entry_id, max=entry_id, count=1
            )
            try:
                budget = decode(fields).max_attempts
            except MalformedJob:
                budget = 0  # parked when handled
            if info and budget and info[0]["times_delivered"] > budget:
                log.error("parking job %s after %s attempts", entry_id, budget)
                await self.queue.park(stream, entry_id, shard, fields, "too many attempts")
            else:
                fresh.append((entry_id, fields))
        return fresh

    async def _handle(self, stream: str, shard: int, entry_id: bytes, fields: dict) -> None:
        try:
            job = decode(fields)
        except MalformedJob as exc:
            # It must not escape: it would abort the rest of the batch read
            # with it, and those jobs would be re-claimed until parked as dead.
            await self.queue.park(stream, entry_id, shard, fields, f"malformed job: {exc}")
            return
        try:
            async with asyncio.timeout(job.time_limit_s):
                done = await HANDLERS[type(job)](self.store, self.settings, job, entry_id)
        except OUTAGE as exc:
            DATABASE.lost("worker", exc)  # left pending, as below
            return
        except NotYet:
            return  # left pending, as below, and decided on a later claim
        except Exception:
            # left pending: retried after job_claim_ms by whichever worker claims it
            log.exception("job %s failed; it will be retried", job)
            return
        await self.queue.finish(stream, entry_id, shard, done.next, done.count)
        self.done += 1
