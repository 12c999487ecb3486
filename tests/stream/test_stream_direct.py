"""The ``direct`` stream: conversation events over SSE
(Mastodon.py 2.3.3) and the multiplexed WebSocket, only to the participants;
both modes."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
import websockets
from mastodon import StreamListener
from support.mastodon import accounts, wait_for  # noqa: F401

pytestmark = pytest.mark.timeout(180)


class Conversations(StreamListener):
    def __init__(self):
        self.got: list = []
        self.lock = threading.Lock()

    def on_conversation(self, conversation):
        with self.lock:
            self.got.append(conversation)


async def test_direct_stream_sse_and_websocket(srv, rp):
    ann, ben, cat = await asyncio.to_thread(accounts, srv.base, 3)
    me = {k: await asyncio.to_thread(m.me) for k, m in (("ann", ann), ("ben", ben), ("cat", cat))}
    await asyncio.to_thread(cat.account_follow, me["ann"]["id"])  # a follower, not a participant
    listeners = {k: Conversations() for k in ("ann", "ben", "cat")}
    handles = [
        await asyncio.to_thread(m.stream_direct, listeners[k], run_async=True)
        for k, m in (("ann", ann), ("ben", ben), ("cat", cat))
    ]
    ws_url = srv.base.replace("http", "ws") + "/api/v1/streaming?access_token=" + ben.access_token
    try:
        async with websockets.connect(ws_url) as ws:
            await ws.send(json.dumps({"type": "subscribe", "stream": "direct"}))
            await srv.wait_subscribers(4)
            dm = await asyncio.to_thread(
                ann.status_post, f"@{me['ben']['username']} secret", visibility="direct"
            )
            await asyncio.to_thread(ann.status_post, "public, no conversation")
            mark = await asyncio.to_thread(
                cat.status_post, f"@{me['ann']['username']} end", visibility="direct"
            )
            for who in ("ann", "ben"):
                await wait_for(
                    lambda: any(c["last_status"]["id"] == dm["id"] for c in listeners[who].got),
                    f"{who} conversation",
                )
            await wait_for(
                lambda: any(c["last_status"]["id"] == mark["id"] for c in listeners["cat"].got),
                "cat's own",
            )
            seen_by_ben = [c for c in listeners["ben"].got]
            assert [c["last_status"]["id"] for c in seen_by_ben] == [dm["id"]]
            assert seen_by_ben[0]["unread"] is True and seen_by_ben[0]["id"] == str(dm["id"])
            assert [a["id"] for a in seen_by_ben[0]["accounts"]] == [me["ann"]["id"]]
            mine = [c for c in listeners["ann"].got if c["last_status"]["id"] == dm["id"]]
            assert mine[0]["unread"] is False
            assert [a["id"] for a in mine[0]["accounts"]] == [me["ben"]["id"]]
            # cat follows ann but is not in the conversation: nothing of it
            assert [c["last_status"]["id"] for c in listeners["cat"].got] == [mark["id"]]
            frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert frame["stream"] == ["direct"] and frame["event"] == "conversation"
            assert json.loads(frame["payload"])["last_status"]["id"] == str(dm["id"])
    finally:
        for h in handles:
            h.close()
