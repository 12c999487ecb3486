"""`redpoll bench`: redpoll against a naive client written as the classic
"social network on Redis" design has it (Redis in Action, chapter 8:
statuses as hashes, timelines as sorted sets trimmed to 1,000, fan-out in
pipelines of 1,000 followers), side by side on one server in one run.

Four figures, each a ratio of two rates measured in the same process against
the same server, the contenders taking turns in short slices so that the load
of a shared machine hits them alike:

fan-out
    One post delivered to every follower of an author (``--followers``), and
    to the author's own home. Every home starts with the same 5 older entries
    in both layouts; the contenders deliver the same ids, post by post.
    *redpoll*: the real delivery path, ``fanout.step`` with ``deliver.lua``
    called in a loop with its cursor (the first step also serves the author's
    home), exactly the work of ``post`` plus its chained fan-out jobs, without
    the job queue's latency and without creating the status hash.
    *naive*: for each page of 1,000 followers (ZRANGE by rank), one pipeline
    with ZADD status -> time and ZREMRANGEBYRANK 0 -1001 per follower's ZSET.
    *limit*: a Lua loop that only LPUSHes the id into redpoll's LIST keys
    (key names computed beforehand, 1,000 keys a call; no follower reads, no
    checks, no trim): what inserting the ids costs at the least.
read
    Pages of 20 from home timelines at their cap, over many users and pages.
    *redpoll*: ``rp.timelines.home(uid, limit=20, max_id=...)``.
    *naive*: the design source's ``get_status_messages``, reading the same
    fields redpoll's page brings (a page shows each status with its counts
    and its author's account): ZREVRANGE of the ZSET, then one pipeline of
    the page's status HGETALLs with their counts' HMGETs, then one of the
    distinct authors' HGETALLs (non-transactional: the source's MULTI/EXEC
    only adds work), on the same asyncio client; ``read_ratio`` is against
    it. *naive, statuses only*: the source's code as it is (the status
    hashes, no counts or authors; ``read_ratio_statuses_only``).
    *seed (sync)*: the same code on a plain synchronous redis-py client, as
    the source runs it; printed in statuses/s (information, not a target).
follow
    ``a`` follows ``b`` who has 1,000 statuses; a's home already holds 500.
    *redpoll*: ``rp.relations.follow``, which also checks blocks and locked accounts
    and journals the followed user's notification; the notification itself
    is a job (as Mastodon's), run after the timing. *naive*: the source's
    ``follow_user``: a
    ZSCORE check, then one MULTI/EXEC pipeline (ZADD following, ZADD
    followers, ZREVRANGE of b's 1,000 newest WITHSCORES) and a second one
    (two HINCRBY, ZADD into the home ZSET, ZREMRANGEBYRANK).
memory
    MEMORY USAGE (SAMPLES 0) per entry of full (1,000 entries) home timelines:
    redpoll's LIST against naive's ZSET, same ids in both.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import random
import resource
import statistics
import tempfile
import time
from dataclasses import dataclass

import click

from ..core import keys, limits
from ..core.models import Status, User
from ..core.settings import Settings
from ..engine.engine import Redpoll
from ..storage.server import EmbeddedCluster, EmbeddedServer
from ..timelines import fanout, placement
from . import Console, bench_cluster, bench_fts

#: target name -> (op, bound): the ratio must be >= (or <=) the bound.
TARGETS = {
    "fanout_ratio": (">=", 4.0),
    "fanout_vs_limit": (">=", 0.7),
    "read_ratio": (">=", 2.0),
    "follow_ratio": (">=", 3.0),
    "memory_ratio": ("<=", 0.35),
}

#: Bench ids: users and statuses far from the ids a fresh server hands out,
#: and "a few million" like a live site's.
UID_BASE = 7_000_000
#: Entries every home holds before the fan-out posts.
FANOUT_PREFILL = 5
#: Reading time slice of one contender before the next takes its turn.
READ_SLICE_S = 0.25
#: Follows one contender makes before the next takes its turn.
FOLLOW_BLOCK = 25
SID_BASE = 3_000_000
#: Fan-out followers on a cluster by default: delivery there is one script
#: call per hash slot of a batch, so 100,000 would take minutes.
CLUSTER_FOLLOWERS = 20_000

PROBE_LUA = """
local sid = ARGV[1]
for _, key in ipairs(KEYS) do redis.call('LPUSH', key, sid) end
return #KEYS
"""

WORDS = (
    "the quick brown fox jumps over lazy dog redis valkey timeline status follow "
    "post home list cap fan out batch page cursor stream filter sample track "
    "coffee morning rain train city night music photo today news"
).split()


@dataclass
class Sizes:
    followers: int = 100_000
    posts: int = 8  # fan-out posts timed (after one warm-up post)
    authors: int = 40  # followees, each with HOME_CAP statuses
    readers: int = 500  # users with full timelines (reads, memory)
    read_seconds: float = 5.0  # reading time per contender
    follows: int = 600  # follows per contender
    memory_sample: int = 200
    prefill: int = 500  # entries in a home before a follow

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            followers=2_000,
            posts=2,
            authors=4,
            readers=40,
            read_seconds=0.3,
            follows=20,
            memory_sample=20,
            prefill=200,
        )


def nv_home(uid) -> str:
    return f"nv:home:{{{uid}}}"


def nv_user(uid) -> str:
    return f"nv:u:{{{uid}}}"


def nv_following(uid) -> str:
    return f"nv:fing:{{{uid}}}"


def nv_followers(uid) -> str:
    return f"nv:fers:{{{uid}}}"


def nv_posts(uid) -> str:
    return f"nv:posts:{{{uid}}}"


def client_cpu() -> float:
    """Seconds of CPU this process has used."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


class Bench:
    def __init__(self, rp: Redpoll, sizes: Sizes, seed: int, say):
        self.rp = rp
        self.store = rp.store
        self.r = rp.store.client
        self.sizes = sizes
        self.rng = random.Random(seed)
        self.say = say
        self.created: list[str] = []  # every key we wrote, for the clean-up
        self.next_uid = UID_BASE
        self.next_sid = SID_BASE
        self.clock_ms = 1_700_000_000_000
        self.probe = self.r.register_script(PROBE_LUA)
        self.status_time: dict[int, int] = {}
        self.fanout_sids: list[int] = []

    def sync_client(self):
        """A plain synchronous redis-py client on the same server (the seed's way)."""
        import redis
        from redis.cluster import RedisCluster

        url = self.rp.settings.redis_url
        return RedisCluster.from_url(url) if self.store.cluster else redis.Redis.from_url(url)

    async def unlink_all(self, names: list[str]) -> None:
        """Delete keys in bulk (setup and clean-up, not timed): one UNLINK
        per slot group (Store.slot_groups: one group on a single server), at
        most 1,000 keys each, in pipelines."""
        for part in chunks(names, 10_000):
            pipe = self.store.pipeline()
            for group in self.store.slot_groups(part):
                for sub in chunks(group, 1000):
                    # (the cluster pipeline's own unlink is a coroutine that
                    # splits by slot; the plain command is queued like any other)
                    pipe.execute_command("UNLINK", *sub)
            await pipe.execute()

    # --- data ------------------------------------------------------------------
    def uids(self, n: int) -> list[int]:
        first = self.next_uid
        self.next_uid += n
        return list(range(first, first + n))

    def new_sids(self, n: int) -> list[int]:
        """Increasing ids with small random gaps (other users' posts)."""
        out = []
        for _ in range(n):
            self.next_sid += self.rng.randint(1, 4)
            self.clock_ms += self.rng.randint(1, 50)
            out.append(self.next_sid)
            self.status_time[self.next_sid] = self.clock_ms
        return out

    def text(self) -> str:
        return " ".join(self.rng.choices(WORDS, k=self.rng.randint(8, 22)))

    async def flush_pipe(self, ops, per_pipe: int = 2000) -> None:
        """Run ``(method, args)`` pairs in pipelines (setup only, not timed)."""
        for part in chunks(ops, per_pipe):
            pipe = self.store.pipeline()
            for method, args in part:
                getattr(pipe, method)(*args)
            await pipe.execute()

    async def make_users(self, uids: list[int], naive: bool = True) -> None:
        ops = []
        for uid in uids:
            login = f"bench{uid}"
            ops.append(
                (
                    "hset",
                    (
                        keys.user(uid),
                        None,
                        None,
                        {
                            "id": uid,
                            "login": login,
                            "name": login,
                            "bio": "",
                            "at": self.clock_ms,
                            "followers": 0,
                            "following": 0,
                            "posts": 0,
                            "rev": 1,
                        },
                    ),
                )
            )  # as create_user.lua writes it
            self.created.append(keys.user(uid))
            if naive:
                ops.append(
                    (
                        "hset",
                        (
                            nv_user(uid),
                            None,
                            None,
                            {"id": uid, "login": login, "followers": 0, "following": 0, "posts": 0},
                        ),
                    )
                )
                self.created.append(nv_user(uid))
        await self.flush_pipe(ops)

    async def make_statuses(self, sids: list[int], authors: list[int]) -> None:
        ops = []
        for sid, uid in zip(sids, authors):
            st = Status(
                id=sid,
                text=self.text(),
                created_at=self.status_time[sid],
                user_id=uid,
                login=f"bench{uid}",
            )
            ops.append(("hset", (keys.status(sid), None, None, st.to_hash())))
            self.created.append(keys.status(sid))
        await self.flush_pipe(ops)

    async def set_timeline(
        self, uid: int, ids_desc: list[int], rp: bool = True, naive: bool = True
    ) -> None:
        """The same entries in redpoll's LIST and naive's ZSET (setup only)."""
        pipe = self.store.pipeline()
        for key, wanted in ((keys.home(uid), rp), (nv_home(uid), naive)):
            if wanted:
                pipe.delete(key)
                self.created.append(key)
        for part in chunks(ids_desc, 500):
            if rp:
                pipe.rpush(keys.home(uid), *part)
            if naive:
                pipe.zadd(nv_home(uid), {sid: self.status_time[sid] for sid in part})
        await pipe.execute()

    async def build_authors(self) -> None:
        """Followees with HOME_CAP statuses each: the pool every timeline uses."""
        s = self.sizes
        self.authors = self.uids(s.authors)
        await self.make_users(self.authors)
        n = s.authors * limits.HOME_CAP
        self.pool = self.new_sids(n)
        owners = [self.authors[i % s.authors] for i in range(n)]
        self.rng.shuffle(owners)
        await self.make_statuses(self.pool, owners)
        per_author: dict[int, list[int]] = {a: [] for a in self.authors}
        for sid, a in zip(self.pool, owners):
            per_author[a].append(sid)
        pipe = self.store.pipeline()
        for a, sids in per_author.items():
            # redpoll's profile (score = id, as record_post writes it) and
            # naive's posts ZSET (score = posted time)
            pipe.zadd(keys.profile(a), {sid: sid for sid in sids})
            pipe.zadd(nv_posts(a), {sid: self.status_time[sid] for sid in sids})
            pipe.hset(keys.user(a), "posts", len(sids))
            pipe.hset(nv_user(a), "posts", len(sids))
            self.created += [keys.profile(a), nv_posts(a)]
        await pipe.execute()

    # --- fan-out -----------------------------------------------------------------
    async def fanout(self) -> dict:
        s = self.sizes
        author = self.uids(1)[0]
        followers = self.uids(s.followers)
        await self.make_users([author])
        # the follow scores: unique, increasing microseconds, as edge_set.lua writes
        start_us = self.clock_ms * 1000
        pipe_ops = []
        for part in chunks(followers, 1000):
            pipe_ops.append(
                (
                    "zadd",
                    (keys.followers(author), {f: start_us + (f - followers[0]) * 7 for f in part}),
                )
            )
        await self.flush_pipe(pipe_ops, 50)
        await self.r.hset(keys.user(author), "followers", s.followers)
        self.created.append(keys.followers(author))
        sids = self.new_sids(s.posts + 1)  # + the warm-up post
        self.fanout_sids = sids
        await self.make_statuses(sids, [author] * len(sids))

        rp_homes = [keys.home(author)] + [keys.home(f) for f in followers]
        nv_homes = [nv_home(author)] + [nv_home(f) for f in followers]
        self.created += rp_homes + nv_homes
        # every home starts with the same few older entries in both layouts
        # (real homes are rarely empty, and no contender pays for creating keys)
        old = sorted(self.rng.sample(self.pool, FANOUT_PREFILL), reverse=True)
        old_scores = {sid: self.status_time[sid] for sid in old}
        for part in chunks(list(zip(rp_homes, nv_homes)), 5000):
            pipe = self.store.pipeline()
            for rk, nk in part:
                pipe.rpush(rk, *old)
                pipe.zadd(nk, old_scores)
            await pipe.execute()
        probe_batches = [rp_homes[: 1 + 1000]] + list(chunks(rp_homes[1 + 1000 :], 1000))
        # a script's keys share a slot on a cluster: the probe pushes per slot
        probe_batches = [g for part in probe_batches for g in self.store.slot_groups(part)]
        batch = self.rp.settings.fanout_batch
        targets = s.followers + 1

        # the first step serves the author's own home and the public
        # timeline besides the first batch of followers, as ``post`` does
        async def redpoll_one(sid):
            cursor = fanout.Cursor()
            while cursor is not None:
                cursor = await fanout.step(self.store, "deliver", sid, author, cursor, batch)

        async def naive_one(sid):
            at = self.status_time[sid]
            fers = keys.followers(author)
            await self.r.zadd(nv_home(author), {sid: at})
            await self.r.zremrangebyrank(nv_home(author), 0, -(limits.HOME_CAP + 1))
            start = 0
            while True:
                page = await self.r.zrange(fers, start, start + 999)
                if not page:
                    break
                pipe = self.r.pipeline(transaction=False)
                for m in page:
                    home = nv_home(int(m))
                    pipe.zadd(home, {sid: at})
                    pipe.zremrangebyrank(home, 0, -(limits.HOME_CAP + 1))
                await pipe.execute()
                start += 1000

        async def limit_one(sid):
            for part in probe_batches:
                await self.probe(keys=part, args=[sid])

        # Post by post, the contenders take turns, so a burst of load on the
        # shared machine hits them alike. The probe pushes into redpoll's
        # lists, so it runs right after redpoll (had it run first, redpoll
        # would find the id already there and skip the work); naive runs
        # before or after that pair, alternately. The first post warms up.
        run = {"redpoll": redpoll_one, "naive": naive_one, "limit": limit_one}
        rates: dict[str, list[float]] = {name: [] for name in run}
        totals = {name: [0, 0.0] for name in run}
        for k, sid in enumerate(sids):
            order = ["redpoll", "limit", "naive"] if k % 2 else ["naive", "redpoll", "limit"]
            line = []
            for name in order:
                t0 = time.perf_counter()
                await run[name](sid)
                dt = time.perf_counter() - t0
                line.append(f"{name} {targets / dt:,.0f}")
                if k == 0:
                    continue
                rates[name].append(targets / dt)
                totals[name][0] += targets
                totals[name][1] += dt
            self.say(
                f"  post {k + 1}{' (warm-up)' if k == 0 else ''}: "
                + ", ".join(line)
                + " deliveries/s"
            )
        # the work was really done: the newest post heads both layouts, everywhere
        checks = [rp_homes[0], rp_homes[len(rp_homes) // 2], rp_homes[-1]]
        pipe = self.store.pipeline()
        for key in checks:
            pipe.lindex(key, 0)
        for key in (nv_homes[0], nv_homes[len(nv_homes) // 2], nv_homes[-1]):
            pipe.zrevrange(key, 0, 0)
        heads = await pipe.execute()
        want = str(sids[-1]).encode()
        assert heads[:3] == [want] * 3 and heads[3:] == [[want]] * 3, heads
        for homes in (rp_homes, nv_homes):
            await self.unlink_all(homes)
        out = {name: statistics.median(v) for name, v in rates.items()}
        return {
            "followers": s.followers,
            "posts": s.posts,
            "batch": batch,
            "home_before": FANOUT_PREFILL,
            "redpoll_per_s": out["redpoll"],
            "naive_per_s": out["naive"],
            "limit_per_s": out["limit"],
            "total_per_s": {k: v[0] / v[1] for k, v in totals.items()},
        }

    # --- reads ---------------------------------------------------------------------
    async def build_readers(self) -> None:
        """Readers whose homes are at the cap, same ids in both layouts; then 20
        more posts delivered through each path, so both timelines have been
        pushed and trimmed the way they are in use."""
        s = self.sizes
        self.readers = self.uids(s.readers)
        await self.make_users(self.readers, naive=False)
        for uid in self.readers:
            ids = sorted(self.rng.sample(self.pool, limits.HOME_CAP), reverse=True)
            await self.set_timeline(uid, ids)
        churn = self.new_sids(20)
        await self.make_statuses(churn, self.rng.choices(self.authors, k=len(churn)))
        for sid in churn:
            await self.store.run_grouped(
                "deliver", [keys.home(u) for u in self.readers], [sid, limits.HOME_CAP]
            )
            pipe = self.store.pipeline()
            for u in self.readers:
                pipe.zadd(nv_home(u), {sid: self.status_time[sid]})
                pipe.zremrangebyrank(nv_home(u), 0, -(limits.HOME_CAP + 1))
            await pipe.execute()
        pipe = self.store.pipeline()
        for u in self.readers:
            pipe.lrange(keys.home(u), 0, -1)
        self.reader_ids = {
            u: [int(x) for x in ids] for u, ids in zip(self.readers, await pipe.execute())
        }

    async def reads(self) -> dict:
        s = self.sizes
        pages = 10
        plan = [(self.rng.choice(self.readers), self.rng.randrange(pages)) for _ in range(20_000)]
        # the max_id of page p is the id just above it (pages hold ids < max_id)
        rp_plan = [(u, self.reader_ids[u][20 * p - 1] if p else None) for u, p in plan]

        async def redpoll_run(i):
            uid, max_id = rp_plan[i]
            page = await self.rp.timelines.home(uid, limit=20, max_id=max_id)
            return len(page)

        async def naive_run(i):
            # get_status_messages reading what a page shows: the statuses with
            # their counts (one pipeline), then their authors (one more)
            uid, p = plan[i]
            ids = [int(x) for x in await self.r.zrevrange(nv_home(uid), 20 * p, 20 * p + 19)]
            pipe = self.r.pipeline(transaction=False)
            for sid in ids:
                pipe.hgetall(keys.status(sid))
            for sid in ids:
                pipe.hmget(keys.status_counts(sid), "f", "r", "p")
            replies = await pipe.execute()
            found = [
                st
                for st in (Status.from_hash(raw) for raw in replies[: len(ids)])
                if st is not None
            ]
            counts = [tuple(int(c or 0) for c in row) for row in replies[len(ids) :]]
            pipe = self.r.pipeline(transaction=False)
            authors = list(dict.fromkeys(st.user_id for st in found))
            for author in authors:
                pipe.hgetall(keys.user(author))
            users = {u.id: u for u in map(User.from_hash, await pipe.execute())}
            assert len(counts) == len(ids) and all(st.user_id in users for st in found)
            return len(found)

        async def naive_statuses_run(i):
            # the design source's get_status_messages, pipelines as it has them
            uid, p = plan[i]
            ids = await self.r.zrevrange(nv_home(uid), 20 * p, 20 * p + 19)
            pipe = self.r.pipeline(transaction=False)
            for sid in ids:
                pipe.hgetall(keys.status(int(sid)))
            found = (Status.from_hash(raw) for raw in await pipe.execute())
            return len([st for st in found if st is not None])

        sync = self.sync_client()

        async def seed_sync_run(i):
            # the same code on a plain synchronous client, as the source runs
            # it (blocks the loop for its slice; nothing else runs then)
            uid, p = plan[i]
            ids = sync.zrevrange(nv_home(uid), 20 * p, 20 * p + 19)
            pipe = sync.pipeline(transaction=False)
            for sid in ids:
                pipe.hgetall(keys.status(int(sid)))
            found = (Status.from_hash(raw) for raw in pipe.execute())
            return len([st for st in found if st is not None])

        # same pages, same answers
        for i in range(5):
            a, b, c = await redpoll_run(i), await naive_run(i), await seed_sync_run(i)
            d = await naive_statuses_run(i)
            assert a == b == c == d == 20, (a, b, c, d)
        # the contenders take turns in short slices (order rotating), so load
        # from elsewhere on the machine hits them alike
        contenders = {
            "redpoll": redpoll_run,
            "naive": naive_run,
            "naive_statuses": naive_statuses_run,
            "seed_sync": seed_sync_run,
        }
        done = {name: [0, 0.0] for name in contenders}
        order = list(contenders)
        slices = max(1, round(s.read_seconds / READ_SLICE_S))
        for _ in range(slices):
            for name in order:
                run = contenders[name]
                i0 = done[name][0]
                t0 = time.perf_counter()
                end = t0 + s.read_seconds / slices
                n = 0
                while True:
                    await run((i0 + n) % len(plan))
                    n += 1
                    if n % 4 == 0 and time.perf_counter() >= end:
                        break
                done[name][0] += n
                done[name][1] += time.perf_counter() - t0
            order = order[1:] + order[:1]
        sync.close()
        rate = {name: n / dt for name, (n, dt) in done.items()}
        self.say("  " + ", ".join(f"{name} {r:,.0f}" for name, r in rate.items()) + " pages/s")
        return {
            "readers": s.readers,
            "page": 20,
            "pages_per_user": pages,
            "seconds_each": s.read_seconds,
            "redpoll_per_s": rate["redpoll"],
            "naive_per_s": rate["naive"],
            "naive_statuses_only_per_s": rate["naive_statuses"],
            "seed_sync_per_s": rate["seed_sync"],
            "statuses_per_s": {name: 20 * r for name, r in rate.items()},
            "requests": {name: n for name, (n, _) in done.items()},
        }

    # --- follows ---------------------------------------------------------------------
    async def follows(self) -> dict:
        s = self.sizes
        contenders = ("redpoll", "naive")
        # each contender gets its own fresh followers, whose homes hold the
        # same number of older entries; b is one of the authors, round robin
        users = {name: self.uids(s.follows) for name in contenders}
        for name, uids in users.items():
            await self.make_users(uids)
            for uid in uids:
                ids = sorted(self.rng.sample(self.pool, s.prefill), reverse=True)
                await self.set_timeline(uid, ids, rp=name == "redpoll", naive=name == "naive")
                self.created += [keys.following(uid), nv_following(uid)]
        self.created += [keys.followers(b) for b in self.authors]
        self.created += [nv_followers(b) for b in self.authors]

        async def redpoll_run(a, b):
            assert await self.rp.relations.follow(a, b)

        multi = not self.store.cluster

        async def naive_run(a, b):
            # the design source's follow_user: a check, then two MULTI/EXEC
            # pipelines (the second needs the first's counts and statuses)
            r = self.r
            if await r.zscore(nv_following(a), b):
                return
            now = time.time()
            # a cluster cannot run a MULTI over two users' slots
            pipe = r.pipeline(transaction=multi)
            pipe.zadd(nv_following(a), {b: now})
            pipe.zadd(nv_followers(b), {a: now})
            pipe.zrevrange(nv_posts(b), 0, limits.HOME_CAP - 1, withscores=True)
            following, followers, posts = (await pipe.execute())[-3:]
            pipe = r.pipeline(transaction=multi)
            pipe.hincrby(nv_user(a), "following", int(following))
            pipe.hincrby(nv_user(b), "followers", int(followers))
            if posts:
                pipe.zadd(nv_home(a), dict(posts))
            pipe.zremrangebyrank(nv_home(a), 0, -(limits.HOME_CAP + 1))
            await pipe.execute()

        # blocks of a few follows each, taking turns, order rotating; the
        # CPU each block cost this process and the server's main thread (it
        # survives a busy machine better than the rates: information)
        run = {"redpoll": redpoll_run, "naive": naive_run}
        done = {name: [0, 0.0] for name in contenders}
        cpu = {name: [0.0, 0.0] for name in contenders}
        order = list(contenders)
        for lo in range(0, s.follows, FOLLOW_BLOCK):
            for name in order:
                block = users[name][lo : lo + FOLLOW_BLOCK]
                server0, client0 = await self.server_cpu(), client_cpu()
                t0 = time.perf_counter()
                for i, a in enumerate(block, start=lo):
                    await run[name](a, self.authors[i % len(self.authors)])
                done[name][1] += time.perf_counter() - t0
                cpu[name][0] += client_cpu() - client0
                cpu[name][1] += await self.server_cpu() - server0
                done[name][0] += len(block)
            order = order[1:] + order[:1]
        # the follow notifications' jobs (not timed: deferred work, as a
        # worker runs it apart from the call)
        await self.rp.drain(timeout=300)
        # the backfill filled every home to the cap
        pipe = self.store.pipeline()
        for uid in users["redpoll"]:
            pipe.llen(keys.home(uid))
        for uid in users["naive"]:
            pipe.zcard(nv_home(uid))
        sizes = await pipe.execute()
        assert set(sizes) == {limits.HOME_CAP}, set(sizes)
        rate = {name: n / dt for name, (n, dt) in done.items()}
        cpu_us = {
            name: {"client": 1e6 * c / s.follows, "server": 1e6 * v / s.follows}
            for name, (c, v) in cpu.items()
        }
        self.say("  " + ", ".join(f"{name} {r:,.0f}" for name, r in rate.items()) + " follows/s")
        return {
            "follows": s.follows,
            "backfill": limits.HOME_CAP,
            "home_before": s.prefill,
            "redpoll_per_s": rate["redpoll"],
            "naive_per_s": rate["naive"],
            "cpu_us_per_follow": cpu_us,
        }

    async def server_cpu(self) -> float:
        """Seconds of CPU the server's main thread (summed over a cluster's
        nodes) has used: INFO cpu."""
        info = await self.r.info("cpu")
        nodes = (
            list(info.values())
            if info and all(isinstance(v, dict) for v in info.values())
            else [info]
        )
        return sum(
            float(n.get("used_cpu_user_main_thread", n.get("used_cpu_user", 0)))
            + float(n.get("used_cpu_sys_main_thread", n.get("used_cpu_sys", 0)))
            for n in nodes
        )

    # --- memory ------------------------------------------------------------------------
    async def memory(self) -> dict:
        sample = self.readers[: self.sizes.memory_sample]
        pipe = self.store.pipeline()
        for u in sample:
            pipe.memory_usage(keys.home(u), samples=0)
            pipe.llen(keys.home(u))
            pipe.memory_usage(nv_home(u), samples=0)
            pipe.zcard(nv_home(u))
        raw = await pipe.execute()
        rp_bytes, rp_n = sum(raw[0::4]), sum(raw[1::4])
        nv_bytes, nv_n = sum(raw[2::4]), sum(raw[3::4])
        assert rp_n == nv_n == len(sample) * limits.HOME_CAP, (rp_n, nv_n)
        enc = await self.r.object("encoding", keys.home(sample[0]))
        nv_enc = await self.r.object("encoding", nv_home(sample[0]))
        return {
            "timelines": len(sample),
            "entries_each": limits.HOME_CAP,
            "redpoll_bytes_per_entry": rp_bytes / rp_n,
            "naive_bytes_per_entry": nv_bytes / nv_n,
            "redpoll_encoding": enc.decode() if isinstance(enc, bytes) else enc,
            "naive_encoding": nv_enc.decode() if isinstance(nv_enc, bytes) else nv_enc,
        }

    async def cleanup(self) -> None:
        if self.fanout_sids:  # bench posts went to the public timeline
            pipe = self.store.pipeline()
            for sid in self.fanout_sids:
                pipe.lrem(placement.of(self.store).public_key(sid), 0, sid)
            await pipe.execute()
        await self.unlink_all(self.created)


def verdict(name: str, value: float) -> bool:
    op, bound = TARGETS[name]
    return value >= bound if op == ">=" else value <= bound


async def run_bench(
    settings: Settings, sizes: Sizes, seed: int, say, cluster: bool = False
) -> dict:
    """The engine bench; ``cluster``: on a Redis Cluster (the embedded
    3-master one unless REDIS_URL names a cluster), with the cluster's own
    figures (redpoll/tools/bench_cluster.py)."""
    started = time.perf_counter()
    tmp = None
    cluster = cluster or settings.cluster
    if settings.redis_url is None:
        tmp = tempfile.TemporaryDirectory(prefix="redpoll-bench-")
        if cluster:
            server = EmbeddedCluster(tmp.name, fsync=settings.fsync)
        else:
            # the production config, except that no AOF rewrite may fork in
            # the middle of one contender's timing
            server = EmbeddedServer(
                tmp.name, fsync=settings.fsync, extra={"auto-aof-rewrite-percentage": "0"}
            )
        await asyncio.to_thread(server.start)
        settings = settings.with_(redis_url=server.url, cluster=cluster)
    else:
        server = None
        if cluster and not settings.cluster:
            raise click.ClickException("--cluster with REDIS_URL needs REDPOLL_CLUSTER=1")
    try:
        rp = await Redpoll.open(settings)
        try:
            if server is None and await rp.store.client.exists(
                keys.user(UID_BASE), keys.status(SID_BASE + 1)
            ):
                raise click.ClickException(
                    f"{settings.redis_url} already holds bench-range keys (user {UID_BASE}...); "
                    "run the bench on an empty server"
                )
            b = Bench(rp, sizes, seed, say)
            nodes = bench_cluster.Nodes(rp.store.client) if cluster else None
            phases: dict[str, dict] = {}

            async def phase(name, run):
                if nodes is None:
                    return await run()
                result, phases[name] = await bench_cluster.measured(nodes, run)
                return result

            try:
                say("building authors and statuses ...")
                await b.build_authors()
                say("building reader timelines ...")
                await b.build_readers()
                say(f"fan-out to {sizes.followers:,} followers ...")
                fan = await phase("fan-out", b.fanout)
                say("home-timeline pages ...")
                read = await phase("reads", b.reads)
                say("follows with backfill ...")
                fol = await phase("follows", b.follows)
                say("memory ...")
                mem = await b.memory()
                if nodes is not None:
                    keys_per_master = await nodes.keys_per_master()
                    hot = await bench_cluster.hot_keys(rp, b, say)
                    phases["posts"] = {
                        k: hot["public_timeline"][k]
                        for k in ("commands", "command_share", "cpu_share", "max_over_even")
                    }
                    phases["celebrity"] = hot["celebrity_profile"]["one"]
                info = await rp.store.client.info("server")
                if cluster:  # one node's answer stands for all
                    info = (
                        next(iter(info.values()))
                        if isinstance(next(iter(info.values()), None), dict)
                        else info
                    )
            finally:
                if server is None:
                    await b.cleanup()
        finally:
            await rp.close()
    finally:
        if server is not None:
            await asyncio.to_thread(server.stop)
        if tmp is not None:
            tmp.cleanup()
    result = {
        "fanout_ratio": fan["redpoll_per_s"] / fan["naive_per_s"],
        "fanout_vs_limit": fan["redpoll_per_s"] / fan["limit_per_s"],
        "read_ratio": read["redpoll_per_s"] / read["naive_per_s"],
        "read_ratio_statuses_only": read["redpoll_per_s"] / read["naive_statuses_only_per_s"],
        "follow_ratio": fol["redpoll_per_s"] / fol["naive_per_s"],
        "memory_ratio": mem["redpoll_bytes_per_entry"] / mem["naive_bytes_per_entry"],
    }
    result["targets"] = {k: f"{op} {bound}" for k, (op, bound) in TARGETS.items()}
    result["pass"] = {k: verdict(k, result[k]) for k in TARGETS}
    result.update(
        {
            "fanout": fan,
            "read": read,
            "follow": fol,
            "memory": mem,
            "server": f"{info.get('server_name', 'redis')} "
            f"{info.get('valkey_version', info.get('redis_version'))}",
            "embedded": server is not None,
            "seed": seed,
            "seconds": time.perf_counter() - started,
        }
    )
    if cluster:
        result["cluster"] = {
            "masters": len(keys_per_master),
            "phases": phases,
            "keys": keys_per_master,
            "hot": hot,
        }
    return result


def table(res: dict) -> str:
    f, r, fo, m = res["fanout"], res["read"], res["follow"], res["memory"]
    rows = [
        ("fan-out deliveries/s", f["redpoll_per_s"], f["naive_per_s"], "fanout_ratio"),
        ("fan-out vs limit probe", f["redpoll_per_s"], f["limit_per_s"], "fanout_vs_limit"),
        ("home pages of 20/s", r["redpoll_per_s"], r["naive_per_s"], "read_ratio"),
        ("follows (1,000 backfill)/s", fo["redpoll_per_s"], fo["naive_per_s"], "follow_ratio"),
        (
            "bytes per timeline entry",
            m["redpoll_bytes_per_entry"],
            m["naive_bytes_per_entry"],
            "memory_ratio",
        ),
    ]
    head = f"{'figure':<28}{'redpoll':>14}{'other':>14}{'ratio':>9}  {'target':<9}{'':4}"
    lines = [head, "-" * len(head)]
    for label, ours, other, key in rows:
        fmt = ",.1f" if key == "memory_ratio" else ",.0f"
        op, bound = TARGETS[key]
        lines.append(
            f"{label:<28}{ours:>14{fmt}}{other:>14{fmt}}{res[key]:>9.2f}  "
            f"{op + ' ' + str(bound):<9}{'PASS' if res['pass'][key] else 'FAIL':>4}"
        )
    lines += [
        "",
        "other = naive client, except 'vs limit probe' where it is the LPUSH-only Lua loop.",
        f"fan-out: {f['followers']:,} followers (+ the author's home), {f['posts']} posts after a"
        f" warm-up, median per post; batch {f['batch']}; homes held {f['home_before']} entries.",
        "         totals: " + ", ".join(f"{k} {v:,.0f}/s" for k, v in f["total_per_s"].items()),
        f"read: {r['readers']} users, pages 1-{r['pages_per_user']}; naive = the source's "
        f"pipelined read of what a page shows (statuses, counts, authors); against the "
        f"source's read of the statuses alone {res['read_ratio_statuses_only']:.2f}; "
        f"statuses/s: "
        + ", ".join(f"{k} {v:,.0f}" for k, v in r["statuses_per_s"].items())
        + " (seed_sync: the statuses alone on a synchronous client).",
        f"follow: {fo['follows']} follows per contender, each home held {fo['home_before']} "
        f"entries before; CPU µs a follow (client + server main thread): "
        + ", ".join(
            f"{k} {v['client']:,.0f} + {v['server']:,.0f}"
            for k, v in fo["cpu_us_per_follow"].items()
        )
        + ".",
        f"memory: {m['timelines']} full timelines each; encodings {m['redpoll_encoding']} / "
        f"{m['naive_encoding']}.",
        f"{res['server']}, {'embedded' if res['embedded'] else 'REDIS_URL'} "
        f"{'cluster' if 'cluster' in res else 'server'}; {res['seconds']:.0f} s in all.",
    ]
    if "cluster" in res:
        lines += ["", bench_cluster.table(res["cluster"])]
    return "\n".join(lines)


@click.command()
@click.option(
    "--followers",
    type=click.IntRange(1, 10_000_000),
    default=None,
    help="Followers of the posting author (default 100,000).",
)
@click.option(
    "--posts",
    type=click.IntRange(1, 100),
    default=None,
    help="Fan-out posts timed, after a warm-up post (default 8).",
)
@click.option(
    "--readers",
    type=click.IntRange(1, 100_000),
    default=None,
    help="Users with full home timelines for reads and memory (default 500).",
)
@click.option(
    "--read-seconds",
    type=click.FloatRange(0.05, 60),
    default=None,
    help="Reading time per contender, in turns of 0.25 s (default 5).",
)
@click.option(
    "--follows",
    type=click.IntRange(1, 100_000),
    default=None,
    help="Follows per contender, in turns of 25 (default 600).",
)
@click.option("--quick", is_flag=True, help="A small run (seconds), for tests and smoke checks.")
@click.option(
    "--cluster",
    "on_cluster",
    is_flag=True,
    help="Run the engine part on a Redis Cluster (an embedded 3-master one unless "
    "REDIS_URL names one), with how keys and commands spread over the masters "
    "and what a hot key costs.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed.")
@click.option(
    "--engine/--no-engine",
    default=True,
    show_default=True,
    help="Run the engine part (redpoll against the naive client).",
)
@click.option(
    "--http",
    "with_http",
    is_flag=True,
    help="Also run the HTTP part: the home page of 20 against /api/v1/instance and a "
    "fixed limit probe on a real `redpoll serve`, then on one process per core; "
    "requests/s and p50/p99.",
)
@click.option(
    "--http-requests",
    type=click.IntRange(100, 10_000_000),
    default=1_000_000,
    show_default=True,
    help="HTTP part: requests per endpoint (bounded by --http-seconds).",
)
@click.option(
    "--http-seconds",
    type=click.FloatRange(1, 600),
    default=10.0,
    show_default=True,
    help="HTTP part: longest time per endpoint.",
)
@click.option(
    "--http-workers",
    type=click.IntRange(1, 256),
    default=None,
    help="HTTP part: serve processes of the all-process pass (default: one per core).",
)
@click.option(
    "--http-users",
    type=click.IntRange(2, 100_000),
    default=200,
    show_default=True,
    help="HTTP part: distinct users whose home timelines are read.",
)
@click.option(
    "--stream",
    "with_stream",
    is_flag=True,
    help="Also run the stream part: N stream clients with mixed filters on one "
    "`redpoll serve` while statuses are posted at a steady rate.",
)
@click.option(
    "--stream-clients",
    "--clients",
    "stream_clients",
    type=click.IntRange(1, 20_000),
    default=2000,
    show_default=True,
    help="Stream part: concurrent clients (60% v1.1, 20% SSE, 20% WebSocket), "
    "opened from load-generator processes of their own.",
)
@click.option(
    "--stream-rate",
    type=click.FloatRange(1, 5000),
    default=50.0,
    show_default=True,
    help="Stream part: statuses posted per second.",
)
@click.option(
    "--stream-seconds",
    type=click.FloatRange(2, 600),
    default=20.0,
    show_default=True,
    help="Stream part: how long statuses are posted.",
)
@click.option(
    "--media",
    "with_media",
    is_flag=True,
    help="Also run the media part (bench_media.py): a 4 MB JPEG's ready time, and "
    "the p99 of /api/v1/instance while 20 uploads run at once.",
)
@click.option(
    "--scale",
    "with_scale",
    is_flag=True,
    help="Also run the scale part (bench_scale.py): posts by authors with 1k to 1M "
    "followers, home pages merging 0/5/20 large accounts, idle users.",
)
@click.option(
    "--federation",
    "with_federation",
    is_flag=True,
    help="Also run the federation part (bench_federation.py): one post to 10,000 "
    "remote followers on 100 servers, and the inbox's signed activities per "
    "CPU second.",
)
@click.option(
    "--capacity",
    "with_capacity",
    is_flag=True,
    help="Also run the capacity part (bench_capacity.py): simulated people on a real "
    "`redpoll serve` (all cores), each active one with a stream, reading, posting, "
    "favouriting, boosting and following at a realistic mix, time compressed; "
    "server CPU per 1,000 person-hours, people per core, p99s, memory per person.",
)
@click.option(
    "--capacity-people",
    type=click.IntRange(10, 10_000_000),
    default=None,
    help="Capacity part: people seeded, a quarter of them active (default 4,000; "
    "200 with --quick).",
)
@click.option(
    "--capacity-seconds",
    type=click.FloatRange(1, 3600),
    default=None,
    help="Capacity part: the measured window (default 120 s; 8 s with --quick).",
)
@click.option(
    "--capacity-speed",
    type=click.FloatRange(1, 3600),
    default=None,
    help="Capacity part: time compression, simulated seconds per second (default 15).",
)
@click.option(
    "--fts",
    "with_fts",
    is_flag=True,
    help="Also run the full-text search part (bench_fts.py): 1,000,000 statuses "
    "indexed (20,000 with --quick), query p99 per query shape, index memory per "
    "status, indexing CPU per post.",
)
@click.option(
    "--fts-statuses",
    type=click.IntRange(1_000, 10_000_000),
    default=None,
    help="Full-text search part: statuses indexed (default 1,000,000; 20,000 with --quick).",
)
@click.option(
    "--web",
    "with_web",
    is_flag=True,
    help="Also run the web app part (bench_web.py, needs Playwright and chromium): the "
    "first post's time under emulated Fast 3G after a navigation and after a reload, "
    "the first load's bytes, and the API answers' compression levels compared.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.pass_obj
def bench(
    console: Console,
    followers,
    posts,
    readers,
    read_seconds,
    follows,
    quick,
    on_cluster,
    seed,
    engine,
    with_http,
    http_requests,
    http_seconds,
    http_workers,
    http_users,
    with_stream,
    stream_clients,
    stream_rate,
    stream_seconds,
    with_media,
    with_scale,
    with_federation,
    with_capacity,
    capacity_people,
    capacity_seconds,
    capacity_speed,
    with_fts,
    fts_statuses,
    with_web,
    as_json,
) -> None:
    """Time fan-out, home reads and follows against a naive client.

    The naive client keeps timelines as sorted sets, written as the classic
    Redis design has it; each ratio compares redpoll's rate with its rate,
    both measured in alternating turns on the same server. Starts its own
    embedded server in a temporary directory unless REDIS_URL is set (then
    it writes bench keys there and removes them afterwards). Prints rates,
    ratios and the targets each ratio must meet. --http, --stream, --media,
    --scale, --federation, --capacity, --fts and --web add their parts, each on
    its own server.
    """
    run = console.run
    result: dict = {}
    say = lambda msg: click.echo(msg, err=True)  # noqa: E731
    if engine:
        sizes = Sizes.quick() if quick else Sizes()
        for name, value in (
            ("followers", followers),
            ("posts", posts),
            ("readers", readers),
            ("read_seconds", read_seconds),
            ("follows", follows),
        ):
            if value is not None:
                setattr(sizes, name, value)
        sizes.memory_sample = min(sizes.memory_sample, sizes.readers)
        if on_cluster and not quick and followers is None:
            sizes.followers = CLUSTER_FOLLOWERS
        result = run(run_bench(console.settings(), sizes, seed, say, cluster=on_cluster))
    if with_http:
        run_http_bench = load_generator("bench_http").run_http_bench
        say("HTTP part ...")
        result["http"] = run(
            run_http_bench(
                users=http_users,
                follows=min(10, http_users - 1),
                requests=http_requests,
                seconds=http_seconds,
                workers=http_workers,
            )
        )
    if with_stream:
        run_stream_bench = load_generator("stream_bench").run
        say(f"stream part: {stream_clients} clients, {stream_rate:g} posts/s ...")
        result["stream"] = run_stream_bench(stream_clients, stream_rate, stream_seconds)
    if with_media:
        run_media_bench = load_generator("bench_media").run_media_bench
        say("media part ...")
        result["media"] = run(run_media_bench(workers=http_workers))
    if with_scale:
        from .bench_scale import run_scale

        say("scale part ...")
        result["scale"] = run(run_scale(console.settings(), quick, say, seed))
    if with_federation:
        from .bench_federation import run_federation_bench

        say("federation part ...")
        result["federation"] = run(
            run_federation_bench(console.settings(), say, followers=1_000 if quick else 10_000)
        )
    if with_capacity:
        capacity = load_generator("bench_capacity")
        sizes = capacity.Sizes.quick() if quick else capacity.Sizes()
        for name, value in (
            ("people", capacity_people),
            ("seconds", capacity_seconds),
            ("speed", capacity_speed),
        ):
            if value is not None:
                setattr(sizes, name, value)
        say("capacity part ...")
        result["capacity"] = capacity.run_capacity(sizes, say)
    if with_fts:
        n = fts_statuses or (20_000 if quick else 1_000_000)
        result["fts"] = run(bench_fts.run_fts_bench(n, 100 if quick else 300, say))
    if with_web:
        web_part = load_generator("bench_web")
        say("web part ...")
        result["web"] = web_part.run_web(rounds=1 if quick else 3, say=say)
    if as_json:
        click.echo(json.dumps(result))
    else:
        click.echo(full_table(result))


def load_generator(name: str):
    """A load generator module; a one-line error when the tools extra is missing."""
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError as exc:
        raise click.ClickException(
            f"{exc}: the load generators need the tools extra (pip install -e '.[tools]')"
        ) from None


def full_table(result: dict) -> str:
    parts = []
    if "fanout_ratio" in result:
        parts.append(table(result))
    if "http" in result:
        from .bench_http import format_report

        parts.append(format_report(result["http"]))
    if "stream" in result:
        parts.append(stream_table(result["stream"]))
    if "media" in result:
        from .bench_media import format_report as media_report

        parts.append(media_report(result["media"]))
    if "scale" in result:
        from .bench_scale import format_report as scale_report

        parts.append(scale_report(result["scale"]))
    if "federation" in result:
        from .bench_federation import format_report as federation_report

        parts.append(federation_report(result["federation"]))
    if "capacity" in result:
        from .bench_capacity import format_report as capacity_report

        parts.append(capacity_report(result["capacity"]))
    if "fts" in result:
        parts.append(bench_fts.format_report(result["fts"]))
    if "web" in result:
        parts.append(load_generator("bench_web").format_web(result["web"]))
    return "\n\n".join(parts)


#: the stream part's targets (at 10,000 clients and 50 posts/s)
STREAM_TARGETS = {
    "latency_ms_p99": ("<", 250),
    "memory_per_connection_kb": ("<=", 12),
    "lost_by_kept_up_clients": ("==", 0),
}


def stream_table(res: dict) -> str:
    checks = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b}
    lines = []
    for name, value in res.items():
        shown = (
            ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else value
        )
        line = f"{'stream ' + name:<42}{shown}"
        if name in STREAM_TARGETS and value is not None:
            op, limit = STREAM_TARGETS[name]
            ok = checks[op](value, limit)
            line = f"{line:<58}target {op} {limit}  {'PASS' if ok else 'MISS'}"
        lines.append(line)
    return "\n".join(lines)
