"""One web layer for REST and streams: one error type, one
body reader, one authentication backend, one entity renderer, and streams
that ask the engine instead of reading Redis keys themselves."""

from __future__ import annotations

import ast
import asyncio
import json
from pathlib import Path

import httpx
import pytest
from support.streams import (  # noqa: F401
    WAIT,
    StreamProc,
    app_token,  # noqa: F401
)
from websockets.asyncio.client import connect

import redpoll
from redpoll.api import params as api_params
from redpoll.api import responses as api_responses
from redpoll.gateway import auth as gateway_auth
from redpoll.gateway.body import read_body
from redpoll.gateway.errors import WebError
from redpoll.stream import filters

pytestmark = pytest.mark.timeout(180)

STREAM = Path(redpoll.__file__).parent / "stream"


def test_one_error_type_and_one_body_reader():
    assert api_responses.ApiError is WebError
    assert issubclass(filters.ParamError, WebError)
    assert api_params.read_body is read_body


def test_streams_read_no_redis_keys():
    """Who follows whom, list members, tokens: the stream asks the engine;
    even the event log is read through ``redpoll.bus.events``."""
    for path in STREAM.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "keys"
            ):
                raise AssertionError(f"{path.name}:{node.lineno} reads keys.{node.attr}")
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "client"
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "store"
            ):
                raise AssertionError(f"{path.name}:{node.lineno} talks to store.client")


def test_bearer_token_is_found_the_same_way_everywhere():
    def scope(*headers):
        return {"headers": [(k.encode(), v.encode()) for k, v in headers]}

    assert gateway_auth.bearer_token(scope(("authorization", "Bearer abc"))) == ("abc", None)
    assert gateway_auth.bearer_token(scope(("authorization", "bearer  abc "))) == ("abc", None)
    assert gateway_auth.bearer_token(scope(), {"access_token": "p"}) == ("p", None)
    assert gateway_auth.bearer_token(scope()) == (None, None)  # REST: no parameter
    assert gateway_auth.bearer_token(
        scope(("sec-websocket-protocol", "t1, x")), subprotocol=True
    ) == ("t1", "t1")


async def test_stream_events_are_the_rest_entity(server, rp, tmp_path):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path).start()
    try:
        alice = await rp.accounts.sign_up("alice")
        async with httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c:
            token = await app_token(c, proc.base)
            async with connect(
                f"ws://127.0.0.1:{proc.port}/api/v1/streaming?stream=public",
                additional_headers={"Authorization": f"Bearer {token}"},
            ) as ws:
                await proc.wait_subscribers(1)
                status = await rp.statuses.post(alice.id, "one renderer #for all")
                frame = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
            rest = (await c.get(f"{proc.base}/api/v1/statuses/{status.id}")).json()
    finally:
        proc.stop()
    assert json.loads(frame["payload"]) == rest
