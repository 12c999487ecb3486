"""API answers on the wire: a JSON answer of at least
limits.API_COMPRESS_MIN_BYTES comes compressed (brotli where the client
takes it, else gzip) with ``Vary: Accept-Encoding``; a small one, a client
that takes neither, a stream and a fixed body already compressed once are
sent as they are; a strong ETag turns weak when the bytes change. In
process through redpoll.api.app.Edge, then on a real ``redpoll serve``
read by Mastodon.py and by httpx as a browser asks."""

from __future__ import annotations

import asyncio
import gzip

import brotli
import httpx
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from support.mastodon import api, new_app, register  # noqa: F401

from redpoll.api.app import App
from redpoll.core import limits


class Stream:
    def __init__(self):
        self.hub = type("Hub", (), {"connected": asyncio.Event()})()
        self.hub.connected.set()


BIG = {"items": [{"id": str(i), "content": f"<p>post number {i} of many</p>"} for i in range(200)]}


async def big(request):
    return JSONResponse(BIG, headers={"ETag": '"abc"'})


async def small(request):
    return JSONResponse({"ok": True})


async def events(request):
    async def body():
        for i in range(3):
            yield f"event: update\ndata: {'x' * 2000}{i}\n\n".encode()

    return StreamingResponse(body(), media_type="text/event-stream")


async def lines(request):  # the v1 streaming API's shape: JSON lines, no length
    async def body():
        for _ in range(3):
            yield (b'{"text": "' + b"x" * 2000 + b'"}\r\n')

    return StreamingResponse(body(), media_type="application/json; charset=utf-8")


async def already(request):
    packed = gzip.compress(b"{}" * 2000)
    return Response(packed, media_type="application/json", headers={"Content-Encoding": "gzip"})


ROUTES = [
    Route("/api/v1/big", big),
    Route("/api/v1/small", small),
    Route("/api/v1/streaming/public", events),
    Route("/api/v1/already", already),
    Route("/1.1/statuses/sample.json", lines),
]


async def get(path: str, accept: str | None) -> tuple[httpx.Response, bytes]:
    """The answer to GET ``path`` and its body as sent (not decoded)."""
    app = App(routes=ROUTES, stream=Stream(), access_log=False)
    transport = httpx.ASGITransport(app=app)
    headers = {"Accept-Encoding": accept} if accept is not None else {}
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        req = client.build_request("GET", path, headers=headers)
        if accept is None:
            del req.headers["accept-encoding"]
        r = await client.send(req, stream=True)
        return r, b"".join([chunk async for chunk in r.aiter_raw()])


async def test_a_large_json_answer_comes_compressed_in_the_best_encoding_taken():
    plain = JSONResponse(BIG).body
    assert len(plain) >= limits.API_COMPRESS_MIN_BYTES
    r, raw = await get("/api/v1/big", "gzip, deflate, br")
    assert r.headers["content-encoding"] == "br"
    assert brotli.decompress(raw) == plain and len(raw) < len(plain) / 4
    assert int(r.headers["content-length"]) == len(raw)
    assert r.headers["vary"].startswith("Accept-Encoding")
    assert r.headers["etag"] == 'W/"abc"'  # the same content in other bytes
    r, raw = await get("/api/v1/big", "gzip;q=1, br;q=0")
    assert r.headers["content-encoding"] == "gzip" and gzip.decompress(raw) == plain
    for accept in (None, "identity", "br;q=0, gzip;q=0"):
        r, raw = await get("/api/v1/big", accept)
        assert "content-encoding" not in r.headers and raw == plain
        assert r.headers["etag"] == '"abc"' and "Accept-Encoding" in r.headers["vary"]


async def test_small_answers_streams_and_bodies_compressed_once_go_as_they_are():
    r, raw = await get("/api/v1/small", "br, gzip")
    assert "content-encoding" not in r.headers and raw == b'{"ok":true}'
    assert "Accept-Encoding" in r.headers["vary"]
    r, raw = await get("/api/v1/streaming/public", "br, gzip")
    assert "content-encoding" not in r.headers
    assert raw.count(b"event: update") == 3
    r, raw = await get("/1.1/statuses/sample.json", "br, gzip")
    assert "content-encoding" not in r.headers and raw.count(b"\r\n") == 3
    r, raw = await get("/api/v1/already", "br, gzip")
    assert r.headers["content-encoding"] == "gzip"
    assert gzip.decompress(raw) == b"{}" * 2000


def test_mastodon_py_and_a_browser_read_compressed_timelines(api):  # noqa: F811
    app = new_app(api)
    ann = register(api, app, "ann")
    for i in range(12):
        ann.status_post(f"a post long enough to make the timeline large, number {i}")
    home = ann.timeline_home(limit=20)  # Mastodon.py (requests) decodes what it asked for
    assert len(home) == 12 and home[0]["content"].endswith("number 11</p>")
    token = ann.access_token
    url = api.url + "/api/v1/timelines/home?limit=20"
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.stream("GET", url, headers={**auth, "Accept-Encoding": "gzip, deflate, br"}) as r:
        raw = b"".join(r.iter_raw())
        assert r.headers["content-encoding"] == "br" and r.headers["vary"].startswith(
            "Accept-Encoding"
        )
    plain = httpx.get(url, headers={**auth, "Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert brotli.decompress(raw) == plain.content and len(raw) < len(plain.content) / 3
    small = httpx.get(
        api.url + "/api/v1/preferences",
        headers={**auth, "Accept-Encoding": "gzip, br"},
    )
    assert len(small.content) < limits.API_COMPRESS_MIN_BYTES
    assert "content-encoding" not in small.headers
