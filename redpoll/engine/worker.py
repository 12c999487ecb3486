"""The background worker: runs the jobs of redpoll.bus.jobs, one handler per kind.

Each job is thin and safe to run twice; a status or user that has vanished
means the job has nothing left to do and succeeds. A run is cut off after
its kind's ``time_limit_s`` (and retried, like a failure); a job retried
more than its kind's ``max_attempts`` is parked in keys.DEAD_JOBS. An
incoming activity refused in a way that would fail every rerun the same
(``_refusal``) finishes its job with a log line instead.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from redis.exceptions import ResponseError

from ..accounts import account
from ..bus.jobs import (
    BlockJob,
    BoostJob,
    CleanupJob,
    ContextJob,
    DeleteJob,
    DeliverJob,
    DomainBlockJob,
    EditJob,
    FanoutJob,
    FavouriteJob,
    FollowNoteJob,
    InboxJob,
    Job,
    JobQueue,
    MalformedJob,
    MediaFilesJob,
    MediaJob,
    MediaSweepJob,
    MoveJob,
    NotYet,
    PollEndJob,
    PollUpdateJob,
    PollVoteJob,
    PostJob,
    ProfileImageJob,
    PurgeAccountJob,
    PushJob,
    RefillJob,
    ScheduledStatusJob,
    SignUpJob,
    TagFollowJob,
    decode,
)
from ..conversations import tags
from ..core import keys, limits
from ..core.errors import UserNotFound, ValidationError
from ..core.health import DATABASE, OUTAGE, Backoff
from ..core.settings import Settings
from ..federation import client as fed_client
from ..federation import delivery as fed_delivery
from ..federation import inbox as fed_inbox
from ..federation import member_blocks
from ..federation import moves as fed_moves
from ..federation import outbox as fed_outbox
from ..federation import remote as fed_remote
from ..federation import threads as fed_threads
from ..interactions import favourites
from ..media import profile_images, uploads
from ..media.storage import open_storage
from ..moderation import moderation
from ..net import safety
from ..net.http import FetchFailed
from ..notifications import notifications
from ..polls import polls
from ..posting import boosts, deleting, editing, posting
from ..push import delivery as push_delivery
from ..relations import domain_blocks, follows, relations, unlisting
from ..scheduling import scheduled
from ..storage import topology
from ..storage.store import Store
from ..suggestions import suggestions
from ..timelines import delivery, hybrid, refill

log = logging.getLogger("redpoll.worker")


@dataclass(frozen=True)
class Done:
    """What a finished job leaves: its continuation, and what to count."""

    next: Job | None = None
    count: str = ""


Handler = Callable[[Store, Settings, Job, bytes], Awaitable[Done]]


async def _post(store: Store, settings: Settings, job: PostJob, entry_id: bytes) -> Done:
    try:
        return Done(await posting.apply_post(store, settings, job), "statuses")
    except UserNotFound:
        return Done()  # the author vanished (a wiped database): nothing to post
    except ValidationError:
        return Done()  # an upload could not be attached: the post never happened


async def _delete(store: Store, settings: Settings, job: DeleteJob, entry_id: bytes) -> Done:
    cleanup, mine = await deleting.apply_delete(store, job, entry_id)
    return Done(cleanup, "deleted" if mine else "")


async def _fanout(store: Store, settings: Settings, job: FanoutJob, entry_id: bytes) -> Done:
    if await delivery.gone(store, job.sid):
        return Done()  # deleted meanwhile: its cleanup chain takes over
    start = delivery.Cursor(job.phase, job.after)
    cursor = await delivery.step(
        store,
        "deliver",
        job.sid,
        job.author,
        start,
        settings.fanout_batch,
        listed=job.listed,
        only_following=job.only_following,
        boost_of=job.boost_of,
        audience=job.audience,
        policy=delivery.policy(settings),
    )
    if await delivery.gone(store, job.sid):
        # Deleted while this batch was being delivered: its cleanup chain may
        # already have passed these timelines, so take the id back out here.
        await delivery.step(store, "undeliver", job.sid, job.author, start, settings.fanout_batch)
        return Done()
    return Done(
        None
        if cursor is None
        else FanoutJob(
            job.sid,
            job.author,
            cursor.phase,
            cursor.after,
            job.listed,
            job.only_following,
            job.boost_of,
            job.audience,
        )
    )


async def _cleanup(store: Store, settings: Settings, job: CleanupJob, entry_id: bytes) -> Done:
    cursor = await delivery.step(
        store,
        "undeliver",
        job.sid,
        job.author,
        delivery.Cursor(job.phase, job.after),
        settings.fanout_batch,
    )
    if cursor is None:  # every timeline is clean
        await topology.of(store).forget_deleted(job.sid)
        return Done()
    return Done(CleanupJob(job.sid, job.author, cursor.phase, cursor.after))


async def _refill(store: Store, settings: Settings, job: RefillJob, entry_id: bytes) -> Done:
    if job.lid is not None:
        await refill.refill_list(store, job.uid, job.lid)
    else:
        await refill.refill_home(store, job.uid)
    return Done()


async def _favourite(store: Store, settings: Settings, job: FavouriteJob, entry_id: bytes) -> Done:
    await favourites.replay(store, settings, job)
    return Done()


async def _follow_note(
    store: Store, settings: Settings, job: FollowNoteJob, entry_id: bytes
) -> Done:
    if not await follows.note_due(store, job):
        return Done()  # a follow that was there already: its own job saw to it
    await notifications.replay_follow(store, settings, job)
    await hybrid.sync_follow(store, job.uid, job.target)  # a large account's merge
    await unlisting.unlist(store, job.uid, job.target)  # an unfollow's lists' step, retried
    await suggestions.note_followers(store, job.target)  # the most followed (idempotent)
    return Done()


async def _tag_follow(store: Store, settings: Settings, job: TagFollowJob, entry_id: bytes) -> Done:
    await tags.replay(store, settings, job)
    return Done()


async def _block(store: Store, settings: Settings, job: BlockJob, entry_id: bytes) -> Done:
    await relations.apply_block(store, job)
    return Done()


async def _domain_block(
    store: Store, settings: Settings, job: DomainBlockJob, entry_id: bytes
) -> Done:
    # a block whose call was cut short: its cleanup again, if it still stands
    if job.domain in await domain_blocks.blocked(store, job.uid):
        await member_blocks.cleanup(store, JobQueue(store), settings, job.uid, job.domain)
    return Done()


async def _sign_up(store: Store, settings: Settings, job: SignUpJob, entry_id: bytes) -> Done:
    settle_after_ms = settings.job_claim_ms * limits.SIGN_UP_SETTLE_CLAIMS
    return (
        Done(count="users")
        if await account.settle_sign_up(store, job, entry_id, settle_after_ms)
        else Done()
    )


async def _purge_account(
    store: Store, settings: Settings, job: PurgeAccountJob, entry_id: bytes
) -> Done:
    await moderation.purge_account_keys(store, job.uid, job.login)
    return Done(count="users_gone")


async def _edit(store: Store, settings: Settings, job: EditJob, entry_id: bytes) -> Done:
    await editing.replay(store, job)
    return Done()


async def _boost(store: Store, settings: Settings, job: BoostJob, entry_id: bytes) -> Done:
    return Done(await boosts.replay(store, settings, job))


def _media_settle_after_ms(settings: Settings) -> int:
    return settings.job_claim_ms * limits.MEDIA_SETTLE_CLAIMS


async def _media(store: Store, settings: Settings, job: MediaJob, entry_id: bytes) -> Done:
    await uploads.settle(
        store, open_storage(settings), job, entry_id, _media_settle_after_ms(settings)
    )
    return Done()


async def _profile_image(
    store: Store, settings: Settings, job: ProfileImageJob, entry_id: bytes
) -> Done:
    names = await profile_images.settle(store, job, entry_id, _media_settle_after_ms(settings))
    await uploads.delete_files(open_storage(settings), names)
    return Done()


async def _media_files(
    store: Store, settings: Settings, job: MediaFilesJob, entry_id: bytes
) -> Done:
    await uploads.delete_files(open_storage(settings), job.names)
    return Done()


async def _media_sweep(
    store: Store, settings: Settings, job: MediaSweepJob, entry_id: bytes
) -> Done:
    await uploads.sweep(store, open_storage(settings), job.now or None)
    return Done()


def _refusal(exc: BaseException) -> bool:
    """Whether an incoming activity's job failed in a way every rerun would
    fail again: the signer gone, the activity refused (inbox.Refused), an
    actor document not kept (remote.BadActor), an address the fetch guard
    refuses (safety.Refused), a peer answering 4xx (but 429, too many
    requests: it may answer later) or a document that is not the one asked
    for (client.WrongDocument: another id, another media type). Timeouts,
    5xx, connection errors and database outages are passing: the job is
    retried."""
    if isinstance(exc, fed_client.WrongDocument):
        return True
    if isinstance(exc, FetchFailed):
        return 400 <= exc.status < 500 and exc.status != 429
    return isinstance(exc, (UserNotFound, fed_inbox.Refused, fed_remote.BadActor, safety.Refused))


async def _inbox(store: Store, settings: Settings, job: InboxJob, entry_id: bytes) -> Done:
    try:
        await fed_inbox.process(store, JobQueue(store), settings, job)
    except Exception as exc:
        if not _refusal(exc):
            raise  # passing: left pending, retried
        log.info("activity from account %s dropped (%s): %s", job.uid, type(exc).__name__, exc)
    return Done()


async def _move(store: Store, settings: Settings, job: MoveJob, entry_id: bytes) -> Done:
    # one step of a Move (idempotent, retried); the next step is queued as its job's next
    return Done(await fed_moves.step(store, JobQueue(store), settings, job))


async def _context(store: Store, settings: Settings, job: ContextJob, entry_id: bytes) -> Done:
    await fed_threads.fetch(store, JobQueue(store), settings, job.sid)
    return Done()


async def _deliver(store: Store, settings: Settings, job: DeliverJob, entry_id: bytes) -> Done:
    await fed_delivery.deliver(store, JobQueue(store), settings, job)
    return Done()


async def _scheduled_status(
    store: Store, settings: Settings, job: ScheduledStatusJob, entry_id: bytes
) -> Done:
    # posted once however often this runs (redpoll.scheduling.scheduled.publish)
    await scheduled.publish(store, JobQueue(store), settings, job)
    return Done()


async def _poll_end(store: Store, settings: Settings, job: PollEndJob, entry_id: bytes) -> Done:
    await polls.end(store, job)
    # other servers get its last counts (a local poll: an Update of its Question, closed)
    await fed_outbox.poll_update(
        store, JobQueue(store), settings, job.sid, f"end/{job.gen}/{job.at}"
    )
    return Done()


async def _poll_update(
    store: Store, settings: Settings, job: PollUpdateJob, entry_id: bytes
) -> Done:
    await fed_outbox.poll_update(store, JobQueue(store), settings, job.sid, str(job.at))
    return Done()


async def _poll_vote(store: Store, settings: Settings, job: PollVoteJob, entry_id: bytes) -> Done:
    # a vote's journal taken over: what follows it, if it was counted (idempotent)
    await fed_outbox.after_vote(store, JobQueue(store), settings, job.uid, job.sid)
    return Done()


async def _push(store: Store, settings: Settings, job: PushJob, entry_id: bytes) -> Done:
    # its retries are jobs for later of their own (redpoll.push.delivery)
    await push_delivery.send(store, settings, job)
    return Done()


HANDLERS: dict[type[Job], Handler] = {
    PushJob: _push,
    ScheduledStatusJob: _scheduled_status,
    PollEndJob: _poll_end,
    PollUpdateJob: _poll_update,
    PollVoteJob: _poll_vote,
    MediaJob: _media,
    ProfileImageJob: _profile_image,
    MediaFilesJob: _media_files,
    MediaSweepJob: _media_sweep,
    InboxJob: _inbox,
    DeliverJob: _deliver,
    ContextJob: _context,
    MoveJob: _move,
    EditJob: _edit,
    BoostJob: _boost,
    PostJob: _post,
    DeleteJob: _delete,
    FanoutJob: _fanout,
    CleanupJob: _cleanup,
    RefillJob: _refill,
    FavouriteJob: _favourite,
    FollowNoteJob: _follow_note,
    SignUpJob: _sign_up,
    PurgeAccountJob: _purge_account,
    TagFollowJob: _tag_follow,
    BlockJob: _block,
    DomainBlockJob: _domain_block,
}


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
        a back-off while the database is away (a worker started in an
        outage, or cut off while it starts, waits for it instead of ending
        with no reader left); False if stopped first."""
        backoff = Backoff()
        while not stop.is_set():
            try:
                await self.queue.ensure_groups()
                return True
            except OUTAGE as exc:
                DATABASE.lost("worker", exc)
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
