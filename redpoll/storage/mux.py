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
(scripts, HGETALL...): on a single server one connection, on a cluster one
per master, each command sent to the master of its key's slot
(:class:`ClusterMultiplexed`). Blocking reads, pub/sub, transactions,
pipelines and keyless or cross-slot commands stay on redis-py (its pool, or
its cluster client), whose connections give each of those a socket to
itself.

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
from binascii import crc_hqx
from collections import deque
from typing import Any

import hiredis
from redis.asyncio.connection import parse_url
from redis.crc import REDIS_CLUSTER_HASH_SLOTS
from redis.exceptions import (
    AskError,
    AuthenticationError,
    BusyLoadingError,
    ClusterDownError,
    ConnectionError,
    DataError,
    MovedError,
    NoScriptError,
    ResponseError,
    TimeoutError,
    TryAgainError,
)

from ..core import limits


def error_from_reply(error: ResponseError) -> Exception:
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
        self.future, self.size = future, size
        self.replies: list[Any] = []


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
        self._fail_all(
            ConnectionError(
                f"connection to the server lost ({exc or 'closed'}); the outcome of the "
                f"calls in flight is unknown"
            )
        )

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
        self._fail_all(
            TimeoutError(
                f"no reply from the server within {self.call_timeout_s:g} s; the connection is "
                f"dropped and the outcome of the calls in flight is unknown"
            )
        )
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
        if not self.closed and self.transport is not None:
            self.transport.write(b"".join(outgoing) if len(outgoing) > 1 else outgoing[0])


class Multiplexed:
    """A lazily connected multiplexed connection for ``redis://`` or
    ``unix://`` URLs (``rediss://`` is not supported: :meth:`supports`)."""

    def __init__(
        self,
        url: str,
        max_in_flight: int = limits.MUX_MAX_IN_FLIGHT,
        call_timeout_s: float = limits.MUX_CALL_TIMEOUT_S,
        host: str | None = None,
        port: int | None = None,
    ):
        # (``host``/``port``: a cluster's master, with the URL's credentials)
        options = parse_url(url)
        self.max_in_flight = max_in_flight
        self.call_timeout_s = call_timeout_s
        self._path = options.get("path")
        self._host = host or options.get("host", "localhost")
        self._port = int(port or options.get("port", 6379))
        #: where it connects (a cluster's map tells its masters apart by it)
        self.address = (self._host, self._port)
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
            self._protocol = opened = await asyncio.shield(connecting)
        finally:
            if self._connecting is connecting and connecting.done():
                self._connecting = None
        return opened

    async def _open(self, loop: asyncio.AbstractEventLoop) -> _Protocol:
        try:

            def make() -> _Protocol:
                return _Protocol(self.call_timeout_s)

            if self._path:
                opening = loop.create_unix_connection(make, self._path)
            else:
                opening = loop.create_connection(make, self._host, self._port)
            _, protocol = await asyncio.wait_for(opening, limits.REDIS_CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise ConnectionError(f"cannot connect to the server: {exc}") from None
        if self._password is not None:
            auth = (
                ("AUTH", self._username, self._password)
                if self._username
                else ("AUTH", self._password)
            )
            reply = await protocol.send([auth])
            if isinstance(reply, ResponseError):
                if protocol.transport is not None:
                    protocol.transport.close()
                raise AuthenticationError(str(reply))
        if self._db:
            reply = await protocol.send([("SELECT", self._db)])
            if isinstance(reply, ResponseError):
                if protocol.transport is not None:
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

    async def load_script(self, source: str | bytes | memoryview, keys: Any = ()) -> None:
        """SCRIPT LOAD on the server (``keys``: those of the script's call,
        which on a cluster say which master must have it)."""
        await self.call("SCRIPT", "LOAD", source)


class Unroutable(Exception):
    """A command a cluster's multiplexed connections do not carry: no key,
    keys in several slots, or keys found only by asking the server (the
    caller sends it through redis-py's cluster client instead)."""


#: Marks the commands whose keys follow their ``numkeys`` argument.
_NUMKEYS = (-1, 0, 0)
#: The commands of one key, right after their name (HGETALL, GET, ZADD...).
_ONE_KEY = (1, 1, 1)
#: Error replies that say a command did not run (redirected, or turned away
#: for now): the prefix and what it means here.
_REDIRECTED = ("MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN")


def _slot(key: bytes) -> int:
    """redis.crc.key_slot with its hash-tag rule, inlined: it runs for every
    command a cluster batch sends."""
    start = key.find(b"{")
    if start > -1:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1 : end]
    return crc_hqx(key, 0) & 16383


def _key_bytes(key: Any) -> bytes:
    """A key as the wire carries it (the way redis-py encodes arguments)."""
    if type(key) is str:
        return key.encode()
    if isinstance(key, bytes):
        return key
    if isinstance(key, (int, float)) and not isinstance(key, bool):
        return repr(key).encode()
    if isinstance(key, (memoryview, bytearray)):
        return bytes(key)
    raise Unroutable(f"cannot route a key of type {type(key).__name__}")


def _cluster_error(error: ResponseError) -> Exception:
    """The redis-py exception for a cluster error reply left after the
    retries (the ones its cluster client raises for the same replies)."""
    message = str(error)
    if message.startswith("CLUSTERDOWN"):
        return ClusterDownError(message)
    if message.startswith("TRYAGAIN"):
        return TryAgainError(message)
    if message.startswith(("MOVED ", "ASK ")):
        kind, slot, address = message.split(" ", 2)
        redirect = (MovedError if kind == "MOVED" else AskError)(f"{slot} {address}")
        return redirect
    return error_from_reply(error)


class ClusterMultiplexed:
    """A Redis Cluster through one :class:`Multiplexed` connection per
    master: each command goes to the master of its key's hash slot, as the
    cluster's slot map says (read with CLUSTER SLOTS through redis-py's
    cluster client, whose view of the nodes it then shares). The same calls
    as :class:`Multiplexed` (``call``, ``call_many``); a batch is split by
    master, sent to all of them at once, and its replies put back in order
    (order among commands holds per master only).

    Failure:

    * MOVED (the slot has a new master): that slot's entry is updated from
      the reply and the command is sent there; ASK (the slot is moving and
      the key is already at the other end): sent there after ASKING, on the
      same connection; TRYAGAIN, CLUSTERDOWN: the map is read again, and the
      command sent again after ``limits.CLUSTER_RETRY_WAIT_S`` (times the
      attempt). Each of
      these replies means the command did not run, so sending it again runs
      it once (scripts included); at most ``limits.CLUSTER_REDIRECTS``
      times, then the caller gets redis-py's exception for it (MovedError,
      AskError, TryAgainError, ClusterDownError).
    * A master's connection lost, or no reply in time: the calls in flight
      on it fail with redis's ConnectionError / TimeoutError, as on a single
      server (outcome unknown: never sent again here), and the slot map is
      read again before the next call (at most every
      ``limits.CLUSTER_REFRESH_MIN_S``): a master that came back on its
      address is reconnected to, one that another took over is replaced.
    """

    def __init__(
        self,
        client: Any,
        url: str,
        max_in_flight: int = limits.MUX_MAX_IN_FLIGHT,
        call_timeout_s: float = limits.MUX_CALL_TIMEOUT_S,
    ):
        self.client = client  # redis.asyncio.RedisCluster
        self.url = url
        self.max_in_flight = max_in_flight
        self.call_timeout_s = call_timeout_s
        #: slot -> its master's connection (None: not read yet)
        self.slots: list[Multiplexed | None] | None = None
        #: (host, port) -> connection, one per master
        self.masters: dict[tuple[str, int], Multiplexed] = {}
        #: command name -> (first key, last key, step) as COMMAND gives
        #: them, or _NUMKEYS; commands absent here are Unroutable
        self.key_positions: dict[str, tuple[int, int, int]] = {}
        #: slots of keys met lately (a page reads the same statuses and
        #: users again and again): a dict look-up instead of a CRC
        self.key_slots: dict[Any, int] = {}
        self.stale = False
        self._refreshed_at = -1e9
        self._refreshing: asyncio.Future | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- the slot map -----------------------------------------------------

    def master(self, host: str, port: int) -> Multiplexed:
        conn = self.masters.get((host, port))
        if conn is None:
            conn = self.masters[host, port] = Multiplexed(
                self.url, self.max_in_flight, self.call_timeout_s, host=host, port=port
            )
        return conn

    async def refresh(self, force: bool = False) -> None:
        """Read the slot map (and, the first time, where each command's keys
        are) from the cluster. Callers at the same time share one reading;
        ``force`` reads it even if read less than CLUSTER_REFRESH_MIN_S ago."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # (a new event loop: tests run one per test)
            self._loop, self._refreshing = loop, None
        if (
            not force
            and self.slots is not None
            and loop.time() - self._refreshed_at < limits.CLUSTER_REFRESH_MIN_S
        ):
            return
        if self._refreshing is None:
            self._refreshing = loop.create_task(self._read_map())
        refreshing = self._refreshing
        try:
            await asyncio.shield(refreshing)
        finally:
            if self._refreshing is refreshing and refreshing.done():
                self._refreshing = None

    async def _read_map(self) -> None:
        client = self.client
        self._refreshed_at = asyncio.get_running_loop().time()
        if self.slots is None:
            await client.initialize()  # CLUSTER SLOTS and COMMAND, once
            positions: dict[str, tuple[int, int, int]] = {}
            for name, spec in client.commands_parser.commands.items():
                if name in ("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"):
                    positions[name.upper()] = _NUMKEYS
                elif (
                    spec["first_key_pos"] > 0
                    and "movablekeys" not in spec["flags"]
                    and "pubsub" not in spec["flags"]
                ):
                    where = (spec["first_key_pos"], spec["last_key_pos"], spec["step_count"] or 1)
                    positions[name.upper()] = _ONE_KEY if where == _ONE_KEY else where
            self.key_positions = positions
        else:
            await client.nodes_manager.initialize()  # CLUSTER SLOTS again
        slots: list[Multiplexed | None] = [None] * REDIS_CLUSTER_HASH_SLOTS
        # (redis-py's own map: slot -> [primary, replicas...])
        for slot, nodes in client.nodes_manager.slots_cache.items():
            slots[slot] = self.master(nodes[0].host, nodes[0].port)
        current = set(slots)
        for address, conn in list(self.masters.items()):
            if conn not in current:  # no longer a master: its calls have nowhere to go
                del self.masters[address]
                await conn.close()
        self.slots = slots
        self.stale = False

    async def _ready(self) -> list[Multiplexed | None]:
        """The slot map read, and read again if a call found it out of date:
        if reading it fails while one is at hand, calls go on with that one
        (those to a master that is down fail on their own; the others are
        served), and it is tried again CLUSTER_REFRESH_MIN_S later."""
        if self.slots is None:
            await self.refresh()
        else:
            try:
                await self.refresh()
            except Exception:  # noqa: BLE001 - see above
                pass
        assert self.slots is not None  # (refresh sets it or raises)
        return self.slots

    def _slots(self) -> list[Multiplexed | None]:
        """The slot map, once :meth:`_ready` has read it."""
        assert self.slots is not None
        return self.slots

    def slot_of(self, command: tuple) -> int:
        """The hash slot of ``command``'s keys; Unroutable if it has none
        (known without asking the server) or they are in several."""
        name = command[0]
        spec = self.key_positions.get(name) or self.key_positions.get(name.upper())
        if spec is _ONE_KEY and len(command) > 1:  # most commands: this is all it takes
            key = command[1]
            slot = self.key_slots.get(key)
            if slot is None:
                slot = _slot(key.encode() if type(key) is str else _key_bytes(key))
                if len(self.key_slots) >= limits.CLUSTER_KEY_SLOTS_KEPT:
                    self.key_slots.clear()
                self.key_slots[key] = slot
            return slot
        if spec is None:
            raise Unroutable(f"{name}: no key to route by")
        first, last, step = spec
        if first < 0:  # EVALSHA sha numkeys key...
            count = int(command[2]) if len(command) > 2 else 0
            keys = command[3 : 3 + count]
        else:
            last = len(command) + last if last < 0 else last
            keys = command[first : last + 1 : step]
        if not keys:
            raise Unroutable(f"{name}: no key to route by")
        slot = _slot(_key_bytes(keys[0]))
        for key in keys[1:]:
            if _slot(_key_bytes(key)) != slot:
                raise Unroutable(f"{name}: keys in several slots")
        return slot

    # --- calls ------------------------------------------------------------

    async def call(self, *args: Any) -> Any:
        """Send one command to its key's master and return its reply; an
        error reply raises. Unroutable if it has no single slot."""
        slots = self.slots
        if slots is None or self.stale:
            slots = await self._ready()
        conn = slots[self.slot_of(args)]
        if conn is not None:
            try:
                return await conn.call(*args)
            except ResponseError as error:
                if not str(error).startswith(_REDIRECTED):
                    raise
            except (ConnectionError, TimeoutError):
                self.stale = True
                raise
        (reply,) = await self.call_many([args])
        if isinstance(reply, ResponseError):
            raise reply
        return reply

    async def load_script(self, source: str | bytes | memoryview, keys: Any = ()) -> None:
        """SCRIPT LOAD on the master of ``keys``' slot."""
        slots = self.slots
        if slots is None or self.stale:
            slots = await self._ready()
        conn = slots[self.slot_of(("EVALSHA", "", len(keys), *keys))]
        if conn is None:
            raise ClusterDownError("CLUSTERDOWN no master serves the script's slot")
        await conn.call("SCRIPT", "LOAD", source)

    async def call_many(self, commands: list[tuple]) -> list[Any]:
        """Send several commands, each to its key's master (one without a
        key to any master), all masters at once; every reply in order, an
        error reply as its exception object (not raised). Redirected
        commands are followed (see the class); a lost connection raises."""
        if not commands:
            return []
        if self.slots is None or self.stale:
            await self._ready()
        replies: list[Any] = [None] * len(commands)
        todo: Any = range(len(commands))
        asking: dict[int, Multiplexed] = {}  # index -> where an ASK sent it
        for attempt in range(limits.CLUSTER_REDIRECTS + 1):
            groups = self._groups(commands, todo, asking)
            unserved = groups.pop(None, ())  # slots no master serves (yet)
            for i in unserved:
                replies[i] = ResponseError("CLUSTERDOWN Hash slot not served")
            sent = await self._send(commands, groups, asking) if groups else {}
            for conn, indexes in groups.items():
                for i, reply in zip(indexes, sent[conn]):
                    replies[i] = reply
            last, wait, refresh = todo, False, False
            todo, asking = [], {}
            for i in last:
                reply = replies[i]
                if not (
                    isinstance(reply, ResponseError)
                    and (message := str(reply)).startswith(_REDIRECTED)
                ):
                    continue
                if attempt == limits.CLUSTER_REDIRECTS:
                    replies[i] = _cluster_error(reply)
                    continue
                todo.append(i)
                if message.startswith(("MOVED ", "ASK ")):
                    kind, slot, address = message.split(" ", 2)
                    host, _, port = address.rpartition(":")
                    conn = self.master(host or "127.0.0.1", int(port))
                    if kind == "MOVED":
                        self._slots()[int(slot)] = conn
                    else:
                        asking[i] = conn
                else:
                    wait = True
                    refresh = refresh or message.startswith("CLUSTERDOWN")
            if not todo:
                return replies
            if refresh:
                self.stale = True
                await self._ready()
            if wait:  # (longer each time: a restarted master takes a second to rejoin)
                await asyncio.sleep(limits.CLUSTER_RETRY_WAIT_S * (attempt + 1))
        return replies  # (not reached: the last attempt sends nothing again)

    def _groups(self, commands: list[tuple], todo, asking: dict) -> dict:
        slots, groups = self._slots(), {}  # type: list[Multiplexed | None], dict[Any, list[int]]
        for i in todo:
            conn = asking.get(i)
            if conn is None:
                try:
                    conn = slots[self.slot_of(commands[i])]
                except Unroutable:  # no key: any master answers it
                    conn = next(iter(self.masters.values()), None)
            group = groups.get(conn)
            if group is None:
                groups[conn] = [i]
            else:
                group.append(i)
        return groups

    async def _send(self, commands: list[tuple], groups: dict, asking: dict) -> dict:
        """Each group to its master, all at once: each master's replies."""
        wires = {}
        for conn, indexes in groups.items():
            if asking:
                wire = []
                for i in indexes:
                    if i in asking:  # ASKING holds for the next command on its connection
                        wire.append(("ASKING",))
                    wire.append(commands[i])
            else:
                wire = [commands[i] for i in indexes]
            wires[conn] = wire
        try:
            if len(wires) == 1:
                ((conn, wire),) = wires.items()
                results = {conn: await conn.call_many(wire)}
            else:
                done = await asyncio.gather(
                    *(conn.call_many(w) for conn, w in wires.items()), return_exceptions=True
                )
                for result in done:
                    if isinstance(result, BaseException):
                        raise result
                results = dict(zip(wires, done))
        except (ConnectionError, TimeoutError):
            self.stale = True
            raise
        if asking:  # drop the ASKINGs' replies
            for conn, indexes in groups.items():
                replies, kept = iter(results[conn]), []
                for i in indexes:
                    if i in asking:
                        next(replies)
                    kept.append(next(replies))
                results[conn] = kept
        return results

    async def close(self) -> None:
        for conn in list(self.masters.values()):
            await conn.close()
