"""Posting and batched fan-out (lists fed on post too)."""

from __future__ import annotations

import asyncio

import pytest

from redpoll import Redpoll
from redpoll.bus.queue import decode, shard_of
from redpoll.core import keys, limits
from redpoll.core.errors import UserNotFound, ValidationError
from redpoll.timelines import fanout
from redpoll.timelines.jobs import FanoutJob, RefillJob


async def raw_list(rp, key) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(key, 0, -1)]


async def count_in(rp, key, sid) -> int:
    return (await raw_list(rp, key)).count(sid)


async def queued_jobs(rp) -> list[dict]:
    found = []
    for stream in keys.all_job_streams():
        for _, fields in await rp.store.client.xrange(stream):
            found.append(decode(fields))
    return found


@pytest.fixture
async def rp10(settings):
    engine = await Redpoll.open(settings.with_(fanout_batch=10))
    yield engine
    await engine.close()


async def make_audience(rp, author, n, prefix="f"):
    fans = []
    for i in range(n):  # sequential: the follow order is the delivery order
        fan = await rp.accounts.sign_up(f"{prefix}{i}")
        await rp.relations.follow(fan.id, author.id)
        fans.append(fan)
    await rp.drain()  # the follow notifications' jobs: tests count the queue
    return fans


async def test_post_records_status_profile_and_counter(rp):
    a = await rp.accounts.sign_up("alice")
    s = await rp.statuses.post(a.id, "hello there", {"location": "52.5,13.4"})
    got = await rp.statuses.get_status(s.id)
    assert (got.text, got.user_id, got.login) == ("hello there", a.id, "alice")
    assert got.extra == {"location": "52.5,13.4"}
    assert (await rp.accounts.get_user(a.id)).posts == 1
    assert [x.id for x in await rp.timelines.profile(a.id)] == [s.id]
    assert await raw_list(rp, keys.home(a.id)) == [s.id]
    s2 = await rp.statuses.post(str(a.id), "again")
    assert s2.id > s.id
    assert (await rp.accounts.get_user(a.id)).posts == 2


async def test_post_by_unknown_author_writes_nothing(rp):
    a = await rp.accounts.sign_up("alice")
    ghost = a.id + 77
    with pytest.raises(UserNotFound):
        await rp.statuses.post(ghost, "boo")
    with pytest.raises(ValidationError):
        await rp.statuses.post(a.id, "")
    with pytest.raises(ValidationError):
        await rp.statuses.post(a.id, "x" * (limits.STATUS_MAX_CHARS + 1))
    client = rp.store.client
    assert not await client.exists(keys.profile(ghost), keys.home(ghost), keys.user(ghost))
    seq = await client.get(keys.STATUS_SEQ)
    if seq is not None:  # an id may have been drawn, but no status written under it
        assert not await client.exists(keys.status(int(seq)))
    assert (await rp.accounts.get_user(a.id)).posts == 0
    assert await rp.queue.depth() == 0


async def test_fanout_first_batch_in_call_rest_by_jobs(rp10):
    rp = rp10
    author = await rp.accounts.sign_up("author")
    fans = await make_audience(rp, author, 35)
    s = await rp.statuses.post(author.id, "to everyone")

    # during the call: the author's own home and the first batch of 10
    assert await raw_list(rp, keys.home(author.id)) == [s.id]
    delivered = [await count_in(rp, keys.home(f.id), s.id) for f in fans]
    assert delivered == [1] * 10 + [0] * 25
    assert await rp.queue.depth() >= 1
    assert [x.id for x in await rp.timelines.home(fans[20].id)] == []

    await rp.drain()
    assert await rp.queue.depth() == 0
    for f in fans:
        home = await raw_list(rp, keys.home(f.id))
        assert home == [s.id], f.login
        assert await rp.store.client.llen(keys.home(f.id)) == 1
    assert [x.id for x in await rp.timelines.home(fans[-1].id)] == [s.id]


async def test_rerunning_a_fanout_chain_reaches_nobody_twice(rp10):
    rp = rp10
    author = await rp.accounts.sign_up("author")
    fans = await make_audience(rp, author, 35)
    s1 = await rp.statuses.post(author.id, "first")
    await rp.drain()
    s2 = await rp.statuses.post(author.id, "second")
    await rp.drain()

    # the whole chain again from the start, and once more from mid-way; s1 is
    # no longer at the head of any home, so deliver.lua must find it inside
    await rp.queue.enqueue(FanoutJob(s1.id, author.id))
    mid = await rp.store.client.zscore(keys.followers(author.id), fans[14].id)
    await rp.queue.enqueue(FanoutJob(s1.id, author.id, "home", int(mid)))
    await rp.drain()
    await rp.queue.enqueue(FanoutJob(s2.id, author.id))
    await rp.drain()
    for f in [author] + fans:
        assert await raw_list(rp, keys.home(f.id)) == [s2.id, s1.id], f.login


async def test_fanout_job_of_dead_worker_is_taken_over_without_duplicates(rp10):
    """A worker takes the continuation job, delivers its batch and dies before
    acknowledging it; another worker claims the job and repeats the batch."""
    rp = rp10
    author = await rp.accounts.sign_up("author")
    fans = await make_audience(rp, author, 25)
    s = await rp.statuses.post(author.id, "survive a crash")

    stream = shard_of(FanoutJob(s.id, author.id))
    reply = await rp.store.client.xreadgroup(keys.JOB_GROUP, "doomed", {stream: ">"}, count=1)
    [(entry_id, fields)] = reply[0][1]
    job = decode(fields)
    assert isinstance(job, FanoutJob) and job.sid == s.id
    # the dead worker's step did its writes...
    await fanout.step(
        rp.store,
        "deliver",
        s.id,
        author.id,
        fanout.Cursor(job.phase, job.after),
        rp.settings.fanout_batch,
    )
    assert [await count_in(rp, keys.home(f.id), s.id) for f in fans] == [1] * 20 + [0] * 5
    # ...but never acknowledged the job: drain must claim it after job_claim_ms
    await rp.drain(timeout=60)
    assert (await rp.store.client.xpending(stream, keys.JOB_GROUP))["pending"] == 0
    for f in fans:
        assert await raw_list(rp, keys.home(f.id)) == [s.id], f.login


async def test_post_with_a_million_followers_returns_after_first_batch(rp):
    author = await rp.accounts.sign_up("celebrity")
    client = rp.store.client
    base = 10_000_000  # fake follower ids: they need no user record
    total, chunk = 1_000_000, 20_000
    for start in range(0, total, 100_000):
        pipe = rp.store.pipeline()
        for lo in range(start, start + 100_000, chunk):
            pipe.zadd(
                keys.followers(author.id), {str(base + i): i + 1 for i in range(lo, lo + chunk)}
            )
        await pipe.execute()
    assert await client.zcard(keys.followers(author.id)) == total

    s = await asyncio.wait_for(rp.statuses.post(author.id, "hello, world"), 120)

    batch = rp.settings.fanout_batch
    pipe = rp.store.pipeline()
    probe = list(range(batch)) + list(range(batch, batch + 50)) + [total // 2, total - 1]
    for i in probe:
        pipe.lrange(keys.home(base + i), 0, -1)
    homes = await pipe.execute()
    got = [[int(x) for x in h] for h in homes]
    assert got[:batch] == [[s.id]] * batch
    assert got[batch:] == [[]] * (len(probe) - batch)
    assert await raw_list(rp, keys.home(author.id)) == [s.id]
    # the rest is one continuation job, starting right after the first batch
    assert await rp.queue.depth() >= 1
    jobs = [j for j in await queued_jobs(rp) if getattr(j, "sid", None) == s.id]
    assert jobs == [FanoutJob(s.id, author.id, "home", batch)]
    await client.delete(keys.followers(author.id))  # free the memory early


async def test_concurrent_posts_keep_homes_sorted_and_complete(rp):
    authors = [await rp.accounts.sign_up(f"a{i}") for i in range(4)]
    reader = await rp.accounts.sign_up("reader")
    for a in authors:
        await rp.relations.follow(reader.id, a.id)
    posted = await asyncio.gather(
        *(rp.statuses.post(authors[i % 4].id, f"p{i}") for i in range(80))
    )
    await rp.drain()
    home = await raw_list(rp, keys.home(reader.id))
    assert home == sorted((s.id for s in posted), reverse=True)
    for a in authors:
        mine = [s.id for s in posted if s.user_id == a.id]
        assert await raw_list(rp, keys.home(a.id)) == sorted(mine, reverse=True)


async def test_delivery_trims_home_to_cap(rp):
    reader = await rp.accounts.sign_up("reader")
    author = await rp.accounts.sign_up("author")
    ids = []
    for chunk in range(0, limits.HOME_CAP, 100):
        posted = await asyncio.gather(
            *(rp.statuses.post(author.id, f"old {chunk + i}") for i in range(100))
        )
        ids += [s.id for s in posted]
    await rp.relations.follow(reader.id, author.id)
    assert await rp.store.client.llen(keys.home(reader.id)) == limits.HOME_CAP
    new = await rp.statuses.post(author.id, "newest")
    await rp.drain()
    home = await raw_list(rp, keys.home(reader.id))
    assert len(home) == limits.HOME_CAP
    assert home[0] == new.id
    assert home == sorted(ids + [new.id], reverse=True)[: limits.HOME_CAP]
    # an old status re-delivered to a full home that has moved past it stays out
    await rp.queue.enqueue(FanoutJob(min(ids), author.id))
    await rp.drain()
    assert await raw_list(rp, keys.home(reader.id)) == home


async def test_post_feeds_list_timelines_of_lists_holding_the_author(rp10):
    rp = rp10
    author = await rp.accounts.sign_up("author")
    other = await rp.accounts.sign_up("other")
    fans = await make_audience(rp, author, 12)  # more than a batch: lists come later
    owners = [await rp.accounts.sign_up(f"owner{i}") for i in range(13)]
    holding = []
    for o in owners:  # followers too (a list holds only accounts followed), after the fans
        await rp.relations.follow(o.id, author.id)
        lst = await rp.lists.create(o.id, f"list of {o.login}")
        await rp.lists.add(o.id, lst.id, author.id)
        holding.append((o, lst))
    await rp.relations.follow(owners[0].id, other.id)
    bystander = await rp.lists.create(owners[0].id, "others only")
    await rp.lists.add(owners[0].id, bystander.id, other.id)

    s = await rp.statuses.post(author.id, "for my lists too")
    await rp.drain()
    for o, lst in holding:
        assert await raw_list(rp, keys.list_timeline(o.id, lst.id)) == [s.id]
        assert [x.id for x in await rp.timelines.of_list(o.id, lst.id)] == [s.id]
        assert await raw_list(rp, keys.home(o.id)) == [s.id]
    assert await raw_list(rp, keys.list_timeline(owners[0].id, bystander.id)) == []
    for f in fans:
        assert await raw_list(rp, keys.home(f.id)) == [s.id]


async def test_small_audience_list_is_fed_during_the_call(rp):
    author = await rp.accounts.sign_up("author")
    owner = await rp.accounts.sign_up("owner")
    await rp.relations.follow(owner.id, author.id)
    lst = await rp.lists.create(owner.id, "news")
    await rp.lists.add(owner.id, lst.id, author.id)
    await rp.drain()  # the follow's notification job
    s = await rp.statuses.post(author.id, "breaking")
    assert await raw_list(rp, keys.list_timeline(owner.id, lst.id)) == [s.id]
    assert await rp.queue.depth() == 0


async def test_fanout_held_by_a_posting_call_that_died_is_taken_over(rp10):
    """Posting holds its fan-out job (job_hold.lua) while it runs the first
    step itself. If the posting process dies before handing the rest over,
    the held entry goes idle and a worker takes it over: nobody is missed."""
    author = await rp10.accounts.sign_up("held_author")
    status = await rp10.statuses.post(author.id, "before the audience arrived")
    fans = await make_audience(rp10, author, 25)
    for fan in fans:  # the follow backfill delivered it; take it out again
        await rp10.store.client.lrem(keys.home(fan.id), 0, status.id)
    # what post() does before its first step, and then "dies"
    held = await rp10.queue.hold(FanoutJob(status.id, author.id))
    assert held.stream in keys.all_held_job_streams()
    pending = await rp10.store.client.xpending(held.stream, keys.JOB_GROUP)
    assert pending["pending"] == 1  # taken at once: no worker reads it as new
    assert await rp10.queue.depth() == 1
    await rp10.drain(timeout=60)  # claim timeout is 500 ms in the test settings
    for fan in fans:
        assert await count_in(rp10, keys.home(fan.id), status.id) == 1
    assert await rp10.queue.depth() == 0


async def test_posting_releases_its_held_job(rp10):
    author = await rp10.accounts.sign_up("releaser")
    fans = await make_audience(rp10, author, 25)
    await rp10.statuses.post(author.id, "big enough for a continuation")
    for stream in keys.all_held_job_streams():
        assert await rp10.store.client.xlen(stream) == 0
    jobs = await queued_jobs(rp10)
    assert len(jobs) == 1 and jobs[0].after > 0  # only the continuation is queued
    await rp10.drain()
    for fan in fans:
        assert len(await rp10.timelines.home(fan.id)) == 1


async def test_full_queue_refuses_new_posts_and_writes_nothing(rp, monkeypatch):
    """Past limits.QUEUE_MAX_JOBS queued jobs, posting answers QueueFull (a
    Busy: retry later) before it writes anything."""
    from redpoll.core.errors import QueueFull

    author = await rp.accounts.sign_up("too_busy")
    monkeypatch.setattr(limits, "QUEUE_MAX_JOBS", 3)
    for n in range(3):
        await rp.queue.enqueue(RefillJob(author.id + 1000 + n))
    rp.queue._depth_checked_at = 0.0  # the depth is re-read at most once a second
    before = await rp.store.client.get(keys.STATUS_SEQ)
    with pytest.raises(QueueFull):
        await rp.statuses.post(author.id, "one too many")
    assert await rp.store.client.get(keys.STATUS_SEQ) == before
    assert (await rp.accounts.get_user(author.id)).posts == 0
    await rp.drain()
    rp.queue._depth_checked_at = 0.0
    assert (await rp.statuses.post(author.id, "room again")).text == "room again"
