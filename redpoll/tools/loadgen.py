"""A cheap HTTP/1.1 load generator, run in its own process.

``redpoll bench --http`` used aiohttp's client in the bench's own process:
about 200 µs of CPU a request on this machine, as much as the server spent
answering, so on two cores the generator was the bottleneck it measured.
This one keeps a fixed number of keep-alive connections, each with one
request in flight, writes pre-built request bytes and reads a response by
its ``Content-Length`` with an asyncio ``Protocol`` on uvloop: no header
objects, no client session, no per-request task. It reports its own CPU per
request so that the bench can show what the load cost.

It runs as ``python -m redpoll.tools.loadgen`` with a JSON ``Spec`` on stdin
and prints one JSON ``Result`` line: a separate process, so its CPU is never
charged to the server or to the bench (see :func:`run_in_child`).
"""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: Longest a child may run beyond its phase (start-up, connecting, draining).
CHILD_GRACE_S = 30.0
#: Largest response head accepted before the connection is called broken.
MAX_HEAD_BYTES = 16 * 1024


@dataclass
class Spec:
    host: str
    port: int
    #: full request bytes (latin-1 text), used in turn, request n -> n % len
    requests: list[str]
    count: int  # at most this many requests
    seconds: float  # or this long, whichever ends first
    concurrency: int = 32  # connections, one request in flight on each


@dataclass
class Result:
    requests: int = 0
    errors: int = 0
    seconds: float = 0.0
    bytes: int = 0
    cpu_us_per_request: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)


class _Connection(asyncio.Protocol):
    """One keep-alive connection: send, read one whole response, repeat."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.buf = bytearray()
        self.need = -1  # total bytes of the current response, once the head is in
        self.status = b""
        self.t0 = 0.0
        self.transport: asyncio.Transport | None = None
        self.done = asyncio.get_running_loop().create_future()

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.send()

    def send(self) -> None:
        request = self.run.next_request()
        if request is None:
            self.transport.close()
            return
        self.t0 = time.perf_counter()
        self.transport.write(request)

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if self.need < 0:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_HEAD_BYTES:
                    self.fail()
                return
            head = bytes(buf[:end]).lower()
            self.status = bytes(buf[9:12])
            at = head.find(b"\r\ncontent-length:")
            if at < 0:  # chunked or close-delimited: not what the bench serves
                self.fail()
                return
            stop = head.find(b"\r\n", at + 2)
            self.need = end + 4 + int(head[at + 17 : stop if stop > 0 else len(head)])
        if len(buf) >= self.need:
            self.run.record(self.status, time.perf_counter() - self.t0, self.need)
            del buf[: self.need]
            self.need = -1
            self.send()

    def fail(self) -> None:
        self.run.record(b"---", time.perf_counter() - self.t0, 0)
        self.transport.close()

    def connection_lost(self, exc) -> None:
        if self.need >= 0 or (self.t0 and self.buf):
            self.run.record(b"---", time.perf_counter() - self.t0, 0)
        if not self.done.done():
            self.done.set_result(None)


class _Run:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.payloads = [r.encode("latin-1") for r in spec.requests]
        self.issued = 0
        self.deadline = 0.0
        self.result = Result()

    def next_request(self) -> bytes | None:
        if self.issued >= self.spec.count or time.perf_counter() >= self.deadline:
            return None
        n = self.issued
        self.issued += 1
        return self.payloads[n % len(self.payloads)]

    def record(self, status: bytes, seconds: float, size: int) -> None:
        r = self.result
        r.latencies_ms.append(seconds * 1000)
        code = status.decode("latin-1")
        r.statuses[code] = r.statuses.get(code, 0) + 1
        r.bytes += size
        if status != b"200":
            r.errors += 1

    async def go(self) -> Result:
        loop = asyncio.get_running_loop()
        spec = self.spec
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        self.deadline = time.perf_counter() + spec.seconds
        start = time.perf_counter()
        conns = []
        for _ in range(spec.concurrency):
            _, proto = await loop.create_connection(lambda: _Connection(self), spec.host, spec.port)
            conns.append(proto)
        await asyncio.gather(*(c.done for c in conns))
        r = self.result
        r.seconds = time.perf_counter() - start
        r.requests = len(r.latencies_ms)
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        used = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        r.cpu_us_per_request = used / r.requests * 1e6 if r.requests else 0.0
        return r


def get(path: str, host: str, headers: dict[str, str] | None = None) -> str:
    """The bytes of one keep-alive GET (as latin-1 text, for the JSON spec)."""
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return "\r\n".join(lines) + "\r\n\r\n"


def run_in_child(spec: Spec) -> Result:
    """Run one phase in a fresh ``python -m redpoll.tools.loadgen`` process.
    The result (every latency: hundreds of KB) comes back in a file, not
    through the child's stdout: under a heavy load a result read from the
    pipe was twice cut off at 64 KB."""
    with tempfile.NamedTemporaryFile(prefix="redpoll-loadgen-", suffix=".json") as out:
        done = subprocess.run(
            [sys.executable, "-m", __name__, out.name],
            input=json.dumps(asdict(spec)),
            capture_output=True,
            text=True,
            timeout=spec.seconds + CHILD_GRACE_S,
        )
        if done.returncode != 0:
            raise RuntimeError(f"load generator failed: {done.stderr.strip()[-2000:]}")
        return Result(**json.loads(Path(out.name).read_text()))


def main() -> None:
    spec = Spec(**json.load(sys.stdin))
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:  # the plain loop still works, at some CPU cost
        runner = asyncio.run
    result = runner(_Run(spec).go())
    Path(sys.argv[1]).write_text(json.dumps(asdict(result)))


if __name__ == "__main__":
    main()
