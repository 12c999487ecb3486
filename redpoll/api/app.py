"""The ASGI application: Starlette routes over the engine facade.

``create_app()`` is the factory uvicorn runs in each HTTP worker process. Its
lifespan opens the engine (REDIS_URL from the environment, set by
``redpoll serve``) and, unless REDPOLL_SERVE_JOBS=0, runs the background job
worker in the same process; on shutdown the worker finishes the jobs in hand
(queued ones stay in Redis for the next start).
"""
from __future__ import annotations

import asyncio
import logging
import time
from contextlib import asynccontextmanager

from redis.exceptions import (BusyLoadingError, ClusterDownError, ConnectionError as RedisConnectionError,
                              RedisClusterException, TimeoutError as RedisTimeout, TryAgainError)
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from .. import limits, metrics, web
from ..engine import Redpoll
from ..errors import RedpollError
from ..health import DATABASE
from ..media import routes as media_routes
from ..render.rendered import RenderedStatuses
from ..settings import Settings
from ..stream.service import StreamService
from . import (accounts, conversations, instance, lists, notifications, oauth, openapi, ops, pages, profile,
               relations, reports, search, social, startup, statuses, threads)
from .http import JSON, ApiError, error_response
from .serve import follow_serve, watch_serve

log = logging.getLogger("redpoll.api")
access = logging.getLogger("redpoll.access")

# Starlette tries routes in order, ~2 µs each: the most requested go first.
ROUTES = [
    Route("/api/v1/timelines/home", statuses.home, methods=["GET"]),
    Route("/api/v1/timelines/public", statuses.public, methods=["GET"]),
    Route("/api/v1/timelines/list/{list_id}", statuses.list_timeline, methods=["GET"]),
    Route("/api/v1/instance", instance.instance_v1, methods=["GET"]),
    Route("/api/v2/instance", instance.instance_v2, methods=["GET"]),
    Route("/api/v1/apps", oauth.create_app, methods=["POST"]),
    Route("/api/v1/apps/verify_credentials", oauth.verify_app, methods=["GET"]),
    Route("/oauth/token", oauth.token, methods=["POST"]),
    Route("/oauth/revoke", oauth.revoke, methods=["POST"]),
    Route("/oauth/authorize", oauth.authorize_page, methods=["GET"]),
    Route("/oauth/authorize", oauth.authorize_submit, methods=["POST"]),
    Route("/.well-known/oauth-authorization-server", oauth.server_metadata, methods=["GET"]),
    Route("/api/v1/accounts", accounts.register, methods=["POST"]),
    Route("/api/v1/accounts/verify_credentials", accounts.verify_credentials, methods=["GET"]),
    Route("/api/v1/accounts/lookup", accounts.lookup, methods=["GET"]),
    Route("/api/v1/accounts/relationships", accounts.relationships, methods=["GET"]),
    Route("/api/v1/accounts/search", search.accounts_search, methods=["GET"]),
    Route("/api/v1/accounts/update_credentials", profile.update_credentials, methods=["PATCH"]),
    Route("/api/v2/search", search.search_v2, methods=["GET"]),
    Route("/api/v1/accounts/{id}", accounts.get_account, methods=["GET"]),
    Route("/api/v1/accounts/{id}/statuses", accounts.account_statuses, methods=["GET"]),
    Route("/api/v1/accounts/{id}/follow", accounts.follow, methods=["POST"]),
    Route("/api/v1/accounts/{id}/unfollow", accounts.unfollow, methods=["POST"]),
    Route("/api/v1/accounts/{id}/followers", accounts.followers, methods=["GET"]),
    Route("/api/v1/accounts/{id}/block", relations.block, methods=["POST"]),
    Route("/api/v1/accounts/{id}/unblock", relations.unblock, methods=["POST"]),
    Route("/api/v1/accounts/{id}/mute", relations.mute, methods=["POST"]),
    Route("/api/v1/accounts/{id}/unmute", relations.unmute, methods=["POST"]),
    Route("/api/v1/blocks", relations.blocks, methods=["GET"]),
    Route("/api/v1/reports", reports.create, methods=["POST"]),
    Route("/api/v1/conversations", conversations.conversations, methods=["GET"]),
    Route("/api/v1/conversations/{id}/read", conversations.read, methods=["POST"]),
    Route("/api/v1/conversations/{id}", conversations.remove, methods=["DELETE"]),
    Route("/api/v1/mutes", relations.mutes, methods=["GET"]),
    Route("/api/v1/accounts/{id}/following", accounts.following, methods=["GET"]),
    Route("/api/v1/statuses", statuses.post_status, methods=["POST"]),
    Route("/api/v1/statuses", statuses.get_statuses, methods=["GET"]),
    Route("/api/v1/statuses/{id}", statuses.get_status, methods=["GET"]),
    Route("/api/v1/statuses/{id}", statuses.delete_status, methods=["DELETE"]),
    Route("/api/v1/statuses/{id}/context", threads.context, methods=["GET"]),
    Route("/api/v1/timelines/tag/{tag}", threads.tag_timeline, methods=["GET"]),
    Route("/api/v1/tags/{name}", threads.get_tag, methods=["GET"]),
    Route("/api/v1/tags/{name}/follow", threads.follow_tag, methods=["POST"]),
    Route("/api/v1/tags/{name}/unfollow", threads.unfollow_tag, methods=["POST"]),
    Route("/api/v1/followed_tags", threads.followed_tags, methods=["GET"]),
    Route("/api/v1/statuses/{id}/reblog", social.reblog, methods=["POST"]),
    Route("/api/v1/statuses/{id}/unreblog", social.unreblog, methods=["POST"]),
    Route("/api/v1/statuses/{id}/reblogged_by", social.reblogged_by, methods=["GET"]),
    Route("/api/v1/statuses/{id}/favourite", social.favourite, methods=["POST"]),
    Route("/api/v1/statuses/{id}/unfavourite", social.unfavourite, methods=["POST"]),
    Route("/api/v1/statuses/{id}/favourited_by", social.favourited_by, methods=["GET"]),
    Route("/api/v1/statuses/{id}/bookmark", social.bookmark, methods=["POST"]),
    Route("/api/v1/statuses/{id}/unbookmark", social.unbookmark, methods=["POST"]),
    Route("/api/v1/favourites", social.favourites_list, methods=["GET"]),
    Route("/api/v1/bookmarks", social.bookmarks_list, methods=["GET"]),
    Route("/api/v1/notifications", notifications.list_notifications, methods=["GET"]),
    Route("/api/v1/notifications/clear", notifications.clear, methods=["POST"]),
    Route("/api/v1/notifications/unread_count", notifications.unread_count, methods=["GET"]),
    Route("/api/v1/notifications/{id}", notifications.get_notification, methods=["GET"]),
    Route("/api/v1/notifications/{id}/dismiss", notifications.dismiss, methods=["POST"]),
    Route("/api/v2/notifications", notifications.grouped, methods=["GET"]),
    Route("/api/v2/notifications/unread_count", notifications.unread_groups, methods=["GET"]),
    Route("/api/v2/notifications/{group_key}", notifications.get_group, methods=["GET"]),
    Route("/api/v2/notifications/{group_key}/accounts", notifications.group_accounts,
          methods=["GET"]),
    Route("/api/v2/notifications/{group_key}/dismiss", notifications.dismiss_group,
          methods=["POST"]),
    Route("/api/v1/markers", notifications.get_markers, methods=["GET"]),
    Route("/api/v1/markers", notifications.set_markers, methods=["POST"]),
    Route("/api/v1/lists", lists.get_lists, methods=["GET"]),
    Route("/api/v1/lists", lists.create_list, methods=["POST"]),
    Route("/api/v1/lists/{id}", lists.get_list, methods=["GET"]),
    Route("/api/v1/lists/{id}", lists.update_list, methods=["PUT"]),
    Route("/api/v1/lists/{id}", lists.delete_list, methods=["DELETE"]),
    Route("/api/v1/lists/{id}/accounts", lists.list_accounts, methods=["GET"]),
    Route("/api/v1/lists/{id}/accounts", lists.add_accounts, methods=["POST"]),
    Route("/api/v1/lists/{id}/accounts", lists.remove_accounts, methods=["DELETE"]),
    Route("/api/v1/custom_emojis", startup.custom_emojis, methods=["GET"]),
    Route("/api/v1/filters", startup.filters_v1, methods=["GET"]),
    Route("/api/v2/filters", startup.filters_v2, methods=["GET"]),
    Route("/api/v1/announcements", startup.announcements, methods=["GET"]),
    Route("/api/v1/preferences", startup.preferences, methods=["GET"]),
    Route("/api/v1/follow_requests", relations.follow_requests_list, methods=["GET"]),
    Route("/api/v1/follow_requests/{id}/authorize", relations.authorize, methods=["POST"]),
    Route("/api/v1/follow_requests/{id}/reject", relations.reject, methods=["POST"]),
    Route("/api/v1/accounts/{id}/remove_from_followers", relations.remove_from_followers,
          methods=["POST"]),
    *media_routes.ROUTES,
    Route("/avatars/original/missing.png", pages.avatar_image, methods=["GET"]),
    Route("/headers/original/missing.png", pages.header_image, methods=["GET"]),
    Route("/openapi.json", openapi.document, methods=["GET"]),
    # operators and load balancers (redpoll/api/ops.py, docs/operating.md)
    Route("/health", ops.health, methods=["GET"]),
    Route("/ready", ops.ready, methods=["GET"]),
    Route("/metrics", ops.metrics_page, methods=["GET"]),
]

#: Paths browser clients on other origins may call (Mastodon's CORS set): the
#: API, OAuth token endpoints, well-known documents. Tokens travel in the
#: Authorization header, never in cookies, so any origin may ask.
CORS_PREFIXES = ("/api/", "/oauth/token", "/oauth/revoke", "/.well-known/", "/openapi.json")


def api_cors() -> CORSMiddleware:
    """Starlette's CORS rules as the API applies them (its preflight answers
    and Access-Control-* headers; :class:`Edge` applies them on the API
    paths only: the HTML pages are not for other origins)."""
    return CORSMiddleware(
        None, allow_origins=["*"], allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        allow_headers=["*"], allow_credentials=False, max_age=600,
        expose_headers=["Link", "X-RateLimit-Limit", "X-RateLimit-Remaining",
                        "X-RateLimit-Reset", "Retry-After"])


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
    log.info("client went away", extra={"method": request.method,
                                         "path": request.url.path[:200]})
    return Response(status_code=400)


async def _unavailable(request: Request, exc: Exception) -> Response:
    # logged once per outage by redpoll.health, not once per request
    DATABASE.lost("api", exc)
    return JSON({"error": "Service temporarily unavailable"}, status_code=503,
                headers={"Retry-After": str(limits.RETRY_AFTER_S)})


async def _crash(request: Request, exc: Exception) -> Response:
    log.error("unhandled error on %s %s", request.method, request.url.path,
              exc_info=(type(exc), exc, exc.__traceback__))
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
        self.cors_headers = [(name.lower().encode("latin-1"), value.encode("latin-1"))
                             for name, value in self.cors.simple_headers.items()]

    def count(self, route: str, method: str, status: int, took: float) -> None:
        key = (route, method, status)
        pair = self.bound.get(key)
        if pair is None:
            pair = (metrics.HTTP_REQUESTS.labels(route, method, str(status)),
                    metrics.HTTP_LATENCY.labels(route, method))
            if len(self.bound) < limits.METRICS_LABEL_SETS:
                self.bound[key] = pair
        pair[0].inc()
        pair[1].observe(took)

    async def __call__(self, scope, receive, send):
        kind = scope["type"]
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

        async def sending(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if cors:
                    self._cors_headers(message, origin is not None)
                _no_sniffing(message)
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
            elif (origin is not None and scope["method"] == "OPTIONS"
                  and any(k == b"access-control-request-method" for k, _ in scope["headers"])):
                # answered here, as CORSMiddleware did (without its headers pass)
                await self.cors.preflight_response(Headers(scope=scope))(scope, receive, plain)
            else:
                await self.app(scope, receive, sending)
        except Exception as exc:
            started = status != 0
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
                access.info("request", extra={
                    "method": method, "path": path[:200], "status": status,
                    "ms": round(took * 1000, 2), "ip": client[0] if client else None})

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


NOSNIFF = (b"x-content-type-options", b"nosniff")


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
        self.edge_options = {"stream": stream, "access_log": access_log}

    def build_middleware_stack(self):
        handlers = {k: v for k, v in self.exception_handlers.items() if k not in (500, Exception)}
        assert not self.user_middleware, "the outer layers live in Edge"
        return Edge(ExceptionMiddleware(self.router, handlers=handlers, debug=self.debug),
                    **self.edge_options)


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
            await asyncio.wait_for(stream.hub.connected.wait(), limits.READY_CHECK_TIMEOUT_S * 5)
        except asyncio.TimeoutError:
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
    app = App(routes=[*ROUTES, *stream.routes(), *web.routes(pages.web_page)], lifespan=lifespan,
              exception_handlers={
                  ApiError: _api_error, RedpollError: _redpoll_error, HTTPException: _http_error,
                  ClientDisconnect: _client_gone,
                  RedisConnectionError: _unavailable, RedisTimeout: _unavailable,
                  BusyLoadingError: _unavailable,
                  # a cluster without a master for some slots (one failed and
                  # not replaced yet) or moving them: an outage, not a crash
                  ClusterDownError: _unavailable, TryAgainError: _unavailable,
                  # a cluster none of whose nodes answers
                  RedisClusterException: _unavailable,
                  Exception: _crash},
              stream=stream, access_log=settings.access_log if access_log is None else access_log)
    app.state.settings = settings
    app.state.rendered = rendered
    return app
