"""Links in stream events come from REDPOLL_PUBLIC_URL or from the client's own
request, never from another client's Host header."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from support.streams import (  # noqa: F401
    WAIT,
    StreamProc,
    app_token,  # noqa: F401
)
from websockets.asyncio.client import connect

pytestmark = pytest.mark.timeout(180)


async def first_update(resp: httpx.Response) -> dict:
    """The first ``update`` event of an SSE response, decoded."""
    buf = b""
    chunks = resp.aiter_raw()
    while True:
        buf += await asyncio.wait_for(chunks.__anext__(), WAIT)
        while b"\n\n" in buf:
            block, buf = buf.split(b"\n\n", 1)
            fields = dict(
                ln.decode().split(": ", 1)
                for ln in block.split(b"\n")
                if ln and not ln.startswith(b":")
            )
            if fields.get("event") == "update":
                return json.loads(fields["data"])


async def links_seen(proc: StreamProc, rp, host_of_second: str) -> tuple[dict, dict, dict]:
    """(status as seen by a client using the real address, by one sending
    ``Host: host_of_second``, by a WebSocket client using the real address);
    the second connects last."""
    alice = await rp.accounts.sign_up("alice")
    url = proc.base + "/api/v1/streaming/public"
    async with httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c:
        token = await app_token(c, proc.base)
        auth = {"Authorization": f"Bearer {token}"}
        async with (
            connect(
                f"ws://127.0.0.1:{proc.port}/api/v1/streaming?stream=public",
                additional_headers=auth,
            ) as ws,
            c.stream("GET", url, headers=auth) as mine,
        ):
            await proc.wait_subscribers(2)
            async with c.stream("GET", url, headers=auth | {"Host": host_of_second}) as theirs:
                await proc.wait_subscribers(3)
                await rp.statuses.post(alice.id, "where do my links point?")
                seen = await first_update(mine), await first_update(theirs)
                frame = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
                return seen[0], seen[1], json.loads(frame["payload"])


async def test_another_clients_host_never_reaches_my_events(server, rp, tmp_path):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path).start()
    try:
        mine, theirs, ws = await links_seen(proc, rp, "evil.example")
    finally:
        proc.stop()
    real = proc.base
    for status in (mine, ws):
        assert status["url"].startswith(real + "/@alice/"), status["url"]
        assert status["account"]["url"] == real + "/@alice"
    # the client that sent Host: evil.example gets its own links, and only it
    assert theirs["url"].startswith("http://evil.example/@alice/")
    assert theirs["account"]["avatar"].startswith("http://evil.example/")


async def test_public_url_is_every_links_base(server, rp, tmp_path):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path, REDPOLL_PUBLIC_URL="https://social.example/").start()
    try:
        mine, theirs, ws = await links_seen(proc, rp, "evil.example")
        async with httpx.AsyncClient(timeout=WAIT) as c:
            acct = (
                await c.get(
                    proc.base + "/api/v1/accounts/lookup",
                    params={"acct": "alice"},
                    headers={"Host": "evil.example"},
                )
            ).json()
    finally:
        proc.stop()
    for status in (mine, theirs, ws):
        assert status["url"].startswith("https://social.example/@alice/"), status["url"]
        assert status["account"]["url"] == "https://social.example/@alice"
    assert acct["url"] == "https://social.example/@alice"


def test_a_bad_public_url_is_refused_with_its_name():
    from redpoll.core.errors import ConfigError
    from redpoll.core.settings import Settings

    for bad in (
        "social.example",
        "ftp://social.example",
        "https://social.example/?a=1",
        "https://",
    ):
        with pytest.raises(ConfigError, match="REDPOLL_PUBLIC_URL"):
            Settings.from_env({"REDPOLL_PUBLIC_URL": bad})
    assert (
        Settings.from_env({"REDPOLL_PUBLIC_URL": "https://s.example/"}).public_url
        == "https://s.example"
    )
