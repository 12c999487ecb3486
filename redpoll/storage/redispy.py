"""The one place redpoll leans on redis-py's internals (its private
modules and the shapes of its command layer): everything else uses its
public API. redis-py is pinned to the minor version these were read from
(pyproject.toml), and tests/storage/test_adapters.py fails when an upgrade
moves any of them, before anything else does.

What is used, and why:
- ``redis._parsers.helpers.get_response_callbacks``: redis-py's own reply
  shapes for RESP2, so a command sent over the multiplexed connection
  (redpoll.storage.mux) returns what redis-py's client would.
- ``redis.asyncio.client.EMPTY_RESPONSE`` / ``NEVER_DECODE``: the options
  its command methods pass to ``execute_command``.
- ``redis.client.CaseInsensitiveDict``: how it looks callbacks up.
- ``redis.commands.core.AsyncCoreCommands``: its command methods, which
  :class:`MuxCommands` reuses for their names, arguments and reply shapes.
- ``Connection.pack_command``: overridden to pack with hiredis in C.
"""

from __future__ import annotations

from typing import Any

import hiredis
import redis
import redis.asyncio as aredis
from redis._parsers.helpers import get_response_callbacks
from redis.asyncio.client import EMPTY_RESPONSE, NEVER_DECODE
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection, UnixDomainSocketConnection
from redis.client import CaseInsensitiveDict
from redis.commands.core import AsyncCoreCommands
from redis.exceptions import ConnectionError, ResponseError

from .mux import ClusterMultiplexed, Multiplexed, Unroutable

#: The redis-py minor version this module was written against (pyproject.toml
#: pins the same).
TESTED_WITH = "8.1"


def version_ok(version: str = redis.__version__) -> bool:
    """Whether the installed redis-py is the minor version read here."""
    return version.split(".")[:2] == TESTED_WITH.split(".")


class _HiredisPacking:
    """Encode commands with hiredis's C packer instead of redis-py's asyncio
    one, which is pure Python: a delivery step sends 1,000 keys in one
    command, and packing them took ~1 ms in Python against ~0.1 ms in C."""

    def pack_command(self, *args):
        # redis-py passes some commands with their subcommand in one string
        # ("SCRIPT LOAD"): split it the way its own packer does
        head = args[0]
        if isinstance(head, str):
            args = (*head.encode().split(), *args[1:])
        elif b" " in head:
            args = (*head.split(), *args[1:])
        try:
            return [hiredis.pack_command(args)]
        except TypeError:  # types only redis-py knows (memoryview...)
            return super().pack_command(*args)


class FastConnection(_HiredisPacking, Connection):
    pass


class FastUnixConnection(_HiredisPacking, UnixDomainSocketConnection):
    pass


#: Commands that hold their connection (blocking reads, transactions,
#: connection state, pub/sub): never on the multiplexed connection, where one
#: would stall every call queued behind it or change state others share.
OWN_CONNECTION = frozenset(
    {
        "BLPOP",
        "BRPOP",
        "BLMOVE",
        "BLMPOP",
        "BRPOPLPUSH",
        "BZPOPMIN",
        "BZPOPMAX",
        "BZMPOP",
        "XREAD",
        "XREADGROUP",
        "WAIT",
        "WAITAOF",
        "MULTI",
        "EXEC",
        "WATCH",
        "UNWATCH",
        "DISCARD",
        "SELECT",
        "CLIENT",
        "RESET",
        "QUIT",
        "AUTH",
        "HELLO",
        "MONITOR",
        "SUBSCRIBE",
        "PSUBSCRIBE",
        "SSUBSCRIBE",
        "UNSUBSCRIBE",
        "PUNSUBSCRIBE",
        "SUNSUBSCRIBE",
    }
)


class MuxCommands(AsyncCoreCommands):
    """redis-py's command methods (their names, arguments and reply shapes)
    sent over the multiplexed connection(s): ~12 µs of client CPU a call
    instead of a pooled connection's 100-170 (redpoll.storage.mux). Commands in
    OWN_CONNECTION go to redis-py's client (its pool on a single server;
    its cluster client, which gives them a connection of their own, on a
    cluster), and on a cluster so do those the slot map cannot route alone
    (no key, keys in several slots: the cluster client splits DEL and the
    like by slot, and sends keyless ones where its policies say). A reply is
    shaped by redis-py's own response callbacks for RESP2 (what the
    multiplexed connection speaks) in its default shapes, so a caller gets
    the same value either way."""

    #: redis-py's reply shapes, from the RESP2 wire (its annotation names str
    #: values; they are callables)
    _SHAPES: Any = get_response_callbacks(user_protocol=2, legacy_responses=True)
    CALLBACKS = CaseInsensitiveDict(_SHAPES)

    def __init__(self, mux: Multiplexed | ClusterMultiplexed, pooled: aredis.Redis | RedisCluster):
        self.mux, self.pooled = mux, pooled
        self.callbacks = self.CALLBACKS

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        name = args[0]
        if name in OWN_CONNECTION or NEVER_DECODE in options or "target_nodes" in options:
            try:
                return await self.pooled.execute_command(*args, **options)
            except AttributeError as exc:
                # redis-py's cluster client resets a node's connections when the
                # cluster goes away, including one another task is sending on
                # ('NoneType' object has no attribute 'writelines'): an outage
                raise ConnectionError(f"connection closed while in use ({exc})") from exc
        # redis-py passes some commands with their subcommand in one string
        wire = (*name.split(), *args[1:]) if " " in name else args
        try:
            reply = await self.mux.call(*wire)
        except Unroutable:  # (cluster only)
            return await self.pooled.execute_command(*args, **options)
        except ResponseError:
            if EMPTY_RESPONSE in options:
                return options[EMPTY_RESPONSE]
            raise
        options.pop(EMPTY_RESPONSE, None)
        options.pop("keys", None)  # (redis-py's client-side cache hint)
        callback = self.callbacks.get(name)
        return reply if callback is None else callback(reply, **options)


#: What ``Store.<command>`` offers: redis-py's command methods, by name.
COMMANDS = frozenset(name for name in dir(AsyncCoreCommands) if not name.startswith("_"))
#: Those the cluster client has its own way of (DEL, EXISTS, UNLINK, TOUCH by
#: slot; SCAN over every master...): on a cluster the Store calls its.
CLUSTER_OWN = frozenset(
    name
    for name in COMMANDS
    if getattr(RedisCluster, name, None) is not getattr(AsyncCoreCommands, name)
)
