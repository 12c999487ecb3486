"""HTTP load generator for ``redpoll bench --http`` (to be wired by the CLI):
home-timeline reads at limit=20 for many distinct users vs GET
/api/v1/instance on the same server, side by side, on loopback only.

    from redpoll.tools.bench_http import run_http_bench, format_report
    print(format_report(asyncio.run(run_http_bench())))

It starts its own embedded server in a temporary directory (or uses
``redis_url``, whose data it adds to) and its own ``redpoll serve`` process
with rate limits and access logs off. Setup goes through the engine and the
auth module directly (signing up hundreds of users over HTTP would mostly
measure argon2). Every phase is bounded by a request count and a time limit;
the two endpoints take turns over a few rounds, so that drift in a shared
machine's speed weighs on both alike. Target: home requests/s >= 0.5 x instance requests/s.
"""
from __future__ import annotations

import asyncio
import random
import tempfile
import time
from typing import Any

import aiohttp

from .. import auth
from ..engine import Redpoll
from ..server import EmbeddedServer
from ..settings import Settings
from ..api.process import ServeProcess

TARGET_RATIO = 0.5


def _percentile(sorted_ms: list[float], q: float) -> float:
    if not sorted_ms:
        return 0.0
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


async def _setup(rp: Redpoll, users: int, follows: int, posts: int) -> list[str]:
    """``users`` users, each following ``follows`` others, ``posts`` statuses
    each; returns one access token per user."""
    tag = f"b{random.randrange(16**6):06x}"
    app, _ = await auth.create_app(rp.store, "bench", "urn:ietf:wg:oauth:2.0:oob", "read write")
    made = []
    for i in range(users):
        made.append(await rp.sign_up(f"{tag}_{i}"))
    ids = [u.id for u in made]
    sem = asyncio.Semaphore(32)

    async def wire(i: int, uid: int) -> str:
        async with sem:
            for k in range(1, follows + 1):
                await rp.follow(uid, ids[(i + k) % len(ids)])
            for n in range(posts):
                await rp.post(uid, f"bench status {n} from {uid}")
            token, _ = await auth.issue_token(rp.store, app, uid, ("read",))
            return token

    tokens = await asyncio.gather(*(wire(i, uid) for i, uid in enumerate(ids)))
    await rp.drain(timeout=120)
    return list(tokens)


async def _load(url: str, make_request, *, requests: int, seconds: float,
                concurrency: int) -> dict[str, Any]:
    """One phase: up to ``requests`` requests or ``seconds``, whichever ends
    first; the latencies of each and the phase's length."""
    # aiohttp's client rather than httpx: at a few thousand requests a second
    # httpx itself was the bottleneck on 2 cores and flattened both rates
    latencies: list[float] = []
    errors = 0
    issued = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as client:
        deadline = time.perf_counter() + seconds

        async def runner() -> None:
            nonlocal issued, errors
            while issued < requests and time.perf_counter() < deadline:
                n = issued
                issued += 1
                path, headers = make_request(n)
                t0 = time.perf_counter()
                try:
                    async with client.get(path, headers=headers) as r:
                        await r.read()
                        ok = r.status == 200
                except (aiohttp.ClientError, asyncio.TimeoutError):
                    ok = False
                latencies.append((time.perf_counter() - t0) * 1000)
                if not ok:
                    errors += 1

        start = time.perf_counter()
        await asyncio.gather(*(runner() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    return {"latencies": latencies, "errors": errors, "seconds": elapsed}


def _summary(phases: list[dict[str, Any]]) -> dict[str, Any]:
    latencies = sorted(x for p in phases for x in p["latencies"])
    elapsed = sum(p["seconds"] for p in phases)
    return {"requests": len(latencies), "errors": sum(p["errors"] for p in phases),
            "seconds": round(elapsed, 2),
            "rps": round(len(latencies) / elapsed, 1) if elapsed else 0.0,
            "p50_ms": round(_percentile(latencies, 0.50), 2),
            "p99_ms": round(_percentile(latencies, 0.99), 2)}


async def _side_by_side(url: str, contenders: dict[str, Any], *, requests: int, seconds: float,
                        concurrency: int, rounds: int) -> dict[str, dict[str, Any]]:
    """Each contender's requests and time split into ``rounds`` phases, run
    in turn (A B A B ...): a shared machine that slows down or speeds up
    during the run then weighs on every contender alike, instead of on
    whichever ran in the slow stretch."""
    phases: dict[str, list] = {name: [] for name in contenders}
    for r in range(rounds):
        share = requests // rounds + (1 if r < requests % rounds else 0)
        for name, make_request in contenders.items():
            phases[name].append(await _load(url, make_request, requests=share,
                                            seconds=seconds / rounds,
                                            concurrency=concurrency))
    return {name: _summary(p) for name, p in phases.items()}


async def run_http_bench(*, redis_url: str | None = None, cluster: bool = False,
                         users: int = 200, follows: int = 10, posts: int = 3,
                         requests: int = 4000, seconds: float = 20.0, concurrency: int = 32,
                         workers: int = 1, rounds: int = 4) -> dict[str, Any]:
    embedded = None
    tmp = tempfile.TemporaryDirectory(prefix="redpoll-bench-http-")
    try:
        if redis_url is None:
            embedded = EmbeddedServer(tmp.name + "/data").start()
            redis_url = embedded.url
        rp = await Redpoll.open(Settings(redis_url=redis_url, cluster=cluster))
        try:
            tokens = await _setup(rp, users, follows, posts)
        finally:
            await rp.close()
        env = {"REDIS_URL": redis_url, "REDPOLL_CLUSTER": "1" if cluster else "0",
               # the load comes from one address over a few tokens: no
               # per-token, per-IP or per-IP-over-all-tokens budget applies
               "REDPOLL_RATE_TOKEN": "off", "REDPOLL_RATE_IP": "off",
               "REDPOLL_RATE_IP_TOKENS": "off"}
        with ServeProcess(env, args=["--no-access-log", "--log-level", "warning",
                                     "--workers", str(workers)]) as srv:
            def home(n: int):
                return ("/api/v1/timelines/home?limit=20",
                        {"Authorization": f"Bearer {tokens[n % len(tokens)]}"})

            def instance(n: int):
                return "/api/v1/instance", {}

            # warm up both paths (connections, caches), then measure
            await _load(srv.url, home, requests=200, seconds=5, concurrency=concurrency)
            await _load(srv.url, instance, requests=200, seconds=5, concurrency=concurrency)
            measured = await _side_by_side(srv.url, {"home": home, "instance": instance},
                                           requests=requests, seconds=seconds,
                                           concurrency=concurrency,
                                           rounds=max(1, min(rounds, requests)))
            home_result, instance_result = measured["home"], measured["instance"]
    finally:
        if embedded is not None:
            embedded.stop()
        tmp.cleanup()
    ratio = home_result["rps"] / instance_result["rps"] if instance_result["rps"] else 0.0
    return {"users": users, "concurrency": concurrency, "workers": workers, "rounds": rounds,
            "home": home_result, "instance": instance_result,
            "ratio": round(ratio, 3), "target_ratio": TARGET_RATIO,
            "meets_target": ratio >= TARGET_RATIO}


def format_report(result: dict[str, Any]) -> str:
    lines = [f"HTTP bench: {result['users']} users, concurrency {result['concurrency']}, "
             f"{result['workers']} HTTP worker(s), loopback, endpoints in turn over "
             f"{result['rounds']} rounds",
             f"{'endpoint':<34}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'requests':>10}{'errors':>8}"]
    for name, label in (("home", "GET /api/v1/timelines/home (20)"),
                        ("instance", "GET /api/v1/instance")):
        r = result[name]
        lines.append(f"{label:<34}{r['rps']:>10}{r['p50_ms']:>10}{r['p99_ms']:>10}"
                     f"{r['requests']:>10}{r['errors']:>8}")
    verdict = "meets" if result["meets_target"] else "MISSES"
    lines.append(f"home / instance = {result['ratio']} ({verdict} the {result['target_ratio']} target)")
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_report(asyncio.run(run_http_bench())))
