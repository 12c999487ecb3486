"""`redpoll bench --scale`: large accounts and idle users.

Runs on its own embedded server in a temporary directory (the 1M-follower
graph is not something to write into a live database).

posting
    ``rp.statuses.post`` by authors with 1k, 10k, 100k and 1M followers, with the
    default threshold (``Settings.fanout_threshold``): p50 of the call, and
    the writes one post causes in all (the call and every fan-out job it
    chains, run to the end), counted by the server (INFO commandstats:
    write commands, including those run inside scripts), and per follower.
    The follower graph is seeded: the followers ZSET written directly with
    pipelines (the followers need no records: fan-out only writes homes).
    An author above the threshold is seeded in the state its switch walk
    (redpoll.timelines.hybrid) leaves: mode ``big``.
pages
    ``rp.timelines.home(uid, limit=20)`` and the next pages by ``max_id``
    (a visit: 5 pages), for readers following 10 fanned-out authors (their
    home at 1,000 entries) and 0, 5 or 20 large accounts (caught up with at
    read time), the three classes taking turns in short slices. Twice:
    with news, where before each round of a class's visits every large
    account it follows posts one status (through ``rp.statuses.post``, untimed), so
    that every visit's first page catches up with each of them; and steady,
    where nothing is posted (a page catches up with nothing).
    merge20_page_cost_ratio = time of a page with 20 large accounts / time
    of a plain page, with news (the steady ratio beside it).
idle return
    Readers idle past the period (their last-read records set far back),
    200 statuses posted meanwhile (fan-out skips them and drops their
    homes), then each reads their home: the first page (the rebuild from
    the accounts they follow, then the page), in ms.
memory
    MEMORY USAGE of what one user holds (record, follow set, home, large
    set, last-read records) for an active reader and for an idle one whose
    home fan-out dropped (before they come back).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time

from ..core import keys, limits
from ..core.models import Status
from ..core.settings import Settings
from ..engine.engine import Redpoll
from ..storage.server import EmbeddedServer

#: Followers of the posting authors, and (quick) a small run for tests.
SIZES = (1_000, 10_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 10_000, 30_000)
#: Targets: the 1M post's call, its writes, the page with 20 large accounts.
TARGETS = {
    "post_ms_1m": ("<", 50.0),
    "writes_per_post_1m": ("<=", 100),
    "merge20_page_cost_ratio": ("<=", 2.0),
}
#: Commands that write (counted in INFO commandstats, from scripts too).
WRITES = (
    "lpush",
    "rpush",
    "linsert",
    "rpop",
    "lpop",
    "ltrim",
    "lrem",
    "lset",
    "sadd",
    "srem",
    "zadd",
    "zrem",
    "zremrangebyrank",
    "zremrangebyscore",
    "zincrby",
    "hset",
    "hsetnx",
    "hmset",
    "hincrby",
    "hdel",
    "set",
    "setnx",
    "setex",
    "getdel",
    "del",
    "unlink",
    "incr",
    "incrby",
    "decr",
    "expire",
    "pexpire",
    "xadd",
    "xack",
    "xdel",
    "xtrim",
    "xclaim",
    "xautoclaim",
    "xgroup",
    "publish",
    "pfadd",
    "append",
    "getset",
    "rename",
)
FOLLOWER_BASE = 50_000_000
PAGE_SLICE_S = 0.2
WORDS = "the quick brown fox jumps over lazy dog timeline status home page cursor".split()


async def write_counts(r) -> int:
    stats = await r.info("commandstats")
    return sum(
        v["calls"] for k, v in stats.items() if k.removeprefix("cmdstat_").split("|")[0] in WRITES
    )


async def seed_followers(r, author: int, n: int) -> None:
    """The followers ZSET as edge_set.lua leaves it (unique increasing
    scores), written with pipelines of 10 ZADDs of 5,000 members."""
    start = 1_700_000_000_000_000
    for base in range(0, n, 50_000):
        pipe = r.pipeline(transaction=False)
        for lo in range(base, min(base + 50_000, n), 5_000):
            hi = min(lo + 5_000, n)
            pipe.zadd(
                keys.followers(author), {FOLLOWER_BASE + i: start + i * 3 for i in range(lo, hi)}
            )
        await pipe.execute()
    await r.hset(keys.user(author), "followers", n)


async def posting(rp: Redpoll, n: int, posts: int, say) -> dict:
    r = rp.store.client
    author = (await rp.accounts.sign_up(f"author{n}")).id
    say(f"  seeding {n:,} followers ...")
    t0 = time.perf_counter()
    await seed_followers(r, author, n)
    seeded_s = time.perf_counter() - t0
    big = n > rp.settings.fanout_threshold
    if big:  # the switch walk's end state (redpoll.timelines.hybrid)
        await r.hset(keys.user(author), keys.FANOUT_MODE_FIELD, "big")
    await rp.statuses.post(author, "warm-up")
    await rp.drain(timeout=600)
    times, writes = [], []
    for i in range(posts):
        before = await write_counts(r)
        t = time.perf_counter()
        await rp.statuses.post(author, f"post {i} " + " ".join(WORDS))
        times.append((time.perf_counter() - t) * 1000)
        await rp.drain(timeout=600)  # its fan-out jobs, to the end
        writes.append(await write_counts(r) - before)
    delivered = await r.llen(keys.home(FOLLOWER_BASE))  # the first follower's home
    await r.delete(keys.followers(author))  # the next size starts from a clean graph
    homes = [keys.home(FOLLOWER_BASE + i) for i in range(n)]
    for part in range(0, len(homes), 5000):
        await r.unlink(*homes[part : part + 5000])
    return {
        "followers": n,
        "mode": "caught up at read" if big else "fanned out",
        "post_ms_p50": statistics.median(times),
        "post_ms_max": max(times),
        "writes_per_post": statistics.median(writes),
        "writes_per_follower": statistics.median(writes) / n,
        "first_follower_home_entries": delivered,
        "posts": posts,
        "seed_s": seeded_s,
    }


class Graph:
    """Readers whose homes hold 1,000 entries from 10 fanned-out authors,
    following 0, 5 or 20 large accounts; statuses written directly."""

    def __init__(self, rp: Redpoll, readers: int, seed: int):
        self.rp, self.r = rp, rp.store.client
        self.rng = random.Random(seed)
        self.readers = readers

    async def build(self, say) -> None:
        rp, r, rng = self.rp, self.r, self.rng
        self.small = [(await rp.accounts.sign_up(f"small{i}")).id for i in range(40)]
        self.large = [(await rp.accounts.sign_up(f"large{i}")).id for i in range(20)]
        for a in self.large:  # past the threshold, as posting() seeds them
            await seed_followers(r, a, rp.settings.fanout_threshold + 1)
            await r.hset(keys.user(a), keys.FANOUT_MODE_FIELD, "big")
        authors = self.small + self.large
        per_author = 500
        first = (
            int(await r.incrby(keys.STATUS_SEQ, len(authors) * per_author))
            - len(authors) * per_author
            + 1
        )
        owners = [a for a in authors for _ in range(per_author)]
        rng.shuffle(owners)
        by_author: dict[int, list[int]] = {a: [] for a in authors}
        say(f"  {len(owners):,} statuses ...")
        pipe = r.pipeline(transaction=False)
        for k, owner in enumerate(owners):
            sid = first + k
            by_author[owner].append(sid)
            text = " ".join(rng.choices(WORDS, k=rng.randint(6, 18)))
            pipe.hset(
                keys.status(sid),
                mapping=Status(
                    id=sid,
                    text=text,
                    created_at=1_700_000_000_000 + sid,
                    user_id=owner,
                    login=f"a{owner}",
                ).to_hash(),
            )
            if k % 2000 == 1999:
                await pipe.execute()
                pipe = r.pipeline(transaction=False)
        for a, sids in by_author.items():  # as record_post.lua leaves them
            pipe.zadd(keys.profile(a), {s: s for s in sids})
            pipe.hset(keys.user(a), mapping={"posts": len(sids), "pseq": len(sids)})
        await pipe.execute()
        self.classes: dict[int, list[int]] = {}
        say(f"  {3 * self.readers} readers ...")
        for k in (0, 5, 20):
            uids = []
            for i in range(self.readers):
                uid = (await rp.accounts.sign_up(f"reader{k}_{i}")).id
                follows = rng.sample(self.small, 10)
                home = sorted((s for a in follows for s in by_author[a]), reverse=True)[
                    : limits.HOME_CAP
                ]
                bigs = self.large[:k]
                pipe = r.pipeline(transaction=False)
                pipe.zadd(keys.following(uid), {a: j + 1 for j, a in enumerate(follows + bigs)})
                for a in follows + bigs:  # both sides, as edge_set.lua leaves a follow
                    pipe.zadd(keys.followers(a), {uid: len(uids) + 1 + k * self.readers})
                for part in range(0, len(home), 500):
                    pipe.rpush(keys.home(uid), *home[part : part + 500])
                if bigs:
                    pipe.sadd(keys.large_following(uid), *bigs)
                await pipe.execute()
                uids.append(uid)
            self.classes[k] = uids

    async def read_rates(self, seconds: float, news: bool) -> dict:
        """Pages of 20 per second per class: a visit reads pages 1-5 of a
        reader by max_id, the classes taking turns in slices of
        PAGE_SLICE_S; with ``news``, each large account a class follows
        posts once before each round of that class's visits (untimed)."""
        rp = self.rp
        done = {k: 0 for k in self.classes}
        spent = {k: 0.0 for k in self.classes}
        cursor = {k: 0 for k in self.classes}
        sizes: dict[int, list[int]] = {k: [] for k in self.classes}
        for uids in self.classes.values():  # warm-up: every reader's first page
            for uid in uids:
                await rp.timelines.home(uid, limit=20)
        while min(spent.values()) < seconds:
            for k, uids in self.classes.items():
                t0 = time.perf_counter()
                while time.perf_counter() - t0 < PAGE_SLICE_S:
                    if news and k and cursor[k] % len(uids) == 0:
                        paused = time.perf_counter()
                        for a in self.large[:k]:
                            await rp.statuses.post(a, " ".join(self.rng.choices(WORDS, k=10)))
                        await rp.drain()
                        t0 += time.perf_counter() - paused
                    uid = uids[cursor[k] % len(uids)]
                    cursor[k] += 1
                    max_id = None
                    for _ in range(5):
                        page = await rp.timelines.home(uid, limit=20, max_id=max_id)
                        done[k] += 1
                        sizes[k].append(len(page))
                        max_id = page[-1].id
                spent[k] += time.perf_counter() - t0
        rates = {k: done[k] / spent[k] for k in self.classes}
        return {
            "pages_per_s": {f"large_{k}": rates[k] for k in rates},
            "page_ms": {f"large_{k}": 1000 / rates[k] for k in rates},
            "statuses_per_page": {f"large_{k}": statistics.mean(sizes[k]) for k in sizes},
            "visits": {f"large_{k}": cursor[k] for k in cursor},
            "merge5_page_cost_ratio": rates[0] / rates[5],
            "merge20_page_cost_ratio": rates[0] / rates[20],
        }

    async def idle_return(self, tries: int) -> dict:
        """Readers of the 5-large class made idle (their last read far in the
        past, and 200 newer statuses their homes missed), then the first
        page of each, timed: rebuild + page."""
        rp, r = self.rp, self.r
        uids = self.classes[5][:tries]
        authors = self.small
        long_ago = 1_000
        await r.zadd(keys.HOME_SEEN, {uid: long_ago for uid in uids})
        for uid in uids:
            await r.set(keys.home_read(uid), long_ago)
        for i in range(200):  # posted while they were away: skipped, their homes dropped
            await rp.statuses.post(authors[i % len(authors)], f"while away {i}")
        await rp.drain()
        self.idle_bytes = await self.held(uids[0])
        from ..timelines.hybrid import _TOUCHED

        _TOUCHED.get(rp.store, {}).clear()
        times = []
        for uid in uids:
            t = time.perf_counter()
            page = await rp.timelines.home(uid, limit=20)
            times.append((time.perf_counter() - t) * 1000)
            assert page
        return {
            "first_page_ms_p50": statistics.median(times),
            "first_page_ms_max": max(times),
            "readers": len(uids),
        }

    async def held(self, uid: int) -> float:
        """Bytes of what one reader holds: record, follow set, home, large
        set, own last-read record, and a share of keys.HOME_SEEN."""
        r = self.r
        total = 0
        for key in (
            keys.user(uid),
            keys.following(uid),
            keys.home(uid),
            keys.large_following(uid),
            keys.home_read(uid),
        ):
            total += await r.memory_usage(key, samples=0) or 0
        return total + (await r.memory_usage(keys.HOME_SEEN, samples=0) or 0) / max(
            1, await r.zcard(keys.HOME_SEEN)
        )

    async def memory(self) -> dict:
        """Bytes one reader holds, active (home at 1,000 entries) and idle
        (measured before they came back: their home dropped by fan-out)."""
        return {
            "active_user_bytes": await self.held(self.classes[5][-1]),
            "idle_user_bytes": self.idle_bytes,
        }


def verdict(name: str, value: float) -> bool:
    op, bound = TARGETS[name]
    return value < bound if op == "<" else value <= bound


async def run_scale(settings: Settings, quick: bool, say, seed: int = 1) -> dict:
    started = time.perf_counter()
    tmp = tempfile.TemporaryDirectory(prefix="redpoll-bench-scale-")
    server = EmbeddedServer(tmp.name, fsync="no", extra={"auto-aof-rewrite-percentage": "0"})
    await asyncio.to_thread(server.start)
    sizes = QUICK_SIZES if quick else SIZES
    try:
        rp = await Redpoll.open(settings.with_(redis_url=server.url, cluster=False))
        try:
            post_rows = []
            for n in sizes:
                say(f"posting: an author with {n:,} followers ...")
                post_rows.append(await posting(rp, n, 5 if quick else 15, say))
            say("pages: readers following 0, 5 and 20 large accounts ...")
            graph = Graph(rp, 20 if quick else 100, seed)
            await graph.build(say)
            pages = await graph.read_rates(0.4 if quick else 4.0, news=True)
            pages["steady"] = await graph.read_rates(0.4 if quick else 4.0, news=False)
            say("idle users coming back ...")
            idle = await graph.idle_return(5 if quick else 20)
            memory = await graph.memory()
            info = await rp.store.client.info("server")
        finally:
            await rp.close()
    finally:
        await asyncio.to_thread(server.stop)
        tmp.cleanup()
    top = post_rows[-1]
    result = {
        "post_ms_1m": top["post_ms_p50"],
        "writes_per_post_1m": top["writes_per_post"],
        "merge20_page_cost_ratio": pages["merge20_page_cost_ratio"],
        "largest_followers": top["followers"],
        "threshold": settings.fanout_threshold,
        "posting": post_rows,
        "pages": pages,
        "idle_return": idle,
        "memory": memory,
        "targets": {k: f"{op} {bound}" for k, (op, bound) in TARGETS.items()},
        "quick": quick,
        "server": f"{info.get('server_name', 'redis')} "
        f"{info.get('valkey_version', info.get('redis_version'))}",
        "seconds": time.perf_counter() - started,
    }
    result["pass"] = {k: verdict(k, result[k]) for k in TARGETS}
    return result


def _pages_line(head: str, p: dict, tail: str = "") -> str:
    return (
        head
        + ", ".join(
            f"{k.replace('large_', '')} large {p['page_ms'][k]:.2f} ms" for k in p["page_ms"]
        )
        + f"; cost ratio 5: {p['merge5_page_cost_ratio']:.2f}, "
        f"20: {p['merge20_page_cost_ratio']:.2f}{tail}"
    )


def format_report(res: dict) -> str:
    lines = [
        f"scale (threshold {res['threshold']:,} followers; "
        f"{'quick run, ' if res['quick'] else ''}{res['server']}, {res['seconds']:.0f} s)",
        f"{'followers':>10}  {'mode':<18}{'post p50 ms':>12}{'max ms':>9}"
        f"{'writes/post':>13}{'per follower':>14}",
    ]
    for row in res["posting"]:
        lines.append(
            f"{row['followers']:>10,}  {row['mode']:<18}{row['post_ms_p50']:>12.2f}"
            f"{row['post_ms_max']:>9.2f}{row['writes_per_post']:>13,.0f}"
            f"{row['writes_per_follower']:>14.4f}"
        )
    p = res["pages"]
    lines.append(
        _pages_line("home page of 20: ", p, " (each large account posting before every visit)")
    )
    lines.append(_pages_line("  steady (nothing posted): ", p["steady"]))
    i, m = res["idle_return"], res["memory"]
    lines.append(
        f"idle user's first page back (rebuild + page): p50 {i['first_page_ms_p50']:.1f} "
        f"ms, max {i['first_page_ms_max']:.1f} ms"
    )
    lines.append(
        f"memory per user: active {m['active_user_bytes']:,.0f} B, "
        f"idle {m['idle_user_bytes']:,.0f} B"
    )
    for k, (op, bound) in TARGETS.items():
        lines.append(
            f"  {k:<26}{res[k]:>10.2f}  target {op} {bound:<6}"
            f"{'PASS' if res['pass'][k] else 'FAIL'}"
        )
    return "\n".join(lines)
