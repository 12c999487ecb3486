"""The API app's streams under a server that offers no hand-off (plain
uvicorn, its own default protocols): they are written through the ASGI
request as before (``http.pump``, the WebSocket writer task), so the app
keeps working on any ASGI server. `redpoll serve` hands them off instead
(tests/test_stream_handoff.py); the other stream tests run that way."""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
import pytest
from support.mastodon import LOOSE, accounts  # noqa: F401
from support.streams import WAIT, Conn, StreamProc  # noqa: F401
from websockets.asyncio.client import connect

pytestmark = pytest.mark.timeout(180)


class PlainUvicorn(StreamProc):
    """The API app under the uvicorn command line, default protocols."""

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "redpoll.api.app:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--no-access-log",
            "--log-level",
            "warning",
        ]


@pytest.fixture(scope="module")
def plain(server, tmp_path_factory):
    url, cluster, _ = server
    proc = PlainUvicorn(
        url,
        cluster,
        tmp_path_factory.mktemp("plain"),
        REDPOLL_SERVE_JOBS="0",
        REDPOLL_ACCESS_LOG="0",
        **LOOSE,
    ).start()
    yield proc
    proc.stop()


async def test_v1_and_sse_stream_through_the_asgi_request(plain, rp):
    (alice,) = await asyncio.to_thread(accounts, plain.base, 1)
    uid = int((await asyncio.to_thread(alice.me))["id"])
    async with (
        Conn(plain, "filter", track="plainasgi", identifier="plain-1") as v1,
        httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as client,
        client.stream(
            "GET",
            f"{plain.base}/api/v1/streaming/public",
            headers={"Authorization": f"Bearer {alice.access_token}"},
        ) as sse,
    ):
        assert v1.status == 200 and sse.status_code == 200
        # not handed off: the connection may be kept alive after the stream
        assert "close" not in v1.response.headers.get("connection", "")
        await plain.wait_subscribers(2)
        post = await rp.statuses.post(uid, "plainasgi hello")
        msgs = await v1.lines.until(lambda m: m.get("id") == post.id)
        assert msgs[-1]["text"] == "plainasgi hello"
        text = ""
        async for chunk in sse.aiter_text():
            text += chunk
            if f'"id":"{post.id}"' in text:
                break
        assert text.startswith(":)\n") and "event: update\n" in text
    await plain.wait_subscribers(0)


async def test_websocket_through_the_asgi_request(plain, rp):
    (alice,) = await asyncio.to_thread(accounts, plain.base, 1)
    url = (
        f"ws://127.0.0.1:{plain.port}/api/v1/streaming?stream=public&access_token="
        f"{alice.access_token}"
    )
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "subscribe", "stream": "hashtag", "tag": "plain"}))
        await plain.wait_subscribers(2)
        post = await asyncio.to_thread(alice.status_post, "over the request #plain")
        got = set()
        while len(got) < 2:
            msg = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
            if msg.get("event") == "update" and json.loads(msg["payload"])["id"] == str(post["id"]):
                got.add(tuple(msg["stream"]))
        assert got == {("public",), ("hashtag", "plain")}
    await plain.wait_subscribers(0)
