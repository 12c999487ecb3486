"""Endpoints for operators and load balancers: ``/health``, ``/ready``,
``/metrics`` (meanings in docs/operating.md).

* ``/health`` -- liveness: 200 while this process runs its event loop; the
  body also says whether it can reach the database, but a liveness probe
  should not restart a process because Redis is away (restarting it would
  not bring Redis back).
* ``/ready`` -- readiness: 200 only when the database answers a PING now,
  the stream hub reads the event log, and jobs flow (the oldest queued job
  is younger than REDPOLL_READY_JOB_AGE_S); else 503 with
  ``Retry-After`` and the reason in the body.
* ``/metrics`` -- Prometheus text format (redpoll.core.metrics), for a scraper
  that sends REDPOLL_METRICS_TOKEN as a bearer token; 404 while none is set.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
from dataclasses import asdict

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ..bus.queue import JobFigures
from ..core import limits, metrics
from ..core.health import DATABASE, OUTAGE
from ..web import compress
from . import contract
from .contract import STR, Doc
from .responses import JSON
from .routing import route


async def _read_jobs(rp) -> JobFigures:
    """PING, then the job figures; tried twice, since after a server restart
    a pooled connection from before it fails once before it is replaced."""
    for attempt in (1, 2):
        try:
            await asyncio.wait_for(rp.ping(), limits.READY_CHECK_TIMEOUT_S)
            return await asyncio.wait_for(rp.job_figures(), limits.READY_CHECK_TIMEOUT_S)
        except (TimeoutError, *OUTAGE):
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _stream_connected(request: Request) -> bool:
    hub = getattr(request.app.state, "stream_hub", None)
    return hub is not None and hub.connected.is_set()


@route(
    "GET",
    "/health",
    auth="none",
    doc=Doc(
        "Liveness: 200 while the process runs; says if the database is reachable",
        "Operations",
        {
            "type": "object",
            "required": ["status", "database"],
            "properties": {"status": STR, "database": STR},
        },
    ),
)
async def health(request: Request) -> Response:
    return JSON({"status": "ok", "database": "reachable" if DATABASE.up else "unreachable"})


@route(
    "GET",
    "/ready",
    auth="none",
    doc=Doc(
        "Readiness: database answers, stream hub connected, jobs flowing "
        "(503 with Retry-After and the problems otherwise)",
        "Operations",
        {
            "type": "object",
            "required": ["ready", "problems"],
            "properties": {
                "ready": {"type": "boolean"},
                "problems": {"type": "array", "items": STR},
            },
        },
    ),
)
async def ready(request: Request) -> Response:
    problems: list[str] = []
    jobs: JobFigures | None = None
    rp = getattr(request.app.state, "rp", None)
    if rp is None:
        problems.append("starting")
    else:
        try:
            jobs = await _read_jobs(rp)
            DATABASE.back("ready")
        except Exception as exc:  # any failure to answer is "not ready"
            DATABASE.lost("ready", exc)
            problems.append("database unreachable")
        if jobs is not None and jobs.oldest_age_s > request.app.state.settings.ready_job_age_s:
            problems.append(
                f"jobs not flowing: the oldest queued job is {jobs.oldest_age_s:.0f}s old"
            )
        if not _stream_connected(request):
            problems.append("stream hub not reading the event log")
    body = {
        "ready": not problems,
        "problems": problems,
        **({"error": "Not ready: " + "; ".join(problems)} if problems else {}),
        "database": "reachable" if jobs is not None else "unreachable",
        "stream": "connected" if _stream_connected(request) else "disconnected",
        "jobs": asdict(jobs) if jobs is not None else None,
    }
    if problems:
        return JSON(body, status_code=503, headers={"Retry-After": str(limits.RETRY_AFTER_S)})
    return JSON(body)


def _scraper(request: Request) -> Response | None:
    """None if the request carries REDPOLL_METRICS_TOKEN as its bearer
    token; else the answer: 404 while no token is set (there is no metrics
    page), 401 for a missing or wrong one."""
    expected = request.app.state.settings.metrics_token
    if expected is None:
        return JSON({"error": "Not found"}, status_code=404)
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), expected.encode()
    ):
        return None
    return JSON(
        {"error": "The access token is invalid"},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
    )


@route(
    "GET",
    "/metrics",
    auth="none",
    doc=Doc(
        "Prometheus text format (docs/operating.md lists each metric)",
        "Operations",
        STR,
        ok_type="text/plain",
    ),
)
async def metrics_page(request: Request) -> Response:
    refused = _scraper(request)
    if refused is not None:
        return refused
    read: dict[str, tuple[str, float]] = {}
    rp = getattr(request.app.state, "rp", None)
    up = 0.0
    if rp is not None:
        try:
            jobs = await _read_jobs(rp)
            up = 1.0
            read = {
                "redpoll_jobs_queued": ("Jobs in the queue (waiting or running)", jobs.queued),
                "redpoll_jobs_pending": (
                    "Jobs taken by a worker, not yet acknowledged",
                    jobs.pending,
                ),
                "redpoll_jobs_oldest_age_seconds": (
                    "Age of the oldest queued job (0: none)",
                    jobs.oldest_age_s,
                ),
                "redpoll_jobs_parked": ("Jobs parked after too many failed attempts", jobs.parked),
            }
        except Exception as exc:
            DATABASE.lost("metrics", exc)
    read["redpoll_database_up"] = ("1 if the database answered this scrape's reads", up)
    body = (
        await asyncio.to_thread(metrics.render, read)
        if metrics.multiprocess()
        else metrics.render(read)
    )
    return Response(body, media_type=metrics.CONTENT_TYPE)


#: Paths of the streaming API (v1.1, Mastodon SSE and WebSocket).
STREAM_PATHS = ("/1.1/statuses/", "/api/v1/streaming")


class StreamGate:
    """While this process's stream hub cannot read the event log (the
    database is away), a new stream would be accepted and deliver nothing:
    it gets 503 with Retry-After instead (a WebSocket is refused), and
    ``/api/v1/streaming/health`` answers 503. Open streams stay open and
    resume from the hub's cursor when the database is back."""

    def __init__(self, app, service) -> None:
        self.app = app
        self.service = service

    def available(self) -> bool:
        hub = self.service.hub
        # the hub's own reader is what a stream depends on (it reconnects and
        # says so at once; the process-wide flag can lag by a probe interval)
        return hub is not None and hub.connected.is_set()

    async def __call__(self, scope, receive, send) -> None:
        if (
            scope["type"] not in ("http", "websocket")
            or not scope["path"].startswith(STREAM_PATHS)
            or self.available()
        ):
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":
            await receive()  # websocket.connect; closing now refuses the handshake
            await send({"type": "websocket.close", "code": 1013})
            return
        body = b'{"error":"Service temporarily unavailable"}'
        await send(
            {
                "type": "http.response.start",
                "status": 503,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"retry-after", str(limits.RETRY_AFTER_S).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def sample_stream_figures(service) -> None:
    """Copy this process's stream hub figures into the metrics every
    ``limits.METRICS_SAMPLE_S`` (open clients as a gauge; drops and
    deliveries as counters, by their increase)."""
    seen = {"stalls": 0, "deliveries": 0}
    while True:
        await asyncio.sleep(limits.METRICS_SAMPLE_S)
        hub = service.hub
        if hub is None:
            continue
        metrics.STREAM_CLIENTS.set(hub.subscribers)
        for name, counter in (
            ("stalls", metrics.STREAM_DROPS),
            ("deliveries", metrics.STREAM_EVENTS),
        ):
            now = getattr(hub, name)
            if now > seen[name]:
                counter.inc(now - seen[name])
            seen[name] = now


#: a path parameter of an OpenAPI path (``{id}``), written ``{}`` in the features
_PARAM = re.compile(r"\{[^}]*\}")


def features(doc: dict) -> dict:
    """What the web app needs of the OpenAPI document (redpoll/web/static/
    features.js), a small part of it: every ``METHOD path`` (parameters as
    ``{}``) and, for each body field, the values it takes (its enum, its
    const as a list, None for any); a nested field named as a form sends it
    (``source[privacy]``)."""

    def taken(schema: dict):
        if isinstance(schema.get("enum"), list):
            return schema["enum"]
        return [schema["const"]] if "const" in schema else None

    routes: list[str] = []
    choices: dict[str, dict] = {}
    for path, ops in doc.get("paths", {}).items():
        bare = _PARAM.sub("{}", path)
        for method, op in ops.items():
            key = f"{method.upper()} {bare}"
            routes.append(key)
            content = (op.get("requestBody") or {}).get("content") or {}
            body: dict = content.get("application/json") or next(iter(content.values()), {})
            props = (body.get("schema") or {}).get("properties")
            if not props:
                continue
            fields = {}
            for name, schema in props.items():
                fields[name] = taken(schema)
                for inner, sub in (schema.get("properties") or {}).items():
                    fields[f"{name}[{inner}]"] = taken(sub)
            choices[key] = fields
    return {"routes": routes, "choices": choices}


class Fixed:
    """A document that never changes while the app runs: its bytes, an
    ETag of them, answered compressed (redpoll.web.compress) or 304."""

    def __init__(self, name: str, content) -> None:
        self.name = name
        self.body = orjson.dumps(content)
        self.etag = '"' + hashlib.sha256(self.body).hexdigest()[:20] + '"'

    def answer(self, request: Request) -> Response:
        headers = {"Cache-Control": "no-cache", "ETag": self.etag}
        if self.etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers={**headers, "Vary": "Accept-Encoding"})
        return compress.answer(
            request,
            f"{self.name}:{self.etag}",
            self.body,
            "application/json; charset=utf-8",
            headers,
        )


def _documents(request: Request) -> tuple[Fixed, Fixed]:
    """The OpenAPI and features documents of this app's routes, built once."""
    state = request.app.state
    if getattr(state, "documents", None) is None:
        doc = contract.build(request.app.routes)
        state.documents = (Fixed("openapi", doc), Fixed("features", features(doc)))
    return state.documents


@route("GET", "/openapi.json", doc=Doc("This document", "Meta", {"type": "object"}))
async def document(request: Request) -> Response:
    """The OpenAPI document of the routes this app declares (built once)."""
    return _documents(request)[0].answer(request)


@route(
    "GET",
    "/api/v1/redpoll/features",
    doc=Doc(
        "What this server offers, for the web app: its routes (METHOD path, "
        "parameters as {}) and the values each body field takes",
        "Meta",
        {
            "type": "object",
            "properties": {
                "routes": {"type": "array", "items": STR},
                "choices": {"type": "object"},
            },
        },
    ),
)
async def features_document(request: Request) -> Response:
    """A small part of /openapi.json (:func:`features`), built once."""
    return _documents(request)[1].answer(request)
