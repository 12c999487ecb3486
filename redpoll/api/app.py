"""The ASGI application: Starlette routes over the engine and its areas.

``create_app()`` is the factory uvicorn runs in each HTTP worker process. Its
lifespan opens the engine (on the database ``redpoll serve`` names in the
environment: REDIS_URL, or the embedded server's URL) and, unless
REDPOLL_SERVE_JOBS=0, runs the background job worker in the same process; on shutdown the worker finishes the jobs in hand
(queued ones stay in Redis for the next start).
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import asynccontextmanager

from redis.exceptions import (
    BusyLoadingError,
    ClusterDownError,
    RedisClusterException,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeout
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from .. import web
from ..core import limits, metrics
from ..core.errors import RedpollError
from ..core.health import DATABASE
from ..core.settings import Settings
from ..engine.engine import Redpoll
from ..render.rendered import RenderedStatuses
from ..stream.service import StreamService
from . import (
    accounts,
    admin,
    admin_metrics,
    admin_trends,
    annual_reports,
    archives,
    collections,
    conversations,
    directory,
    edits,
    endorsements,
    exports,
    featured_tags,
    federation,
    filters,
    imports,
    instance,
    invites,
    lists,
    mail,
    media,
    moderation,
    nodeinfo,
    notifications,
    oauth,
    ops,
    pages,
    pins,
    polls,
    profile,
    push,
    quotes,
    relations,
    reports,
    roles,
    scheduled,
    search,
    sessions,
    social,
    startup,
    statuses,
    threads,
    trends,
    two_factor,
)
from .responses import JSON, ApiError, error_response
from .routing import IndexedRouter, declared, in_order
from .serve import follow_serve, watch_serve

log = logging.getLogger("redpoll.api")
access = logging.getLogger("redpoll.access")

#: The modules whose handlers declare the API's routes (redpoll.api.routing):
#: the app assembles them, in_order sorts them.
MODULES = (
    statuses,
    annual_reports,
    quotes,
    admin,
    admin_metrics,
    admin_trends,
    directory,
    edits,
    instance,
    oauth,
    accounts,
    endorsements,
    featured_tags,
    collections,
    profile,
    search,
    relations,
    reports,
    conversations,
    threads,
    social,
    pins,
    polls,
    filters,
    media,
    notifications,
    lists,
    startup,
    pages,
    ops,
    nodeinfo,
    federation,
    scheduled,
    trends,
    push,
    sessions,
    two_factor,
    mail,
    invites,
    moderation,
    roles,
    exports,
    imports,
    archives,
)
ROUTES = [Route(d.path, handler, methods=[d.method]) for d, handler in declared(MODULES)]

#: Paths browser clients on other origins may call (Mastodon's CORS set): the
#: API, OAuth token endpoints, well-known documents. Tokens travel in the
#: Authorization header, never in cookies, so any origin may ask.
CORS_PREFIXES = (
    "/api/",
    "/oauth/token",
    "/oauth/revoke",
    "/.well-known/",
    "/nodeinfo/",
    "/openapi.json",
)


def api_cors() -> CORSMiddleware:
    """Starlette's CORS rules as the API applies them (its preflight answers
    and Access-Control-* headers; :class:`Edge` applies them on the API
    paths only: the HTML pages are not for other origins)."""
    return CORSMiddleware(
        None,  # type: ignore[arg-type]  # (Edge calls its methods, never the app it wraps)
        allow_origins=["*"],
        allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        allow_headers=["*"],
        allow_credentials=False,
        max_age=600,
        expose_headers=[
            "Link",
            "X-RateLimit-Limit",
            "X-RateLimit-Remaining",
            "X-RateLimit-Reset",
            "Retry-After",
        ],
    )


async def _api_error(request: Request, exc: ApiError) -> Response:
    return exc.response()


async def _redpoll_error(request: Request, exc: RedpollError) -> Response:
    return error_response(exc)


async def _http_error(request: Request, exc: HTTPException) -> Response:
    message = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, exc.detail)
    return JSON({"error": message}, status_code=exc.status_code, headers=exc.headers)


async def _client_gone(request: Request, exc: ClientDisconnect) -> Response:
    """The client left before sending its whole body: one INFO line, no answer
    (there is nobody to send it to)."""
    log.info("client went away", extra={"method": request.method, "path": request.url.path[:200]})
    return Response(status_code=400)


async def _unavailable(request: Request, exc: Exception) -> Response:
    # logged once per outage by redpoll.core.health, not once per request
    DATABASE.lost("api", exc)
    return JSON(
        {"error": "Service temporarily unavailable"},
        status_code=503,
        headers={"Retry-After": str(limits.RETRY_AFTER_S)},
    )


async def _crash(request: Request, exc: Exception) -> Response:
    log.error(
        "unhandled error on %s %s",
        request.method,
        request.url.path,
        exc_info=(type(exc), exc, exc.__traceback__),
    )
    return JSON({"error": "Internal server error"}, status_code=500)


class Edge:
    """The one layer between the server and the routes, as pure ASGI: it does
    what five stacked middlewares did (Starlette's ServerErrorMiddleware and
    CORSMiddleware, and Observe, StreamGate, ApiCors), with one wrapper
    around ``send`` instead of four (docs/decisions.md, "One outer ASGI
    layer, and the home page's CPU"). In order, for an HTTP request:

    * the stream gate (``ops.StreamGate``): a new stream while this process's
      hub cannot read the event log gets 503 (a WebSocket is refused);
    * CORS on the API paths (``CORS_PREFIXES``): a preflight is answered
      here, other answers get Starlette's Access-Control-* headers and Vary;
    * an unhandled error: logged with its traceback, answered 500 in the API's
      shape if nothing was sent yet, and raised on (the server logs it too);
    * every answer gets ``X-Content-Type-Options: nosniff``;
    * per request, the metrics (count by route template, method and status;
      latency histogram) and, when ``access_log`` is on, one JSON line
      (method, path without query, status, duration).
    """

    def __init__(self, app, stream, access_log: bool = True):
        self.app = app
        self.gate = ops.StreamGate(app, service=stream)
        self.cors = api_cors()
        self.access_log = access_log
        #: (route, method, status) -> the bound counter and histogram: binding
        #: labels costs ~5 us a request, the bound pair ~3 us (docs/decisions.md)
        self.bound: dict[tuple, tuple] = {}
        # what CORSMiddleware.send adds to an answer, as header bytes: a
        # request with an Origin gets its simple headers; every answer (all
        # origins allowed, no credentials) gets Origin added to Vary
        self.cors_headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in self.cors.simple_headers.items()
        ]

    def count(self, route: str, method: str, status: int, took: float) -> None:
        key = (route, method, status)
        pair = self.bound.get(key)
        if pair is None:
            pair = (
                metrics.HTTP_REQUESTS.labels(route, method, str(status)),
                metrics.HTTP_LATENCY.labels(route, method),
            )
            if len(self.bound) < limits.METRICS_LABEL_SETS:
                self.bound[key] = pair
        pair[0].inc()
        pair[1].observe(took)

    async def __call__(self, scope, receive, send):
        kind = scope["type"]
        if kind != "lifespan" and await _ip_refused(scope):
            return await _refuse(scope, send)
        if kind != "http":  # WebSockets pass the gate; lifespan goes straight through
            if kind == "websocket":
                return await self.gate(scope, receive, send)
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        path = scope["path"]
        status = 0
        origin: bytes | None = None
        cors = path.startswith(CORS_PREFIXES)
        if cors:
            for key, value in scope["headers"]:
                if key == b"origin":
                    origin = value
                    break

        held = None  # a JSON answer's start, until its body shows whether to compress

        async def sending(message):
            nonlocal status, held
            kind = message["type"]
            if kind == "http.response.start":
                status = message["status"]
                if cors:
                    self._cors_headers(message, origin is not None)
                _no_sniffing(message)
                if _json_answer(message):
                    held = message
                    return
            elif held is not None and kind == "http.response.body":
                start, held = held, None
                message = _maybe_compressed(scope, start, message)
                await send(start)
            await send(message)

        async def plain(message):  # what the gate answers: no CORS headers (as before)
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                _no_sniffing(message)
            await send(message)

        try:
            if path.startswith(ops.STREAM_PATHS) and not self.gate.available():
                await self.gate(scope, receive, plain)
            elif (
                origin is not None
                and scope["method"] == "OPTIONS"
                and any(k == b"access-control-request-method" for k, _ in scope["headers"])
            ):
                # answered here, as CORSMiddleware did (without its headers pass)
                await self.cors.preflight_response(Headers(scope=scope))(scope, receive, plain)
            else:
                await self.app(scope, receive, sending)
        except Exception as exc:
            started = status != 0 and held is None  # a held start was not sent
            response = await _crash(Request(scope), exc)
            if not started:
                await response(scope, receive, sending)
            raise  # the server logs it too, as Starlette's ServerErrorMiddleware does
        finally:
            took = time.perf_counter() - start
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope["method"]
            self.count(template, method, status, took)
            if self.access_log:
                client = scope.get("client")
                access.info(
                    "request",
                    extra={
                        "method": method,
                        "path": path[:200],
                        "status": status,
                        "ms": round(took * 1000, 2),
                        "ip": client[0] if client else None,
                    },
                )

    def _cors_headers(self, message, with_origin: bool) -> None:
        """CORSMiddleware.send's change to an answer's headers, in place
        (MutableHeaders' rules: a header set replaces every earlier one of
        that name, at the first one's place)."""
        headers = message["headers"] = list(message.get("headers", ()))
        if with_origin:
            for name, value in self.cors_headers:
                _set_header(headers, name, value)
        vary = [v.decode("latin-1") for k, v in headers if k == b"vary"]
        _set_header(headers, b"vary", ", ".join([*vary, "Origin"]).encode("latin-1"))


async def _ip_refused(scope) -> bool:
    """Whether a no_access IP block refuses the client (redpoll.accounts.ip_blocks;
    the networks kept per process, so a request pays a lookup, not a read)."""
    client = scope.get("client")
    rp = getattr(getattr(scope.get("app"), "state", None), "rp", None)
    if not client or rp is None:
        return False
    known = rp.admin.refused_now(client[0])
    return known if known is not None else await rp.admin.refused(client[0])


async def _refuse(scope, send) -> None:
    """Rack::Attack's answer to a blocked address, as Mastodon gives it: 403
    ``Forbidden`` (a WebSocket is closed before it opens)."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = b"Forbidden\n"
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                NOSNIFF,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


NOSNIFF = (b"x-content-type-options", b"nosniff")
JSON_TYPE = b"application/json"


def _json_answer(start) -> bool:
    """Whether an answer's start is of a whole JSON body not encoded yet
    (what :func:`_maybe_compressed` may compress): of a known length, so
    not a stream (the v1 streaming API's JSON lines, SSE, a hand-off: their
    start must go out at once), and not a fixed body compressed once
    (redpoll.web.compress)."""
    json = sized = False
    for k, v in start["headers"]:
        if k == b"content-type":
            json = v.startswith(JSON_TYPE)
        elif k == b"content-length":
            sized = True
        elif k == b"content-encoding":
            return False
    return json and sized


def _maybe_compressed(scope, start, body):
    """A JSON answer (``start`` and its first ``body`` message) compressed
    in place when it is whole in that message, at least
    limits.API_COMPRESS_MIN_BYTES long and the request's Accept-Encoding
    takes brotli or gzip (redpoll.web.compress.squeezed); every JSON answer
    says ``Vary: Accept-Encoding``. A strong ETag becomes weak when the
    bytes change (the content is the same, its encoding not), as nginx
    does. Returns the body message to send."""
    headers = start["headers"]
    vary = [v for k, v in headers if k == b"vary"]
    _set_header(headers, b"vary", b", ".join([b"Accept-Encoding", *vary]))
    data = body.get("body", b"")
    if body.get("more_body") or len(data) < limits.API_COMPRESS_MIN_BYTES:
        return body
    asked = ""
    for k, v in scope["headers"]:
        if k == b"accept-encoding":
            asked = v.decode("latin-1")
            break
    encoding = web.compress.accepted(asked) if asked else None
    if encoding is None:
        return body
    packed = web.compress.squeezed(data, encoding)
    if len(packed) >= len(data):
        return body
    _set_header(headers, b"content-length", str(len(packed)).encode())
    headers.append((b"content-encoding", encoding.encode()))
    for i, (k, v) in enumerate(headers):
        if k == b"etag" and not v.startswith(b"W/"):
            headers[i] = (k, b"W/" + v)
    return {**body, "body": packed}


def _no_sniffing(message) -> None:
    """Every answer says its Content-Type is what it is (as Mastodon's): a
    browser must not run JSON or text it was tricked into loading."""
    headers = message["headers"] = list(message.get("headers", ()))
    if not any(k == NOSNIFF[0] for k, _ in headers):
        headers.append(NOSNIFF)


def _set_header(headers: list, name: bytes, value: bytes) -> None:
    found = [i for i, (k, _) in enumerate(headers) if k == name]
    for i in reversed(found[1:]):
        del headers[i]
    if found:
        headers[found[0]] = (name, value)
    else:
        headers.append((name, value))


class App(Starlette):
    """Starlette with :class:`Edge` as its whole outer middleware stack (in
    place of ServerErrorMiddleware and the user middleware): Edge, then
    Starlette's ExceptionMiddleware (the handlers by exception type), then
    the router."""

    def __init__(self, *args, stream: StreamService, access_log: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.router = IndexedRouter(self.router.routes, lifespan=self.router.lifespan_context)
        self.edge_options = {"stream": stream, "access_log": access_log}

    def build_middleware_stack(self):
        handlers = {k: v for k, v in self.exception_handlers.items() if k not in (500, Exception)}
        assert not self.user_middleware, "the outer layers live in Edge"
        return Edge(
            ExceptionMiddleware(self.router, handlers=handlers, debug=self.debug),
            **self.edge_options,
        )


def create_app(settings: Settings | None = None, *, access_log: bool | None = None) -> Starlette:
    serve_pid = follow_serve()  # a worker process of `redpoll serve` ends with it
    settings = settings or Settings.from_env()
    rendered = RenderedStatuses()  # status entities, for REST pages and stream events
    stream = StreamService(settings, rendered=rendered)  # the streaming routes (redpoll/stream)

    @asynccontextmanager
    async def lifespan(app: Starlette):
        watch = asyncio.create_task(watch_serve(serve_pid)) if serve_pid else None
        rp = await Redpoll.open(settings)
        app.state.rp, app.state.settings = rp, settings
        await stream.start_for(rp)
        app.state.stream_hub = stream.hub
        try:  # accept requests once the hub reads the event log (streams are gated on it)
            hub = stream.hub
            assert hub is not None  # (start_for made it)
            await asyncio.wait_for(hub.connected.wait(), limits.READY_CHECK_TIMEOUT_S * 5)
        except TimeoutError:
            log.warning("stream hub not connected yet; streams answer 503 until it is")
        stop = asyncio.Event()
        jobs = asyncio.create_task(rp.worker().run(stop)) if settings.serve_jobs else None
        sampler = asyncio.create_task(ops.sample_stream_figures(stream))
        log.info("api process ready", extra={"jobs": bool(jobs)})
        try:
            yield
        finally:
            stop.set()
            sampler.cancel()
            if watch is not None:
                watch.cancel()
            if jobs is not None:
                await jobs  # let in-flight jobs finish; queued ones stay in Redis
            await stream.stop()
            await rp.close()  # and stops watching the database
            log.info("api process stopped")

    # the gate, CORS, errors and metrics: one layer (Edge)
    app = App(
        routes=in_order([*ROUTES, *stream.routes(), *web.routes()]),
        lifespan=lifespan,
        exception_handlers={
            ApiError: _api_error,
            RedpollError: _redpoll_error,
            HTTPException: _http_error,
            ClientDisconnect: _client_gone,
            RedisConnectionError: _unavailable,
            RedisTimeout: _unavailable,
            BusyLoadingError: _unavailable,
            # a cluster without a master for some slots (one failed and
            # not replaced yet) or moving them: an outage, not a crash
            ClusterDownError: _unavailable,
            TryAgainError: _unavailable,
            # a cluster none of whose nodes answers
            RedisClusterException: _unavailable,
            Exception: _crash,
        },
        stream=stream,
        access_log=settings.access_log if access_log is None else access_log,
    )
    app.state.settings = settings
    app.state.rendered = rendered
    return app
