"""A burst of statuses reaches the hub as a backlog (several events in one
read of the event log): it queues them all and writes each connection once
(Hub.deferred), and every client still gets every matching status once, in
order, on v1.1 (plain and delimited=length) and SSE alike. Real serve, real
clients."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from support.mastodon import accounts  # noqa: F401
from support.streams import (
    Conn,  # noqa: F401
    Lines,  # noqa: F401
)

pytestmark = pytest.mark.timeout(180)

BURST = 300


async def test_a_burst_is_delivered_whole_in_order(srv, rp):
    base = srv.base
    (viewer,) = await asyncio.to_thread(accounts, base, 1)
    author = await rp.accounts.sign_up("burster")
    before = (await srv.astats())["backlog_reads"]
    async with (
        Conn(srv, "filter", track="burst") as tr,
        Conn(srv, "filter", follow=str(author.id), delimited="length") as fo,
        httpx.AsyncClient(timeout=None) as http,
        http.stream(
            "GET",
            f"{base}/api/v1/streaming/public",
            headers={"Authorization": f"Bearer {viewer.access_token}"},
        ) as sse,
    ):
        assert tr.status == fo.status == sse.status_code == 200
        await srv.wait_subscribers(3)
        # concurrently: the statuses land in the log faster than the hub reads them
        posted = await asyncio.gather(
            *(rp.statuses.post(author.id, f"burst {i}") for i in range(BURST))
        )
        want = {s.id for s in posted}
        got_tr: list[int] = []
        while len(got_tr) < BURST:
            msg = await tr.lines.message()
            if "id" in msg:
                got_tr.append(msg["id"])
        got_fo: list[int] = []
        while len(got_fo) < BURST:
            size = await fo.lines.line()
            if size:  # delimited=length: a byte count line, then the message
                msg = await fo.lines.line()
                assert int(size) == len(msg) + 2
                got_fo.append(json.loads(msg)["id"])
        got_sse: list[int] = []
        lines = Lines(sse)
        buf = b""
        while len(got_sse) < BURST:
            buf += await asyncio.wait_for(lines.chunks.__anext__(), 30)
            *done, buf = buf.split(b"\n")
            got_sse += [int(json.loads(x[6:])["id"]) for x in done if x.startswith(b"data: {")]
        # each got every status once, all in the same order: the event log's
        assert set(got_tr) == want and len(got_tr) == BURST
        assert got_fo == got_tr and got_sse == got_tr
    assert (await srv.astats())["backlog_reads"] > before
