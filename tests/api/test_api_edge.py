"""redpoll.api.app.Edge: the one outer layer (stream gate, CORS, unhandled
errors, metrics) answers as the Starlette middlewares it replaced did. Each
request goes to an app with Edge and to the same routes under Starlette's own
CORSMiddleware; the answers must carry the same headers. In-process ASGI: no
server is needed to see what a layer adds to an answer."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from redpoll.api.app import App, api_cors
from redpoll.core import metrics


async def ok(request):
    return JSONResponse({"ok": True}, headers={"Vary": "Accept", "Link": '<x>; rel="next"'})


async def page(request):
    return HTMLResponse("<p>hi</p>")


async def boom(request):
    raise RuntimeError("a bug")


ROUTES = [
    Route("/api/v1/ok", ok),
    Route("/api/v1/ok", ok, methods=["POST"]),
    Route("/web/page", page),
    Route("/api/v1/boom", boom),
    Route("/api/v1/streaming/health", ok),
]


class Stream:
    def __init__(self):
        self.hub = type("Hub", (), {"connected": asyncio.Event()})()


def edge_app(stream) -> App:
    return App(routes=ROUTES, stream=stream, access_log=False)


def starlette_cors_app() -> Starlette:
    app = Starlette(routes=ROUTES)
    cors = api_cors()
    app.add_middleware(
        type(cors),
        allow_origins=["*"],
        allow_methods=list(cors.allow_methods),
        allow_headers=["*"],
        allow_credentials=False,
        max_age=600,
        expose_headers=cors.simple_headers["Access-Control-Expose-Headers"].split(", "),
    )
    return app


REQUESTS = [
    ("GET", "/api/v1/ok", {}),
    ("GET", "/api/v1/ok", {"Origin": "https://client.example"}),
    ("POST", "/api/v1/ok", {"Origin": "https://client.example"}),
    (
        "OPTIONS",
        "/api/v1/ok",
        {
            "Origin": "https://client.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    ),
    ("OPTIONS", "/api/v1/ok", {"Origin": "https://client.example"}),  # not a preflight: 405
    ("GET", "/api/v1/nowhere", {"Origin": "https://client.example"}),
]


async def answer(app, method, path, headers) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.request(method, path, headers=headers)


@pytest.mark.parametrize("method,path,headers", REQUESTS)
async def test_cors_answers_as_starlettes_middleware(method, path, headers):
    stream = Stream()
    stream.hub.connected.set()
    mine = await answer(edge_app(stream), method, path, headers)
    theirs = await answer(starlette_cors_app(), method, path, headers)
    assert mine.status_code == theirs.status_code
    # the same headers, and Edge's own: every answer says nosniff, and a
    # JSON answer varies by Accept-Encoding too (it may come compressed)
    assert mine.headers.get("x-content-type-options") == "nosniff"
    if mine.headers.get("content-type", "").startswith("application/json"):
        assert mine.headers["vary"].startswith("Accept-Encoding")
    assert [
        (k, v.removeprefix("Accept-Encoding, ") if k == "vary" else v)
        for k, v in mine.headers.multi_items()
        if k != "x-content-type-options"
    ] == theirs.headers.multi_items()
    assert mine.content == theirs.content or mine.status_code == 404


async def test_pages_get_no_cors_headers():
    stream = Stream()
    stream.hub.connected.set()
    r = await answer(edge_app(stream), "GET", "/web/page", {"Origin": "https://client.example"})
    assert r.status_code == 200
    assert "access-control-allow-origin" not in r.headers and "vary" not in r.headers


async def test_an_unhandled_error_is_a_500_in_the_api_shape_and_counted():
    stream = Stream()
    stream.hub.connected.set()
    counter = metrics.HTTP_REQUESTS.labels("/api/v1/boom", "GET", "500")
    before = counter._value.get()
    r = await answer(edge_app(stream), "GET", "/api/v1/boom", {"Origin": "https://a.example"})
    assert r.status_code == 500 and r.json() == {"error": "Internal server error"}
    assert r.headers["access-control-allow-origin"] == "*"
    assert counter._value.get() == before + 1


async def test_the_stream_gate_answers_503_while_the_hub_is_away():
    stream = Stream()  # its hub is not connected
    counter = metrics.HTTP_REQUESTS.labels("unmatched", "GET", "503")
    before = counter._value.get()
    app = edge_app(stream)
    r = await answer(app, "GET", "/api/v1/streaming/health", {"Origin": "https://a.example"})
    assert r.status_code == 503 and r.headers["retry-after"] and "error" in r.json()
    assert counter._value.get() == before + 1
    assert (await answer(app, "GET", "/api/v1/ok", {})).status_code == 200  # REST is not gated
    stream.hub.connected.set()
    assert (await answer(app, "GET", "/api/v1/streaming/health", {})).status_code == 200
