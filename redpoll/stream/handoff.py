"""A started HTTP stream handed from the ASGI request to the connection itself.

This module is the one place redpoll extends uvicorn's protocol classes
(their request cycle, flow control, keep-alive and connection set are not a
public API): uvicorn is pinned to the minor version they were read from
(pyproject.toml, :data:`TESTED_WITH`), and tests/storage/test_adapters.py
fails when an upgrade moves what is used here.

10,000 streams in one process, at most 12 KB each: an open v1.1
or SSE stream used to keep its whole ASGI request alive for as long as it
was open: uvicorn's request cycle, scope, parser and ``asyncio.Event``, the
request's task with the frames of the middleware chain and the endpoint,
and a second task watching for the client's disconnect (~12 KB of the ~20
KB a connection cost, and ~200 objects the cyclic GC walked on every full
collection: 0.7 s pauses at 10,000 clients). Everything that decides
*whether* and *what* to stream still runs as before, in the one web layer
(middleware, auth backend, filters, error answers, response headers); once
the response has started, the endpoint hands the connection over and
returns:

* :class:`StreamHttpProtocol` is uvicorn's httptools protocol (``redpoll
  serve`` passes it as ``http=``) with one ASGI extension,
  ``redpoll.handoff``: a callable that gives the connection's transport to a
  :class:`LeanStream` (``transport.set_protocol``) and tells uvicorn the
  response is no longer its own. A server without it (any other ASGI
  server) keeps the request open and writes through ``http.pump``.
* :class:`LeanStream` is the connection from then on: the hub's
  :class:`~redpoll.stream.hub.Subscriber` writes through it synchronously
  (chunked framing, one ``transport.write`` per wake-up), the transport's
  flow control pauses it (what is queued meanwhile counts toward the
  subscriber's bound, so a client that does not read is cut off as before),
  the client going away releases the subscription and everything the
  endpoint held, and a server shutdown ends the stream with its disconnect
  message instead of cutting it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from ..core import limits
from ..core.settings import Settings
from .frames import (
    CLOSE_BAD_DATA,
    CLOSE_INTERNAL,
    CLOSE_PROTOCOL_ERROR,
    CLOSE_TOO_BIG,
    CLOSE_UNSUPPORTED,
    MAX_MESSAGE,
    OP_BINARY,
    OP_CLOSE,
    OP_CONT,
    OP_PING,
    OP_PONG,
    OP_TEXT,
    close_code,
    close_frame,
    frame_size,
    wire,
    ws_frame,
)

try:  # the websockets library's C helper (uvicorn's WebSocket dependency)
    from websockets.speedups import apply_mask as _unmask
except ImportError:  # pragma: no cover - pure Python build of websockets
    from websockets.utils import apply_mask as _unmask

log = logging.getLogger("redpoll.stream")

#: The uvicorn minor version this module was written against (pyproject.toml
#: pins the same).
TESTED_WITH = "0.54"


def version_ok(version: str = uvicorn.__version__) -> bool:
    """Whether the installed uvicorn is the minor version read here."""
    return version.split(".")[:2] == TESTED_WITH.split(".")


#: the ASGI scope extension a server offers the hand-off under
HANDOFF = "redpoll.handoff"


class StreamHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, able to hand a started response over,
    and with a time limit on request headers: a connection whose request
    line and headers have not all arrived ``header_timeout_s`` after it was
    opened (or after its previous response) is closed, so clients that send
    nothing, or their headers a byte at a time, do not hold connections for
    ever (uvicorn's keep-alive timeout stops at the first byte)."""

    #: REDPOLL_HEADER_TIMEOUT_S, read once per process (header_timeout())
    header_timeout_s: float | None = None

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm_header_timer()

    def _arm_header_timer(self, idle_s: float = 0.0) -> None:
        """The next request's headers must be in within the header timeout
        (after ``idle_s`` more: a kept-alive connection between requests)."""
        if self.header_timeout_s is None:
            type(self).header_timeout_s = header_timeout()
        self._headers_in = False
        self._header_timer = self.loop.call_later(
            self.header_timeout_s + idle_s, self._headers_late
        )

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self._headers_in and not self.transport.is_closing():
            self.transport.close()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.scope["extensions"] = {HANDOFF: self.handoff}

    def on_headers_complete(self) -> None:
        self._headers_in = True
        self._disarm_header_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if (
            not self.transport.is_closing()
            and not self.pipeline
            and self.cycle is not None
            and self.cycle.response_complete
        ):
            self._disarm_header_timer()
            # for the next request on this connection: uvicorn closes it once
            # idle for limits.HTTP_KEEP_ALIVE_S, then its headers have the timeout
            self._arm_header_timer(limits.HTTP_KEEP_ALIVE_S)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def handoff(self, lean: LeanStream) -> None:
        """Give this connection to ``lean``: uvicorn forgets the response
        (the app may return without ending it), ``lean`` becomes the
        transport's protocol and the server's connection for shutdown."""
        self._disarm_header_timer()
        cycle = self.cycle
        cycle.response_complete = True  # run_asgi: the app may return; receive(): nothing more
        self.connections.discard(self)
        self._unset_keepalive_if_required()
        self.flow.resume_reading()  # read on: the client's EOF is how it says it left
        transport = self.transport
        lean.attach(transport, self.connections, self.flow.write_paused)
        transport.set_protocol(lean)


def header_timeout() -> float:
    """Seconds a connection may take to send its request headers."""
    return float(Settings.from_env().header_timeout_s)


class _Lean(asyncio.Protocol):
    """What both handed-off kinds share: their place in uvicorn's connection
    set (for shutdown), the transport, and its flow control (a paused
    transport queues in the subscriber, which cuts a client that stays
    behind)."""

    __slots__ = ("transport", "connections", "paused", "__weakref__")

    def _attach(self, transport, connections: set, paused: bool) -> None:
        self.transport = transport
        self.connections = connections
        self.paused = paused
        connections.add(self)

    def flush(self) -> None:
        raise NotImplementedError

    def eof_received(self) -> None:
        return None  # the client is gone: close

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self.flush()


class LeanStream(_Lean):
    """One handed-off v1.1 / SSE stream: writes what its subscriber queued as
    HTTP chunks, straight from the hub's call (``Subscriber.direct``)."""

    __slots__ = ("sub", "frame", "service", "place", "sessions")

    def __init__(
        self, sub, frame: Callable[[tuple], bytes | None], service, place: tuple, sessions: tuple
    ) -> None:
        self.sub = sub
        self.frame = frame
        #: what the endpoint held, released when the connection ends
        self.service = service
        self.place = place
        self.sessions = sessions
        self.transport: asyncio.Transport | None = None
        self.connections: set | None = None
        self.paused = False

    def attach(self, transport, connections: set, paused: bool) -> None:
        self._attach(transport, connections, paused)
        sub = self.sub
        sub.task = self  # a stall that cannot be written is cut by cancel()
        sub.direct = self.flush

    def write(self, data: bytes) -> None:
        """``data`` as one chunk."""
        self.transport.write(b"%x\r\n%s\r\n" % (len(data), data))

    def flush(self) -> None:
        """Write everything queued (one chunk, one system call); when the
        subscriber is closing, end the response after it and close."""
        transport = self.transport
        if transport is None or self.paused:
            return  # queued items wait for resume_writing (and count toward the bound)
        sub = self.sub
        items = sub.take()
        if items:
            frame = self.frame
            data = b"".join([x for x in map(frame, items) if x])
            if data:
                self.write(data)
        if sub.closing:
            transport.write(b"0\r\n\r\n")
            transport.close()  # after what is buffered; connection_lost releases

    def cancel(self) -> None:
        """A stalled client that could not take even its disconnect message."""
        if self.transport is not None:
            self.transport.abort()

    # --- asyncio.Protocol ----------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        pass  # a stream's request is complete; nothing more is read from its client

    def connection_lost(self, exc: Exception | None) -> None:
        sub = self.sub
        self.connections.discard(self)
        self.transport = None
        sub.direct = None  # and no cycle left between the two
        sub.task = None
        sub.items.clear()
        sub.closing = True
        self.service.stream_closed(sub, self.place, self.sessions)

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown: end with the disconnect message."""
        self.sub.finish(1, "Shutdown: the server is going down")


# --- WebSocket -----------------------------------------------------------------------------
class _Released:
    """What uvicorn's WebSocket protocol holds as its transport once the
    socket is handed off: the app returning must not close the real one."""

    __slots__ = ()

    def write(self, data) -> None:
        pass

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass

    def is_closing(self) -> bool:
        return True


class StreamWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O WebSocket protocol (the ``websockets`` library's
    handshake and framing), able to hand an accepted socket over."""

    def handle_connect(self, event) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][HANDOFF] = self.handoff

    def handoff(self, lean: LeanSocket) -> bool:
        """Give the accepted socket to ``lean``; False (nothing changes) when
        an extension was negotiated (per-message compression: ``redpoll
        serve`` offers none) or the socket is not open."""
        if (
            not self.handshake_complete
            or self.close_sent
            or self.transport.is_closing()
            or self.conn.extensions
        ):
            return False
        self.stop_keepalive()
        self.connections.discard(self)
        transport = self.transport
        self.transport = _Released()
        # Messages the client sent before the hand-off (parsed already; the
        # endpoint hands off right after its accept, so normally none).
        early = []
        while not self.queue.empty():
            msg = self.queue.get_nowait()
            if msg.get("type") == "websocket.receive":
                early.append(msg)
        lean.attach(transport, self.connections, not self.writable.is_set())
        transport.set_protocol(lean)
        for msg in early:
            if msg.get("bytes") is not None:
                lean.binary()
            else:
                lean.message(msg.get("text") or "")
        return True


class LeanSocket(_Lean):
    """One handed-off Mastodon WebSocket (``websocket.Connection``): reads the
    client's frames (subscribe / unsubscribe messages, pings, close) and
    writes the hub's events as text frames straight from the hub's call."""

    __slots__ = ("conn", "place", "buf", "frags", "inbox", "pinged", "closing_sent", "timer")

    def __init__(self, conn, place: tuple) -> None:
        self.conn = conn
        self.place = place
        self.transport: asyncio.Transport | None = None
        self.connections: set | None = None
        self.paused = False
        self.buf = b""  # a frame received in part
        self.frags: list | None = None  # a message received in part
        self.inbox: list | None = None  # client messages waiting for the one in hand
        self.pinged = False  # a ping is out and its pong not back
        self.closing_sent = False
        self.timer = None

    def attach(self, transport, connections: set, paused: bool) -> None:
        self._attach(transport, connections, paused)
        queue = self.conn.queue
        queue.task = self  # a stall that cannot be written is cut by cancel()
        queue.direct = self.flush
        self.conn.service.sockets.add(self)

    def start(self, params: dict | None) -> None:
        """Subscribe to ``?stream=`` (if any), then handle client messages in turn."""
        if params:
            self.handle(("subscribe", params))
        self.flush()  # anything queued before the hand-off (a revocation's close)

    # --- writing ---------------------------------------------------------------------------
    def flush(self) -> None:
        transport = self.transport
        if transport is None or self.paused or self.closing_sent:
            return
        queue = self.conn.queue
        out = []
        for item in queue.take():
            if item[0] == "disconnect":
                info = item[2]["disconnect"]
                out.append(close_frame(close_code(info["code"]), info["reason"][:120]))
                self.close_sent()
                break
            data = wire(item)
            if data is not None:
                out.append(data)
        if out:
            transport.write(b"".join(out))

    def close_sent(self) -> None:
        """A close frame is (being) written: stop, wait for the client's."""
        self.closing_sent = True
        self.conn.close()
        self.timer = asyncio.get_running_loop().call_later(limits.WS_CLOSE_TIMEOUT_S, self.cancel)

    def fail(self, code: int, reason: str) -> None:
        """Close at once for a protocol error of the client's."""
        if self.transport is not None and not self.closing_sent:
            self.transport.write(close_frame(code, reason))
            self.close_sent()

    def cancel(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def ping(self) -> None:
        """The service's ping ticker (``Settings.ws_ping_s``): no pong
        since the last ping drops the socket, as uvicorn's keep-alive does."""
        if self.transport is None or self.closing_sent:
            return
        if self.pinged:  # close 1011, and the connection once it is written (or the timer)
            self.fail(CLOSE_INTERNAL, "keepalive ping timeout")
            self.transport.close()
            return
        self.pinged = True
        self.transport.write(ws_frame(OP_PING, b"redpoll"))

    # --- reading ---------------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        buf = self.buf + data if self.buf else data
        pos, end = 0, len(buf)
        while end - pos >= 2 and self.transport is not None:
            b0, b1 = buf[pos], buf[pos + 1]
            sized = frame_size(buf, pos, end)
            if sized is None:
                break
            size, head = sized
            if b0 & 0x70 or not b1 & 0x80:  # reserved bits (no extension) or unmasked
                self.fail(CLOSE_PROTOCOL_ERROR, "protocol error")
                return
            if size > limits.WS_INBOUND_MAX_BYTES:
                self.fail(CLOSE_TOO_BIG, "message too big")
                return
            if end - pos < head + 4 + size:
                break
            key = buf[pos + head : pos + head + 4]
            start = pos + head + 4
            payload = _unmask(buf[start : start + size], key)
            pos = start + size
            self.frame_in(bool(b0 & 0x80), b0 & 0x0F, payload)
        self.buf = buf[pos:] if pos < end else b""

    def frame_in(self, fin: bool, op: int, payload: bytes) -> None:
        if op >= OP_CLOSE:  # control frames: whole, short, between fragments too
            if not fin or len(payload) > 125:
                self.fail(CLOSE_PROTOCOL_ERROR, "bad control frame")
            elif op == OP_PING:
                if not self.closing_sent:
                    self.transport.write(ws_frame(OP_PONG, payload))
            elif op == OP_PONG:
                self.pinged = False
            elif op == OP_CLOSE:
                if not self.closing_sent:  # echo its code, as the close handshake asks
                    self.transport.write(ws_frame(OP_CLOSE, payload[:2]))
                    self.closing_sent = True
                    self.conn.close()
                self.transport.close()
            else:
                self.fail(CLOSE_PROTOCOL_ERROR, "unknown opcode")
            return
        if op == OP_CONT:
            if self.frags is None:
                self.fail(CLOSE_PROTOCOL_ERROR, "continuation without a message")
                return
            self.frags.append(payload)
            if sum(map(len, self.frags)) - 1 > limits.WS_INBOUND_MAX_BYTES:
                self.fail(CLOSE_TOO_BIG, "message too big")
                return
            if fin:
                frags, self.frags = self.frags, None
                self.complete(frags[0][0], b"".join(frags[1:]))
            return
        if op not in (OP_TEXT, OP_BINARY) or self.frags is not None:
            self.fail(CLOSE_PROTOCOL_ERROR, "unexpected frame")
            return
        if fin:
            self.complete(op, payload)
        else:
            self.frags = [bytes((op,)), payload]

    def complete(self, op: int, payload: bytes) -> None:
        if op == OP_BINARY:
            self.binary()
            return
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            self.fail(CLOSE_BAD_DATA, "invalid UTF-8")
            return
        self.message(text)

    def binary(self) -> None:
        self.conn.queue.finish(CLOSE_UNSUPPORTED, "Binary frames are not supported")

    def message(self, text: str) -> None:
        if self.closing_sent or self.conn.queue.closing:
            return
        if len(text) > MAX_MESSAGE:
            self.conn.error("Message too large")
            return
        self.handle(text)

    def handle(self, work) -> None:
        """Client messages are handled one at a time, in order (a subscribe
        asks the engine for its filter); one task while any wait."""
        if self.inbox is not None:
            self.inbox.append(work)
            return
        self.inbox = [work]
        asyncio.get_running_loop().create_task(self._handle_inbox())

    async def _handle_inbox(self) -> None:
        conn = self.conn
        try:
            while self.inbox:
                work = self.inbox.pop(0)
                if self.transport is None or conn.queue.closing:
                    break
                try:
                    if isinstance(work, tuple):  # the ?stream= of the connect request
                        params = work[1]
                        await conn.subscribe(params["stream"], params)
                    else:
                        await conn.handle(work)
                except Exception:  # e.g. Redis away: this message fails, the socket lives
                    log.exception("WebSocket message failed")
                    conn.error("Internal error", 500)
        finally:
            self.inbox = None

    # --- asyncio.Protocol ------------------------------------------------------------------
    def connection_lost(self, exc: Exception | None) -> None:
        conn = self.conn
        self.connections.discard(self)
        self.transport = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        queue = conn.queue
        queue.direct = None
        queue.task = None
        conn.close()
        service = conn.service
        service.sockets.discard(self)
        if service.hub is not None:
            service.hub.release(queue, conn.principal.sessions)
        service.close_stream(self.place)

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown: close 1012, as the hub's stop would."""
        self.conn.queue.finish(1, "Shutdown: the server is going down")
