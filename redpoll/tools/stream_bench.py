"""``redpoll bench --stream``: many concurrent stream clients on one server process.

:func:`run` (click-free; the CLI wires options to it) starts a private
embedded Valkey and ONE ``redpoll serve`` process, then opens N streaming
connections over loopback from separate load-generator processes (so their
CPU is not the server's), with a deterministic mix of protocols and filters:

* 60% Twitter v1.1 (``statuses/filter.json``: track, follow, locations,
  track+follow; ``statuses/sample.json`` at 1%);
* 20% Mastodon SSE (``user`` streams of users following 5 authors,
  ``hashtag``, and a few ``public`` firehoses);
* 20% Mastodon WebSocket (``user``, ``hashtag``, a socket with both, and a
  few ``public``).

It posts statuses at a steady rate for a bounded time from a process of its
own and reports:

* delivered events, and events lost by clients that kept up (expected from
  the same filter code, so it must be 0);
* p50 / p99 / max delivery latency (status creation -> the client read it),
  and the server's share of it (creation -> the hub's last write of the
  event, from /stream/stats);
* server memory per connection: the serve process's RSS growth over its idle
  baseline / N, once all are connected (``_idle_kb``) and at the end of the
  run, after the deliveries (``memory_per_connection_kb``, the larger);
* the serve process's CPU (utime+stime from /proc) per delivered event over
  the posting window and the drain after it;
* connections cut off as stalled.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import random
import re
import resource
import tempfile
import time

import httpx

from ..core.settings import Settings
from ..engine.engine import Redpoll
from ..storage.server import EmbeddedServer
from ..stream.filters import Event, Filter, parse_filter
from ..stream.frames import frame_size

VOCAB = [f"word{i}" for i in range(50)]
TAGS = [f"tag{i}" for i in range(20)]
AUTHORS = 100
#: Mastodon users each hold this many of the SSE / WebSocket streams (the
#: per-identifier cap is 10)
STREAMS_PER_USER = 8
#: authors each Mastodon user follows
FOLLOWS = 5
#: clients one load-generator process opens at once while connecting
CONNECT_BATCH = 100
#: one client in this many of a public-capable slot takes the public firehose
PUBLIC_EVERY = 10


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _open_files_limit(pid: int) -> int | None:
    """The soft open-file limit of ``pid`` (/proc/<pid>/limits)."""
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                value = line.split()[3]
                return int(value) if value.isdigit() else None
    return None


def _cpu(pid: int) -> tuple[float, float]:
    """(utime, stime) of ``pid`` in seconds (/proc/<pid>/stat fields 14, 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def _waited_s(pid: int) -> float:
    """Seconds the main thread of ``pid`` (the serve process's event loop) has
    spent runnable but waiting for a CPU (/proc/<pid>/schedstat, field 2):
    on a shared machine, the part of the latency that is the machine's."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):  # no schedstats in this kernel
        return float("nan")


def _cpu_s(pid: int) -> float:
    return sum(_cpu(pid))


def _v1_params(i: int, author_ids: list[int]) -> dict[str, str]:
    rnd = random.Random(i)
    kind = (i // 20) % 10
    if kind < 4:
        return {"track": rnd.choice(VOCAB)}
    if kind < 6:
        return {"follow": str(rnd.choice(author_ids))}
    if kind < 8:
        return {"percent": "1"}
    if kind < 9:
        lon, lat = rnd.uniform(-170, 150), rnd.uniform(-80, 60)
        return {"locations": f"{lon:.2f},{lat:.2f},{lon + 20:.2f},{lat + 20:.2f}"}
    return {
        "track": f"{rnd.choice(VOCAB)} {rnd.choice(VOCAB)},{rnd.choice(VOCAB)}",
        "follow": str(rnd.choice(author_ids)),
    }


def plan(i: int) -> tuple[str, list[tuple[str, str]]]:
    """Client ``i``'s protocol ("v1", "sse", "ws") and its Mastodon
    subscriptions (stream, tag): 12 in 20 are v1.1, 4 SSE, 4 WebSocket."""
    slot, rnd = i % 20, random.Random(i)
    public = (i // 20) % PUBLIC_EVERY == 0
    tag = rnd.choice(TAGS)
    if slot < 12:
        return "v1", []
    if slot < 16:
        if slot < 14:
            return "sse", [("user", "")]
        return "sse", [("public", "") if slot == 15 and public else ("hashtag", tag)]
    if slot < 18:
        return "ws", [("user", "")]
    if slot == 18:
        return "ws", [("hashtag", tag)]
    return "ws", [("public", "")] if public else [("user", ""), ("hashtag", tag)]


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
                if rnd.random() < 0.5:
                    text += f" #{rnd.choice(TAGS)}"
                extra = None
                if rnd.random() < 0.3:
                    extra = {"location": f"{rnd.uniform(-80, 80):.3f},{rnd.uniform(-170, 170):.3f}"}
                posted.append(
                    (await rp.statuses.post(rnd.choice(author_ids), text, extra)).to_dict()
                )
                n += 1
        finally:
            await rp.close()
        return posted

    out.send(asyncio.run(go()))


# --- the load generator's clients (in worker processes) ------------------------------------
_V1_ID = re.compile(rb'"id":(\d+)')
_M_ID = re.compile(rb'\{"id":"(\d+)"')
_WS_EVENT = re.compile(rb'"event":"(\w+)","payload":"(?:\{\\"id\\":\\"(\d+))?')


class Conn(asyncio.Protocol):
    """One raw client connection: an HTTP request (v1.1 or SSE, chunked
    response) or a WebSocket upgrade; records each status it receives (id ->
    arrival time in ms). Plain protocol callbacks, so one process can hold
    thousands cheaply."""

    def __init__(self, i: int, kind: str, request: bytes, later: list[bytes]) -> None:
        self.i = i
        self.kind = kind
        self.request = request
        self.later = later  # WebSocket frames to send once upgraded
        self.ready = asyncio.get_running_loop().create_future()
        self.buf = bytearray()
        self.body = bytearray()
        self.need = 0  # chunked: bytes of the current chunk still to read (+2 for CRLF)
        self.head = True
        self.got: dict[int, float] = {}
        self.updates = 0
        self.disconnected = None
        self.transport = None
        self.event = b""  # SSE: the event name of the block being read

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc) -> None:
        if self.disconnected is None:
            self.disconnected = -1
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(f"client {self.i}: closed before the answer"))

    def data_received(self, data: bytes) -> None:
        now = time.time() * 1000
        if self.head:
            self.buf += data
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(self.buf[:end].split(b"\r\n", 1)[0])
            want = b" 101 " if self.kind == "ws" else b" 200 "
            if want not in status + b" ":
                self.ready.set_exception(RuntimeError(f"client {self.i}: {status[:200]!r}"))
                self.transport.close()
                return
            self.head = False
            data = bytes(self.buf[end + 4 :])
            self.buf.clear()
            for frame in self.later:
                self.transport.write(frame)
            self.ready.set_result(None)
            if not data:
                return
        if self.kind == "ws":
            self._frames(data, now)
        else:
            self._chunks(data, now)

    # HTTP chunked body -> messages (v1.1: CRLF-ended lines; SSE: LF lines)
    def _chunks(self, data: bytes, now: float) -> None:
        buf = self.buf
        buf += data
        pos, end = 0, len(buf)
        body = self.body
        while pos < end:
            if self.need == 0:
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    break
                size = int(bytes(buf[pos:eol]).split(b";")[0], 16)
                pos = eol + 2
                if size == 0:
                    if self.disconnected is None:
                        self.disconnected = 0
                    break
                self.need = size + 2
            take = min(self.need, end - pos)
            body += buf[pos : pos + take]
            pos += take
            self.need -= take
            if self.need == 0:
                del body[-2:]  # the chunk's CRLF
        del buf[:pos]
        if self.kind == "v1":
            self._v1_lines(now)
        else:
            self._sse_lines(now)

    def _v1_lines(self, now: float) -> None:
        body = self.body
        start = 0
        while True:
            eol = body.find(b"\r\n", start)
            if eol < 0:
                break
            line = body[start:eol]
            start = eol + 2
            if line[:14] == b'{"created_at":':
                m = _V1_ID.search(line)
                self.got[int(m.group(1))] = now
                self.updates += 1
            elif line[:14] == b'{"disconnect":':
                self.disconnected = json.loads(bytes(line))["disconnect"]["code"]
        del body[:start]

    def _sse_lines(self, now: float) -> None:
        body = self.body
        start = 0
        while True:
            eol = body.find(b"\n", start)
            if eol < 0:
                break
            line = body[start:eol]
            start = eol + 1
            if line[:6] == b"event:":
                self.event = bytes(line[7:])
            elif line[:6] == b"data: " and self.event == b"update":
                m = _M_ID.match(line, 6)
                self.got[int(m.group(1))] = now
                self.updates += 1
        del body[:start]

    # WebSocket frames from the server (never masked)
    def _frames(self, data: bytes, now: float) -> None:
        buf = self.buf
        buf += data
        pos, end = 0, len(buf)
        while end - pos >= 2:
            op, sized = buf[pos] & 0x0F, frame_size(buf, pos, end)
            if sized is None:
                break
            size, head = sized
            if end - pos < head + size:
                break
            payload = bytes(buf[pos + head : pos + head + size])
            pos += head + size
            if op == 1:
                m = _WS_EVENT.search(payload, 0, 200)
                if m is not None and m.group(1) == b"update":
                    self.got[int(m.group(2))] = now
                    self.updates += 1
            elif op == 9:  # ping -> pong (masked, as every client frame)
                self.transport.write(ws_frame(payload, 0xA))
            elif op == 8:
                self.disconnected = int.from_bytes(payload[:2], "big") if payload else 1005
        del buf[:pos]


def ws_frame(payload: bytes, opcode: int = 1) -> bytes:
    """A client frame (FIN, masked with a random key)."""
    key = os.urandom(4)
    size = len(payload)
    if size < 126:
        head = bytes([0x80 | opcode, 0x80 | size])
    else:
        head = bytes([0x80 | opcode, 0x80 | 126]) + size.to_bytes(2, "big")
    masked = bytes(b ^ key[k % 4] for k, b in enumerate(payload))
    return head + key + masked


def request_for(spec: dict) -> tuple[bytes, list[bytes]]:
    """The bytes a client sends first, and the frames it sends once upgraded."""
    from urllib.parse import urlencode

    kind = spec["kind"]
    if kind == "v1":
        params = dict(spec["params"], identifier=f"bench-{spec['i']}")
        path = "/1.1/statuses/sample.json" if "percent" in params else "/1.1/statuses/filter.json"
        return (f"GET {path}?{urlencode(params)} HTTP/1.1\r\nHost: bench\r\n\r\n").encode(), []
    subs = spec["subs"]
    auth = f"Authorization: Bearer {spec['token']}\r\n"
    if kind == "sse":
        stream, tag = subs[0]
        query = f"?{urlencode({'tag': tag})}" if tag else ""
        return (
            f"GET /api/v1/streaming/{stream}{query} HTTP/1.1\r\nHost: bench\r\n{auth}"
            "Accept: text/event-stream\r\n\r\n"
        ).encode(), []
    key = "dGhlIHNhbXBsZSBub25jZQ=="
    stream, tag = subs[0]
    query = urlencode({"stream": stream, **({"tag": tag} if tag else {})})
    later = [
        ws_frame(json.dumps({"type": "subscribe", "stream": s, "tag": t}).encode())
        for s, t in subs[1:]
    ]
    return (
        f"GET /api/v1/streaming?{query} HTTP/1.1\r\nHost: bench\r\n{auth}"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode(), later


async def _worker_main(port: int, specs: list[dict], pipe) -> None:
    loop = asyncio.get_running_loop()
    conns: list[Conn] = []
    failed: list[str] = []
    t0 = time.monotonic()

    async def open_one(spec: dict) -> None:
        request, later = request_for(spec)
        conn = Conn(spec["i"], spec["kind"], request, later)
        try:
            await loop.create_connection(lambda: conn, "127.0.0.1", port)
            await asyncio.wait_for(conn.ready, 60)
            conns.append(conn)
        except (TimeoutError, OSError, RuntimeError) as exc:
            failed.append(str(exc)[:200])
            if conn.transport is not None:
                conn.transport.close()

    for start in range(0, len(specs), CONNECT_BATCH):
        await asyncio.gather(*(open_one(s) for s in specs[start : start + CONNECT_BATCH]))
    pipe.send(("connected", len(conns), failed[:5], len(failed), time.monotonic() - t0))
    # the parent sends what each client should get once the posting is over
    expected, created, deadline_s = await asyncio.to_thread(pipe.recv)
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if all(c.disconnected is not None or c.got.keys() >= expected[c.i] for c in conns):
            break
        await asyncio.sleep(0.1)
    lat, lost, disconnected, unexpected, delivered = [], 0, 0, 0, 0
    for c in conns:
        delivered += c.updates
        for sid, at in c.got.items():
            if sid in created:
                lat.append(at - created[sid])
            else:
                unexpected += 1
        if c.disconnected is not None:
            disconnected += 1
        else:
            lost += len(expected[c.i] - c.got.keys())
    for c in conns:
        c.transport.close()
    pipe.send(
        (
            "result",
            {
                "latencies": lat,
                "lost": lost,
                "disconnected": disconnected,
                "unexpected": unexpected,
                "delivered": delivered,
                "disconnected_kinds": [c.kind for c in conns if c.disconnected is not None],
            },
        )
    )


def _worker(port: int, specs: list[dict], pipe) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        import uvloop

        uvloop.run(_worker_main(port, specs, pipe))
    except ImportError:
        asyncio.run(_worker_main(port, specs, pipe))


# --- the run -------------------------------------------------------------------------------
async def _seed(rp: Redpoll, clients: int) -> tuple[list[int], list[dict]]:
    """Authors, Mastodon users (tokens, follows) and each client's spec."""
    from ..accounts import auth

    tag = os.getpid()
    author_ids = [(await rp.accounts.sign_up(f"bench{i}_{tag}")).id for i in range(AUTHORS)]
    kinds = [plan(i) for i in range(clients)]
    mastodon = sum(1 for k, _ in kinds if k != "v1")
    nusers = -(-mastodon // STREAMS_PER_USER)
    app, _ = await auth.create_app(rp.store, "stream-bench", ["urn:ietf:wg:oauth:2.0:oob"], "read")
    users = []
    for u in range(nusers):
        uid = (await rp.accounts.sign_up(f"mbench{u}_{tag}")).id
        follows = random.Random(-u - 1).sample(author_ids, FOLLOWS)
        for a in follows:
            await rp.relations.follow(uid, a)
        token, _ = await auth.issue_token(rp.store, app, uid, ("read",))
        users.append({"uid": uid, "token": token, "follows": follows})
    specs, m = [], 0
    for i, (kind, subs) in enumerate(kinds):
        if kind == "v1":
            specs.append({"i": i, "kind": kind, "params": _v1_params(i, author_ids)})
        else:
            user = users[m % nusers]
            m += 1
            specs.append(
                {
                    "i": i,
                    "kind": kind,
                    "subs": subs,
                    "token": user["token"],
                    "uid": user["uid"],
                    "follows": user["follows"],
                }
            )
    return author_ids, specs


def filters_of(spec: dict) -> list[Filter]:
    """What the server decides for this client, built as its endpoints build it."""
    if spec["kind"] == "v1":
        params = spec["params"]
        return [parse_filter(params, f"bench-{spec['i']}", sample="percent" in params)]
    out = []
    uid = spec["uid"]
    for stream, tag in spec["subs"]:
        if stream == "user":
            authors = frozenset(spec["follows"]) | {uid}
            out.append(Filter(authors=authors, owner=uid, viewer=uid, followed=authors))
        elif stream == "hashtag":
            out.append(Filter(tags=frozenset({tag})))
        else:
            out.append(Filter(sample=frozenset(range(100))))
    return out


async def _bench(
    clients: int, rate: float, duration: float, redis_url: str | None, workers: int
) -> dict:
    from ..api.process import ServeProcess

    own = None
    if redis_url is None:
        own = EmbeddedServer(tempfile.mkdtemp(prefix="redpoll-stream-bench-"))
        await asyncio.to_thread(own.start)
        redis_url = own.url
    env = {
        "REDIS_URL": redis_url,
        "REDPOLL_CLUSTER": "0",
        "REDPOLL_STREAM_QUEUE": os.environ.get("REDPOLL_STREAM_QUEUE", "1000"),
        # every client comes from loopback: the per-IP stream limit would refuse most
        "REDPOLL_STREAM_CONNECTIONS_PER_IP": "off",
    }
    srv = ServeProcess(
        env, ["--no-jobs", "--no-access-log", "--log-level", "warning", "--workers", "1"]
    )
    await asyncio.to_thread(srv.start)
    pid = srv.process.pid
    port = int(srv.url.rsplit(":", 1)[1])
    rp = await Redpoll.open(Settings(redis_url=redis_url))
    ctx = mp.get_context("spawn")
    procs: list = []
    pipes: list = []
    try:
        author_ids, specs = await _seed(rp, clients)
        await asyncio.sleep(0.5)
        base_rss = _rss_kb(pid)
        t0 = time.monotonic()
        for w in range(workers):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(port, specs[w::workers], child), daemon=True)
            proc.start()
            procs.append(proc)
            pipes.append(parent)
        ready = [await asyncio.to_thread(p.recv) for p in pipes]
        connect_s = time.monotonic() - t0
        failed = sum(r[3] for r in ready)
        if failed:
            raise RuntimeError(
                f"{failed} of {clients} clients could not connect: "
                f"{[m for r in ready for m in r[2]][:5]}"
            )
        await asyncio.sleep(1.0)
        conn_rss = _rss_kb(pid)
        # post at a steady rate, from a process of its own
        parent, child = ctx.Pipe(duplex=False)
        poster = ctx.Process(target=_poster, args=(redis_url, author_ids, rate, duration, child))
        cpu0, start, wait0 = _cpu(pid), time.monotonic(), _waited_s(pid)
        gen0 = sum(_cpu_s(p.pid) for p in procs)
        poster.start()
        raw = await asyncio.to_thread(parent.recv)
        post_s = time.monotonic() - start
        gen_s = sum(_cpu_s(p.pid) for p in procs) - gen0
        posting_cpu_s = sum(_cpu(pid)) - sum(cpu0)
        posting_wait_s = _waited_s(pid) - wait0
        await asyncio.to_thread(poster.join)
        posted = [Event("0-0", "update", d) for d in raw]
        created = {e.sid: int(d["created_at"]) for e, d in zip(posted, raw)}
        expected_total = 0
        for w, pipe in enumerate(pipes):
            mine = {}
            for spec in specs[w::workers]:
                fs = filters_of(spec)
                mine[spec["i"]] = {e.sid for e in posted if any(f.matches(e) for f in fs)}
                expected_total += len(mine[spec["i"]])
            pipe.send((mine, created, 15.0))
        results = [(await asyncio.to_thread(p.recv))[1] for p in pipes]
        drained_s = time.monotonic() - start
        cpu1 = _cpu(pid)
        cpu_user, cpu_sys = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
        cpu_s = cpu_user + cpu_sys
        peak_rss = _rss_kb(pid)
        lat = sorted(x for r in results for x in r["latencies"])
        delivered = sum(r["delivered"] for r in results)

        def pct(p):
            return round(lat[min(len(lat) - 1, int(len(lat) * p))], 1) if lat else None

        stats = json.loads((await asyncio.to_thread(httpx.get, srv.url + "/stream/stats")).text)
        per_conn_idle = (conn_rss - base_rss) / clients
        per_conn_end = (peak_rss - base_rss) / clients
        return {
            "clients": clients,
            # raised by the serve process itself at start (soft -> hard)
            "server_open_files_limit": _open_files_limit(pid),
            "mix": {k: sum(1 for s in specs if s["kind"] == k) for k in ("v1", "sse", "ws")},
            "load_processes": workers,
            "connect_s": round(connect_s, 2),
            "posts": len(posted),
            "post_rate": round(len(posted) / post_s, 1),
            "duration_s": round(post_s, 1),
            "delivered": delivered,
            "expected": expected_total,
            "lost_by_kept_up_clients": sum(r["lost"] for r in results),
            "unexpected": sum(r["unexpected"] for r in results),
            "disconnected_clients": sum(r["disconnected"] for r in results),
            "disconnected_by_kind": {
                k: n
                for k in ("v1", "sse", "ws")
                if (n := sum(r["disconnected_kinds"].count(k) for r in results))
            },
            "latency_ms_p50": pct(0.50),
            "latency_ms_p99": pct(0.99),
            "latency_ms_max": round(lat[-1], 1) if lat else None,
            # the server's share: creation -> the hub's last write of the event
            "server_lag_ms_p50": stats.get("lag_ms_p50"),
            "server_lag_ms_p99": stats.get("lag_ms_p99"),
            "server_cpu_s": round(cpu_s, 2),
            "server_cpu_sys_s": round(cpu_sys, 2),
            "server_cpu_percent": round(100 * cpu_s / drained_s, 1),
            # while statuses were posted: ~100 means the server was the bottleneck,
            # well under 100 with growing latencies means it waited for a CPU
            "server_cpu_percent_posting": round(100 * posting_cpu_s / post_s, 1),
            "server_cpu_us_per_event": round(cpu_s * 1e6 / delivered, 1) if delivered else None,
            # while statuses were posted: how long the server's event loop was
            # ready to run but waited for a CPU taken by other processes (the
            # load generator, Valkey, the poster, anything else on the machine)
            "server_cpu_wait_s_posting": round(posting_wait_s, 2),
            "server_cpu_wait_percent_posting": round(100 * posting_wait_s / post_s, 1),
            # the clients' processes, while statuses were posted (not the server's)
            "load_generator_cpu_s": round(gen_s, 2),
            "server_rss_idle_mb": round(base_rss / 1024, 1),
            "server_rss_connected_mb": round(conn_rss / 1024, 1),
            "server_rss_end_mb": round(peak_rss / 1024, 1),
            "memory_per_connection_idle_kb": round(per_conn_idle, 1),
            "memory_per_connection_kb": round(max(per_conn_idle, per_conn_end), 1),
            "hub": stats,
        }
    finally:
        for pipe in pipes:
            pipe.close()
        for proc in procs:
            await asyncio.to_thread(proc.join, 10)
            if proc.is_alive():
                proc.kill()
        await rp.close()
        await asyncio.to_thread(srv.close)
        if own is not None:
            await asyncio.to_thread(own.stop)


def default_workers(clients: int) -> int:
    """Load-generator processes: one per 2,500 clients, 1..8."""
    return max(1, min(8, -(-clients // 2500)))


def run(
    clients: int = 2000,
    rate: float = 100.0,
    duration: float = 20.0,
    redis_url: str | None = None,
    workers: int | None = None,
) -> dict:
    """Run the stream benchmark; returns the figures as a dict (see module doc).
    The serve process raises its own open-file limit (api/serve.py); each
    load-generator process raises its own."""
    return asyncio.run(
        _bench(clients, rate, duration, redis_url, workers or default_workers(clients))
    )


if __name__ == "__main__":
    import sys

    args = [float(a) for a in sys.argv[1:]]
    print(json.dumps(run(int(args[0]) if args else 2000, *(args[1:3])), indent=2))
