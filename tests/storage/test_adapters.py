"""The two adapters over libraries' internals: redpoll/storage/redispy.py (redis-py)
and redpoll/stream/handoff.py (uvicorn). Each library is pinned to the minor
version its adapter was read from; these tests fail when an upgrade moves
what the adapters use, before a subtler failure elsewhere does."""

from __future__ import annotations

import inspect
import re

import redis
import uvicorn
from redis.asyncio.connection import Connection
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from redpoll.storage import redispy, store
from redpoll.stream import handoff


def _assigned(cls) -> set[str]:
    """Attribute names a class's own source assigns on ``self``."""
    return set(re.findall(r"self\.([a-z_]+)\s*(?::[^=]+)?=", inspect.getsource(cls)))


def test_the_pins_match_the_adapters():
    assert redispy.version_ok(), (
        f"redis-py {redis.__version__}: redpoll/storage/redispy.py reads "
        f"{redispy.TESTED_WITH}; check its internals and move the pin"
    )
    assert handoff.version_ok(), (
        f"uvicorn {uvicorn.__version__}: handoff.py reads "
        f"{handoff.TESTED_WITH}; check its protocol classes and move the pin"
    )
    assert redispy.version_ok("8.1.7") and not redispy.version_ok("8.2.0")
    assert handoff.version_ok("0.54.3") and not handoff.version_ok("0.55.0")


def test_redis_py_internals_are_where_redispy_reads_them():
    callbacks = redispy.MuxCommands.CALLBACKS
    # reply shapes redpoll depends on: scores as floats, HGETALL as a dict
    assert callbacks["zscore"](b"1.5") == 1.5 and callbacks["ZSCORE"](None) is None
    assert callbacks["HGETALL"]([b"a", b"1"]) == {b"a": b"1"}
    assert isinstance(redispy.EMPTY_RESPONSE, str) and isinstance(redispy.NEVER_DECODE, str)
    for name in ("hget", "zrevrangebyscore", "xadd", "evalsha", "zmscore"):
        assert name in redispy.COMMANDS and name in store.COMMANDS
    assert "delete" in redispy.CLUSTER_OWN  # the cluster client splits DEL by slot
    # the packer it overrides, and what that packs to
    assert callable(getattr(Connection, "pack_command", None))
    packed = redispy._HiredisPacking.pack_command(object(), "SCRIPT LOAD", "return 1")
    assert packed == [b"*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$8\r\nreturn 1\r\n"]


def test_uvicorn_internals_are_where_handoff_uses_them():
    http = _assigned(HttpToolsProtocol)
    assert {"cycle", "connections", "flow", "transport", "scope"} <= http, http
    for method in ("on_message_begin", "_unset_keepalive_if_required"):
        assert callable(getattr(HttpToolsProtocol, method, None)), method
    src = inspect.getsource(HttpToolsProtocol)
    assert "response_complete" in src  # the cycle flag handoff sets
    ws = _assigned(WebSocketsSansIOProtocol)
    assert {
        "conn",
        "queue",
        "transport",
        "connections",
        "handshake_complete",
        "close_sent",
        "writable",
    } <= ws, ws
    for method in ("handle_connect", "stop_keepalive"):
        assert callable(getattr(WebSocketsSansIOProtocol, method, None)), method
    flow = inspect.getsource(inspect.getmodule(HttpToolsProtocol))
    assert "resume_reading" in flow and "write_paused" in flow
