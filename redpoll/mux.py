"""Many calls in flight on one connection to a single server, replies matched
to calls in the order they were sent (RESP keeps that order).

Why not redis-py for these calls: its asyncio client takes a connection from
a pool, writes, awaits the reply through a stream reader and gives the
connection back, and that costs 100-170 µs of CPU per call on this machine;
coredis (6.9) measured 150-180 µs and valkey-glide (2.6) 85 µs. Writing the
command and letting one protocol object hand each parsed reply to the next
waiting future costs ~12 µs (measurements in docs/decisions.md). A timeline
page makes 3-4 calls, so that difference is most of its cost.

The parsing is hiredis's (the same C parser redis-py uses); what lives here is
only the queue of waiting futures. It carries short non-blocking commands
(scripts, HGETALL...) on a single server: blocking reads, pub/sub,
transactions and the cluster client stay on redis-py, whose connections give
each of those a socket to itself.

Failure: a call whose connection is lost before the reply came raises
redis's ConnectionError, saying so (its outcome is unknown, as with any
client); the next call connects again. A call made while the connection is
down waits for one connect attempt and fails with ConnectionError if the
server is not there. Every call has a time limit (``call_timeout_s``): when
the oldest call in flight has waited that long for its reply, the server is
taken as hung, every call in flight fails with redis's TimeoutError
(outcome unknown) and the connection is dropped, so the next call connects
afresh. One deadline per call, checked by one timer per connection (replies
come in order, so only the oldest call's deadline needs watching), not a
timer per call: that would double what a call costs here.
"""
from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import hiredis
from redis.asyncio.connection import parse_url
from redis.exceptions import (AuthenticationError, BusyLoadingError, ConnectionError,
                              DataError, NoScriptError, ResponseError, TimeoutError)

from . import limits


def error_from_reply(error: ResponseError) -> ResponseError:
    """The redis-py exception for an error reply, as its own parser maps the
    ones redpoll's callers tell apart."""
    message = str(error)
    if message.startswith("NOSCRIPT"):
        return NoScriptError(message)
    if message.startswith("LOADING"):
        return BusyLoadingError(message)
    return error


class _Batch:
    """Several commands answered through one future: replies are collected
    here in order and handed over together (one wake-up, not one each)."""

    __slots__ = ("future", "size", "replies")

    def __init__(self, future: asyncio.Future, size: int):
        self.future, self.size, self.replies = future, size, []


class _Protocol(asyncio.Protocol):
    def __init__(self, call_timeout_s: float = limits.MUX_CALL_TIMEOUT_S) -> None:
        self.reader = hiredis.Reader(replyError=ResponseError)
        # what awaits the next replies, in the order the commands were sent:
        # a future (one command) or a _Batch
        self.waiting: deque = deque()
        # the loop time by which each of them must have its reply (same order)
        self.deadlines: deque[float] = deque()
        self.call_timeout_s = call_timeout_s
        self.watchdog: asyncio.TimerHandle | None = None
        self.transport: asyncio.Transport | None = None
        self.closed = False
        # commands sent in one turn of the event loop leave in one write
        # (one syscall for all the requests that turn served)
        self.outgoing: list[bytes] = []

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        gets, waiting = self.reader.gets, self.waiting
        while (reply := gets()) is not False:
            head = waiting[0]
            if type(head) is _Batch:
                replies = head.replies
                replies.append(reply)
                while len(replies) < head.size:  # the rest of the batch, if here
                    if (reply := gets()) is False:
                        return
                    replies.append(reply)
                head, reply = head.future, replies
            waiting.popleft()
            self.deadlines.popleft()
            if not head.done():  # a cancelled caller still consumes its replies
                head.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail_all(ConnectionError(
            f"connection to the server lost ({exc or 'closed'}); the outcome of the "
            f"calls in flight is unknown"))

    def _fail_all(self, error: Exception) -> None:
        self.closed = True
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        while self.waiting:
            head = self.waiting.popleft()
            future = head.future if type(head) is _Batch else head
            if not future.done():
                future.set_exception(error)
        self.deadlines.clear()

    def _watch(self) -> None:
        """The timer: fail everything if the oldest call is overdue, else
        look again when it will be."""
        self.watchdog = None
        if not self.deadlines or self.closed:
            return
        loop = asyncio.get_running_loop()
        overdue = loop.time() - self.deadlines[0]
        if overdue < 0:
            self.watchdog = loop.call_later(-overdue + 0.01, self._watch)
            return
        self._fail_all(TimeoutError(
            f"no reply from the server within {self.call_timeout_s:g} s; the connection is "
            f"dropped and the outcome of the calls in flight is unknown"))
        if self.transport is not None:
            self.transport.abort()

    def send(self, commands: list[tuple], batch: bool = False) -> asyncio.Future:
        """Queue ``commands`` for the next write; the future gets the reply
        of the one command, or (``batch``) the list of all replies."""
        if self.closed:
            raise ConnectionError("connection to the server is closed")
        try:
            packed = [hiredis.pack_command(args) for args in commands]
        except TypeError as exc:
            raise DataError(f"cannot send a command: {exc}") from None
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.waiting.append(_Batch(future, len(commands)) if batch else future)
        self.deadlines.append(loop.time() + self.call_timeout_s)
        if self.watchdog is None:
            self.watchdog = loop.call_later(self.call_timeout_s + 0.01, self._watch)
        if not self.outgoing:
            loop.call_soon(self.flush)
        self.outgoing.extend(packed)
        return future

    def flush(self) -> None:
        outgoing, self.outgoing = self.outgoing, []
        if not self.closed:
            self.transport.write(b"".join(outgoing) if len(outgoing) > 1 else outgoing[0])


class Multiplexed:
    """A lazily connected multiplexed connection for ``redis://`` or
    ``unix://`` URLs (``rediss://`` is not supported: :meth:`supports`)."""

    def __init__(self, url: str, max_in_flight: int = limits.MUX_MAX_IN_FLIGHT,
                 call_timeout_s: float = limits.MUX_CALL_TIMEOUT_S):
        options = parse_url(url)
        self.max_in_flight = max_in_flight
        self.call_timeout_s = call_timeout_s
        self._path = options.get("path")
        self._host = options.get("host", "localhost")
        self._port = int(options.get("port", 6379))
        self._username = options.get("username")
        self._password = options.get("password")
        self._db = int(options.get("db") or 0)
        self._protocol: _Protocol | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connecting: asyncio.Future | None = None
        self._in_flight = 0
        self._slot_waiters: deque[asyncio.Future] = deque()

    @staticmethod
    def supports(url: str) -> bool:
        return url.startswith(("redis://", "unix://"))

    async def call(self, *args: Any) -> Any:
        """Send one command and return its reply; an error reply raises."""
        reply = await self._request([args], False)
        if isinstance(reply, ResponseError):
            raise error_from_reply(reply)
        return reply

    async def call_many(self, commands: list[tuple]) -> list[Any]:
        """Send several commands back to back and return every reply in
        order, an error reply as its exception object (not raised). At most
        ``max_in_flight`` commands; together they count as one call."""
        if not commands:
            return []
        if len(commands) > self.max_in_flight:
            raise DataError(f"at most {self.max_in_flight} commands in one batch")
        replies = await self._request(commands, True)
        return [error_from_reply(r) if isinstance(r, ResponseError) else r for r in replies]

    async def _request(self, commands: list[tuple], batch: bool) -> Any:
        protocol = self._protocol
        if protocol is None or protocol.closed or self._loop is not asyncio.get_running_loop():
            protocol = await self._connect()
        # a counter, not an asyncio.Semaphore: this runs for every call, and
        # only a full connection needs to wait
        if self._in_flight >= self.max_in_flight:
            await self._free_slot()
        self._in_flight += 1
        try:
            return await protocol.send(commands, batch)
        finally:
            self._in_flight -= 1
            if self._slot_waiters:
                self._wake_one()

    async def _free_slot(self) -> None:
        loop = asyncio.get_running_loop()
        while self._in_flight >= self.max_in_flight:
            waiter = loop.create_future()
            self._slot_waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()  # woken, then cancelled: pass the turn on
                raise
            finally:
                if waiter in self._slot_waiters:
                    self._slot_waiters.remove(waiter)

    def _wake_one(self) -> None:
        while self._slot_waiters:
            waiter = self._slot_waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def _connect(self) -> _Protocol:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # a new event loop (tests run one per test): the old transport
            # belongs to the old loop and cannot be used from this one
            self._loop, self._protocol, self._connecting = loop, None, None
            self._in_flight, self._slot_waiters = 0, deque()
        if self._connecting is None:
            self._connecting = loop.create_task(self._open(loop))
        connecting = self._connecting
        try:
            self._protocol = await asyncio.shield(connecting)
        finally:
            if self._connecting is connecting and connecting.done():
                self._connecting = None
        return self._protocol

    async def _open(self, loop: asyncio.AbstractEventLoop) -> _Protocol:
        try:
            def protocol() -> _Protocol:
                return _Protocol(self.call_timeout_s)

            if self._path:
                opening = loop.create_unix_connection(protocol, self._path)
            else:
                opening = loop.create_connection(protocol, self._host, self._port)
            _, protocol = await asyncio.wait_for(opening, limits.REDIS_CONNECT_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError) as exc:
            raise ConnectionError(f"cannot connect to the server: {exc}") from None
        if self._password is not None:
            auth = (("AUTH", self._username, self._password) if self._username
                    else ("AUTH", self._password))
            reply = await protocol.send([auth])
            if isinstance(reply, ResponseError):
                protocol.transport.close()
                raise AuthenticationError(str(reply))
        if self._db:
            reply = await protocol.send([("SELECT", self._db)])
            if isinstance(reply, ResponseError):
                protocol.transport.close()
                raise error_from_reply(reply)
        return protocol

    async def close(self) -> None:
        protocol, self._protocol = self._protocol, None
        if protocol is not None and not protocol.closed and protocol.transport is not None:
            try:
                protocol.transport.close()
            except RuntimeError:  # its event loop is already closed
                pass
