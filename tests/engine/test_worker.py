"""The worker loop's own recovery: job streams that vanish under it."""
from __future__ import annotations

import asyncio

from conftest import flush

from redpoll import Redpoll
from redpoll.core import keys


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
        author = await rp.sign_up("after_flush")
        fans = [await rp.sign_up(f"af{i}") for i in range(17)]
        for fan in fans:
            await rp.follow(fan.id, author.id)
        status = await rp.post(author.id, "posted into a wiped queue")
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

    from redpoll.bus.jobs import FanoutJob, RefillJob, decode

    def old(**job):
        return {b"j": json.dumps(job).encode()}

    assert decode(old(t="fanout", sid=5, aid=2, ph="lists", cur=77, unl=1)) == \
        FanoutJob(5, 2, "lists", 77, listed=False)
    assert decode(old(t="refill", uid=3, lid=9)) == RefillJob(3, 9)
