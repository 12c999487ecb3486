"""A real ``redpoll serve`` for the stream tests, and line-by-line readers of
its v1.1 and Mastodon streams."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from redpoll.storage.server import free_port

#: generous bound for anything a test waits on (never a timing assertion)
WAIT = 30.0


class StreamProc:
    """``redpoll serve`` (the API app with the stream routes mounted) as a real
    child process on a loopback port."""

    def __init__(self, redis_url: str, cluster: bool, log_dir: Path, **env: str):
        self.redis_url = redis_url
        self.cluster = cluster
        self.port = free_port()
        self.env = dict(
            os.environ,
            REDIS_URL=redis_url,
            REDPOLL_CLUSTER="1" if cluster else "0",
            REDPOLL_STREAM_KEEPALIVE_S="1",
            REDPOLL_SSE_HEARTBEAT_S="1",
        )
        self.env.update(env)
        self.log_path = log_dir / f"stream-{self.port}.log"
        self.process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        script = Path(sys.executable).with_name("redpoll")
        head = (
            [str(script)]
            if script.exists()
            else [sys.executable, "-c", "from redpoll.tools.cli import main; main()"]
        )
        # one process: the per-process stream limits are what these tests count
        return head + [
            "serve",
            "--port",
            str(self.port),
            "--workers",
            "1",
            "--no-jobs",
            "--no-access-log",
            "--log-level",
            "warning",
        ]

    def start(self) -> StreamProc:
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            self.command(), env=self.env, stdout=self._log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + WAIT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"stream server exited: {self.log_path.read_text()[-3000:]}")
            try:
                if httpx.get(self.base + "/stream/stats", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("stream server did not come up")
            time.sleep(0.05)

    def stats(self) -> dict:
        return httpx.get(self.base + "/stream/stats", timeout=10).json()

    async def astats(self) -> dict:
        async with httpx.AsyncClient(timeout=10) as c:
            return (await c.get(self.base + "/stream/stats")).json()

    async def wait_subscribers(self, n: int) -> None:
        """Until the server holds exactly ``n`` subscriptions."""
        deadline = time.monotonic() + WAIT
        while (await self.astats())["subscribers"] != n:
            assert time.monotonic() < deadline, f"subscribers never reached {n}"
            await asyncio.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if getattr(self, "_log", None):
            self._log.close()


@pytest.fixture(scope="module")
def stream(server, tmp_path_factory):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path_factory.mktemp("stream")).start()
    yield proc
    proc.stop()


class Lines:
    """Reads a streaming HTTP body (httpx) as ``\\r\\n``-terminated lines."""

    def __init__(self, response: httpx.Response):
        self.response = response
        self.chunks = response.aiter_raw()
        self.buf = b""
        self.raw = b""

    async def line(self, timeout: float = WAIT) -> bytes | None:
        """The next line without its \\r\\n (b"" for a keep-alive); None at EOF."""
        while b"\r\n" not in self.buf:
            try:
                chunk = await asyncio.wait_for(self.chunks.__anext__(), timeout)
            except StopAsyncIteration:
                return None
            self.raw += chunk
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    async def message(self, timeout: float = WAIT) -> dict | None:
        """The next JSON message, skipping keep-alives; None at EOF."""
        deadline = time.monotonic() + timeout
        while True:
            line = await self.line(max(0.1, deadline - time.monotonic()))
            if line is None:
                return None
            if line.strip():
                return json.loads(line)

    async def until(self, predicate, timeout: float = WAIT) -> list[dict]:
        """Messages up to and including the first that satisfies ``predicate``."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            msg = await self.message(max(0.1, deadline - time.monotonic()))
            assert msg is not None, f"stream ended before the expected message; got {seen}"
            seen.append(msg)
            if predicate(msg):
                return seen


class Conn:
    """An open stream: ``async with Conn(stream, "filter", track="x") as c: await c.lines.message()``"""

    def __init__(
        self,
        stream: StreamProc,
        endpoint: str,
        method: str = "POST",
        *,
        headers: dict | None = None,
        **params,
    ):
        self.stream = stream
        self.endpoint = endpoint
        self.method = method
        self.params = {"identifier": "test-client"} | params
        self.params = {k: v for k, v in self.params.items() if v is not None}
        self.headers = headers or {}

    async def __aenter__(self) -> Conn:
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None))
        url = f"{self.stream.base}/1.1/statuses/{self.endpoint}.json"
        if self.method == "POST":
            req = self.client.build_request("POST", url, data=self.params, headers=self.headers)
        else:
            req = self.client.build_request("GET", url, params=self.params, headers=self.headers)
        self.response = await self.client.send(req, stream=True)
        self.status = self.response.status_code
        self.lines = Lines(self.response)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.response.aclose()
        await self.client.aclose()


async def read_until_closed(sock) -> bytes:
    """All a raw socket receives until the server closes it (within WAIT):
    how the slow-client tests see that the server cut them off."""
    sock.settimeout(WAIT)
    deadline = time.monotonic() + WAIT
    data = b""
    while True:
        chunk = await asyncio.to_thread(sock.recv, 65536)
        if not chunk:
            return data
        data += chunk
        assert time.monotonic() < deadline, "the server did not close the connection"


async def app_token(c: httpx.AsyncClient, base: str) -> str:
    app = (
        await c.post(
            base + "/api/v1/apps",
            data={"client_name": "resume", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob"},
        )
    ).json()
    tok = await c.post(
        base + "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
        },
    )
    return tok.json()["access_token"]


async def register(c: httpx.AsyncClient, base: str) -> tuple[dict, str, int]:
    """(app, user token, user id): a new user signed up through the API."""
    app = (
        await c.post(
            base + "/api/v1/apps",
            data={
                "client_name": "m",
                "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
                "scopes": "read write",
            },
        )
    ).json()
    tok = (
        await c.post(
            base + "/oauth/token",
            data={
                "grant_type": "client_credentials",
                "client_id": app["client_id"],
                "client_secret": app["client_secret"],
                "scope": "read write",
            },
        )
    ).json()["access_token"]
    name = f"m{time.monotonic_ns() % 10**9}"
    r = await c.post(
        base + "/api/v1/accounts",
        headers={"Authorization": f"Bearer {tok}"},
        data={
            "username": name,
            "email": f"{name}@example.com",
            "password": "correct horse battery",
            "agreement": "true",
        },
    )
    assert r.status_code == 200, r.text
    token = r.json()["access_token"]
    me = await c.get(
        base + "/api/v1/accounts/verify_credentials",
        headers={"Authorization": f"Bearer {token}"},
    )
    return app, token, int(me.json()["id"])


async def user_token(c: httpx.AsyncClient, base: str) -> str:
    """The token of a new user signed up through the API."""
    return (await register(c, base))[1]
