"""Mastodon streaming over WebSocket (``/api/v1/streaming``) against the real
``redpoll serve`` process, with real clients: the ``websockets`` library
(raw frames: auth, subscribe/unsubscribe, errors) and Mastodon.py 2.3.3's own
WebSocket handle (``stream_open_websocket``, over websocket-client)."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from support.mastodon import LOOSE, Listener, accounts, wait_for  # noqa: F401
from support.streams import WAIT, StreamProc, read_until_closed  # noqa: F401
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def wstream(server, tmp_path_factory):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path_factory.mktemp("wstream"), **LOOSE).start()
    yield proc
    proc.stop()


def ws_url(proc: StreamProc, **params) -> str:
    from urllib.parse import urlencode

    query = f"?{urlencode(params)}" if params else ""
    return f"ws://127.0.0.1:{proc.port}/api/v1/streaming{query}"


class Socket:
    """A connected client socket and everything it has received, in order."""

    def __init__(self, ws):
        self.ws = ws
        self.messages: list[dict] = []

    async def send(self, **msg) -> None:
        await self.ws.send(json.dumps(msg))

    async def until(self, predicate, what: str) -> dict:
        """Read until a message satisfies ``predicate`` (it is returned)."""
        for msg in self.messages:
            if predicate(msg):
                return msg
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), WAIT)
            assert isinstance(raw, str), "text frames only"
            msg = json.loads(raw)
            self.messages.append(msg)
            if predicate(msg):
                return msg

    def events(self, stream: list, event: str) -> list[str]:
        return [
            m["payload"] if event == "delete" else str(json.loads(m["payload"])["id"])
            for m in self.messages
            if m.get("stream") == stream and m.get("event") == event
        ]


def is_event(stream: list, event: str, sid) -> callable:
    def check(m: dict) -> bool:
        if m.get("stream") != stream or m.get("event") != event:
            return False
        got = m["payload"] if event == "delete" else str(json.loads(m["payload"])["id"])
        return got == str(sid)

    return check


async def test_user_public_hashtag_list_on_one_socket(wstream, rp):
    base = wstream.base
    alice, bob, carol = await asyncio.to_thread(accounts, base, 3)
    bob_id = (await asyncio.to_thread(bob.me))["id"]
    carol_id = (await asyncio.to_thread(carol.me))["id"]
    await asyncio.to_thread(alice.account_follow, bob_id)
    await asyncio.to_thread(alice.account_follow, carol_id)  # a list holds accounts followed
    lst = await asyncio.to_thread(alice.list_create, "friends")
    await asyncio.to_thread(alice.list_accounts_add, lst["id"], [carol_id])
    lid = str(lst["id"])

    # token in the query; user stream subscribed at connect, the rest by messages
    async with connect(ws_url(wstream, access_token=alice.access_token, stream="user")) as ws:
        sock = Socket(ws)
        await sock.send(type="subscribe", stream="public")
        await sock.send(type="subscribe", stream="hashtag", tag="Redis")
        await sock.send(type="subscribe", stream="list", list=lid)
        await sock.send(type="subscribe", stream="public")  # again: no second subscription
        await wstream.wait_subscribers(4)

        b1 = await asyncio.to_thread(bob.status_post, "bob says hi")
        c1 = await asyncio.to_thread(carol.status_post, "carol likes #redis")
        a1 = await asyncio.to_thread(alice.status_post, "alice herself")
        await asyncio.to_thread(bob.status_delete, b1["id"])
        await asyncio.to_thread(carol.status_delete, c1["id"])
        end = await asyncio.to_thread(carol.status_post, "the end #redis")
        user_end = await asyncio.to_thread(alice.status_post, "alice ends")

        # one socket, one queue in event-log order: the last event seen on every
        # stream means everything before it has arrived
        await sock.until(is_event(["user"], "update", user_end["id"]), "user end")
        await sock.until(is_event(["public"], "update", user_end["id"]), "public end")
        for label in (["public"], ["hashtag", "Redis"], ["list", lid]):
            await sock.until(is_event(label, "update", end["id"]), f"{label} end")

        ids = [str(s["id"]) for s in (b1, c1, a1, end, user_end)]
        assert sock.events(["public"], "update") == ids
        assert sock.events(["public"], "delete") == [str(b1["id"]), str(c1["id"])]
        assert sock.events(["user"], "update") == ids
        assert sock.events(["user"], "delete") == [str(b1["id"]), str(c1["id"])]
        assert sock.events(["hashtag", "Redis"], "update") == [str(c1["id"]), str(end["id"])]
        assert sock.events(["hashtag", "Redis"], "delete") == [str(c1["id"])]
        assert sock.events(["list", lid], "update") == [str(c1["id"]), str(end["id"])]
        assert sock.events(["list", lid], "delete") == [str(c1["id"])]
        assert not [m for m in sock.messages if "error" in m]
        first = json.loads(next(m for m in sock.messages if m["stream"] == ["public"])["payload"])
        assert first["account"]["id"] == bob_id and "bob says hi" in first["content"]
    await wstream.wait_subscribers(0)


async def test_unsubscribe_stops_delivery(wstream, rp):
    (alice,) = await asyncio.to_thread(accounts, wstream.base, 1)
    headers = {"Authorization": f"Bearer {alice.access_token}"}
    async with connect(ws_url(wstream), additional_headers=headers) as ws:
        sock = Socket(ws)
        await sock.send(type="subscribe", stream="public:local")
        await sock.send(type="subscribe", stream="hashtag:local", tag="foo")
        await wstream.wait_subscribers(2)
        p1 = await asyncio.to_thread(alice.status_post, "one #foo")
        await sock.until(is_event(["public:local"], "update", p1["id"]), "public p1")
        await sock.until(is_event(["hashtag:local", "foo"], "update", p1["id"]), "hashtag p1")

        await sock.send(type="unsubscribe", stream="public:local")
        await wstream.wait_subscribers(1)
        await asyncio.to_thread(alice.status_post, "two, untagged")
        await asyncio.to_thread(alice.status_delete, p1["id"])
        p3 = await asyncio.to_thread(alice.status_post, "three #foo")
        await sock.until(is_event(["hashtag:local", "foo"], "update", p3["id"]), "hashtag p3")
        assert sock.events(["public:local"], "update") == [str(p1["id"])]
        assert sock.events(["public:local"], "delete") == []
        assert sock.events(["hashtag:local", "foo"], "delete") == [str(p1["id"])]
        assert [m["stream"] for m in sock.messages] == [
            ["public:local"],
            ["hashtag:local", "foo"],
            ["hashtag:local", "foo"],
            ["hashtag:local", "foo"],
        ] or [m["stream"] for m in sock.messages] == [
            ["hashtag:local", "foo"],
            ["public:local"],
            ["hashtag:local", "foo"],
            ["hashtag:local", "foo"],
        ]  # p1 twice (either order), delete p1, p3; never p2

        await sock.send(type="unsubscribe", stream="hashtag:local", tag="FOO")  # tags fold case
        await wstream.wait_subscribers(0)
    await wstream.wait_subscribers(0)


async def test_tokens_and_bad_tokens(wstream, rp):
    (alice,) = await asyncio.to_thread(accounts, wstream.base, 1)
    for url, kwargs in [
        (ws_url(wstream), {}),
        (ws_url(wstream, access_token="bogus"), {}),
        (ws_url(wstream), {"additional_headers": {"Authorization": "Bearer bogus"}}),
        (ws_url(wstream), {"subprotocols": ["bogus"]}),
    ]:
        with pytest.raises(InvalidStatus) as info:
            async with connect(url, **kwargs):
                pass
        assert info.value.response.status_code == 401
        assert "error" in json.loads(info.value.response.body)
    # the token as the Sec-WebSocket-Protocol, as browsers send it: echoed back
    async with connect(ws_url(wstream, stream="public"), subprotocols=[alice.access_token]) as ws:
        assert ws.subprotocol == alice.access_token
        await wstream.wait_subscribers(1)
        sock = Socket(ws)
        p = await asyncio.to_thread(alice.status_post, "via subprotocol")
        await sock.until(is_event(["public"], "update", p["id"]), "update")
    await wstream.wait_subscribers(0)


async def test_bad_messages_get_errors_and_the_socket_lives_on(wstream, rp):
    alice, bob = await asyncio.to_thread(accounts, wstream.base, 2)
    lst = await asyncio.to_thread(bob.list_create, "bob's")
    url = ws_url(wstream, access_token=alice.access_token, stream="nonsense")
    async with connect(url) as ws:
        sock = Socket(ws)
        err = await sock.until(lambda m: "error" in m, "error for ?stream=nonsense")
        assert err["status"] == 400

        async def answer(msg) -> dict:
            sock.messages.clear()
            await ws.send(msg if isinstance(msg, str) else json.dumps(msg))
            return await sock.until(lambda m: "error" in m, f"error for {msg}")

        assert (await answer({"type": "subscribe", "stream": "public:nowhere"}))["status"] == 400
        assert (await answer({"type": "subscribe", "stream": "hashtag"}))["status"] == 400
        assert (await answer({"type": "subscribe", "stream": "hashtag", "tag": "#"}))[
            "status"
        ] == 400
        assert (await answer({"type": "subscribe", "stream": "list"}))["status"] == 400
        # someone else's list is not found
        assert (await answer({"type": "subscribe", "stream": "list", "list": str(lst["id"])}))[
            "status"
        ] == 404
        assert (await answer({"type": "subscribe", "stream": 7}))["status"] == 400
        assert (await answer({"type": "unsubscribe", "stream": "nope"}))["status"] == 400
        assert (await answer({"type": "dance"}))["status"] == 400
        assert (await answer("{not json"))["status"] == 400
        assert (await answer("[1, 2]"))["status"] == 400
        assert (await wstream.astats())["subscribers"] == 0

        # still a working socket
        await sock.send(type="subscribe", stream="public")
        await wstream.wait_subscribers(1)
        p = await asyncio.to_thread(alice.status_post, "still alive")
        await sock.until(is_event(["public"], "update", p["id"]), "update after errors")

        # binary frames are refused: close 1003
        await ws.send(b"\x00\x01")
        with pytest.raises(ConnectionClosed) as info:
            while True:
                await asyncio.wait_for(ws.recv(), WAIT)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1003
    await wstream.wait_subscribers(0)


async def test_mastodon_py_websocket_handle(wstream, rp):
    """Mastodon.py 2.3.3's multiplexed WebSocket: stream_* with websocket_handle."""
    base = wstream.base
    alice, bob = await asyncio.to_thread(accounts, base, 2)
    bob_id = (await asyncio.to_thread(bob.me))["id"]
    await asyncio.to_thread(alice.account_follow, bob_id)
    lst = await asyncio.to_thread(alice.list_create, "bobs")
    await asyncio.to_thread(alice.list_accounts_add, lst["id"], [bob_id])

    default = Listener()
    listeners = {k: Listener() for k in ("public", "user", "hashtag", "list")}
    handle = await asyncio.to_thread(alice.stream_open_websocket, default)
    try:
        await asyncio.to_thread(alice.stream_public, listeners["public"], websocket_handle=handle)
        await asyncio.to_thread(alice.stream_user, listeners["user"], websocket_handle=handle)
        await asyncio.to_thread(
            alice.stream_hashtag, "python", listeners["hashtag"], websocket_handle=handle
        )
        await asyncio.to_thread(
            alice.stream_list, lst["id"], listeners["list"], websocket_handle=handle
        )
        await wstream.wait_subscribers(4)

        b1 = await asyncio.to_thread(bob.status_post, "bob on #python")
        a1 = await asyncio.to_thread(alice.status_post, "alice plain")
        await asyncio.to_thread(bob.status_delete, b1["id"])
        end = await asyncio.to_thread(bob.status_post, "bob ends #python")

        def ids(name):
            return [str(s["id"]) for s in listeners[name].updates]

        for name in listeners:
            await wait_for(lambda: str(end["id"]) in ids(name), f"{name} end")
        assert ids("public") == [str(b1["id"]), str(a1["id"]), str(end["id"])]
        assert ids("user") == [str(b1["id"]), str(a1["id"]), str(end["id"])]
        assert ids("hashtag") == [str(b1["id"]), str(end["id"])]
        assert ids("list") == [str(b1["id"]), str(end["id"])]
        for name in listeners:
            assert listeners[name].deletes == [int(b1["id"])], name
        assert default.updates == [] and default.deletes == []
        assert listeners["public"].updates[0]["account"]["id"] == bob_id

        # unsubscribing through the handle stops that stream only
        await asyncio.to_thread(handle.unsubscribe, "public")
        await wstream.wait_subscribers(3)
        last = await asyncio.to_thread(bob.status_post, "after #python")
        await wait_for(lambda: str(last["id"]) in ids("hashtag"), "hashtag after unsubscribe")
        assert str(last["id"]) not in ids("public")
    finally:
        await asyncio.to_thread(handle.close)
    await wstream.wait_subscribers(0)


async def test_slow_socket_is_cut_off_and_nobody_else_notices(server, rp, tmp_path):
    """A client that never reads its socket fills its one bounded queue and is
    cut off (the hub's stall counter) while a reading client gets everything."""
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path, REDPOLL_STREAM_QUEUE="50", **LOOSE).start()
    slow = None
    try:
        (alice,) = await asyncio.to_thread(accounts, proc.base, 1)
        alice_id = int((await asyncio.to_thread(alice.me))["id"])
        # a raw socket with a tiny receive window: upgrades, then never reads
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.connect(("127.0.0.1", proc.port))
        slow.sendall(
            f"GET /api/v1/streaming?stream=public&access_token={alice.access_token} HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{proc.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        async with connect(
            ws_url(proc, stream="public", access_token=alice.access_token), max_size=None
        ) as ws:
            fast = Socket(ws)
            await proc.wait_subscribers(2)
            reader = asyncio.create_task(
                fast.until(
                    lambda m: (
                        m["event"] == "update" and "the end" in json.loads(m["payload"])["content"]
                    ),
                    "the end",
                )
            )
            posted = []
            text = "x" * 450
            for round_ in range(200):
                batch = await asyncio.gather(
                    *(rp.statuses.post(alice_id, f"{text} {round_} {i}") for i in range(25))
                )
                posted.extend(s.id for s in batch)
                if (await proc.astats())["stalls"] >= 1:
                    break
            assert (await proc.astats())["stalls"] == 1
            await proc.wait_subscribers(1)  # the slow one is gone ...
            end = await rp.statuses.post(alice_id, "the end")
            await asyncio.wait_for(reader, WAIT)
            # ... and the fast one got every status, none twice
            got = [
                int(json.loads(m["payload"])["id"]) for m in fast.messages if m["event"] == "update"
            ]
            assert sorted(got) == sorted(posted + [end.id]) and len(set(got)) == len(got)
            assert not [m for m in fast.messages if "error" in m]
        # the server closed the slow client's socket: reading it now reaches EOF
        data = await read_until_closed(slow)
        assert data.startswith(b"HTTP/1.1 101")
    finally:
        if slow is not None:
            slow.close()
        proc.stop()
