"""Open Mastodon user and list streams follow membership changes: one task
per process re-reads every open user/list stream's authors each
``limits.MEMBERSHIP_REFRESH_S`` (once per user and stream kind, however many
streams share them). A follow made while streams are open reaches an SSE
user stream, a second SSE user stream of the same user and a WebSocket user
subscription; an unfollow stops the unfollowed; a deleted list ends its
stream. Real ``redpoll serve``, real clients (httpx, websockets, Mastodon.py
for the API calls)."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from support.mastodon import accounts  # noqa: F401
from websockets.asyncio.client import connect

from redpoll.core import limits

pytestmark = pytest.mark.timeout(180)

#: a refresh pass comes at most MEMBERSHIP_REFRESH_S after a change (and takes
#: a moment); bound for waiting on one (never a timing assertion)
REFRESHED = 3 * limits.MEMBERSHIP_REFRESH_S + 10


class SSE:
    """A raw SSE stream: the ids of the ``update`` events read so far."""

    def __init__(self, response: httpx.Response):
        self.response = response
        self.ids: list[str] = []
        self.ended = False
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        event = None
        buf = b""
        async for chunk in self.response.aiter_raw():
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.startswith(b"event: "):
                    event = line[7:].decode()
                elif line.startswith(b"data: ") and event == "update":
                    self.ids.append(str(json.loads(line[6:])["id"]))
        self.ended = True


class WS:
    def __init__(self, ws):
        self.ws = ws
        self.ids: list[str] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            msg = json.loads(raw)
            if msg.get("event") == "update":
                self.ids.append(str(json.loads(msg["payload"])["id"]))


async def test_follow_unfollow_and_list_delete_reach_open_streams(srv):
    base = srv.base
    alice, bob, carol = await asyncio.to_thread(accounts, base, 3)
    bob_id = (await asyncio.to_thread(bob.me))["id"]
    carol_id = (await asyncio.to_thread(carol.me))["id"]
    await asyncio.to_thread(alice.account_follow, carol_id)
    lst = await asyncio.to_thread(alice.list_create, "soon gone")
    await asyncio.to_thread(alice.list_accounts_add, lst["id"], [carol_id])
    headers = {"Authorization": f"Bearer {alice.access_token}"}
    async with httpx.AsyncClient(base_url=base, timeout=None) as http:
        async with (
            http.stream("GET", "/api/v1/streaming/user", headers=headers) as r1,
            http.stream("GET", "/api/v1/streaming/user", headers=headers) as r2,
            http.stream("GET", f"/api/v1/streaming/list?list={lst['id']}", headers=headers) as r3,
        ):
            url = (
                base.replace("http", "ws")
                + f"/api/v1/streaming?stream=user&access_token={alice.access_token}"
            )
            async with connect(url) as ws:
                streams = [SSE(r1), SSE(r2), WS(ws)]
                listed = SSE(r3)
                await srv.wait_subscribers(4)
                # while they are open: follow bob, unfollow carol, delete the list
                await asyncio.to_thread(alice.account_follow, bob_id)
                await asyncio.to_thread(alice.account_unfollow, carol_id)
                await asyncio.to_thread(alice.list_delete, lst["id"])
                # bob posts until every stream has had one of his statuses
                bobs: list[str] = []
                deadline = time.monotonic() + REFRESHED
                while not all(set(s.ids) & set(bobs) for s in streams):
                    assert time.monotonic() < deadline, "a follow never reached an open stream"
                    bobs.append(str((await asyncio.to_thread(bob.status_post, "hi"))["id"]))
                    await asyncio.sleep(0.5)
                # carol's status, then bob's: bob's arrives, carol's does not
                gone = str((await asyncio.to_thread(carol.status_post, "unseen"))["id"])
                last = str((await asyncio.to_thread(bob.status_post, "last"))["id"])
                deadline = time.monotonic() + 30
                while not all(last in s.ids for s in streams):
                    assert time.monotonic() < deadline, "bob's last status never arrived"
                    await asyncio.sleep(0.05)
                assert all(gone not in s.ids for s in streams)
                # the deleted list's stream has ended
                await asyncio.wait_for(listed.task, REFRESHED)
                assert listed.ended and gone not in listed.ids
                for s in streams:
                    s.task.cancel()
