"""Deleting statuses: ownership, at-once removal, exactly-once uncounting,
batched cleanup of follower and list timelines."""

from __future__ import annotations

import asyncio

import pytest
from support.social import audience  # noqa: F401

from redpoll import Redpoll
from redpoll.core import keys, limits
from redpoll.core.errors import Forbidden, StatusNotFound, ValidationError
from redpoll.timelines.jobs import CleanupJob


async def raw_list(rp, key) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(key, 0, -1)]


async def profile_ids(rp, uid) -> list[int]:
    return [int(x) for x in await rp.store.client.zrange(keys.profile(uid), 0, -1)]


async def drain_counting(rp, timeout=60.0) -> int:
    """Like rp.drain(), but returns how many jobs the worker finished."""
    worker = rp.worker("counting")
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        while await rp.queue.depth() > 0:
            assert loop.time() < deadline, "jobs still queued"
            await asyncio.sleep(0.02)
    finally:
        stop.set()
        await task
    return worker.done


@pytest.fixture
async def rp3(settings):
    engine = await Redpoll.open(settings.with_(fanout_batch=3))
    yield engine
    await engine.close()


async def test_only_the_owner_can_delete(rp):
    a = await rp.accounts.sign_up("alice")
    b = await rp.accounts.sign_up("bob")
    await rp.relations.follow(b.id, a.id)
    await rp.drain()  # the follow notification's job
    s = await rp.statuses.post(a.id, "mine")
    with pytest.raises(Forbidden):
        await rp.statuses.delete(s.id, b.id)
    with pytest.raises(Forbidden):  # an unknown user is not the owner either
        await rp.statuses.delete(s.id, b.id + 100)
    assert (await rp.statuses.get_status(s.id)).text == "mine"
    assert (await rp.accounts.get_user(a.id)).posts == 1
    assert await profile_ids(rp, a.id) == [s.id]
    assert await raw_list(rp, keys.home(b.id)) == [s.id]
    assert await rp.queue.depth() == 0


async def test_unknown_and_bad_ids(rp):
    a = await rp.accounts.sign_up("alice")
    s = await rp.statuses.post(a.id, "x")
    with pytest.raises(StatusNotFound):
        await rp.statuses.delete(s.id + 1000, a.id)
    for bad in (0, -5, "abc", "12a", None, 2**53, True, 1.5):
        with pytest.raises(ValidationError):
            await rp.statuses.delete(bad, a.id)
        with pytest.raises(ValidationError):
            await rp.statuses.delete(s.id, bad)
    assert (await rp.accounts.get_user(a.id)).posts == 1
    assert (await rp.statuses.get_status(s.id)).id == s.id


async def test_delete_removes_status_at_once_and_uncounts(rp):
    a = await rp.accounts.sign_up("alice")
    keep = await rp.statuses.post(a.id, "keep")
    gone = await rp.statuses.post(a.id, "gone")
    stats_before = (await rp.stats())["statuses"]
    await rp.statuses.delete(gone.id, a.id)

    with pytest.raises(StatusNotFound):
        await rp.statuses.get_status(gone.id)
    assert [s.id for s in await rp.timelines.profile(a.id)] == [keep.id]
    assert [s.id for s in await rp.timelines.home(a.id)] == [keep.id]
    assert await profile_ids(rp, a.id) == [keep.id]
    assert await raw_list(rp, keys.home(a.id)) == [keep.id]
    # what is left is a tombstone that expires: no text, who owned it, who marked it
    tomb = await rp.store.client.hgetall(keys.status(gone.id))
    assert set(tomb) == {b"id", b"uid", b"deleted"} and tomb[b"uid"] == str(a.id).encode()
    assert 0 < await rp.store.client.ttl(keys.status(gone.id)) <= limits.DELETED_TOMBSTONE_S
    assert (await rp.accounts.get_user(a.id)).posts == 1
    assert (await rp.stats())["statuses"] == stats_before - 1
    assert await rp.statuses.get_statuses([gone.id, keep.id]) == [keep]

    with pytest.raises(StatusNotFound):
        await rp.statuses.delete(gone.id, a.id)
    assert (await rp.accounts.get_user(a.id)).posts == 1


async def test_concurrent_deletes_uncount_once(rp):
    a = await rp.accounts.sign_up("alice")
    f = await rp.accounts.sign_up("fan")
    await rp.relations.follow(f.id, a.id)
    others = [await rp.statuses.post(a.id, f"o{i}") for i in range(3)]
    target = await rp.statuses.post(a.id, "contested")
    before = (await rp.stats())["statuses"]

    results = await asyncio.gather(
        *(rp.statuses.delete(target.id, a.id) for _ in range(10)), return_exceptions=True
    )
    for r in results:
        assert r is None or isinstance(r, StatusNotFound), repr(r)
    assert any(r is None for r in results)
    user = await rp.accounts.get_user(a.id)
    assert user.posts == 3 == await rp.store.client.zcard(keys.profile(a.id))
    assert (await rp.stats())["statuses"] == before - 1
    await rp.drain()
    expected = sorted((s.id for s in others), reverse=True)
    assert await raw_list(rp, keys.home(f.id)) == expected
    assert await raw_list(rp, keys.home(a.id)) == expected


async def test_cleanup_reaches_every_home_and_list_in_several_jobs(rp3):
    rp = rp3
    author = await rp.accounts.sign_up("author")
    fans = await audience(rp, author, 12, "fan")
    lists = []
    for i in range(5):
        owner = fans[i] if i < 3 else await rp.accounts.sign_up(f"owner{i}")
        if i >= 3:
            await rp.relations.follow(owner.id, author.id)  # lists hold only accounts followed
        lst = await rp.lists.create(owner.id, f"l{i}")
        await rp.lists.add(owner.id, lst.id, author.id)
        lists.append((owner.id, lst.id))
    keep = await rp.statuses.post(author.id, "stays")
    gone = await rp.statuses.post(author.id, "goes")
    await rp.drain()
    timelines = [keys.home(f.id) for f in fans] + [keys.list_timeline(o, l) for o, l in lists]
    for key in timelines:
        assert await raw_list(rp, key) == [gone.id, keep.id], key

    await rp.statuses.delete(gone.id, author.id)
    # reads skip it at once, whatever the jobs have done so far
    for f in fans:
        assert [s.id for s in await rp.timelines.home(f.id)] == [keep.id]
    for o, l in lists:
        assert [s.id for s in await rp.timelines.of_list(o, l)] == [keep.id]
    assert await rp.queue.depth() >= 1

    jobs = await drain_counting(rp)
    # 12 homes and 5 lists in batches of 3 cannot be done in fewer than 4 steps
    assert jobs >= 4
    for key in timelines:
        assert await raw_list(rp, key) == [keep.id], key
    assert await raw_list(rp, keys.home(author.id)) == [keep.id]
    with pytest.raises(StatusNotFound):
        await rp.statuses.delete(gone.id, author.id)
    assert (await rp.accounts.get_user(author.id)).posts == 1


async def test_delete_while_fanout_is_still_running(rp3):
    """Deleted before its fan-out chain finished: the chain stops and the
    cleanup takes back what the first batch delivered."""
    rp = rp3
    author = await rp.accounts.sign_up("author")
    fans = await audience(rp, author, 10, "fan")
    s = await rp.statuses.post(author.id, "oops")
    assert [s.id in await raw_list(rp, keys.home(f.id)) for f in fans] == [True] * 3 + [False] * 7
    await rp.statuses.delete(s.id, author.id)
    await rp.drain()
    for f in [author] + fans:
        assert await raw_list(rp, keys.home(f.id)) == [], f.login
    assert (await rp.accounts.get_user(author.id)).posts == 0


async def test_cleanup_job_run_again_is_harmless(rp3):
    rp = rp3
    author = await rp.accounts.sign_up("author")
    fans = await audience(rp, author, 7, "fan")
    a = await rp.statuses.post(author.id, "a")
    b = await rp.statuses.post(author.id, "b")
    await rp.drain()
    await rp.statuses.delete(a.id, author.id)
    await rp.drain()
    await rp.queue.enqueue(CleanupJob(a.id, author.id))
    await rp.drain()
    for f in fans:
        assert await raw_list(rp, keys.home(f.id)) == [b.id]
    assert (await rp.accounts.get_user(author.id)).posts == 1


async def test_delete_racing_the_fanout_leaves_no_id_behind(rp3):
    """Deletes land at random points of a running fan-out chain (a worker
    running while the delete and its cleanup happen). Whatever the
    interleaving, no follower timeline keeps the id once the jobs are done:
    a fan-out step that finds its status deleted after delivering takes the
    batch back out."""
    author = await rp3.accounts.sign_up("racer")
    fans = [await rp3.accounts.sign_up(f"rf{i}") for i in range(20)]
    for fan in fans:
        await rp3.relations.follow(fan.id, author.id)
    stop = asyncio.Event()
    worker = asyncio.create_task(rp3.worker("racing").run(stop))
    try:
        posted = []
        for round_ in range(12):
            status = await rp3.statuses.post(author.id, f"doomed {round_}")
            posted.append(status.id)
            await asyncio.sleep(0.001 * (round_ % 4))  # land at different steps
            await rp3.statuses.delete(status.id, author.id)
        for _ in range(3000):
            if await rp3.queue.depth() == 0:
                break
            await asyncio.sleep(0.02)
        assert await rp3.queue.depth() == 0
    finally:
        stop.set()
        await worker
    for fan in fans:
        left = set(await raw_list(rp3, keys.home(fan.id))) & set(posted)
        assert not left, f"deleted ids {left} left in the home of {fan.id}"
