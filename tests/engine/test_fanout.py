"""timelines/fanout.py / deliver.lua: the fast path and the checked path agree."""

from __future__ import annotations

from support.social import audience  # noqa: F401

from redpoll import Redpoll
from redpoll.core import keys
from redpoll.timelines import placement
from redpoll.timelines.jobs import FanoutJob


async def raw(rp, key) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(key, 0, -1)]


async def test_fast_path_is_taken_on_a_single_server_only(settings, server):
    rp = await Redpoll.open(settings.with_(fanout_batch=4))
    try:
        author = await rp.accounts.sign_up("fast")
        await audience(rp, author, 10, "fa")
        status = await rp.statuses.post(author.id, "newest of all")
        await rp.drain()
        mark = await rp.store.client.get(keys.FANOUT_WATERMARK)
        done = await rp.store.client.smembers(keys.fanout_done(status.id))
        if server[1]:  # cluster: the checked path only, no global keys
            assert mark is None and not done
        else:
            assert mark == f"{status.id}:d".encode()
            # one entry per batch pushed: the cursor each started from (no lists here)
            assert done == {
                b"home:0",
                *(f"home:{c}".encode() for c in await _cursors(rp, author.id, 4)),
            }
            assert 0 < await rp.store.client.ttl(keys.fanout_done(status.id))
    finally:
        await rp.close()


async def _cursors(rp, author, batch):
    scores = [
        int(s)
        for _, s in await rp.store.client.zrange(keys.followers(author), 0, -1, withscores=True)
    ]
    return [scores[i - 1] for i in range(batch, len(scores) + 1, batch)]


async def test_follow_during_fanout_of_the_newest_status_gets_it_once(settings):
    """A follow's backfill copies the status in before its fan-out reaches the
    new follower: the merge marks the watermark so the fan-out looks first."""
    rp = await Redpoll.open(settings.with_(fanout_batch=3))
    try:
        author = await rp.accounts.sign_up("celeb")
        fans = await audience(rp, author, 9, "cf")
        status = await rp.statuses.post(author.id, "in flight")  # 3 delivered, rest queued
        late = await rp.accounts.sign_up("latecomer")
        await rp.relations.follow(late.id, author.id)  # backfill copies it in now
        assert (await raw(rp, keys.home(late.id))).count(status.id) == 1
        await rp.drain()
        for fan in fans + [late]:
            assert (await raw(rp, keys.home(fan.id))).count(status.id) == 1, fan.login
    finally:
        await rp.close()


async def test_overtaken_fanout_keeps_timelines_sorted(settings):
    """An older status's fan-out that finishes after a newer one's (its jobs
    were queued, the newer post delivered at once) inserts in place."""
    rp = await Redpoll.open(settings.with_(fanout_batch=2))
    try:
        slow, fast = (
            await rp.accounts.sign_up("slowposter"),
            await rp.accounts.sign_up("fastposter"),
        )
        fans = [await rp.accounts.sign_up(f"of{i}") for i in range(7)]
        for fan in fans:
            await rp.relations.follow(fan.id, slow.id)
            await rp.relations.follow(fan.id, fast.id)
        older = await rp.statuses.post(slow.id, "older, delivered late")
        newer = await rp.statuses.post(fast.id, "newer, delivered first")
        await rp.drain()
        for fan in fans:
            ids = await raw(rp, keys.home(fan.id))
            assert ids == sorted(ids, reverse=True) and len(ids) == len(set(ids))
            assert ids.index(newer.id) < ids.index(older.id)
    finally:
        await rp.close()


async def test_batch_run_again_after_the_fast_path_is_a_no_op(settings):
    rp = await Redpoll.open(settings.with_(fanout_batch=3))
    try:
        author = await rp.accounts.sign_up("again")
        fans = await audience(rp, author, 8, "ag")
        status = await rp.statuses.post(author.id, "twice")
        await rp.drain()
        job = FanoutJob(status.id, author.id)
        await rp.queue.enqueue(job)  # the whole chain once more, from the start
        await rp.drain()
        for fan in fans + [author]:
            assert (await raw(rp, keys.home(fan.id))).count(status.id) == 1
        assert (await raw(rp, placement.of(rp.store).public_key(status.id))).count(status.id) == 1
    finally:
        await rp.close()
