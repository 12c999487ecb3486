"""Mastodon streaming over one multiplexed WebSocket: ``GET /api/v1/streaming``.

As Mastodon serves it (docs: "Methods > streaming > WebSocket"):

* The token comes from ``Authorization: Bearer``, the ``access_token`` query
  parameter, or the ``Sec-WebSocket-Protocol`` header (browsers cannot set
  headers; the token is echoed back as the chosen subprotocol). A missing or
  bad token refuses the upgrade with a 401 and ``{"error": ...}``.
* ``?stream=...`` (with ``tag=`` / ``list=``) subscribes at connect; then the
  client sends ``{"type":"subscribe"|"unsubscribe","stream":...,"tag":...,
  "list":...}``. Streams: Mastodon's (``mastodon.STREAMS``: ``user``,
  ``user:notification``, ``public``, ``public:media``, ``public:local``,
  ``public:local:media``, ``public:remote``, ``public:remote:media``,
  ``hashtag``, ``hashtag:local``, ``list``, ``direct``); several per socket.
* Server messages are text frames ``{"stream":["hashtag","redis"],
  "event":"update","payload":"<Status JSON as a string>"}`` (``notification``:
  a Notification, user and user:notification streams only; ``delete``: the
  bare id as the payload). A bad request (unknown stream, missing tag or list,
  someone else's list, bad JSON) is answered with ``{"error":...,"status":N}``
  and the socket stays open. Binary frames close with 1003.
* Pings: uvicorn's WebSocket keep-alive pings (``ws_ping_interval``) and drops
  sockets that stop answering them.

Each subscription is a hub :class:`Subscriber` whose filter is built by the SSE
endpoint of the same stream (:class:`mastodon.SSEEndpoint`), so the same
filters decide who gets an update or a delete, and the hub renders each event
once (the ``mastodon`` format). All subscriptions of one socket feed ONE
bounded queue (a :class:`Subscriber` the hub does not index): a client that
does not read is cut off (close 1013) when that queue is full, exactly as a
stalled SSE or v1.1 client is, and nobody else notices.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import parse_qsl

from ..conversations.conversation import normalize_tag
from ..gateway.auth import Principal, bearer_token
from ..gateway.errors import WebError
from .filters import Filter
from .frames import CLOSE_UNSUPPORTED, MAX_MESSAGE, close_code, frame
from .handoff import HANDOFF, LeanSocket
from .hub import MASTODON_FMT, PendingSend, Subscriber, fmt_for
from .mastodon import STREAMS as MASTODON_STREAMS

#: the streams a socket subscribes to, each built by its SSE endpoint
STREAMS = frozenset(MASTODON_STREAMS)
#: subscriptions one socket may hold at once
MAX_SUBSCRIPTIONS = 100


class Channel(Subscriber):
    """One subscription of a socket: matched by the hub with its own filter,
    queued into the socket's shared bounded queue with its stream label."""

    __slots__ = ("conn", "label", "key")

    def __init__(self, conn: Connection, filt: Filter, label: list, key: tuple) -> None:
        super().__init__(filt, fmt_for(filt), conn.queue.maxsize, name=label[0], base=conn.base)
        self.conn = conn
        #: the stream label as JSON, encoded once (frames.frame puts it in every message)
        self.label = json.dumps(label, separators=(",", ":"), ensure_ascii=False)
        self.key = key

    def offer(self, item: tuple) -> None:
        name, entry_id, data = item
        self.conn.queue.offer((name, entry_id, (self.label, data)))

    def finish(self, code: int, reason: str) -> None:
        """The hub is stopping (or the list is gone): shutdown ends the socket,
        anything else ends this subscription only."""
        if reason.startswith("Shutdown"):
            self.conn.queue.finish(code, reason)
        self.conn.drop(self)


class Connection:
    """One accepted socket: its subscriptions and its outgoing queue."""

    __slots__ = ("service", "principal", "base", "queue", "channels", "endpoints")

    def __init__(self, service, principal: Principal, base: str) -> None:
        self.service = service
        self.principal = principal
        #: link base of this socket's events (redpoll.gateway.links)
        self.base = base
        self.queue = Subscriber(
            Filter(), MASTODON_FMT, service.settings.stream_queue_max, name="websocket"
        )
        self.queue.hub = service.hub  # for the stall counter; never indexed
        self.channels: dict[tuple, Channel] = {}
        self.endpoints = service.endpoints()  # shared by every socket

    def error(self, message: str, status: int = 400, stream: list | None = None) -> None:
        body = {"error": message, "status": status}
        if stream is not None:
            body["stream"] = stream
        self.queue.offer(("error", None, body))

    @staticmethod
    def key_label(stream: str, params: dict) -> tuple[tuple, list]:
        if stream.startswith("hashtag"):
            tag = str(params.get("tag") or "")
            return (stream, normalize_tag(tag)), [stream, tag]
        if stream == "list":
            lid = str(params.get("list") or "")
            return (stream, lid), [stream, lid]
        return (stream,), [stream]

    async def subscribe(self, stream, params: dict) -> None:
        if not isinstance(stream, str) or stream not in STREAMS:
            self.error("Unknown stream type")
            return
        params = {k: str(v) for k, v in params.items() if k in ("tag", "list") and v is not None}
        key, label = self.key_label(stream, params)
        if key in self.channels:
            return  # already subscribed: as Mastodon, nothing to do
        if len(self.channels) >= MAX_SUBSCRIPTIONS:
            self.error(f"Too many subscriptions (at most {MAX_SUBSCRIPTIONS})", 400, label)
            return
        endpoint = self.endpoints[stream]
        try:
            filt = await endpoint.build_filter(self.principal, params)
        except WebError as exc:
            self.error(exc.message, exc.status, label)
            return
        if key in self.channels or self.queue.closing:  # raced with itself or a close
            return
        chan = Channel(self, filt, label, key)
        self.channels[key] = chan
        self.service.hub.subscribe(chan)
        if endpoint.channel in ("user", "list"):
            # follows and list members change while the socket is open
            self.service.watch_members(chan, endpoint, self.principal, params)

    def unsubscribe(self, stream, params: dict) -> None:
        if not isinstance(stream, str) or stream not in STREAMS:
            self.error("Unknown stream type")
            return
        key, _ = self.key_label(stream, {k: v for k, v in params.items() if v is not None})
        chan = self.channels.get(key)
        if chan is not None:
            self.drop(chan)

    def drop(self, chan: Channel) -> None:
        if self.channels.get(chan.key) is chan:
            del self.channels[chan.key]
        self.service.hub.unsubscribe(chan)
        self.service.unwatch_members(chan)

    def close(self) -> None:
        for chan in list(self.channels.values()):
            self.drop(chan)
        self.queue.closing = True
        self.queue.items.clear()
        self.queue.wakeup()

    async def handle(self, text: str) -> None:
        try:
            msg = json.loads(text)
        except ValueError:
            self.error("Invalid JSON")
            return
        if not isinstance(msg, dict):
            self.error("Invalid message")
            return
        kind = msg.get("type")
        params = {k: msg.get(k) for k in ("tag", "list")}
        if kind == "subscribe":
            await self.subscribe(msg.get("stream"), params)
        elif kind == "unsubscribe":
            self.unsubscribe(msg.get("stream"), params)
        else:
            self.error("Unknown message type")


class WebSocketEndpoint:
    """The ASGI app of ``/api/v1/streaming`` for WebSocket scopes."""

    def __init__(self, service):
        self.service = service

    async def deny(self, scope, send, status: int, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        if "websocket.http.response" in scope.get("extensions", {}):
            await send(
                {
                    "type": "websocket.http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "websocket.http.response.body", "body": body})
        else:  # the server cannot answer with HTTP: refuse the upgrade (403)
            await send({"type": "websocket.close", "code": 1008})

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "websocket":
            return
        params = dict(
            parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        )
        for k, v in list(params.items()):
            try:
                params[k] = v.encode("latin-1").decode("utf-8")
            except (UnicodeEncodeError, UnicodeDecodeError):
                pass
        msg = await receive()
        if msg["type"] != "websocket.connect":
            return
        token, subprotocol = bearer_token(scope, params, subprotocol=True)
        if not token:
            await self.deny(scope, send, 401, "Error: Missing access token")
            return
        principal = await self.service.verify(token) if self.service.verify is not None else None
        if principal is None:
            await self.deny(scope, send, 401, "Error: Invalid access token")
            return
        try:
            place = self.service.open_stream(principal.counted_as, scope)
        except WebError as exc:
            await self.deny(scope, send, exc.status, exc.message)
            return
        handed = False  # True: the connection holds the place and releases it
        try:
            handed = await self._serve(scope, receive, send, params, principal, subprotocol, place)
        finally:
            if not handed:
                self.service.close_stream(place)

    async def _serve(
        self,
        scope,
        receive,
        send,
        params: dict,
        principal: Principal,
        subprotocol: str | None,
        place: tuple,
    ) -> bool:
        await send({"type": "websocket.accept", "subprotocol": subprotocol})
        conn = Connection(self.service, principal, self.service.base_for(scope))
        handoff = (scope.get("extensions") or {}).get(HANDOFF)
        if handoff is not None:
            # At once after the accept (no await between): the socket is the
            # connection's own from here (handoff.LeanSocket; a
            # socket's memory), which subscribes to ?stream= and reads the
            # client's messages; the token's revocation still closes it.
            lean = LeanSocket(conn, place)
            if handoff(lean):
                self.service.hub.hold(conn.queue, principal.sessions)
                lean.start(params if params.get("stream") else None)
                return True
        if params.get("stream"):
            await conn.subscribe(params["stream"], params)
        writer = asyncio.create_task(self._write(conn, send))
        conn.queue.task = writer
        hub = self.service.hub
        hub.hold(conn.queue, principal.sessions)  # the socket closes when its token is revoked
        try:
            await self._read(conn, receive, writer)
        finally:
            hub.release(conn.queue, principal.sessions)
            if not conn.queue.closing:  # the client left: nothing more to write
                conn.close()
            try:  # else the writer sends what is queued, then the close frame
                await writer
            except (asyncio.CancelledError, Exception):
                pass
            conn.close()
        return False

    async def _read(self, conn: Connection, receive, writer: asyncio.Task) -> None:
        """Client messages until it leaves or the writer is done (the queue closed)."""
        while not conn.queue.closing:
            recv = asyncio.ensure_future(receive())
            await asyncio.wait({recv, writer}, return_when=asyncio.FIRST_COMPLETED)
            if not recv.done():
                recv.cancel()
                return
            msg = recv.result()
            if msg["type"] == "websocket.disconnect":
                return
            if msg.get("bytes") is not None:
                conn.queue.finish(CLOSE_UNSUPPORTED, "Binary frames are not supported")
                return
            text = msg.get("text") or ""
            if len(text) > MAX_MESSAGE:
                conn.error("Message too large")
                continue
            await conn.handle(text)

    async def _write(self, conn: Connection, send) -> None:
        """Drain the socket's queue into text frames until it closes; a
        ``disconnect`` item (stall, shutdown, binary frame) closes the socket."""
        queue = conn.queue
        handed: list = []  # at most one: a direct send that waits, or its error

        def direct() -> None:
            """Called by the hub while this writer waits: send what was queued
            now, with no task switch (as http.pump); a close, or a send that
            must wait for the client, goes back to this task with the rest."""
            if queue.closing:  # the task writes the rest and the close frame
                queue.direct = None
                queue.wake_writer()
                return
            items = queue.take()
            try:
                for k, item in enumerate(items):
                    if item[0] == "disconnect":
                        queue.items[:0] = items[k:]
                        break
                    text = frame(item)
                    if text is None:
                        continue
                    coro = send({"type": "websocket.send", "text": text})
                    try:
                        fut = coro.send(None)
                    except StopIteration:
                        continue  # written
                    handed.append(PendingSend(coro, fut))
                    queue.items[:0] = items[k + 1 :]
                    break
                else:
                    return
            except BaseException as exc:  # the task raises it (the client went away)
                handed.append(exc)
            queue.direct = None
            queue.wake_writer()

        try:
            while True:
                if handed:
                    work = handed.pop()
                    if isinstance(work, BaseException):
                        raise work
                    await work
                    continue
                if not queue.items:
                    if queue.closing:
                        return
                    queue.direct = direct
                    try:
                        await queue.wait()
                    finally:
                        queue.direct = None
                    continue
                for item in queue.take():
                    if queue.stalled and item[0] != "disconnect":
                        break  # cut off: what was queued is dropped, the close is queued
                    if item[0] == "disconnect":
                        info = item[2]["disconnect"]
                        code = close_code(info["code"])
                        conn.close()
                        await send(
                            {
                                "type": "websocket.close",
                                "code": code,
                                "reason": info["reason"][:120],
                            }
                        )
                        return
                    text = frame(item)
                    if text is not None:
                        await send({"type": "websocket.send", "text": text})
        except asyncio.CancelledError:
            if not queue.stalled:
                raise
        except Exception:  # the client went away mid-send
            conn.close()
