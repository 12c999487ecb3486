"""Malformed stream input gets a clear answer, never a 5xx or a dropped socket:
Last-Event-ID out of range, list ids past 2^53 on SSE and
WebSocket, and clients that leave in the middle of a request body."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import httpx
import pytest
from support.streams import (  # noqa: F401
    WAIT,
    StreamProc,
    app_token,  # noqa: F401
    user_token,  # noqa: F401
)
from websockets.asyncio.client import connect

from redpoll.api.process import ServeProcess

pytestmark = pytest.mark.timeout(180)

TOO_BIG = str(2**53)  # past the largest id (ids are doubles in Redis)


@pytest.fixture(scope="module")
def proc(server, tmp_path_factory):
    url, cluster, _ = server
    p = StreamProc(url, cluster, tmp_path_factory.mktemp("malformed")).start()
    yield p
    p.stop()


async def test_last_event_id_out_of_range_or_malformed_is_400(proc, rp):
    async with httpx.AsyncClient(timeout=WAIT) as c:
        token = await app_token(c, proc.base)
        for bad in (
            "99999999999999999999-0",
            "0-99999999999999999999",
            "18446744073709551616-1",
            "yesterday",
            "12-",
        ):
            r = await c.get(
                proc.base + "/api/v1/streaming/public",
                headers={"Authorization": f"Bearer {token}", "Last-Event-ID": bad},
            )
            assert r.status_code == 400, (bad, r.status_code, r.text)
            assert "Last-Event-ID" in r.json()["error"]
    assert (await proc.astats())["subscribers"] == 0


async def test_sse_list_id_past_2_53_is_404(proc, rp):
    async with httpx.AsyncClient(timeout=WAIT) as c:
        token = await user_token(c, proc.base)
        for lid in (TOO_BIG, "9" * 30):
            r = await c.get(
                proc.base + "/api/v1/streaming/list",
                params={"list": lid},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert r.status_code == 404, (lid, r.status_code, r.text)
            assert r.json() == {"error": "Record not found"}


async def test_websocket_list_id_past_2_53_is_an_error_frame_and_the_socket_lives(proc, rp):
    alice = await rp.accounts.sign_up("alice")
    async with httpx.AsyncClient(timeout=WAIT) as c:
        token = await user_token(c, proc.base)
    async with connect(
        f"ws://127.0.0.1:{proc.port}/api/v1/streaming",
        additional_headers={"Authorization": f"Bearer {token}"},
    ) as ws:
        await ws.send(json.dumps({"type": "subscribe", "stream": "list", "list": TOO_BIG}))
        err = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
        assert err["status"] == 404 and err["error"] == "Record not found"
        await ws.send(json.dumps({"type": "subscribe", "stream": "list", "list": 2**64}))
        assert json.loads(await asyncio.wait_for(ws.recv(), WAIT))["status"] == 404
        # the socket still works
        await ws.send(json.dumps({"type": "subscribe", "stream": "public"}))
        await proc.wait_subscribers(1)
        status = await rp.statuses.post(alice.id, "still here")
        frame = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
        assert frame["event"] == "update" and json.loads(frame["payload"])["id"] == str(status.id)


def half_a_body(port: int, path: str, headers: str) -> None:
    """Promise 1,000 bytes of body, send 10, and hang up."""
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as s:
        s.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n{headers}"
            f"Content-Type: application/x-www-form-urlencoded\r\n\r\nstatus=abc".encode()
        )
        time.sleep(0.2)


async def test_a_client_leaving_mid_body_is_one_info_line(server, rp):
    url, cluster, _ = server
    env = {"REDIS_URL": url, "REDPOLL_CLUSTER": "1" if cluster else "0"}
    with ServeProcess(env, args=["--no-jobs", "--no-access-log", "--log-level", "info"]) as srv:
        port = int(srv.url.rsplit(":", 1)[1])
        async with httpx.AsyncClient(timeout=WAIT) as c:
            token = await user_token(c, srv.url)
        before = srv.logs()
        for path, headers in (
            ("/api/v1/statuses", f"Authorization: Bearer {token}\r\n"),
            ("/1.1/statuses/filter.json", ""),
            ("/api/v1/apps", ""),
        ):
            await asyncio.to_thread(half_a_body, port, path, headers)
        deadline = time.monotonic() + WAIT
        while srv.logs().count("client went away") < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        # the server is fine afterwards
        async with httpx.AsyncClient(timeout=WAIT) as c:
            assert (await c.get(srv.url + "/api/v1/instance")).status_code == 200
        logs = srv.logs()[len(before) :]
    lines = [ln for ln in logs.splitlines() if "client went away" in ln]
    assert len(lines) == 3, logs[-3000:]
    for ln in lines:
        assert json.loads(ln)["level"] == "info", ln
    assert "Traceback" not in logs and '"level":"error"' not in logs, logs[-3000:]


async def test_stream_bodies_have_the_apis_body_limit(proc):
    from redpoll.core import limits

    big = {"identifier": "big", "track": "x" * (limits.API_MAX_BODY_BYTES + 10)}
    async with httpx.AsyncClient(timeout=WAIT) as c:
        r = await c.post(proc.base + "/1.1/statuses/filter.json", data=big)
        assert r.status_code == 413
        assert (
            r.json()["errors"][0]["message"]
            == f"Request body larger than {limits.API_MAX_BODY_BYTES} bytes"
        )
        # the REST API answers the same body the same way
        r = await c.post(proc.base + "/api/v1/apps", data=big)
        assert (
            r.status_code == 413
            and r.json()["error"] == f"Request body larger than {limits.API_MAX_BODY_BYTES} bytes"
        )
