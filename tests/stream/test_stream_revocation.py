"""Revoking a token closes every stream opened with it, within a second:
v1.1 with a bearer token, SSE and WebSocket; streams of
the same user opened with another token stay open. The same mechanism ends
every stream of a user (what suspension uses)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import httpx
import pytest
from support.streams import WAIT, StreamProc, register  # noqa: F401
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from redpoll.bus import events

pytestmark = pytest.mark.timeout(180)

#: what the issue asks: every stream of a revoked token closed within 1 s
CLOSED_WITHIN_S = 1.0


@pytest.fixture(scope="module")
def proc(server, tmp_path_factory):
    url, cluster, _ = server
    p = StreamProc(url, cluster, tmp_path_factory.mktemp("revoke")).start()
    yield p
    p.stop()


async def second_token(c: httpx.AsyncClient, base: str, app: dict, username: str) -> str:
    r = await c.post(
        base + "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "username": username,
            "password": "correct horse battery",
            "scope": "read write",
        },
    )
    return r.json()["access_token"]


async def ends(resp: httpx.Response) -> bytes:
    """Read an HTTP stream to its end; what it sent."""
    body = b""
    async for chunk in resp.aiter_raw():
        body += chunk
    return body


async def ws_ends(ws) -> int:
    """Read a WebSocket until the server closes it; the close code."""
    with pytest.raises(ConnectionClosed) as info:
        while True:
            await ws.recv()
    return info.value.rcvd.code if info.value.rcvd else -1


async def open_all(stack, c, proc, token):
    auth = {"Authorization": f"Bearer {token}"}
    v1 = await stack.enter_async_context(
        c.stream(
            "GET", proc.base + "/1.1/statuses/sample.json", params={"percent": "100"}, headers=auth
        )
    )
    sse = await stack.enter_async_context(
        c.stream("GET", proc.base + "/api/v1/streaming/public", headers=auth)
    )
    ws = await stack.enter_async_context(
        connect(
            f"ws://127.0.0.1:{proc.port}/api/v1/streaming?stream=public", additional_headers=auth
        )
    )
    assert v1.status_code == 200 and sse.status_code == 200
    return v1, sse, ws


async def test_revoking_a_token_closes_its_streams_and_only_those(proc, rp):
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c,
        contextlib.AsyncExitStack() as stack,
    ):
        app, token, uid = await register(c, proc.base)
        login = (
            await c.get(
                proc.base + "/api/v1/accounts/verify_credentials",
                headers={"Authorization": f"Bearer {token}"},
            )
        ).json()["username"]
        other = await second_token(c, proc.base, app, login)
        v1, sse, ws = await open_all(stack, c, proc, token)
        keep_v1, keep_sse, keep_ws = await open_all(stack, c, proc, other)
        await proc.wait_subscribers(6)

        r = await c.post(
            proc.base + "/oauth/revoke",
            data={
                "client_id": app["client_id"],
                "client_secret": app["client_secret"],
                "token": token,
            },
        )
        assert r.status_code == 200
        revoked_at = time.monotonic()
        v1_body, sse_body, code = await asyncio.wait_for(
            asyncio.gather(ends(v1), ends(sse), ws_ends(ws)), WAIT
        )
        took = time.monotonic() - revoked_at
        assert took < CLOSED_WITHIN_S, f"streams closed {took:.2f}s after the revocation"
        last = json.loads(v1_body.strip().splitlines()[-1])
        assert last["disconnect"]["code"] == 6 and "revoked" in last["disconnect"]["reason"]
        assert sse_body.startswith(b":)")
        assert code == 1008
        await proc.wait_subscribers(3)

        # the other token's streams still deliver
        status = await rp.statuses.post(uid, "still streaming")
        line = b""
        async for chunk in keep_v1.aiter_raw():
            line += chunk
            if str(status.id).encode() in line:
                break
        frame = json.loads(await asyncio.wait_for(keep_ws.recv(), WAIT))
        assert json.loads(frame["payload"])["id"] == str(status.id)
        # and a revoked token cannot open a new one
        r = await c.get(
            proc.base + "/api/v1/streaming/public", headers={"Authorization": f"Bearer {token}"}
        )
        assert r.status_code == 401


async def test_ending_a_users_streams_closes_all_of_them(proc, rp):
    """What suspension uses: one call ends the user's streams, whatever the token."""
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c,
        contextlib.AsyncExitStack() as stack,
    ):
        _, token, uid = await register(c, proc.base)
        _, bystander, _ = await register(c, proc.base)
        v1, sse, ws = await open_all(stack, c, proc, token)
        await open_all(stack, c, proc, bystander)
        await proc.wait_subscribers(6)
        await events.end_streams(rp.store, user_id=uid)
        _, _, code = await asyncio.wait_for(asyncio.gather(ends(v1), ends(sse), ws_ends(ws)), WAIT)
        assert code == 1008
        await proc.wait_subscribers(3)


async def test_a_token_gone_without_its_end_event_still_closes_its_streams(server, rp, tmp_path):
    """The backstop: a revocation that died between deleting the token and
    publishing the end event is caught by the periodic token check."""
    from redpoll.accounts import auth
    from redpoll.core import keys

    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path, REDPOLL_STREAM_TOKEN_CHECK_S="1").start()
    try:
        async with (
            httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c,
            contextlib.AsyncExitStack() as stack,
        ):
            _, token, _ = await register(c, proc.base)
            v1, sse, ws = await open_all(stack, c, proc, token)
            await proc.wait_subscribers(3)
            await rp.store.client.delete(keys.token(auth.digest(token)))  # no end event
            _, _, code = await asyncio.wait_for(
                asyncio.gather(ends(v1), ends(sse), ws_ends(ws)), WAIT
            )
            assert code == 1008
            await proc.wait_subscribers(0)
    finally:
        proc.stop()
