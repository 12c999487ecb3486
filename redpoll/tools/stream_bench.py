"""``redpoll bench --stream``: many concurrent stream clients on one server process.

:func:`run` (click-free; the CLI wires an option to it) starts a private
embedded Valkey and one ``redpoll serve`` process, opens N v1.1 stream
connections over loopback with a deterministic mix of filters (track, follow,
sample, locations, track+follow), posts statuses at a steady rate for a
bounded time, and reports:

* delivered events, and events lost by clients that kept up (expected from
  the same filter code, so it must be 0);
* p50 / p99 / max delivery latency (status creation -> the client read it);
* server memory per connection (RSS growth over the idle baseline / N);
* connections cut off as stalled.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import tempfile
import time

import httpx

from ..engine import Redpoll
from ..server import EmbeddedServer
from ..settings import Settings
from ..stream.filters import Event, parse_filter

VOCAB = [f"word{i}" for i in range(50)]
AUTHORS = 100


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _params(i: int, author_ids: list[int]) -> dict[str, str]:
    rnd = random.Random(i)
    kind = i % 10
    if kind < 4:
        return {"track": rnd.choice(VOCAB)}
    if kind < 6:
        return {"follow": str(rnd.choice(author_ids))}
    if kind < 8:
        return {"percent": "1"}
    if kind < 9:
        lon, lat = rnd.uniform(-170, 150), rnd.uniform(-80, 60)
        return {"locations": f"{lon:.2f},{lat:.2f},{lon + 20:.2f},{lat + 20:.2f}"}
    return {"track": f"{rnd.choice(VOCAB)} {rnd.choice(VOCAB)},{rnd.choice(VOCAB)}",
            "follow": str(rnd.choice(author_ids))}


def _poster(redis_url: str, author_ids: list[int], rate: float, duration: float, out) -> None:
    """Post at ``rate`` per second for ``duration`` seconds; send back the statuses."""
    async def go():
        rp = await Redpoll.open(Settings(redis_url=redis_url))
        rnd = random.Random(42)
        posted = []
        interval = 1.0 / rate
        start = time.monotonic()
        n = 0
        try:
            while time.monotonic() - start < duration:
                delay = start + n * interval - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                text = " ".join(rnd.sample(VOCAB, 3)) + f" #{n}"
                extra = None
                if rnd.random() < 0.3:
                    extra = {"location": f"{rnd.uniform(-80, 80):.3f},{rnd.uniform(-170, 170):.3f}"}
                posted.append((await rp.post(rnd.choice(author_ids), text, extra)).to_dict())
                n += 1
        finally:
            await rp.close()
        return posted
    out.send(asyncio.run(go()))


class Client:
    def __init__(self, i: int, params: dict[str, str]):
        self.i = i
        self.params = params
        self.sample = "percent" in params
        self.filter = parse_filter(params, f"bench-{i}", sample=self.sample)
        self.got: dict[int, float] = {}
        self.latencies: list[float] = []
        self.deletes = 0
        self.disconnected = None
        self.writer = None

    async def connect(self, port: int) -> None:
        from urllib.parse import urlencode
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        self.writer = writer
        q = urlencode({"identifier": f"bench-{self.i}", **self.params})
        path = "/1.1/statuses/sample.json" if self.sample else "/1.1/statuses/filter.json"
        writer.write(f"GET {path}?{q} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"client {self.i}: {head[:200]!r}")
        self.reader = reader

    async def run(self) -> None:
        reader = self.reader
        buf = b""
        try:
            while True:
                size = int((await reader.readuntil(b"\r\n"))[:-2], 16)
                if size == 0:
                    break
                data = await reader.readexactly(size + 2)
                buf += data[:-2]
                while b"\r\n" in buf:
                    line, buf = buf.split(b"\r\n", 1)
                    if not line:
                        continue
                    now = time.time()
                    msg = json.loads(line)
                    if "id" in msg:
                        self.got[msg["id"]] = now
                        self.latencies.append(now * 1000 - int(msg["timestamp_ms"]))
                    elif "delete" in msg:
                        self.deletes += 1
                    elif "disconnect" in msg:
                        self.disconnected = msg["disconnect"]["code"]
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            if self.disconnected is None:
                self.disconnected = -1

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _bench(clients: int, rate: float, duration: float, redis_url: str | None) -> dict:
    from ..api.process import ServeProcess
    own = None
    if redis_url is None:
        own = EmbeddedServer(tempfile.mkdtemp(prefix="redpoll-stream-bench-"))
        await asyncio.to_thread(own.start)
        redis_url = own.url
    env = {"REDIS_URL": redis_url, "REDPOLL_CLUSTER": "0",
           "REDPOLL_STREAM_QUEUE": os.environ.get("REDPOLL_STREAM_QUEUE", "1000"),
           # every client comes from loopback: the per-IP stream limit would refuse most
           "REDPOLL_STREAM_CONNECTIONS_PER_IP": "off"}
    srv = ServeProcess(env, ["--no-jobs", "--no-access-log", "--log-level", "warning"])
    await asyncio.to_thread(srv.start)
    port = int(srv.url.rsplit(":", 1)[1])
    rp = await Redpoll.open(Settings(redis_url=redis_url))
    conns: list[Client] = []
    tasks: list[asyncio.Task] = []
    try:
        author_ids = []
        for i in range(AUTHORS):
            author_ids.append((await rp.sign_up(f"bench{i}_{os.getpid()}")).id)
        await asyncio.sleep(0.5)
        base_rss = _rss_kb(srv.process.pid)
        conns = [Client(i, _params(i, author_ids)) for i in range(clients)]
        t0 = time.monotonic()
        for start in range(0, clients, 200):
            await asyncio.gather(*(c.connect(port) for c in conns[start:start + 200]))
        connect_s = time.monotonic() - t0
        tasks = [asyncio.create_task(c.run()) for c in conns]
        await asyncio.sleep(1.0)
        conn_rss = _rss_kb(srv.process.pid)
        # post at a steady rate, from a process of its own (the clients' parsing
        # must not slow the posting down)
        import multiprocessing as mp
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe(duplex=False)
        poster = ctx.Process(target=_poster, args=(redis_url, author_ids, rate, duration, child))
        start = time.monotonic()
        poster.start()
        raw = await asyncio.to_thread(parent.recv)
        await asyncio.to_thread(poster.join)
        post_s = time.monotonic() - start
        posted = [Event("0-0", "update", d) for d in raw]
        # let the last deliveries arrive: until every kept-up client has them (bounded)
        expected = {c.i: {e.sid for e in posted if c.filter.matches(e)} for c in conns}
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if all(expected[c.i] <= c.got.keys() for c in conns if c.disconnected is None):
                break
            await asyncio.sleep(0.2)
        peak_rss = _rss_kb(srv.process.pid)
        kept = [c for c in conns if c.disconnected is None]
        lost = sum(len(expected[c.i] - c.got.keys()) for c in kept)
        lat = sorted(x for c in conns for x in c.latencies)
        delivered = sum(len(c.got) for c in conns)

        def pct(p):
            return round(lat[min(len(lat) - 1, int(len(lat) * p))], 1) if lat else None

        stats = json.loads((await asyncio.to_thread(
            httpx.get, srv.url + "/stream/stats")).text)
        return {
            "clients": clients, "connect_s": round(connect_s, 2),
            "posts": len(posted), "post_rate": round(len(posted) / post_s, 1),
            "duration_s": round(post_s, 1),
            "delivered": delivered, "expected": sum(len(v) for v in expected.values()),
            "lost_by_kept_up_clients": lost,
            "disconnected_clients": len(conns) - len(kept),
            "latency_ms_p50": pct(0.50), "latency_ms_p99": pct(0.99),
            "latency_ms_max": round(lat[-1], 1) if lat else None,
            "server_rss_idle_mb": round(base_rss / 1024, 1),
            "server_rss_connected_mb": round(conn_rss / 1024, 1),
            "server_rss_peak_mb": round(peak_rss / 1024, 1),
            "memory_per_connection_kb": round((conn_rss - base_rss) / clients, 1),
            "hub": stats,
        }
    finally:
        for c in conns:
            c.close()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await rp.close()
        await asyncio.to_thread(srv.close)
        if own is not None:
            await asyncio.to_thread(own.stop)


def run(clients: int = 2000, rate: float = 100.0, duration: float = 20.0,
        redis_url: str | None = None) -> dict:
    """Run the stream benchmark; returns the figures as a dict (see module doc)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, 2 * clients + 1024))
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))  # the server inherits it
    return asyncio.run(_bench(clients, rate, duration, redis_url))


if __name__ == "__main__":
    import sys
    args = [float(a) for a in sys.argv[1:]]
    print(json.dumps(run(int(args[0]) if args else 2000, *(args[1:3])), indent=2))
