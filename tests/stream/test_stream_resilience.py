"""A client that never reads is cut off without anyone else noticing; losing
Redis (kill and restart on the same port) leaves stream clients connected and
receiving."""

from __future__ import annotations

import asyncio
import socket

import pytest
from support.streams import WAIT, Conn, StreamProc, read_until_closed  # noqa: F401

from redpoll import Redpoll, Settings
from redpoll.storage.server import EmbeddedServer

pytestmark = pytest.mark.timeout(240)


async def test_slow_client_is_disconnected_and_nobody_else_notices(server, rp, tmp_path):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path, REDPOLL_STREAM_QUEUE="50").start()
    slow = None
    try:
        alice = await rp.accounts.sign_up("alice")
        # a raw socket client with a tiny receive window that never reads its body
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.connect(("127.0.0.1", proc.port))
        slow.sendall(
            b"GET /1.1/statuses/sample.json?identifier=slow&percent=100&stall_warnings=true "
            b"HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        async with Conn(proc, "sample", method="GET", identifier="fast", percent="100") as fast:
            await proc.wait_subscribers(2)
            posted = []
            text = "x" * 450
            # the reader waits as long as the posting below may take on a loaded machine
            reader = asyncio.create_task(
                fast.lines.until(lambda m: m.get("text") == "the end", timeout=200)
            )
            for round_ in range(200):
                batch = await asyncio.gather(
                    *(rp.statuses.post(alice.id, f"{text} {round_} {i}") for i in range(25))
                )
                posted.extend(s.id for s in batch)
                if (await proc.astats())["stalls"] >= 1:
                    break
            assert (await proc.astats())["stalls"] == 1
            await proc.wait_subscribers(1)  # the slow one is gone ...
            end = await rp.statuses.post(alice.id, "the end")
            got = await asyncio.wait_for(reader, WAIT)
            # ... and the fast one got every status, in the order of the log, none twice
            got_ids = [m["id"] for m in got if "id" in m]
            assert sorted(got_ids) == sorted(posted + [end.id]) and len(set(got_ids)) == len(
                got_ids
            )
            assert not any("disconnect" in m or "warning" in m for m in got)
        # the server closed the slow client's socket: reading it now reaches EOF
        data = await read_until_closed(slow)
        assert data.startswith(b"HTTP/1.1 200")
    finally:
        if slow is not None:
            slow.close()
        proc.stop()


async def test_redis_restart_clients_stay_connected_and_keep_receiving(tmp_path):
    own = EmbeddedServer(tmp_path / "own-redis")
    own.start()
    proc = None
    engine = None
    try:
        proc = StreamProc(own.url, False, tmp_path).start()
        engine = await Redpoll.open(Settings(redis_url=own.url))
        alice = await engine.accounts.sign_up("alice")
        async with (
            Conn(proc, "filter", track="restart") as c,
            Conn(proc, "sample", method="GET", percent="100") as fire,
        ):
            s1 = await engine.statuses.post(alice.id, "before restart")
            assert (await c.lines.message())["id"] == s1.id
            assert (await fire.lines.message())["id"] == s1.id
            await engine.close()
            engine = None
            await asyncio.to_thread(own.kill)
            # keep-alives go on while Redis is down: the connection is alive
            assert await c.lines.line() == b""
            await asyncio.to_thread(own.start)  # same port, same data directory
            engine = await Redpoll.open(Settings(redis_url=own.url))
            s2 = await engine.statuses.post(alice.id, "after restart")
            got = await c.lines.until(lambda m: m.get("id") == s2.id)
            assert [m["id"] for m in got] == [s2.id]
            got = await fire.lines.until(lambda m: m.get("id") == s2.id)
            assert got[-1]["text"] == "after restart"
            assert (await proc.astats())["reconnects"] >= 1
    finally:
        if engine is not None:
            await engine.close()
        if proc is not None:
            proc.stop()
        own.stop()
