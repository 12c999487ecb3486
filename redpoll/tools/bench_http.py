"""``redpoll bench --http``: the home page of 20 (many distinct users), the
notifications page of 20 and a thread (a status's context with its replies)
against GET /api/v1/instance and against a fixed limit probe, side by side, on
loopback; then the home page again on one serve process per core.

    from redpoll.tools.bench_http import run_http_bench, format_report
    print(format_report(asyncio.run(run_http_bench())))

It starts its own embedded server in a temporary directory (or uses
``redis_url``, whose data it adds to) and its own ``redpoll serve`` process
with rate limits and access logs off. Setup goes through the engine and the
auth module directly (signing up hundreds of users over HTTP would mostly
measure argon2). The probe (redpoll/tools/probe_app.py) is a bare ASGI app
answering every request with the bytes of a real home page, on uvicorn +
httptools + uvloop, one process: what no app on that stack can beat. The
load comes from redpoll/tools/loadgen.py in its own process (about 16 µs of
CPU a request, reported per contender). Every phase is bounded by a request
count and a time limit; the contenders take turns over a few rounds, so that
drift in a shared machine's speed weighs on all alike.
Target: home requests/s >= 0.5 x the probe's, 0 errors.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import Any

from ..accounts import auth
from ..api.process import ServeProcess
from ..api.serve import STACK as SERVE_STACK
from ..api.serve import default_workers
from ..core.settings import Settings
from ..engine.engine import Redpoll
from ..storage.server import EmbeddedServer
from . import loadgen

#: home page of 20 requests/s against the fixed probe's
TARGET_VS_PROBE = 0.5
#: accounts nobody follows that reply to and favourite every user's first status
OUTSIDERS = 6
#: the paths of the contenders read as a viewer: the home page, the
#: notifications page, a thread (a status's context)
HOME_PATH = "/api/v1/timelines/home?limit=20"
NOTIFICATIONS_PATH = "/api/v1/notifications?limit=20"
THREAD_PATH = "/api/v1/statuses/{}/context"
#: the probe's stack: uvicorn + httptools + uvloop, one process, as the issue fixes it
PROBE_STACK = "uvicorn-httptools"


def _percentile(sorted_ms: list[float], q: float) -> float:
    if not sorted_ms:
        return 0.0
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


async def _setup(rp: Redpoll, users: int, follows: int, posts: int) -> tuple[list[str], list[int]]:
    """``users`` users, each following ``follows`` others, ``posts`` statuses
    each; then a few accounts nobody follows (so that homes stay as they
    were) reply to, mention and favourite each user's first status: each
    user has notifications (follows, mentions, favourites) and a thread.
    Returns one access token per user and each user's first status."""
    tag = f"b{random.randrange(16**6):06x}"
    app, _ = await auth.create_app(rp.store, "bench", "urn:ietf:wg:oauth:2.0:oob", "read write")
    made = []
    for i in range(users):
        made.append(await rp.accounts.sign_up(f"{tag}_{i}"))
    ids = [u.id for u in made]
    sem = asyncio.Semaphore(32)

    async def wire(i: int, uid: int) -> tuple[str, int]:
        async with sem:
            for k in range(1, follows + 1):
                await rp.relations.follow(uid, ids[(i + k) % len(ids)])
            first = None
            for n in range(posts):
                status = await rp.statuses.post(uid, f"bench status {n} from {uid}")
                first = first or status.id
            token, _ = await auth.issue_token(rp.store, app, uid, ("read",))
            return token, first

    wired = await asyncio.gather(*(wire(i, uid) for i, uid in enumerate(ids)))
    outsiders = [await rp.accounts.sign_up(f"{tag}_o{j}") for j in range(OUTSIDERS)]

    async def talk(i: int, uid: int, sid: int) -> None:
        async with sem:
            for j, o in enumerate(outsiders):
                if (i + j) % 2 == 0:
                    reply = await rp.statuses.post(
                        o.id, f"@{tag}_{i} a reply to you", in_reply_to=sid
                    )
                    await rp.statuses.post(
                        outsiders[(j + 1) % len(outsiders)].id,
                        "and a reply to the reply",
                        in_reply_to=reply.id,
                    )
                await rp.statuses.favourite(o.id, sid)

    await asyncio.gather(*(talk(i, uid, w[1]) for i, (uid, w) in enumerate(zip(ids, wired))))
    await rp.drain(timeout=120)
    return [t for t, _ in wired], [sid for _, sid in wired]


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU so far of these processes and their children (an
    HTTP server with several workers is a parent and its workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        family = [pid] + [
            int(c)
            for c in subprocess.run(
                ["pgrep", "-P", str(pid)], capture_output=True, text=True
            ).stdout.split()
        ]
        for member in family:
            try:
                with open(f"/proc/{member}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except FileNotFoundError:
                continue
            if "valkey" in _command(member):  # the embedded server is not the app's
                continue
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace")
    except FileNotFoundError:
        return ""


async def _load(
    spec_for, name: str, *, requests: int, seconds: float, concurrency: int
) -> dict[str, Any]:
    """One phase of one contender in its own load-generator process, with
    the server's CPU over the phase (robust where rates are not: a shared
    machine slows a server down, but its CPU per request stays)."""
    host, port, payloads, pids = spec_for(name)
    spec = loadgen.Spec(host, port, payloads, requests, seconds, concurrency)
    before = cpu_seconds(pids)
    result = await asyncio.to_thread(loadgen.run_in_child, spec)
    return {
        "latencies": result.latencies_ms,
        "errors": result.errors,
        "seconds": result.seconds,
        "cpu_us": result.cpu_us_per_request,
        "bytes": result.bytes,
        "server_cpu_s": cpu_seconds(pids) - before,
    }


def _summary(phases: list[dict[str, Any]]) -> dict[str, Any]:
    latencies = sorted(x for p in phases for x in p["latencies"])
    elapsed = sum(p["seconds"] for p in phases)
    n = len(latencies)
    return {
        "requests": n,
        "errors": sum(p["errors"] for p in phases),
        "seconds": round(elapsed, 2),
        "rps": round(n / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(_percentile(latencies, 0.50), 2),
        "p99_ms": round(_percentile(latencies, 0.99), 2),
        "bytes_per_response": round(sum(p["bytes"] for p in phases) / n) if n else 0,
        "server_cpu_us_per_request": round(sum(p["server_cpu_s"] for p in phases) / n * 1e6, 1)
        if n
        else 0.0,
        "generator_cpu_us_per_request": round(
            sum(p["cpu_us"] * len(p["latencies"]) for p in phases) / n, 1
        )
        if n
        else 0.0,
    }


async def _side_by_side(
    spec_for, names: list[str], *, requests: int, seconds: float, concurrency: int, rounds: int
) -> dict[str, dict[str, Any]]:
    """Each contender's requests and time split into ``rounds`` phases, run
    in turn (A B C A B C ...): a shared machine that slows down or speeds up
    during the run then weighs on every contender alike, instead of on
    whichever ran in the slow stretch."""
    phases: dict[str, list] = {name: [] for name in names}
    for r in range(rounds):
        share = requests // rounds + (1 if r < requests % rounds else 0)
        for name in names:
            phases[name].append(
                await _load(
                    spec_for,
                    name,
                    requests=share,
                    seconds=seconds / rounds,
                    concurrency=concurrency,
                )
            )
    return {name: _summary(p) for name, p in phases.items()}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Probe:
    """The fixed limit probe (redpoll/tools/probe_app.py) in its own process."""

    def __init__(self, body: bytes, stack: str = PROBE_STACK):
        self.body = tempfile.NamedTemporaryFile(prefix="redpoll-probe-", suffix=".json")
        self.body.write(body)
        self.body.flush()
        self.port = _free_port()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "redpoll.tools.probe_app",
                "--port",
                str(self.port),
                "--body",
                self.body.name,
                "--stack",
                stack,
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise RuntimeError("the limit probe did not start") from None
                time.sleep(0.05)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)
        self.body.close()


def _get(url: str, path: str, headers: dict[str, str]) -> bytes:
    request = urllib.request.Request(url + path, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as r:
        return r.read()


async def run_http_bench(
    *,
    redis_url: str | None = None,
    cluster: bool = False,
    users: int = 200,
    follows: int = 10,
    posts: int = 3,
    requests: int = 1_000_000,
    seconds: float = 10.0,
    concurrency: int = 32,
    workers: int | None = None,
    rounds: int = 4,
) -> dict[str, Any]:
    """The home page of 20 against /api/v1/instance and the fixed limit probe,
    on one serve process, then the home page on ``workers`` processes (default:
    one per core, as ``redpoll serve`` runs). ``requests`` and ``seconds``
    bound each contender's measured phases together."""
    workers = workers or default_workers()
    embedded = None
    tmp = tempfile.TemporaryDirectory(prefix="redpoll-bench-http-")
    probe = None
    try:
        if redis_url is None:
            embedded = EmbeddedServer(tmp.name + "/data").start()
            redis_url = embedded.url
        rp = await Redpoll.open(Settings(redis_url=redis_url, cluster=cluster))
        try:
            tokens, firsts = await _setup(rp, users, follows, posts)
        finally:
            await rp.close()
        env = {
            "REDIS_URL": redis_url,
            "REDPOLL_CLUSTER": "1" if cluster else "0",
            # the load comes from one address over a few tokens: no
            # per-token, per-IP or per-IP-over-all-tokens budget applies
            "REDPOLL_RATE_TOKEN": "off",
            "REDPOLL_RATE_IP": "off",
            "REDPOLL_RATE_IP_TOKENS": "off",
        }
        args = ["--no-access-log", "--log-level", "warning"]
        home_path = HOME_PATH
        results: dict[str, Any] = {}
        for procs in dict.fromkeys([1, workers]):
            with ServeProcess(env, args=[*args, "--workers", str(procs)]) as srv:
                host, port = srv.url.removeprefix("http://").rsplit(":", 1)
                hosthdr = f"{host}:{port}"
                if probe is None:
                    # the probe answers with the bytes of a real home page
                    body = await asyncio.to_thread(
                        _get, srv.url, home_path, {"Authorization": f"Bearer {tokens[0]}"}
                    )
                    probe = await asyncio.to_thread(Probe, body)
                bearers = [{"Authorization": f"Bearer {t}"} for t in tokens]
                homes = [loadgen.get(home_path, hosthdr, b) for b in bearers]
                pids = [srv.process.pid]
                targets = {
                    "home": (host, int(port), homes, pids),
                    "notifications": (
                        host,
                        int(port),
                        [loadgen.get(NOTIFICATIONS_PATH, hosthdr, b) for b in bearers],
                        pids,
                    ),
                    "thread": (
                        host,
                        int(port),
                        [
                            loadgen.get(THREAD_PATH.format(sid), hosthdr, b)
                            for b, sid in zip(bearers, firsts)
                        ],
                        pids,
                    ),
                    "instance": (host, int(port), [loadgen.get("/api/v1/instance", hosthdr)], pids),
                    "probe": (
                        "127.0.0.1",
                        probe.port,
                        [loadgen.get(home_path, f"127.0.0.1:{probe.port}")],
                        [probe.process.pid],
                    ),
                }
                names = (
                    ["home", "notifications", "thread", "instance", "probe"]
                    if procs == 1
                    else ["home"]
                )
                spec_for = targets.__getitem__
                for name in names:  # warm up: connections, caches, renderings
                    await _load(
                        spec_for,
                        name,
                        requests=min(concurrency * 20, requests),
                        seconds=5,
                        concurrency=concurrency,
                    )
                measured = await _side_by_side(
                    spec_for,
                    names,
                    requests=requests,
                    seconds=seconds,
                    concurrency=concurrency,
                    rounds=max(1, min(rounds, requests)),
                )
                if procs == 1:
                    results.update(measured)
                results[f"home_{procs}_processes"] = measured["home"]
    finally:
        if probe is not None:
            probe.close()
        if embedded is not None:
            embedded.stop()
        tmp.cleanup()
    home, instance, probe_r = results["home"], results["instance"], results["probe"]
    notes, thread = results["notifications"], results["thread"]
    vs_probe = home["rps"] / probe_r["rps"] if probe_r["rps"] else 0.0
    all_cores = results[f"home_{workers}_processes"]
    return {
        "users": users,
        "concurrency": concurrency,
        "workers": workers,
        "rounds": rounds,
        "stack": SERVE_STACK,
        "probe_stack": PROBE_STACK,
        "home": home,
        "notifications": notes,
        "thread": thread,
        "instance": instance,
        "probe": probe_r,
        "home_all_processes": all_cores,
        "home_rps": home["rps"],
        "instance_rps": instance["rps"],
        "probe_rps": probe_r["rps"],
        "home_all_processes_rps": all_cores["rps"],
        "home_vs_probe": round(vs_probe, 3),
        # the same comparison by the server's CPU per request (probe / home)
        "home_vs_probe_cpu": round(
            probe_r["server_cpu_us_per_request"] / home["server_cpu_us_per_request"], 3
        )
        if home["server_cpu_us_per_request"]
        else 0.0,
        # the probe's CPU per request against the notifications page's and a thread's
        "notifications_vs_probe_cpu": _cpu_ratio(probe_r, notes),
        "thread_vs_probe_cpu": _cpu_ratio(probe_r, thread),
        "home_vs_instance": round(home["rps"] / instance["rps"], 3) if instance["rps"] else 0.0,
        "target_home_vs_probe": TARGET_VS_PROBE,
        "meets_target": vs_probe >= TARGET_VS_PROBE
        and home["errors"] == 0
        and all_cores["errors"] == 0,
    }


def _cpu_ratio(probe: dict[str, Any], page: dict[str, Any]) -> float:
    cpu = page["server_cpu_us_per_request"]
    return round(probe["server_cpu_us_per_request"] / cpu, 3) if cpu else 0.0


def format_report(result: dict[str, Any]) -> str:
    lines = [
        f"HTTP bench: {result['users']} users, {result['concurrency']} connections, "
        f"loopback, contenders in turn over {result['rounds']} rounds; serve on "
        f"{result['stack']}, probe on {result['probe_stack']}; load from a separate process",
        f"{'endpoint':<40}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'requests':>10}"
        f"{'errors':>8}{'gen µs':>8}{'srv µs':>8}",
    ]
    rows = (
        ("home", "GET /api/v1/timelines/home (20)"),
        ("notifications", "GET /api/v1/notifications (20)"),
        ("thread", "GET /api/v1/statuses/:id/context"),
        ("instance", "GET /api/v1/instance"),
        ("probe", "limit probe (same bytes, bare ASGI)"),
        ("home_all_processes", f"home (20), {result['workers']} serve processes"),
    )
    for name, label in rows:
        r = result[name]
        lines.append(
            f"{label:<40}{r['rps']:>10,.0f}{r['p50_ms']:>9}{r['p99_ms']:>9}"
            f"{r['requests']:>10}{r['errors']:>8}{r['generator_cpu_us_per_request']:>8}"
            f"{r['server_cpu_us_per_request']:>8}"
        )
    verdict = "meets" if result["meets_target"] else "MISSES"
    lines.append(
        f"home / probe = {result['home_vs_probe']} ({verdict} the "
        f"{result['target_home_vs_probe']} target); by server CPU per request "
        f"{result['home_vs_probe_cpu']}; home / instance = {result['home_vs_instance']}; "
        f"home page {result['home']['bytes_per_response']:,} bytes"
    )
    lines.append(
        f"by server CPU per request against the probe: notifications "
        f"{result['notifications_vs_probe_cpu']}, thread {result['thread_vs_probe_cpu']} "
        f"({result['notifications']['bytes_per_response']:,} and "
        f"{result['thread']['bytes_per_response']:,} bytes)"
    )
    lines.append(
        "gen µs / srv µs: the load generator's / the server's CPU per request "
        "(the server's Valkey not included)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_report(asyncio.run(run_http_bench())))
