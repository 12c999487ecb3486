"""The worker loop's own recovery: job streams that vanish under it."""

from __future__ import annotations

import asyncio
import time

from conftest import CLUSTER, flush
from support.media import small_png  # noqa: F401

from redpoll import Redpoll
from redpoll.bus import queue as jobs
from redpoll.bus.queue import JobQueue
from redpoll.cards.jobs import CardImageJob, CardJob
from redpoll.core import keys
from redpoll.core.errors import RedpollError
from redpoll.core.health import DATABASE, OUTAGE
from redpoll.core.settings import Settings
from redpoll.engine.worker import HANDLERS, Worker
from redpoll.federation import jobs as fed_jobs
from redpoll.media.jobs import MediaSweepJob
from redpoll.storage.server import EmbeddedCluster, EmbeddedServer
from redpoll.storage.store import Store


async def test_worker_and_posting_survive_lost_job_streams(server, settings):
    """A flush (or data loss) removes the job streams and their consumer
    groups under running processes. Posting must still work, and the worker
    recreates the groups and runs what was queued after the loss."""
    rp = await Redpoll.open(settings.with_(fanout_batch=5))
    stop = asyncio.Event()
    task = asyncio.create_task(rp.worker("survivor").run(stop))
    try:
        await asyncio.sleep(0.5)  # let the worker create its groups and block
        flush(server[2])  # groups gone while the worker blocks on them
        author = await rp.accounts.sign_up("after_flush")
        fans = [await rp.accounts.sign_up(f"af{i}") for i in range(17)]
        for fan in fans:
            await rp.relations.follow(fan.id, author.id)
        status = await rp.statuses.post(author.id, "posted into a wiped queue")
        for _ in range(1500):
            if await rp.queue.depth() == 0:
                break
            await asyncio.sleep(0.02)
        assert await rp.queue.depth() == 0
        for fan in fans:
            ids = [int(x) for x in await rp.store.client.lrange(keys.home(fan.id), 0, -1)]
            assert ids.count(status.id) == 1
    finally:
        stop.set()
        await task
        await rp.close()


def test_jobs_queued_by_the_previous_version_still_decode():
    """Before jobs were typed records they were dicts with one-letter keys;
    ones still queued at an upgrade must run, not be parked."""
    import json

    from redpoll.bus.queue import decode
    from redpoll.timelines.jobs import FanoutJob, RefillJob

    def old(**job):
        return {b"j": json.dumps(job).encode()}

    assert decode(old(t="fanout", sid=5, aid=2, ph="lists", cur=77, unl=1)) == FanoutJob(
        5, 2, "lists", 77, listed=False
    )
    assert decode(old(t="refill", uid=3, lid=9)) == RefillJob(3, 9)


async def test_a_job_for_later_waits_for_its_time_then_runs_once(rp):
    """enqueue_at keeps a job off the stream until it is due; the worker
    then runs it (here: a sweep that removes a never-attached upload)."""
    owner = await rp.accounts.sign_up("later_owner")
    upload = await rp.media.upload(owner.id, small_png())
    far = int(time.time() * 1000) + 10 * 86_400_000  # the sweep's "now": every upload is old
    job = MediaSweepJob(now=far)
    due = int(time.time() * 1000) + 1500
    await rp.queue.enqueue_at(job, due)
    assert await rp.queue.due_at(job) == due
    assert await rp.queue.promote_due() == 0  # not yet due: nothing moves
    assert await rp.queue.depth() == 0
    stop = asyncio.Event()
    task = asyncio.create_task(rp.worker("later").run(stop))
    try:
        await rp.media.attachment(owner.id, upload.id)  # still there before its time
        for _ in range(500):
            try:
                await rp.media.attachment(owner.id, upload.id)
            except RedpollError:
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the job for later never ran")
        assert time.time() * 1000 >= due
        assert await rp.queue.due_at(job) is None
    finally:
        stop.set()
        await task


async def test_due_jobs_are_queued_once_however_many_workers_promote(rp):
    job = MediaSweepJob(now=1)
    await rp.queue.ensure_groups()
    await rp.queue.enqueue_at(job, 1000)
    await rp.queue.enqueue_at(job, 2000)  # the same job again: only its time moves
    assert await rp.queue.due_at(job) == 2000
    moved = await asyncio.gather(*(rp.queue.promote_due(5000) for _ in range(8)))
    assert sum(moved) == 1
    stream = keys.job_stream(job.shard())
    entries = await rp.store.xrange(stream)
    assert [e for e in entries if b"media_sweep" in e[1][b"j"]] and len(entries) == 1


async def test_a_job_for_later_can_be_taken_back(rp):
    job = MediaSweepJob(now=7)
    await rp.queue.enqueue_at(job, 1000)
    assert await rp.queue.cancel_at(job) is True
    assert await rp.queue.cancel_at(job) is False
    assert await rp.queue.promote_due(5000) == 0


def test_every_kind_of_job_decodes_and_has_a_handler():
    """A job kind left out of KINDS would be parked as malformed, unseen;
    one without a handler would fail every time it ran."""

    def kinds(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from kinds(sub)

    declared = {cls for cls in kinds(jobs.Job) if cls.kind}
    assert declared == set(jobs.KINDS.values())
    assert declared == set(HANDLERS)


def _sample(cls, n: int) -> jobs.Job:
    """A job of kind ``cls`` with its required fields filled from ``n``."""
    import dataclasses

    values = {}
    for f in dataclasses.fields(cls):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            values[f.name] = n if f.type == "int" else (True if f.type == "bool" else f"x{n}")
    return cls(**values)


def test_work_for_other_servers_lands_on_the_ingress_shards_and_local_work_never_does():
    ingress, local = set(keys.lane_shards("ingress")), set(keys.lane_shards("local"))
    assert ingress and local and not ingress & local
    assert set(keys.job_shards()) == ingress | local
    for cls in jobs.KINDS.values():
        shards = {_sample(cls, n).shard() for n in range(64)}
        waits_on_other_servers = (
            fed_jobs.InboxJob,
            fed_jobs.ContextJob,
            fed_jobs.RemoteMediaJob,
            fed_jobs.RemoteImagesJob,
            fed_jobs.RemoteEmojiJob,
            CardJob,  # a link's page, on its own server
            CardImageJob,  # a card's image fetched again
        )
        if cls in waits_on_other_servers:
            assert cls.lane == "ingress" and shards == ingress, cls
        else:
            assert cls.lane == "local" and shards <= local, cls


async def test_the_queue_s_figures_and_due_jobs_cover_the_ingress_shards(rp):
    job = fed_jobs.InboxJob(uid=7, activity="{}")
    assert job.shard() in keys.lane_shards("ingress")
    await rp.queue.ensure_groups()
    await rp.queue.enqueue_at(job, 1000)
    assert await rp.queue.promote_due(5000) == 1
    assert len(await rp.store.xrange(keys.job_stream(job.shard()))) == 1
    assert await rp.queue.depth() == 1
    assert (await jobs.job_figures(rp.store)).queued == 1
    await rp.drain()
    assert await rp.queue.depth() == 0


async def test_a_worker_started_in_an_outage_waits_for_the_database(tmp_path):
    """A worker whose database is away when it starts (or goes as it
    makes its job groups) waits for it, with a back-off, instead of ending
    its run with no reader left (the process lived on, silently idle); once
    the database is back, it runs the jobs."""
    db = EmbeddedCluster(tmp_path / "cluster") if CLUSTER else EmbeddedServer(tmp_path / "db")
    db.start()
    nodes = db.nodes if CLUSTER else [db]
    store = Store.connect(db.url, CLUSTER)
    await store.load_scripts()
    settings = Settings(redis_url=db.url, cluster=CLUSTER, job_claim_ms=500)
    stop = asyncio.Event()
    try:
        for node in nodes:
            node.kill()
        outages = DATABASE.outages
        task = asyncio.create_task(Worker(store, settings, "outage", periodic=False).run(stop))
        deadline = time.monotonic() + 20
        while DATABASE.outages == outages:
            assert not task.done(), task.exception()
            assert time.monotonic() < deadline, "the outage was never noticed"
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)
        assert not task.done(), task.exception()  # still waiting for the database
        for node in nodes:
            node.start()
        queue = JobQueue(store)
        deadline = time.monotonic() + 60
        while True:  # (the cluster takes a moment to serve every slot again)
            try:
                await queue.enqueue(MediaSweepJob())
                break
            except OUTAGE:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.5)
        while await queue.depth() > 0:  # run by the worker's readers
            assert not task.done() and time.monotonic() < deadline, "the job was never run"
            await asyncio.sleep(0.2)
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(task, return_exceptions=True), 30)
        await store.close()
        db.stop()
