"""``redpoll bench --capacity``: how many people one machine carries.

A population of simulated people on a real ``redpoll serve`` (serve's
default workers: one per core, each running its share of the background
jobs) over an embedded Valkey, the bench's load in processes of its own:

1. **Seed** (through the engine, not over HTTP: sign-ups over HTTP would
   mostly measure argon2): ``people`` accounts, a few statuses each, and
   follows drawn from a Zipf popularity (rank ``r`` followed with weight
   ``1/r``), so that a few accounts are followed by nearly everyone and
   most by a handful; one access token each (redpoll.accounts.auth).
2. **Connect**: the ``active`` people each open a streaming connection, a
   WebSocket ``/api/v1/streaming?stream=user`` (3 in 4, as the web app and
   most mobile apps) or an SSE ``/api/v1/streaming/user``, from
   load-generator processes (uvloop, ``asyncio.Protocol`` clients: the
   streams are stream_bench's ``Conn``). A quiet window with every stream
   open and nothing done measures what open streams cost by themselves.
3. **Use**: each active person acts as a Poisson process at :data:`MIX`
   (per hour: ~30 home reads, ~15 notification reads, ~10 profile or
   thread reads, ~2 posts, ~10 favourites, ~2 boosts, ~1 follow), with time
   compressed ``speed`` times, so that a few minutes of wall clock are
   many person-hours. Sessions end: at :data:`RETURNS_PER_HOUR` an active
   person leaves (closes the stream) and an idle one comes back (opens a
   stream and reads home), so the active count stays put. A warm-up at the
   same rates runs first; then a measured window.

Nothing is subtracted. The server side's CPU from the measured window's
start until its work is done (every action scheduled in it answered, the
jobs they queued run: a server that falls behind must not look cheaper) is
every serve process (the parent, its workers and any child that ended,
/proc/<pid>/stat) plus Valkey (INFO cpu, every thread and fork); it is
divided by the active
person-hours the window simulated (``active * seconds * speed / 3600``).
``people_per_core`` = 3600 s of one core / CPU seconds per person-hour.

The generator measures each request from its write to the last byte of
the answer (per kind: p50, p99), the time from a post's request to the
status's ``update`` event at each follower's open stream (stream delivery;
measured from the 200 instead it is often 0: the event may reach followers
before the author reads the answer, ``stream_before_200_share``),
and how late it was itself against its schedule (``generator_lag_ms_p99``:
large means the generator, not the server, fell behind).

    from redpoll.tools.bench_capacity import Sizes, run_capacity, format_report
    print(format_report(run_capacity(Sizes.quick())))
"""

from __future__ import annotations

import asyncio
import itertools
import json
import multiprocessing as mp
import os
import random
import resource
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from typing import Any

from ..accounts import auth
from ..api.process import ServeProcess
from ..api.serve import default_workers
from ..core.settings import Settings
from ..engine.engine import Redpoll
from ..storage.server import EmbeddedServer
from .stream_bench import Conn, request_for

#: what one active person does per hour (the issue's mix; docs/benchmarks.md
#: gives the figures it rests on). "read" is a profile or a thread, half each.
MIX = {
    "home": 30.0,
    "notifications": 15.0,
    "read": 10.0,
    "post": 2.0,
    "favourite": 10.0,
    "boost": 2.0,
    "follow": 1.0,
}
#: sessions per active person-hour: one leaves, an idle one comes back
#: (opens a stream, reads home); a session of about an hour.
RETURNS_PER_HOUR = 1.0
#: request kinds reported (a "read" is a profile or a thread; "return" is
#: the home read of a person who came back)
KINDS = (
    "home",
    "notifications",
    "profile",
    "thread",
    "post",
    "favourite",
    "boost",
    "follow",
    "return",
)
#: every p99 (request kinds and stream delivery) must be under this
P99_LIMIT_MS = 250.0
#: statuses each person has before the run
SEED_POSTS = 3
#: seconds from serve's start to the quiet window, at least
SETTLE_S = 6.0
#: HTTP keep-alive connections one generator process may hold at once
MAX_HTTP_CONNECTIONS = 256
#: how long the generator waits for the last stream events after the window
DRAIN_S = 3.0
#: rate limits stay on (their checks cost what they cost) with budgets no
#: compressed person reaches; the per-IP caps would refuse loopback's crowd
RATE_OFF = "1000000000/300"
WORDS = (
    "morning coffee rain train city night music photo today news garden walk "
    "book film code bike river lunch friends weekend sunset market"
).split()


@dataclass
class Sizes:
    people: int = 4_000  # accounts seeded
    active: float = 0.25  # share of them holding a stream at any time
    follows: int = 30  # accounts each person follows (Zipf-drawn)
    speed: float = 15.0  # time compression: simulated seconds per wall second
    seconds: float = 120.0  # measured window
    warmup: float = 15.0  # at the same rates, not measured
    quiet: float = 5.0  # every stream open, nothing done
    processes: int = 0  # load-generator processes (0: one per 1,500 active, 1..4)
    seed: int = 1

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            people=200, active=0.4, follows=10, speed=120.0, seconds=8.0, warmup=2.0, quiet=2.0
        )

    @property
    def active_people(self) -> int:
        return max(1, round(self.people * self.active))

    def generator_processes(self) -> int:
        return self.processes or max(1, min(4, -(-self.active_people // 1500)))


# --- the generator (in its own processes) ---------------------------------------------------
class _Http(asyncio.Protocol):
    """One keep-alive connection, one request in flight, the answer read by
    its Content-Length."""

    def __init__(self) -> None:
        self.transport = None
        self.buf = bytearray()
        self.need = -1
        self.body_at = 0
        self.status = 0
        self.future: asyncio.Future | None = None
        self.closed = False
        self.used = 0.0

    def connection_made(self, transport) -> None:
        self.transport = transport

    def send(self, data: bytes) -> asyncio.Future:
        self.future = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return self.future

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if self.need < 0:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buf[:end]).lower()
            self.status = int(buf[9:12])
            at = head.find(b"\r\ncontent-length:")
            if at < 0:
                self._fail(ConnectionError("an answer without Content-Length"))
                return
            stop = head.find(b"\r\n", at + 2)
            self.need = end + 4 + int(head[at + 17 : stop if stop > 0 else len(head)])
            self.body_at = end + 4
        if len(buf) >= self.need:
            body = bytes(buf[self.body_at : self.need])
            del buf[: self.need]
            self.need = -1
            if self.future is not None and not self.future.done():
                self.future.set_result((self.status, body))

    def _fail(self, exc: Exception) -> None:
        self.closed = True
        if self.future is not None and not self.future.done():
            self.future.set_exception(exc)
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc) -> None:
        self._fail(ConnectionError("connection closed"))


class _Pool:
    """Keep-alive connections shared by one process's people (most recently
    used first, so that the spare ones time out on the server's side)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.free: list[_Http] = []
        self.open = 0
        self.waiters: list[asyncio.Future] = []

    async def acquire(self) -> _Http:
        while True:
            while self.free:
                conn = self.free.pop()
                # an idle connection the server may be closing: not worth the race
                if not conn.closed and time.monotonic() - conn.used < 2.0:
                    return conn
                self.open -= 1
                conn.transport.close()
            if self.open < MAX_HTTP_CONNECTIONS:
                break
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            conn = await waiter
            if conn is not None:  # None: a connection closed, room for a new one
                return conn
        self.open += 1
        try:
            _, conn = await asyncio.get_running_loop().create_connection(
                _Http, "127.0.0.1", self.port
            )
        except OSError:
            self.open -= 1
            raise
        return conn

    def release(self, conn: _Http) -> None:
        conn.used = time.monotonic()
        if conn.closed:
            self.open -= 1
            conn = None
        while self.waiters:
            waiter = self.waiters.pop(0)
            if not waiter.done():
                waiter.set_result(conn)
                return
        if conn is not None:
            self.free.append(conn)


def _request(method: str, path: str, token: str, body: bytes | None = None) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + (body or b"")


class _Person:
    __slots__ = ("uid", "token", "kind", "seen", "stream")

    def __init__(self, spec: dict) -> None:
        self.uid, self.token, self.kind = spec["uid"], spec["token"], spec["kind"]
        self.seen: list[str] = []  # status ids of the last home page
        self.stream: Conn | None = None


class _Generator:
    def __init__(self, job: dict) -> None:
        self.job = job
        self.port = job["port"]
        self.rng = random.Random(job["seed"])
        self.people = [_Person(s) for s in job["people"]]
        self.active = self.people[: job["active"]]
        self.idle = self.people[job["active"] :]
        self.ranked = job["ranked"]  # uids, most followed first
        self.cum_weights = list(
            itertools.accumulate(1.0 / (r + 1) for r in range(len(self.ranked)))
        )
        self.pool_sids = job["statuses"]  # fall-back targets before a home read
        self.pool = _Pool(self.port)
        self.streams: list[Conn] = []
        self.latencies: dict[str, list[float]] = {k: [] for k in KINDS}
        self.errors: dict[str, int] = {}
        self.lag: list[float] = []
        # status id -> (its request sent, its 200), ms since the epoch
        self.posted: dict[int, tuple[float, float]] = {}
        self.window = (float("inf"), float("inf"))
        self.tasks: set[asyncio.Task] = set()
        self.stream_failures = 0

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1

    async def connect(self, person: _Person) -> None:
        request, later = request_for(
            {"kind": person.kind, "subs": [("user", "")], "token": person.token, "i": person.uid}
        )
        conn = Conn(person.uid, person.kind, request, later)
        try:
            await asyncio.get_running_loop().create_connection(lambda: conn, "127.0.0.1", self.port)
            await asyncio.wait_for(conn.ready, 30)
        except (TimeoutError, OSError, RuntimeError, ConnectionError):
            self.stream_failures += 1
            self.error("stream")
            if conn.transport is not None:
                conn.transport.close()
            return
        person.stream = conn
        self.streams.append(conn)

    def disconnect(self, person: _Person) -> None:
        if person.stream is not None:
            person.stream.disconnected = 0
            person.stream.transport.close()
            person.stream = None

    async def call(self, kind: str, data: bytes, measured: bool) -> bytes | None:
        try:
            conn = await self.pool.acquire()
        except OSError:
            self.error(f"{kind} connect")
            return None
        t0 = time.perf_counter()
        try:
            status, body = await asyncio.wait_for(conn.send(data), 60)
        except (TimeoutError, ConnectionError) as exc:
            conn.closed = True
            conn.transport.close()
            self.pool.release(conn)
            if measured:
                self.error(f"{kind} {type(exc).__name__}")
            return None
        took = (time.perf_counter() - t0) * 1000
        self.pool.release(conn)
        if measured:
            self.latencies[kind].append(took)
            if status >= 400:
                self.error(f"{kind} {status}")
        return body if status < 400 else None

    def target_status(self, person: _Person) -> str:
        return self.rng.choice(person.seen or self.pool_sids)

    def someone(self, person: _Person) -> int:
        while True:
            uid = self.rng.choices(self.ranked, cum_weights=self.cum_weights)[0]
            if uid != person.uid:
                return uid

    async def home(self, person: _Person, kind: str, measured: bool) -> None:
        body = await self.call(
            kind, _request("GET", "/api/v1/timelines/home?limit=20", person.token), measured
        )
        if body:
            page = json.loads(body)
            person.seen = [s["id"] for s in page] or person.seen

    async def act(self, kind: str, person: _Person, measured: bool) -> None:
        token = person.token
        if kind == "home":
            await self.home(person, "home", measured)
        elif kind == "notifications":
            await self.call(
                kind, _request("GET", "/api/v1/notifications?limit=20", token), measured
            )
        elif kind == "read":
            if self.rng.random() < 0.5:
                path = f"/api/v1/accounts/{self.someone(person)}/statuses?limit=20"
                await self.call("profile", _request("GET", path, token), measured)
            else:
                path = f"/api/v1/statuses/{self.target_status(person)}/context"
                await self.call("thread", _request("GET", path, token), measured)
        elif kind == "post":
            text = " ".join(self.rng.choices(WORDS, k=self.rng.randint(5, 25)))
            sent = time.time() * 1000
            body = await self.call(
                kind,
                _request("POST", "/api/v1/statuses", token, json.dumps({"status": text}).encode()),
                measured,
            )
            if body and measured:
                self.posted[int(json.loads(body)["id"])] = (sent, time.time() * 1000)
        elif kind == "favourite":
            path = f"/api/v1/statuses/{self.target_status(person)}/favourite"
            await self.call(kind, _request("POST", path, token, b"{}"), measured)
        elif kind == "boost":
            path = f"/api/v1/statuses/{self.target_status(person)}/reblog"
            await self.call(kind, _request("POST", path, token, b"{}"), measured)
        elif kind == "follow":
            path = f"/api/v1/accounts/{self.someone(person)}/follow"
            await self.call(kind, _request("POST", path, token, b"{}"), measured)
        elif kind == "return":
            # one leaves, one comes back: opens a stream, reads home
            if not self.idle:
                return
            gone = self.active.pop(self.rng.randrange(len(self.active)))
            back = self.idle.pop(self.rng.randrange(len(self.idle)))
            self.disconnect(gone)
            self.idle.append(gone)
            self.active.append(back)
            await self.connect(back)
            await self.home(back, "return", measured)

    def spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def run(self, start: float, end: float) -> None:
        """The merged Poisson process of every active person (the same, in
        law, as one process per person): exponential gaps at the total rate,
        each event a person and a kind drawn by the mix. Events scheduled in
        [start, end) (time.time()) are measured; before ``start``, warm-up."""
        speed = self.job["speed"]
        mix = self.job["mix"]
        kinds = list(mix)
        rates = [mix[k] for k in kinds]
        per_person_s = sum(rates) * speed / 3600
        total = per_person_s * len(self.active)
        at = time.time()
        while True:
            at += self.rng.expovariate(total)
            if at >= end:
                break
            delay = at - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            measured = at >= start
            if measured:
                self.lag.append(max(0.0, (time.time() - at) * 1000))
            kind = self.rng.choices(kinds, rates)[0]
            person = self.rng.choice(self.active)
            self.spawn(self.act(kind, person, measured))
        if self.tasks:
            await asyncio.wait(set(self.tasks), timeout=60)


async def _generator_main(job: dict, pipe) -> None:
    gen = _Generator(job)
    for i in range(0, len(gen.active), 100):
        await asyncio.gather(*(gen.connect(p) for p in gen.active[i : i + 100]))
    pipe.send(("connected", len(gen.streams), gen.stream_failures))
    start, end = await asyncio.to_thread(pipe.recv)
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    await gen.run(start, end)
    pipe.send(("done", time.time()))  # every action of the window answered
    await asyncio.sleep(DRAIN_S)  # the last posts' events
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    arrivals = [(sid, at) for c in gen.streams for sid, at in c.got.items()]
    events = sum(c.updates for c in gen.streams)
    for c in gen.streams:
        if c.transport is not None:
            c.transport.close()
    pipe.send(
        (
            "result",
            {
                "latencies": gen.latencies,
                "errors": gen.errors,
                "lag": gen.lag,
                "posted": gen.posted,
                "arrivals": arrivals,
                "events": events,
                "streams_opened": len(gen.streams),
                "cpu_s": (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime),
            },
        )
    )


def _generator(job: dict, pipe) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        import uvloop

        uvloop.run(_generator_main(job, pipe))
    except ImportError:
        asyncio.run(_generator_main(job, pipe))


# --- seeding and measuring (the bench's own process) ----------------------------------------
async def _seed(rp: Redpoll, sizes: Sizes, say) -> tuple[list[dict], list[int], list[str]]:
    """People, their statuses, Zipf follows, tokens. Returns each person's
    spec (uid, token, stream kind), the uids most followed first, and a
    sample of status ids."""
    rng = random.Random(sizes.seed)
    tag = f"c{rng.randrange(16**5):05x}"
    app, _ = await auth.create_app(
        rp.store, "capacity-bench", "urn:ietf:wg:oauth:2.0:oob", "read write follow"
    )
    sem = asyncio.Semaphore(32)

    async def bounded(coro):
        async with sem:
            return await coro

    say(f"  {sizes.people:,} people ...")
    users = await asyncio.gather(
        *(bounded(rp.accounts.sign_up(f"{tag}_{i}")) for i in range(sizes.people))
    )
    uids = [u.id for u in users]
    ranked = uids[:]
    rng.shuffle(ranked)  # popularity rank, unrelated to sign-up order
    statuses: list[str] = []

    async def post(uid, n):
        st = await rp.statuses.post(uid, f"{' '.join(rng.choices(WORDS, k=8))} ({n})")
        statuses.append(str(st.id))

    say(f"  {sizes.people * SEED_POSTS:,} statuses ...")
    await asyncio.gather(*(bounded(post(uid, n)) for uid in uids for n in range(SEED_POSTS)))
    await rp.drain(timeout=600)
    # cumulated once: drawn with plain weights, each draw sums them all again
    cum_weights = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(ranked))))
    edges = []
    for uid in uids:
        chosen: set[int] = set()
        want = min(sizes.follows, len(uids) - 1)
        while len(chosen) < want:
            for other in rng.choices(ranked, cum_weights=cum_weights, k=want - len(chosen)):
                if other != uid:
                    chosen.add(other)
        edges += [(uid, other) for other in chosen]
    say(f"  {len(edges):,} follows (Zipf) ...")
    await asyncio.gather(*(bounded(rp.relations.follow(a, b)) for a, b in edges))
    await rp.drain(timeout=600)

    async def token(uid):
        return (await auth.issue_token(rp.store, app, uid, ("read", "write", "follow")))[0]

    tokens = await asyncio.gather(*(bounded(token(uid)) for uid in uids))
    order = uids[:]
    rng.shuffle(order)  # who is active: unrelated to popularity
    by_uid = dict(zip(uids, tokens))
    people = [
        {"uid": uid, "token": by_uid[uid], "kind": "sse" if i % 4 == 3 else "ws"}
        for i, uid in enumerate(order)
    ]
    return people, ranked, rng.sample(statuses, min(500, len(statuses)))


def _valkey_cpu(info: dict) -> float:
    return sum(
        float(info.get(k, 0))
        for k in (
            "used_cpu_user",
            "used_cpu_sys",
            "used_cpu_user_children",
            "used_cpu_sys_children",
        )
    )


def _serve_cpu(pid: int) -> float:
    """CPU seconds of serve and its processes: each live one's own, plus what
    serve's ended children used (cutime/cstime), so that the sum never
    drops when a child ends."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for member in _family(pid):
        try:
            with open(f"/proc/{member}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += sum(int(x) for x in fields[11 : 15 if member == pid else 13]) / tick
    return total


def _rss_kb(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
        except FileNotFoundError:
            pass
    return total


def _family(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [pid] + [int(c) for c in out.split()]


def _receive(pipe, proc, timeout: float):
    """The next message of a generator process; an error, not a hang, if it
    died or went silent."""
    deadline = time.monotonic() + timeout
    while not pipe.poll(0.5):
        if not proc.is_alive():
            raise RuntimeError(f"a load-generator process ended (exit code {proc.exitcode})")
        if time.monotonic() > deadline:
            raise RuntimeError(f"a load-generator process said nothing in {timeout:g} s")
    return pipe.recv()


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1)


async def _bench(sizes: Sizes, say, mix: dict[str, float]) -> dict[str, Any]:
    tmp = tempfile.TemporaryDirectory(prefix="redpoll-bench-capacity-")
    embedded = EmbeddedServer(tmp.name + "/data")
    await asyncio.to_thread(embedded.start)
    srv = None
    procs: list = []
    pipes: list = []
    rp = await Redpoll.open(Settings(redis_url=embedded.url))
    try:
        say("capacity: seeding through the engine ...")
        t0 = time.monotonic()
        people, ranked, statuses = await _seed(rp, sizes, say)
        seed_s = time.monotonic() - t0
        env = {
            "REDIS_URL": embedded.url,
            "REDPOLL_CLUSTER": "0",
            "REDPOLL_RATE_TOKEN": RATE_OFF,
            "REDPOLL_RATE_IP": RATE_OFF,
            "REDPOLL_RATE_IP_TOKENS": RATE_OFF,
            "REDPOLL_STREAM_CONNECTIONS_PER_IP": "off",
        }
        # serve's own default workers (one per core), jobs on, as an operator runs it
        srv = ServeProcess(env, ["--no-access-log", "--log-level", "warning"], workers=None)
        await asyncio.to_thread(srv.start)
        started = time.monotonic()
        port = int(srv.url.rsplit(":", 1)[1])
        n = sizes.generator_processes()
        active = sizes.active_people
        ctx = mp.get_context("spawn")
        say(
            f"capacity: {active:,} of {sizes.people:,} people connect streams from {n} "
            f"load process(es) ..."
        )
        for w in range(n):
            mine = people[w::n]
            job = {
                "port": port,
                "people": mine,
                "active": len(people[:active][w::n]),
                "ranked": ranked,
                "statuses": statuses,
                "speed": sizes.speed,
                "seed": sizes.seed * 1000 + w,
                "mix": mix,
            }
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_generator, args=(job, child), daemon=True)
            proc.start()
            procs.append(proc)
            pipes.append(parent)
        ready = [await asyncio.to_thread(_receive, p, proc, 300) for p, proc in zip(pipes, procs)]
        connected = sum(r[1] for r in ready)
        failed = sum(r[2] for r in ready)
        if failed:
            raise RuntimeError(f"{failed} of {active} streams could not connect")

        async def server_cpu() -> tuple[float, float]:
            """(serve processes, Valkey) CPU seconds so far."""
            return _serve_cpu(srv.process.pid), _valkey_cpu(await rp.store.info("cpu"))

        def spent(before: tuple[float, float], after: tuple[float, float]) -> tuple[float, float]:
            return after[0] - before[0], after[1] - before[1]

        # serve's start (its workers importing, connecting, loading scripts)
        # costs about a CPU second spread over its first seconds: not the people's
        await asyncio.sleep(max(0.5, SETTLE_S - (time.monotonic() - started)))
        say(f"capacity: quiet window {sizes.quiet:g} s, {connected:,} streams open ...")
        q0 = await server_cpu()
        await asyncio.sleep(sizes.quiet)
        quiet_split = spent(q0, await server_cpu())
        quiet_cpu = sum(quiet_split)
        start = time.time() + 0.5 + sizes.warmup
        end = start + sizes.seconds
        for p in pipes:
            p.send((start, end))
        say(
            f"capacity: warm-up {sizes.warmup:g} s, then {sizes.seconds:g} s measured at "
            f"{sizes.speed:g}x ..."
        )
        await asyncio.sleep(max(0.0, start - time.time()))
        c0, w0 = await server_cpu(), time.time()
        await asyncio.sleep(max(0.0, end - time.time()))
        # a server that did not keep up still owes the window's work: the
        # CPU is read once every action scheduled in the window is answered
        # and the jobs they queued (fan-out, notifications) are done
        for p, proc in zip(pipes, procs):
            await asyncio.to_thread(_receive, p, proc, 300)
        deadline = time.monotonic() + 120
        while await rp.queue.depth() and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        jobs_queued = await rp.queue.depth()
        split = spent(c0, await server_cpu())
        cpu = sum(split)
        elapsed = time.time() - w0
        window = end - start
        memory = await rp.store.info("memory")
        rss_kb = _rss_kb(_family(srv.process.pid))
        results = [
            (await asyncio.to_thread(_receive, p, proc, 120 + DRAIN_S))[1]
            for p, proc in zip(pipes, procs)
        ]
    finally:
        for pipe in pipes:
            pipe.close()
        for proc in procs:
            await asyncio.to_thread(proc.join, 30)
            if proc.is_alive():
                proc.kill()
        await rp.close()
        if srv is not None:
            await asyncio.to_thread(srv.close)
        await asyncio.to_thread(embedded.stop)
        tmp.cleanup()

    latencies = {k: [x for r in results for x in r["latencies"][k]] for k in KINDS}
    errors: dict[str, int] = {}
    for r in results:
        for k, v in r["errors"].items():
            errors[k] = errors.get(k, 0) + v
    posted = {int(k): v for r in results for k, v in r["posted"].items()}
    # from the post's request sent (the author pressed "post") to the event
    # at a follower's stream; and from its 200, which the event mostly beats
    # (then 0 ms, and counted in ``stream_before_200_share``)
    timed = [
        (at - posted[sid][0], at - posted[sid][1])
        for r in results
        for sid, at in r["arrivals"]
        if sid in posted
    ]
    delivery = [x for x, _ in timed]
    after_200 = [max(0.0, y) for _, y in timed]
    person_hours = active * window * sizes.speed / 3600
    cpu_per_person_hour = cpu / person_hours
    used_memory = int(memory.get("used_memory", 0))
    kinds = {
        k: {"requests": len(v), "p50_ms": _pct(v, 0.5), "p99_ms": _pct(v, 0.99)}
        for k, v in latencies.items()
    }
    p99s = {f"{k}_p99_ms": kinds[k]["p99_ms"] for k in KINDS}
    p99s["stream_delivery_p99_ms"] = _pct(delivery, 0.99)
    under = all(v is not None and v < P99_LIMIT_MS for v in p99s.values())
    # open streams' own cost runs at wall-clock rate, compression or not:
    # charged per real hour it is this much more per person-hour
    idle_per_connection_hour = quiet_cpu / max(1, connected) / sizes.quiet * 3600
    uncompressed = cpu_per_person_hour + idle_per_connection_hour * (1 - 1 / sizes.speed)
    requests = sum(len(v) for v in latencies.values())
    return {
        "people": sizes.people,
        "active_people": active,
        "streams": connected,
        "speed": sizes.speed,
        "seconds": round(window, 1),
        "person_hours": round(person_hours, 1),
        "workers": default_workers(),
        "load_processes": len(results),
        "seed_s": round(seed_s, 1),
        "mix_per_hour": mix,
        "server_cpu_s": round(cpu, 2),
        # how busy the server side was, from the window's start to its work done
        "server_cores_busy": round(cpu / elapsed, 2),
        # seconds after the window until its work was done: more than a few
        # means the server (or the machine) did not keep up with the load
        "overrun_s": max(0.0, round(elapsed - window, 1)),  # (done within it: 0)
        "serve_cpu_s": round(split[0], 2),
        "valkey_cpu_s": round(split[1], 2),
        "quiet_cpu_s": round(quiet_cpu, 2),
        "quiet_seconds": sizes.quiet,
        "quiet_serve_cpu_s": round(quiet_split[0], 2),
        "cpu_s_per_1000_person_hours": round(cpu_per_person_hour * 1000, 1),
        "people_per_core": round(3600 / cpu_per_person_hour) if cpu else None,
        "idle_stream_cpu_s_per_1000_connection_hours": round(idle_per_connection_hour * 1000, 1),
        "people_per_core_uncompressed": round(3600 / uncompressed) if uncompressed else None,
        "all_p99_under_250ms": under,
        **p99s,
        "stream_delivery_p50_ms": _pct(delivery, 0.5),
        "stream_events": sum(r["events"] for r in results),
        "stream_deliveries_timed": len(delivery),
        "stream_after_200_p99_ms": _pct(after_200, 0.99),
        "stream_before_200_share": round(sum(y < 0 for _, y in timed) / len(timed), 3)
        if timed
        else None,
        "requests": requests,
        "requests_per_s": round(requests / window, 1),
        "kinds": kinds,
        "errors": sum(errors.values()),
        "errors_by_kind": errors,
        "server_rss_mb": round(rss_kb / 1024, 1),
        "valkey_used_memory_mb": round(used_memory / 2**20, 1),
        "memory_per_person_kb": round((rss_kb * 1024 + used_memory) / sizes.people / 1024, 2),
        "jobs_left": jobs_queued,
        "generator_lag_ms_p99": _pct([x for r in results for x in r["lag"]], 0.99),
        "generator_cpu_s": round(sum(r["cpu_s"] for r in results), 2),
        "sizes": asdict(sizes),
    }


def run_capacity(
    sizes: Sizes | None = None, say=lambda msg: None, mix: dict[str, float] | None = None
) -> dict[str, Any]:
    """Run the capacity bench (its own embedded Valkey and ``redpoll serve``).
    ``mix``: actions per active person-hour, by kind (:data:`MIX` and
    ``return`` at :data:`RETURNS_PER_HOUR` unless given: another mix, or
    one kind alone, shows what each costs)."""
    return asyncio.run(_bench(sizes or Sizes(), say, mix or {**MIX, "return": RETURNS_PER_HOUR}))


def format_report(res: dict[str, Any]) -> str:
    lines = [
        f"capacity: {res['people']:,} people, {res['active_people']:,} active with a stream "
        f"({res['streams']:,} open), {res['workers']} serve process(es) + Valkey; "
        f"{res['seconds']:g} s at {res['speed']:g}x = {res['person_hours']:,} active "
        f"person-hours; {res['requests_per_s']:,} requests/s, {res['server_cores_busy']:g} "
        f"cores busy",
        f"  people_per_core                {res['people_per_core']:>12,}   "
        f"(goal 100,000; with open streams charged at wall-clock rate "
        f"{res['people_per_core_uncompressed']:,})",
        f"  cpu_s_per_1000_person_hours    {res['cpu_s_per_1000_person_hours']:>12,}   "
        f"(serve {res['serve_cpu_s']:g} + Valkey {res['valkey_cpu_s']:g} CPU s in the window; "
        f"{res['quiet_cpu_s']:g} in {res['quiet_seconds']:g} s with every stream open and "
        f"nothing asked)",
        f"  memory_per_person_kb           {res['memory_per_person_kb']:>12,}   "
        f"(serve RSS {res['server_rss_mb']:g} MB + Valkey {res['valkey_used_memory_mb']:g} MB)",
        f"  every p99 under {P99_LIMIT_MS:g} ms         {str(res['all_p99_under_250ms']):>12}",
        f"  errors                         {res['errors']:>12}   {res['errors_by_kind'] or ''}",
        f"  {'request':<14}{'count':>9}{'p50 ms':>9}{'p99 ms':>9}",
    ]
    for kind, k in res["kinds"].items():
        lines.append(f"  {kind:<14}{k['requests']:>9}{k['p50_ms'] or 0:>9}{k['p99_ms'] or 0:>9}")
    lines.append(
        f"  {'stream delivery':<14}{res['stream_deliveries_timed']:>9}"
        f"{res['stream_delivery_p50_ms'] or 0:>9}{res['stream_delivery_p99_ms'] or 0:>9}"
        f"   (post sent -> a follower's stream; {res['stream_events']:,} events in all)"
    )
    lines.append(
        f"  {'':<14}{'':>9}{'':>9}{res['stream_after_200_p99_ms'] or 0:>9}"
        f"   (after the post's 200; {res['stream_before_200_share']} of the events "
        f"arrived before it)"
    )
    lines.append(
        f"  the window's work was done {res['overrun_s']:g} s after its end "
        f"({res['jobs_left']:,} jobs left; a large overrun: more load than the server, "
        f"or the machine, could carry)"
    )
    lines.append(
        f"  generator: lag p99 {res['generator_lag_ms_p99']} ms, "
        f"{res['generator_cpu_s']:g} CPU s in {res['load_processes']} process(es) "
        f"(not the server's)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(
        format_report(
            run_capacity(
                Sizes.quick() if "--quick" in sys.argv else Sizes(),
                say=lambda m: print(m, file=sys.stderr),
            )
        )
    )
