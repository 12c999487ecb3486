"""Deferred work survives failure, and acknowledged writes survive a crash.

Everything here uses real parts: real valkey-server processes (the session
server or cluster, or an own EmbeddedServer in tmp_path when the test must
kill and restart it), real ``redpoll worker`` processes, real SIGKILL/SIGTERM.

* Worker death: a worker SIGKILLed in the middle of a long fan-out chain
  leaves at most one job pending; another worker takes it over (XAUTOCLAIM
  after ``job_claim_ms``) and every follower ends up with the status exactly
  once. Same for a job read by a consumer that never acknowledges it.
* Server death: a queued chain (and a pending entry of its consumer group) is
  in the AOF, so it survives a SIGKILL of the server; a worker that is
  running while the server dies and comes back keeps retrying and finishes.
* The durability promise: every acknowledged write is there after a SIGKILL
  of the server (see ``test_acknowledged_writes_survive_server_sigkill``).
* Poison jobs are parked in ``keys.DEAD_JOBS`` instead of blocking the queue.

No assertion is about time: waits poll for a condition, bounded by generous
timeouts that fail with a message saying what did not happen.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest
import redis
import redis.exceptions
from support.cli import BATCH, REDPOLL, WAIT_S, WorkerProcess, wait_for  # noqa: F401

from redpoll import ConfigError, Redpoll, Settings
from redpoll.bus.queue import decode, shard_of
from redpoll.core import keys
from redpoll.storage.server import PORT_FILE, EmbeddedServer
from redpoll.timelines.jobs import FanoutJob

# --- helpers -----------------------------------------------------------------------


async def audience(rp: Redpoll, n: int, prefix: str = "f") -> tuple[int, list[int]]:
    """An author with ``n`` real followers (signed up and following through the
    engine); returns the author id and the followers in delivery order (fan-out
    walks the followers set by follow time)."""
    author = await rp.accounts.sign_up(f"{prefix}author")
    gate = asyncio.Semaphore(64)

    async def one(i: int) -> None:
        async with gate:
            user = await rp.accounts.sign_up(f"{prefix}{i}")
            assert await rp.relations.follow(user.id, author.id)

    await asyncio.gather(*(one(i) for i in range(n)))
    await rp.drain()  # the follow notifications' jobs: tests watch the queue
    order = [int(m) for m in await rp.store.client.zrange(keys.followers(author.id), 0, -1)]
    assert len(order) == n
    return author.id, order


async def copies(rp: Redpoll, uids: list[int], sid: int) -> dict[int, int]:
    """How often ``sid`` occurs in each user's raw home list."""
    pipe = rp.store.pipeline()
    for uid in uids:
        pipe.lrange(keys.home(uid), 0, -1)
    want = str(sid).encode()
    return {uid: row.count(want) for uid, row in zip(uids, await pipe.execute())}


async def has(rp: Redpoll, uid: int, sid: int) -> bool:
    return await rp.store.client.lpos(keys.home(uid), sid) is not None


async def assert_exactly_once(rp: Redpoll, uids: list[int], sid: int) -> None:
    counts = await copies(rp, uids, sid)
    wrong = {uid: c for uid, c in counts.items() if c != 1}
    assert not wrong, (
        f"status {sid}: {len(wrong)} of {len(uids)} home timelines do not hold "
        f"it exactly once, e.g. {dict(list(wrong.items())[:10])}"
    )


async def read_by_hand(rp: Redpoll, sid: int, consumer: str):
    """XREADGROUP the fan-out job of ``sid`` as ``consumer``, which never acks:
    a worker that died right after reading it."""
    stream = shard_of(FanoutJob(sid, 0))
    reply = await rp.store.client.xreadgroup(keys.JOB_GROUP, consumer, {stream: ">"}, count=1)
    assert reply, f"no job queued on {stream} for status {sid}"
    [(entry_id, fields)] = reply[0][1]
    job = decode(fields)
    assert isinstance(job, FanoutJob) and job.sid == sid
    return stream, entry_id, fields


async def pending_of(rp: Redpoll, stream: str, consumer: str) -> list:
    return await rp.store.client.xpending_range(
        stream, keys.JOB_GROUP, min="-", max="+", count=100, consumername=consumer
    )


def start_server(
    data_dir: Path, fsync: str = "everysec", port: int | None = None
) -> EmbeddedServer:
    return EmbeddedServer(data_dir, port=port, fsync=fsync).start()


def snapshot(port: int) -> dict:
    """Every key of a single server with its type and full logical content."""
    client = redis.Redis(port=port)
    try:
        out = {}
        for key in client.scan_iter(count=1000):
            kind = client.type(key)
            if kind == b"string":
                value = client.get(key)
            elif kind == b"hash":
                value = client.hgetall(key)
            elif kind == b"list":
                value = client.lrange(key, 0, -1)
            elif kind == b"zset":
                value = client.zrange(key, 0, -1, withscores=True)
            elif kind == b"set":
                value = sorted(client.smembers(key))
            elif kind == b"stream":
                groups = []
                for group in client.xinfo_groups(key):
                    pel = client.xpending_range(key, group["name"], min="-", max="+", count=10_000)
                    groups.append(
                        (
                            group["name"],
                            group["last-delivered-id"],
                            [(p["message_id"], p["consumer"]) for p in pel],
                        )
                    )
                value = (client.xrange(key), groups)
            else:
                raise AssertionError(f"unexpected type {kind!r} of {key!r}")
            out[key] = (kind, value)
        return out
    finally:
        client.close()


# --- 1. worker death -----------------------------------------------------------------

FOLLOWERS = 2000


async def test_worker_sigkill_mid_fanout(settings, server, tmp_path):
    """Two workers are SIGKILLed in the middle of a long fan-out chain; a third
    finishes it. Every follower gets each status exactly once."""
    url, cluster, _ = server
    rp = await Redpoll.open(settings.with_(fanout_batch=BATCH))
    workers: list[WorkerProcess] = []
    try:
        author, order = await audience(rp, FOLLOWERS)
        first = await rp.statuses.post(author, "the long chain")
        second = await rp.statuses.post(author, "another chain")
        # The call served the first batch; the rest waits in one job per post.
        assert sum((await copies(rp, order, first.id)).values()) == BATCH
        assert await rp.queue.depth() == 2

        reached = BATCH
        for round_, mark in enumerate((0.25, 0.6)):
            worker = WorkerProcess(url, cluster, tmp_path / f"worker{round_}.log")
            workers.append(worker)
            checkpoint = order[int(mark * FOLLOWERS)]

            async def past_checkpoint() -> bool:
                if not worker.alive():
                    raise AssertionError(f"worker exited on its own\n{worker.tail()}")
                return await has(rp, checkpoint, first.id)

            async def progress() -> str:
                got = sum((await copies(rp, order, first.id)).values())
                return f"{got}/{FOLLOWERS} followers served\n{worker.tail()}"

            await wait_for(
                past_checkpoint,
                f"worker {round_} to serve {mark:.0%} of the followers",
                detail=progress,
            )
            worker.kill()
            counts = await copies(rp, order, first.id)
            got = sum(counts.values())
            assert max(counts.values()) == 1
            assert reached < got < FOLLOWERS, (
                f"kill {round_} did not land mid-chain: {got}/{FOLLOWERS} served "
                f"(before: {reached})"
            )
            reached = got

        last = WorkerProcess(url, cluster, tmp_path / "worker-last.log")
        workers.append(last)

        async def drained() -> bool:
            if not last.alive():
                raise AssertionError(f"worker exited on its own\n{last.tail()}")
            return await rp.queue.depth() == 0

        async def final_progress() -> str:
            got = sum((await copies(rp, order, first.id)).values())
            return (
                f"{got}/{FOLLOWERS} followers served, depth {await rp.queue.depth()}, "
                f"pending {await rp.queue.pending()}\n{last.tail()}"
            )

        await wait_for(drained, "the queue to empty after the kills", detail=final_progress)
        for status in (first, second):
            await assert_exactly_once(rp, order + [author], status.id)
        assert await rp.queue.pending() == 0
        assert await rp.store.client.xlen(keys.DEAD_JOBS) == 0
        assert last.terminate() == 0, last.tail()
    finally:
        for worker in workers:
            worker.close()
        await rp.close()


async def test_job_left_pending_by_a_vanished_consumer_is_claimed(settings, server, tmp_path):
    """A job read by a consumer that never acks (it died right after
    XREADGROUP) can only move on through XAUTOCLAIM; a worker process takes it
    over once it has been idle for job_claim_ms and runs the whole chain."""
    url, cluster, _ = server
    rp = await Redpoll.open(settings.with_(fanout_batch=BATCH))
    worker = None
    try:
        author, order = await audience(rp, 300, prefix="g")
        status = await rp.statuses.post(author, "claimed")
        stream, entry_id, _ = await read_by_hand(rp, status.id, "ghost")
        assert [p["message_id"] for p in await pending_of(rp, stream, "ghost")] == [entry_id]

        worker = WorkerProcess(url, cluster, tmp_path / "worker.log")

        async def drained() -> bool:
            if not worker.alive():
                raise AssertionError(f"worker exited on its own\n{worker.tail()}")
            return await rp.queue.depth() == 0

        async def detail() -> str:
            return f"pending: {await rp.queue.pending()}\n{worker.tail()}"

        await wait_for(drained, "the worker to claim the ghost's job and finish", detail=detail)
        await assert_exactly_once(rp, order + [author], status.id)
        assert await pending_of(rp, stream, "ghost") == []
        assert await rp.queue.pending() == 0
        assert worker.terminate() == 0, worker.tail()
    finally:
        if worker is not None:
            worker.close()
        await rp.close()


async def test_late_finish_of_a_claimed_job_does_not_fork_the_chain(settings):
    """A worker that stalls longer than job_claim_ms (not dead, just slow) has
    its job claimed and the chain finished by another worker. When the slow
    one wakes up and completes its step, it must not queue the continuation a
    second time: that would fork the chain and run the rest of it twice."""
    rp = await Redpoll.open(settings.with_(fanout_batch=BATCH, job_claim_ms=500))
    try:
        author, order = await audience(rp, 100, prefix="s")
        status = await rp.statuses.post(author, "slow worker")
        stream, entry_id, fields = await read_by_hand(rp, status.id, "slow")

        stop = asyncio.Event()
        task = asyncio.create_task(rp.worker("fast").run(stop))
        try:
            await wait_for(lambda: _depth_is_zero(rp), "the fast worker to finish the chain")
        finally:
            stop.set()
            await task
        await assert_exactly_once(rp, order, status.id)

        # The slow worker now runs its step to the end, exactly as the worker
        # loop does (handler, then job_next with the continuation).
        await rp.worker("slow")._handle(stream, FanoutJob(status.id, 0).shard(), entry_id, fields)
        depth = await rp.queue.depth()
        assert depth == 0, f"the late finish queued {depth} job(s) again: the chain forked"
        await assert_exactly_once(rp, order, status.id)
    finally:
        await rp.close()


async def _depth_is_zero(rp: Redpoll) -> bool:
    return await rp.queue.depth() == 0


# --- 4. poison jobs -------------------------------------------------------------------


async def test_failing_jobs_are_parked_not_blocking(settings):
    """Jobs that can never succeed end in keys.DEAD_JOBS (at once when they
    cannot be decoded, after JOB_MAX_ATTEMPTS when the handler keeps failing),
    and a real fan-out queued behind them on the same streams completes."""
    rp = await Redpoll.open(settings.with_(fanout_batch=BATCH, job_claim_ms=300))
    try:
        author, order = await audience(rp, 100, prefix="p")
        client = rp.store.client
        malformed = [
            {b"j": b'{"kind":"no-such-job","uid":1}'},  # unknown kind
            {b"j": b"{not json"},  # not JSON
            {b"x": b"no payload field"},  # no payload at all
            {b"j": b"[1, 2]"},  # JSON, not an object
        ]
        # a well-formed job whose handler raises every time: its status key
        # holds a string, so reading it as a hash fails (WRONGTYPE)
        await client.set(keys.status(author * 1000), "not a hash")
        failing = [{b"j": FanoutJob(author * 1000, author).to_json().encode()}]
        for stream in keys.all_job_streams():  # poison every shard, ahead of real work
            for fields in malformed + failing:
                await client.xadd(stream, fields)
        status = await rp.statuses.post(author, "behind the poison")

        stop = asyncio.Event()
        task = asyncio.create_task(rp.worker("w").run(stop))
        try:

            async def detail() -> str:
                dead = await client.xlen(keys.DEAD_JOBS)
                return f"depth {await rp.queue.depth()}, dead {dead}"

            await wait_for(
                lambda: _depth_is_zero(rp), "every job to finish or be parked", detail=detail
            )
        finally:
            stop.set()
            await task

        await assert_exactly_once(rp, order + [author], status.id)
        dead = await client.xrange(keys.DEAD_JOBS)
        parked = sorted(
            (sorted((k, v) for k, v in f.items() if k != b"reason"), f[b"reason"]) for _, f in dead
        )
        shards = len(keys.all_job_streams())
        assert len(parked) == shards * (len(malformed) + len(failing)), parked
        payloads = [sorted(f.items()) for f in malformed + failing]
        assert sorted(p for p, _ in parked) == sorted(payloads * shards)
        for payload, reason in parked:
            if dict(payload) in failing:
                assert reason == b"too many attempts"
            else:
                assert reason.startswith(b"malformed job"), (payload, reason)
        assert await rp.queue.pending() == 0
    finally:
        await rp.close()


# --- 2. server death with work queued / running ------------------------------------


async def test_queued_fanout_survives_server_sigkill(tmp_path):
    """Chains queued (and one job pending to a consumer) when the server is
    SIGKILLed are all there after a restart on the same data, and a worker
    then serves every follower exactly once."""
    # fsync always: this is about the queue's chains, not the fsync policy
    # (with everysec, a server behind on a slow fsync postpones its AOF
    # write up to 2 s, and a SIGKILL then loses what it acknowledged)
    servers = [start_server(tmp_path / "data", "always")]
    settings = Settings(redis_url=servers[0].url, fanout_batch=20, job_claim_ms=500)
    rp = await Redpoll.open(settings)
    try:
        author, order = await audience(rp, 500)
        sids = [(await rp.statuses.post(author, f"queued {i}")).id for i in range(3)]
        stream, entry_id, _ = await read_by_hand(rp, sids[0], "ghost")
        assert await rp.queue.depth() == 3
        assert await rp.queue.pending() == 1

        servers[0].kill()
        await rp.close()
        servers.append(start_server(tmp_path / "data", "always", port=servers[0].port))
        rp = await Redpoll.open(settings)

        assert await rp.queue.depth() == 3
        assert [p["message_id"] for p in await pending_of(rp, stream, "ghost")] == [entry_id]
        for sid in sids:  # nothing past the first batch was delivered yet
            assert sum((await copies(rp, order, sid)).values()) == 20
        await rp.drain(timeout=WAIT_S)
        for sid in sids:
            await assert_exactly_once(rp, order + [author], sid)
        assert await rp.queue.pending() == 0
    finally:
        await rp.close()
        for srv in servers:
            srv.kill()


async def test_worker_rides_out_a_server_crash_and_restart(tmp_path):
    """A worker process running a fan-out chain while the server is SIGKILLed
    logs the outage once, keeps retrying, and once the server is back (same data,
    same port) finishes the chain: every follower exactly once."""
    # fsync always, as test_queued_fanout_survives_server_sigkill: this is about
    # the worker riding out the outage, not the fsync policy (a loaded run lost
    # the last 2 s of acknowledged writes to everysec's postponed AOF write)
    servers = [start_server(tmp_path / "data", "always")]
    settings = Settings(redis_url=servers[0].url, fanout_batch=BATCH, job_claim_ms=500)
    rp = await Redpoll.open(settings)
    worker = None
    try:
        author, order = await audience(rp, 1500)
        status = await rp.statuses.post(author, "through the crash")
        worker = WorkerProcess(servers[0].url, False, tmp_path / "worker.log")
        checkpoint = order[len(order) // 4]

        async def started() -> bool:
            if not worker.alive():
                raise AssertionError(f"worker exited on its own\n{worker.tail()}")
            return await has(rp, checkpoint, status.id)

        await wait_for(
            started, "the worker to serve a quarter of the followers", detail=lambda: _tail(worker)
        )
        assert not await has(rp, order[-1], status.id), "the chain finished before the crash"
        servers[0].kill()
        await rp.close()

        async def complained() -> bool:
            if not worker.alive():
                raise AssertionError(f"worker died with the server\n{worker.tail()}")
            # one line per outage (redpoll.core.health), not a traceback per retry
            return "database unreachable" in worker.log()

        await wait_for(
            complained,
            "the worker to log the lost server",
            interval=0.1,
            detail=lambda: _tail(worker),
        )
        servers.append(start_server(tmp_path / "data", port=servers[0].port))
        rp = await Redpoll.open(settings)

        async def drained() -> bool:
            if not worker.alive():
                raise AssertionError(f"worker exited on its own\n{worker.tail()}")
            return await rp.queue.depth() == 0

        await wait_for(
            drained,
            "the worker to finish the chain after the restart",
            detail=lambda: _tail(worker),
        )
        await assert_exactly_once(rp, order + [author], status.id)
        assert await rp.queue.pending() == 0
        assert "database reachable again" in worker.log(), worker.tail()
        assert "Traceback" not in worker.log(), worker.tail()
        assert worker.terminate() == 0, worker.tail()
    finally:
        if worker is not None:
            worker.close()
        await rp.close()
        for srv in servers:
            srv.kill()


async def _tail(worker: WorkerProcess) -> str:
    return worker.tail()


# --- 3. the durability promise -------------------------------------------------------


async def build_world(rp: Redpoll) -> dict:
    """A little of everything: users with secrets, profiles, follows, posts
    with extras, a delete, an unfollow (refill job), a list with its timeline."""
    alice = await rp.accounts.sign_up(
        "Alice", display_name="Alice A", password="alice-pw", email="alice@example.org"
    )
    bob = await rp.accounts.sign_up("bob", password="bob-pw")
    carol = await rp.accounts.sign_up("carol")
    dave = await rp.accounts.sign_up("dave")
    for a, b in [
        (bob, alice),
        (carol, alice),
        (alice, bob),
        (dave, alice),
        (dave, bob),
        (carol, bob),
    ]:
        assert await rp.relations.follow(a.id, b.id)
    await rp.accounts.update_profile(carol.id, bio="writes about owls")
    a1 = await rp.statuses.post(alice.id, "first", {"location": "52.52,13.40"})
    a2 = await rp.statuses.post(alice.id, "second")
    b1 = await rp.statuses.post(bob.id, "bob speaks")
    await rp.statuses.delete(a2.id, alice.id)
    assert await rp.relations.unfollow(dave.id, bob.id)
    friends = await rp.lists.create(carol.id, "friends")
    assert await rp.lists.add(carol.id, friends.id, bob.id)
    b2 = await rp.statuses.post(bob.id, "bob again")
    a3 = await rp.statuses.post(alice.id, "the last acknowledged write")
    return {
        "users": [alice, bob, carol, dave],
        "list": friends,
        "statuses": [a1.id, b1.id, b2.id, a3.id],
        "deleted": a2.id,
        "a1": a1,
    }


async def engine_view(rp: Redpoll, world: dict) -> dict:
    """What the API shows of the world."""
    uids = [u.id for u in world["users"]]
    lst = world["list"]
    return {
        "users": await rp.accounts.get_users(uids),
        "homes": [[s.id for s in await rp.timelines.home(u)] for u in uids],
        "profiles": [[s.id for s in await rp.timelines.profile(u)] for u in uids],
        "following": [sorted(u.id for u in (await rp.relations.following(uid))[0]) for uid in uids],
        "followers": [sorted(u.id for u in (await rp.relations.followers(uid))[0]) for uid in uids],
        "list": [s.id for s in await rp.timelines.of_list(lst.owner, lst.id)],
        "list_members": [u.id for u in await rp.lists.members(lst.owner, lst.id)],
        "statuses": await rp.statuses.get_statuses(world["statuses"] + [world["deleted"]]),
        "queue": await rp.queue.depth(),
        "login": (await rp.accounts.lookup("ALICE")).id,
        "password": await rp.accounts.check_password("alice", "alice-pw") is not None,
    }


@pytest.mark.parametrize("fsync", ["everysec", "always"])
async def test_acknowledged_writes_survive_server_sigkill(tmp_path, fsync):
    """Why this holds even with ``appendfsync everysec``: Valkey appends every
    write to its AOF buffer and write()s that buffer to the AOF file (into the
    kernel's page cache) before it sends any reply, in the same event-loop
    iteration (beforeSleep flushes the AOF before client replies go out). So
    once a client holds a reply, the write is in the file as far as the kernel
    is concerned, and a crash of the *process* (SIGKILL, OOM kill, segfault)
    loses nothing acknowledged. Only the fsync to the disk is deferred: an OS
    crash or power loss can lose up to about one second of acknowledged
    writes with everysec, and nothing with REDPOLL_FSYNC=always. The server
    is killed right after the last reply, with no pause for an fsync."""
    data = tmp_path / "data"
    servers = [start_server(data, fsync)]
    settings = Settings(redis_url=servers[0].url)
    rp = await Redpoll.open(settings)
    try:
        world = await build_world(rp)
        before = await engine_view(rp, world)
        # after the reads: a home read records its time (redpoll.timelines.hybrid), a write too
        before_keys = snapshot(servers[0].port)
        servers[0].kill()
        assert servers[0].process.returncode == -signal.SIGKILL
        await rp.close()

        servers.append(start_server(data, fsync, port=servers[0].port))
        rp = await Redpoll.open(settings)
        assert snapshot(servers[1].port) == before_keys
        await assert_same_world(rp, world, before)
    finally:
        await rp.close()
        for srv in servers:
            srv.kill()


async def assert_same_world(rp: Redpoll, world: dict, before: dict) -> None:
    """What the engine reads now equals ``before``, and it is the world that
    was built, not an empty one equal to itself."""
    after = await engine_view(rp, world)
    assert after == before
    check_world(after, world)


def check_world(view: dict, world: dict) -> None:
    alice, bob, carol, dave = world["users"]
    a1, b1, b2, a3 = world["statuses"]
    assert [u.login for u in view["users"]] == ["Alice", "bob", "carol", "dave"]
    assert [u.followers for u in view["users"]] == [3, 2, 0, 0]
    assert [u.following for u in view["users"]] == [1, 1, 2, 1]
    assert [u.posts for u in view["users"]] == [2, 2, 0, 0]
    assert view["users"][2].bio == "writes about owls"
    assert view["homes"] == [[a3, b2, b1, a1], [a3, b2, b1, a1], [a3, b2, b1, a1], [a3, a1]]
    assert view["profiles"] == [[a3, a1], [b2, b1], [], []]
    assert view["following"] == [[bob.id], [alice.id], sorted([alice.id, bob.id]), [alice.id]]
    assert view["followers"] == [
        sorted([bob.id, carol.id, dave.id]),
        sorted([alice.id, carol.id]),
        [],
        [],
    ]
    assert view["list"] == [b2, b1]  # adding bob backfilled b1
    assert view["list_members"] == [bob.id]
    assert [s.id for s in view["statuses"]] == [a1, b1, b2, a3]  # the deleted one stays gone
    assert view["statuses"][0] == world["a1"] and "location" in world["a1"].extra
    assert view["login"] == alice.id and view["password"]


async def test_writes_in_flight_at_a_crash(tmp_path):
    """Writers keep going while the server is SIGKILLed under them. Every
    write they got an answer for is there after the restart; the ones cut
    off may or may not be, but the counters still equal their sets."""
    data = tmp_path / "data"
    servers = [start_server(data)]
    settings = Settings(redis_url=servers[0].url)
    rp = await Redpoll.open(settings)
    acked_users: list[int] = []
    acked_follows: list[tuple[int, int]] = []
    acked_posts: list[tuple[int, int]] = []  # (author, status id)
    killed = asyncio.Event()
    try:
        hub = await rp.accounts.sign_up("hub")
        acked_users.append(hub.id)

        async def writer(n: int) -> BaseException | None:
            try:
                me = await rp.accounts.sign_up(f"w{n}")
                acked_users.append(me.id)
                await rp.relations.follow(me.id, hub.id)
                acked_follows.append((me.id, hub.id))
                await rp.relations.follow(hub.id, me.id)
                acked_follows.append((hub.id, me.id))
                i = 0
                while True:
                    status = await rp.statuses.post(me.id, f"post {i} of writer {n}")
                    acked_posts.append((me.id, status.id))
                    i += 1
                    if i % 10 == 0:  # new users keep arriving too
                        extra = await rp.accounts.sign_up(f"w{n}x{i}")
                        acked_users.append(extra.id)
            except (
                redis.exceptions.ConnectionError,
                redis.exceptions.TimeoutError,
                OSError,
            ) as exc:
                assert killed.is_set(), f"writer {n} failed before the crash: {exc!r}"
                return exc

        tasks = [asyncio.create_task(writer(n)) for n in range(8)]
        await wait_for(
            lambda: _at_least(acked_posts, 300),
            "300 acknowledged posts",
            detail=lambda: _first_error(tasks),
        )
        killed.set()
        # SIGKILL in a thread, so the writers keep sending while the server dies
        await asyncio.to_thread(servers[0].kill)
        ended = await asyncio.wait_for(asyncio.gather(*tasks), timeout=WAIT_S)
        assert all(isinstance(e, Exception) for e in ended)
        await rp.close()

        servers.append(start_server(data, port=servers[0].port))
        rp = await Redpoll.open(settings)
        client = rp.store.client
        users = await rp.accounts.get_users(acked_users)
        assert sorted(u.id for u in users) == sorted(acked_users)
        for a, b in acked_follows:
            assert await rp.relations.is_following(a, b)
            assert await client.zscore(keys.followers(b), a) is not None
        statuses = await rp.statuses.get_statuses([sid for _, sid in acked_posts])
        assert [s.id for s in statuses] == [sid for _, sid in acked_posts]
        pipe = rp.store.pipeline()
        for author, sid in acked_posts:
            pipe.zscore(keys.profile(author), sid)
            pipe.lpos(keys.home(author), sid)
        found = await pipe.execute()
        assert all(x is not None for x in found), "an acknowledged post lost its timeline entry"
        # counters equal their sets for everyone, including writes cut off mid-way
        everyone = await rp.accounts.get_users(range(1, int(await client.get(keys.USER_SEQ)) + 1))
        for user in everyone:
            assert user.followers == await client.zcard(keys.followers(user.id)), user
            assert user.following == await client.zcard(keys.following(user.id)), user
            assert user.posts == await client.zcard(keys.profile(user.id)), user
        hub_now = await rp.accounts.get_user(hub.id)
        assert hub_now.followers >= 8 and hub_now.following >= 8
    finally:
        killed.set()
        await rp.close()
        for srv in servers:
            srv.kill()


async def _at_least(items: list, n: int) -> bool:
    return len(items) >= n


async def _first_error(tasks) -> str:
    for task in tasks:
        if task.done() and task.exception() is not None:
            return repr(task.exception())
    return "no writer failed"


async def test_clean_stop_and_restart_keeps_everything(tmp_path):
    """SHUTDOWN (EmbeddedServer.stop) and a restart on the same data dir."""
    data = tmp_path / "data"
    servers = [start_server(data)]
    settings = Settings(redis_url=servers[0].url)
    rp = await Redpoll.open(settings)
    try:
        world = await build_world(rp)
        before = await engine_view(rp, world)
        # after the reads: a home read records its time (redpoll.timelines.hybrid), a write too
        before_keys = snapshot(servers[0].port)
        await rp.close()
        servers[0].stop()
        assert servers[0].process.returncode == 0
        assert not (data / PORT_FILE).exists()

        servers.append(start_server(data))  # any port: the data is in the directory
        rp = await Redpoll.open(Settings(redis_url=servers[1].url))
        assert snapshot(servers[1].port) == before_keys
        await assert_same_world(rp, world, before)
    finally:
        await rp.close()
        for srv in servers:
            srv.kill()


async def test_redpoll_open_reuses_its_data_dir(tmp_path):
    """Redpoll.open without REDIS_URL starts (and owns) the embedded server on
    its data dir; a second open on the same dir attaches to the running one;
    after a close (graceful stop) an open on the same dir finds the data."""
    data = tmp_path / "rp-data"
    settings = Settings(data_dir=str(data), fsync="always")
    first = await Redpoll.open(settings)
    try:
        assert first.server is not None
        config = await first.store.client.config_get("append*")
        assert config["appendonly"] == "yes" and config["appendfsync"] == "always"
        world = await build_world(first)
        before = await engine_view(first, world)

        second = await Redpoll.open(settings)
        try:
            assert second.server is None, "a second server was started on the same data dir"
            assert await engine_view(second, world) == before
            extra = await second.accounts.sign_up("latecomer")
        finally:
            await second.close()
        assert first.server.process.poll() is None, "closing the guest stopped the owner's server"
        assert (await first.accounts.get_user(extra.id)).login == "latecomer"
    finally:
        await first.close()
    assert first.server.process.returncode == 0

    again = await Redpoll.open(settings)
    try:
        assert again.server is not None and again.server.data_dir == data.resolve()
        await assert_same_world(again, world, before)
        assert (await again.accounts.lookup("LATECOMER")).id == extra.id
    finally:
        await again.close()


# --- settings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "env",
    [
        {"REDPOLL_FSYNC": "sometimes"},
        {"REDPOLL_FSYNC": "EVERY_SEC"},
        {"REDPOLL_FSYNC": " always"},
        {"REDPOLL_JOB_CLAIM_MS": "soon"},
        {"REDPOLL_JOB_CLAIM_MS": "1.5"},
        {"REDPOLL_JOB_CLAIM_MS": "0"},
        {"REDPOLL_JOB_CLAIM_MS": "-500"},
        {"REDPOLL_JOB_CLAIM_MS": "99"},
        {"REDPOLL_JOB_CLAIM_MS": "3600001"},
    ],
)
def test_settings_reject_bad_durability_values(env):
    with pytest.raises(ConfigError) as info:
        Settings.from_env(env)
    assert next(iter(env)) in str(info.value)


def test_settings_accept_good_durability_values():
    for fsync in ("always", "everysec", "no"):
        assert Settings.from_env({"REDPOLL_FSYNC": fsync}).fsync == fsync
    assert Settings.from_env({}).fsync == "everysec"
    assert Settings.from_env({"REDPOLL_JOB_CLAIM_MS": "100"}).job_claim_ms == 100
    assert Settings.from_env({"REDPOLL_JOB_CLAIM_MS": "3600000"}).job_claim_ms == 3_600_000
    assert Settings.from_env({}).job_claim_ms == 30_000


def test_worker_command_refuses_a_bad_fsync_setting(tmp_path):
    """The real `redpoll worker` stops at start-up naming the variable, and
    starts no server in its data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDPOLL_") and k != "REDIS_URL"}
    env.update(REDPOLL_FSYNC="nightly", REDPOLL_DATA_DIR=str(tmp_path / "data"))
    done = subprocess.run([str(REDPOLL), "worker"], env=env, capture_output=True, timeout=120)
    assert done.returncode != 0
    assert b"REDPOLL_FSYNC" in done.stderr, done.stderr
    assert not (tmp_path / "data").exists()
