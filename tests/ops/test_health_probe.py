"""The process's database flag (redpoll.core.health) follows the database: once
a real embedded server is back, the first call that succeeds has the probe
confirm it at once, instead of the flag waiting out the probe's back-off
(/health would answer "unreachable" while every request is served)."""

from __future__ import annotations

import asyncio
import time

import redis.asyncio as aredis

from redpoll.core import limits
from redpoll.core.health import Reachability
from redpoll.storage.server import EmbeddedServer


async def test_a_success_after_an_outage_is_confirmed_without_waiting_out_the_backoff(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(limits, "DB_PROBE_INTERVAL_S", 5.0)  # the probe's first wait: 5 s
    server = EmbeddedServer(tmp_path / "data", unix_socket=False)
    server.start()
    port = server.port
    client = aredis.Redis(port=port, socket_timeout=1, socket_connect_timeout=1)
    state = Reachability()
    state.watch(client.ping)
    try:
        server.stop()
        state.lost("test", "the server stopped")
        await asyncio.sleep(1.0)  # the probe waits before its first try
        assert not state.up
        server = EmbeddedServer(tmp_path / "data", port=port, unix_socket=False)
        server.start()
        await client.ping()  # a request's call succeeds...
        state.back("request")  # ...and says so
        started = time.monotonic()
        while not state.up:
            assert time.monotonic() - started < 1.0, "the flag waited out the probe's back-off"
            await asyncio.sleep(0.02)
    finally:
        state.watch(None)
        await client.aclose()
        server.stop()
