"""Streams handed off to their connection once started (redpoll/stream/handoff.py):
`redpoll serve` writes v1.1 and SSE streams and accepted
WebSockets without the ASGI request behind them. What that must keep (the
stream tests check the rest through the same server): the connection ends
with the stream, a server shutdown ends each stream with its close, and the
WebSocket side reads every frame a client may send (fragments, pings,
close) and refuses malformed ones, and pings its clients."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket

import pytest
from support.mastodon import LOOSE, accounts  # noqa: F401
from support.streams import WAIT, StreamProc, read_until_closed  # noqa: F401
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from redpoll.core import limits

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def hstream(server, tmp_path_factory):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path_factory.mktemp("hstream"), **LOOSE).start()
    yield proc
    proc.stop()


def raw_request(port: int, request: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(request)
    return sock


async def read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    """The response head and what came after it."""
    sock.settimeout(WAIT)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await asyncio.to_thread(sock.recv, 65536)
        assert chunk, f"closed before the head: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def upgrade(port: int, token: str, query: str = "") -> socket.socket:
    return raw_request(
        port,
        (
            f"GET /api/v1/streaming?access_token={token}{query} HTTP/1.1\r\nHost: x\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode(),
    )


def client_frame(
    payload: bytes,
    opcode: int = 1,
    *,
    masked: bool = True,
    fin: bool = True,
    size: int | None = None,
) -> bytes:
    n = len(payload) if size is None else size
    first = (0x80 if fin else 0) | opcode
    mask = 0x80 if masked else 0
    if n < 126:
        head = bytes([first, mask | n])
    elif n < 65536:
        head = bytes([first, mask | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([first, mask | 127]) + n.to_bytes(8, "big")
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def server_frames(data: bytes) -> list[tuple[int, bytes]]:
    """(opcode, payload) of the unmasked frames in ``data``."""
    out, pos = [], 0
    while len(data) - pos >= 2:
        op, n, head = data[pos] & 0x0F, data[pos + 1] & 0x7F, 2
        if n == 126:
            n, head = int.from_bytes(data[pos + 2 : pos + 4], "big"), 4
        elif n == 127:
            n, head = int.from_bytes(data[pos + 2 : pos + 10], "big"), 10
        out.append((op, data[pos + head : pos + head + n]))
        pos += head + n
    return out


def close_code(data: bytes) -> int | None:
    closes = [p for op, p in server_frames(data) if op == 8]
    return int.from_bytes(closes[0][:2], "big") if closes else None


async def test_handed_off_http_streams_say_the_connection_ends_with_them(hstream):
    (alice,) = await asyncio.to_thread(accounts, hstream.base, 1)
    v1 = raw_request(
        hstream.port,
        b"GET /1.1/statuses/filter.json?track=handoff&identifier=h1 HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    sse = raw_request(
        hstream.port,
        f"GET /api/v1/streaming/public?access_token="
        f"{alice.access_token} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
    )
    try:
        for sock in (v1, sse):
            head, _ = await read_head(sock)
            assert head.startswith(b"HTTP/1.1 200")
            assert b"connection: close" in head.lower()
            assert b"transfer-encoding: chunked" in head.lower()
        await hstream.wait_subscribers(2)
    finally:
        v1.close()
        sse.close()
    # the client leaving releases the subscription (and the connection's place)
    await hstream.wait_subscribers(0)


async def test_websocket_fragments_pings_and_close_on_a_handed_off_socket(hstream):
    (alice,) = await asyncio.to_thread(accounts, hstream.base, 1)
    url = f"ws://127.0.0.1:{hstream.port}/api/v1/streaming?access_token={alice.access_token}"
    async with connect(url) as ws:
        # a subscribe message in three fragments
        await ws.send(['{"type":"subscr', 'ibe","stream":', '"hashtag","tag":"frag"}'])
        await hstream.wait_subscribers(1)
        pong = await ws.ping(b"are you there")
        await asyncio.wait_for(pong, WAIT)
        post = await asyncio.to_thread(alice.status_post, "in pieces #frag")
        while True:
            msg = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
            if msg.get("event") == "update":
                break
        assert msg["stream"] == ["hashtag", "frag"]
        assert json.loads(msg["payload"])["id"] == str(post["id"])
        # an oversized message gets an error and the socket lives on
        await ws.send(json.dumps({"type": "subscribe", "stream": "x" * 5000}))
        err = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
        assert err["error"] == "Message too large"
    # the client's close is answered, and its subscriptions are gone
    assert ws.close_code == 1000
    await hstream.wait_subscribers(0)


@pytest.mark.parametrize(
    "frame, code",
    [
        (client_frame(b'{"type":"subscribe","stream":"public"}', masked=False), 1002),  # unmasked
        (client_frame(b"\xff\xfe not utf-8"), 1007),
        (client_frame(b"", size=limits.WS_INBOUND_MAX_BYTES + 1), 1009),
        (client_frame(b"x", opcode=9, fin=False), 1002),  # a fragmented ping
        (client_frame(b"\x00\x01", opcode=2), 1003),  # binary frames are not supported
    ],
    ids=["unmasked", "bad-utf8", "too-big", "fragmented-ping", "binary"],
)
async def test_malformed_client_frames_close_the_socket(hstream, frame, code):
    (alice,) = await asyncio.to_thread(accounts, hstream.base, 1)
    sock = upgrade(hstream.port, alice.access_token, "&stream=public")
    try:
        head, rest = await read_head(sock)
        assert head.startswith(b"HTTP/1.1 101")
        await hstream.wait_subscribers(1)
        sock.sendall(frame)
        data = rest + await read_until_closed(sock)
        assert close_code(data) == code
    finally:
        sock.close()
    await hstream.wait_subscribers(0)


async def test_server_pings_and_drops_a_socket_that_never_answers(server, tmp_path):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path, REDPOLL_WS_PING_S="1", **LOOSE).start()
    silent = None
    try:
        (alice,) = await asyncio.to_thread(accounts, proc.base, 1)
        silent = upgrade(proc.port, alice.access_token, "&stream=public")
        head, rest = await read_head(silent)
        assert head.startswith(b"HTTP/1.1 101")
        url = (
            f"ws://127.0.0.1:{proc.port}/api/v1/streaming?stream=public&access_token="
            f"{alice.access_token}"
        )
        async with connect(url, ping_interval=None) as ws:  # answers pings, sends none
            await proc.wait_subscribers(2)
            # the silent one is pinged, then dropped with 1011 ...
            data = rest + await read_until_closed(silent)
            frames = server_frames(data)
            assert [op for op, _ in frames][:1] == [9] and close_code(data) == 1011
            await proc.wait_subscribers(1)
            # ... while the one answering the pings outlives several of them
            await asyncio.sleep(3)
            post = await asyncio.to_thread(alice.status_post, "still here")
            while True:
                msg = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
                if msg.get("event") == "update":
                    break
            assert json.loads(msg["payload"])["id"] == str(post["id"])
    finally:
        if silent is not None:
            silent.close()
        proc.stop()


async def test_shutdown_ends_each_open_stream_with_its_close(server, tmp_path):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path, **LOOSE).start()
    socks = []
    try:
        (alice,) = await asyncio.to_thread(accounts, proc.base, 1)
        v1 = raw_request(
            proc.port,
            b"GET /1.1/statuses/sample.json?percent=100&identifier=s1 HTTP/1.1\r\nHost: x\r\n\r\n",
        )
        sse = raw_request(
            proc.port,
            f"GET /api/v1/streaming/user?access_token="
            f"{alice.access_token} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
        )
        sock = upgrade(proc.port, alice.access_token, "&stream=public")
        socks = [v1, sse, sock]
        rests = [(await read_head(s))[1] for s in socks]
        await proc.wait_subscribers(3)
        proc.process.send_signal(signal.SIGTERM)
        got = [rest + await read_until_closed(s) for rest, s in zip(rests, socks)]
        # v1.1: Twitter's disconnect message (code 1, shutdown), then the end of the body
        assert b'{"disconnect":{"code":1,' in got[0] and got[0].endswith(b"0\r\n\r\n")
        # SSE: the end of the body
        assert got[1].endswith(b"0\r\n\r\n")
        # WebSocket: close 1012 (service restart)
        assert close_code(got[2]) == 1012
        assert await asyncio.to_thread(proc.process.wait, WAIT) == 0
    finally:
        for s in socks:
            s.close()
        proc.stop()


async def test_websocket_client_library_sees_the_shutdown_close(server, tmp_path):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path, **LOOSE).start()
    try:
        (alice,) = await asyncio.to_thread(accounts, proc.base, 1)
        url = (
            f"ws://127.0.0.1:{proc.port}/api/v1/streaming?stream=user&access_token="
            f"{alice.access_token}"
        )
        async with connect(url) as ws:
            await proc.wait_subscribers(1)
            proc.process.send_signal(signal.SIGTERM)
            with pytest.raises(ConnectionClosed) as info:
                while True:
                    await asyncio.wait_for(ws.recv(), WAIT)
            assert info.value.rcvd is not None and info.value.rcvd.code == 1012
    finally:
        proc.stop()


async def test_head_of_an_sse_stream_is_not_handed_off(hstream):
    """A HEAD response has no body: it stays uvicorn's, which writes none."""
    (alice,) = await asyncio.to_thread(accounts, hstream.base, 1)
    sock = raw_request(
        hstream.port,
        f"HEAD /api/v1/streaming/public?access_token="
        f"{alice.access_token} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
    )
    try:
        head, rest = await read_head(sock)
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
        assert b"connection: close" not in head.lower() and rest == b""
        await hstream.wait_subscribers(1)
    finally:
        sock.close()
    await hstream.wait_subscribers(0)
