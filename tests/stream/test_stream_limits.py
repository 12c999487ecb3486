"""Open stream connections per identifier and per client IP are bounded,
answered as Twitter did: 420 for one identifier's
connections, 429 for one IP's (Mastodon streams: 429 for both), each with a
body that says which limit was hit."""

from __future__ import annotations

import asyncio
import contextlib
import json

import httpx
import pytest
from support.streams import (  # noqa: F401
    WAIT,
    StreamProc,
    user_token,  # noqa: F401
)
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from redpoll.core import limits
from redpoll.core.settings import Settings

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def proc(server, tmp_path):
    url, cluster, _ = server
    p = StreamProc(
        url,
        cluster,
        tmp_path,
        REDPOLL_STREAM_CONNECTIONS_PER_IDENTIFIER="3",
        REDPOLL_STREAM_CONNECTIONS_PER_IP="5",
    ).start()
    yield p
    p.stop()


def test_defaults_are_named_in_limits():
    s = Settings.from_env({})
    assert s.stream_connections_per_identifier == limits.STREAM_CONNECTIONS_PER_IDENTIFIER
    assert s.stream_connections_per_ip == limits.STREAM_CONNECTIONS_PER_IP
    off = Settings.from_env({"REDPOLL_STREAM_CONNECTIONS_PER_IP": "off"})
    assert off.stream_connections_per_ip is None


async def test_v1_connections_per_identifier_420_and_per_ip_429(proc, rp):
    sample = proc.base + "/1.1/statuses/sample.json"
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c,
        contextlib.AsyncExitStack() as stack,
    ):

        async def open_one(ident: str) -> httpx.Response:
            return await stack.enter_async_context(
                c.stream("GET", sample, params={"identifier": ident, "percent": "1"})
            )

        held = [await open_one("same") for _ in range(3)]
        assert all(r.status_code == 200 for r in held)
        await proc.wait_subscribers(3)
        r = await open_one("same")
        assert r.status_code == 420
        body = json.loads(await r.aread())
        assert "identifier" in body["error"] and "3" in body["error"]
        # closing one frees its place
        await held[0].aclose()
        await proc.wait_subscribers(2)
        assert (await open_one("same")).status_code == 200
        await proc.wait_subscribers(3)
        # the IP: 3 open + 2 more, then 429
        assert (await open_one("other1")).status_code == 200
        assert (await open_one("other2")).status_code == 200
        await proc.wait_subscribers(5)
        r = await open_one("other3")
        assert r.status_code == 429
        body = json.loads(await r.aread())
        assert "IP" in body["error"] and "5" in body["error"]
    await proc.wait_subscribers(0)


async def test_mastodon_sse_and_websocket_per_token_429(proc, rp):
    async with httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c:
        token = await user_token(c, proc.base)
    auth = {"Authorization": f"Bearer {token}"}
    url = proc.base + "/api/v1/streaming/public"
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c,
        contextlib.AsyncExitStack() as stack,
    ):
        for _ in range(2):
            r = await stack.enter_async_context(c.stream("GET", url, headers=auth))
            assert r.status_code == 200
        ws = await stack.enter_async_context(
            connect(
                f"ws://127.0.0.1:{proc.port}/api/v1/streaming?stream=public",
                additional_headers=auth,
            )
        )
        await proc.wait_subscribers(3)
        r = await stack.enter_async_context(c.stream("GET", url, headers=auth))
        assert r.status_code == 429
        assert "identifier" in json.loads(await r.aread())["error"]
        with pytest.raises(InvalidStatus) as info:
            async with connect(
                f"ws://127.0.0.1:{proc.port}/api/v1/streaming", additional_headers=auth
            ):
                pass
        assert info.value.response.status_code == 429
        assert "identifier" in json.loads(info.value.response.body)["error"]
        await ws.close()
        await proc.wait_subscribers(2)
        async with connect(
            f"ws://127.0.0.1:{proc.port}/api/v1/streaming?stream=public", additional_headers=auth
        ):
            await proc.wait_subscribers(3)
    await proc.wait_subscribers(0)
    await asyncio.sleep(0)
