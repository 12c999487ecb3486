"""Mastodon streaming (SSE) with a real client, Mastodon.py, against the real
``redpoll serve`` process: health, public, user (home), hashtag, list;
update and delete events; heartbeats. Raw HTTP for auth errors, the wire
format and Last-Event-ID resume."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from support.mastodon import Listener, accounts, mstream, wait_for  # noqa: F401
from support.streams import WAIT, StreamProc  # noqa: F401

pytestmark = pytest.mark.timeout(180)


async def test_mastodon_py_public_user_hashtag_list_streams(mstream, rp):
    # rp: the per-test flush dropped the job groups; opening an engine makes them again
    base = mstream.base
    alice, bob, carol = await asyncio.to_thread(accounts, base, 3)
    assert await asyncio.to_thread(alice.stream_healthy)
    bob_id = (await asyncio.to_thread(bob.me))["id"]
    carol_id = (await asyncio.to_thread(carol.me))["id"]
    await asyncio.to_thread(alice.account_follow, bob_id)
    await asyncio.to_thread(alice.account_follow, carol_id)  # a list holds accounts followed
    lst = await asyncio.to_thread(alice.list_create, "friends")
    await asyncio.to_thread(alice.list_accounts_add, lst["id"], [carol_id])

    listeners = {k: Listener() for k in ("public", "user", "hashtag", "list")}
    handles = [
        await asyncio.to_thread(alice.stream_public, listeners["public"], run_async=True),
        await asyncio.to_thread(alice.stream_user, listeners["user"], run_async=True),
        await asyncio.to_thread(
            alice.stream_hashtag, "Redis", listeners["hashtag"], run_async=True
        ),
        await asyncio.to_thread(alice.stream_list, lst["id"], listeners["list"], run_async=True),
    ]
    try:
        await mstream.wait_subscribers(4)
        b1 = await asyncio.to_thread(bob.status_post, "bob says hi")
        c1 = await asyncio.to_thread(carol.status_post, "carol likes #redis")
        a1 = await asyncio.to_thread(alice.status_post, "alice herself")
        await asyncio.to_thread(bob.status_delete, b1["id"])
        await asyncio.to_thread(carol.status_delete, c1["id"])
        end = await asyncio.to_thread(carol.status_post, "the end #redis")

        def ids(name):
            return [str(s["id"]) for s in listeners[name].updates]

        for name in listeners:
            await wait_for(lambda: str(end["id"]) in ids(name), f"{name} end marker")
        assert ids("public") == [str(b1["id"]), str(c1["id"]), str(a1["id"]), str(end["id"])]
        assert listeners["public"].deletes == [int(b1["id"]), int(c1["id"])]
        # follows bob and carol, and herself; the list holds carol only
        assert ids("user") == [str(b1["id"]), str(c1["id"]), str(a1["id"]), str(end["id"])]
        assert listeners["user"].deletes == [int(b1["id"]), int(c1["id"])]
        assert ids("hashtag") == [str(c1["id"]), str(end["id"])]
        assert listeners["hashtag"].deletes == [int(c1["id"])]
        assert ids("list") == [str(c1["id"]), str(end["id"])]
        assert listeners["list"].deletes == [int(c1["id"])]
        first = listeners["public"].updates[0]
        assert first["account"]["id"] == bob_id and "bob says hi" in first["content"]
        # heartbeats (1 s in the test server) keep idle streams alive
        await wait_for(lambda: all(lis.heartbeats > 1 for lis in listeners.values()), "heartbeats")
    finally:
        for h in handles:
            h.close()
    await mstream.wait_subscribers(0)


async def test_sse_auth_wire_format_and_last_event_id(mstream, rp):
    base = mstream.base
    (alice,) = await asyncio.to_thread(accounts, base, 1)
    async with httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c:
        r = await c.get(base + "/api/v1/streaming/public")
        assert r.status_code == 401 and "error" in r.json()
        r = await c.get(base + "/api/v1/streaming/public", params={"access_token": "bogus"})
        assert r.status_code == 401
        r = await c.get(
            base + "/api/v1/streaming/hashtag",
            headers={"Authorization": f"Bearer {alice.access_token}"},
        )
        assert r.status_code == 400
        r = await c.get(
            base + "/api/v1/streaming/list",
            params={"list": "999999"},
            headers={"Authorization": f"Bearer {alice.access_token}"},
        )
        assert r.status_code == 404
        r = await c.get(base + "/api/v1/streaming/health")
        assert r.text == "OK"

        async def read_events(resp, n):
            events, buf = [], b""
            chunks = resp.aiter_raw()
            while len(events) < n:
                buf += await asyncio.wait_for(chunks.__anext__(), WAIT)
                assert b"\r" not in buf  # LF only
                while b"\n\n" in buf:
                    block, buf = buf.split(b"\n\n", 1)
                    lines = [ln for ln in block.split(b"\n") if not ln.startswith(b":")]
                    if lines:
                        fields = dict(ln.decode().split(": ", 1) for ln in lines)
                        events.append(fields)
            return events

        url = base + "/api/v1/streaming/public"
        async with c.stream("GET", url, params={"access_token": alice.access_token}) as resp:
            assert resp.headers["content-type"].startswith("text/event-stream")
            s1 = await asyncio.to_thread(alice.status_post, "first")
            s2 = await asyncio.to_thread(alice.status_post, "second")
            events = await read_events(resp, 2)
        assert [e["event"] for e in events] == ["update", "update"]
        assert [json.loads(e["data"])["id"] for e in events] == [str(s1["id"]), str(s2["id"])]
        # missed while away: s3 and the deletion of s1; resume after the first event
        s3 = await asyncio.to_thread(alice.status_post, "third")
        await asyncio.to_thread(alice.status_delete, s1["id"])
        async with c.stream(
            "GET",
            url,
            headers={
                "Authorization": f"Bearer {alice.access_token}",
                "Last-Event-ID": events[0]["id"],
            },
        ) as resp:
            again = await read_events(resp, 3)
        assert [
            (e["event"], e["data"] if e["event"] == "delete" else json.loads(e["data"])["id"])
            for e in again
        ] == [("update", str(s2["id"])), ("update", str(s3["id"])), ("delete", str(s1["id"]))]
