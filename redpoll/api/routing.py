"""Routes, declared where a handler is written: ``@endpoint("GET", path,
auth=..., scope=..., doc=Doc(...))`` (or ``@route`` for a plain Starlette
handler), with its OpenAPI description (redpoll.api.contract.Doc). The app
collects the declared routes of the modules it assembles (:func:`declared`)
and /openapi.json is built from the same declarations, so a route and its
contract cannot drift apart; :func:`in_order` orders them (literal before
pattern) and :class:`IndexedRouter` tries only those that can match."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route, Router, WebSocketRoute, get_route_path

from .context import Ctx, Handler
from .params import parse_params


@dataclass(frozen=True)
class Declared:
    """One route a handler answers, as its decorator declared it."""

    method: str
    path: str
    doc: Any  # redpoll.api.contract.Doc
    auth: str
    scope: str | tuple | None


def route(
    method: str, path: str, *, doc: Any, auth: str = "none", scope: str | tuple | None = None
):
    """Declare that a plain Starlette handler answers ``method path`` (and
    how ``doc`` describes it); stacked, one handler answers several."""

    def mark(fn):
        fn.routes = [*getattr(fn, "routes", ()), Declared(method, path, doc, auth, scope)]
        return fn

    return mark


def endpoint(
    method: str,
    path: str,
    *,
    auth: str = "optional",
    scope: str | tuple | None = None,
    user: bool = True,
    params: bool = True,
    standing: bool = True,
    doc: Any,
):
    """Declare that a handler answers ``method path`` and wrap it: ``auth``
    is 'required' (401 without a valid token), 'optional' (a token, when
    sent, must be valid) or 'none'; ``scope`` is the scope a token must grant
    (a tuple: any one of them); ``user`` means a user token (not an app
    token) is needed when auth is required, and then, unless ``standing``
    is False, a login in good standing (Mastodon's ``require_user!``: 403
    for an account whose e-mail is unconfirmed); ``doc`` describes it in the
    OpenAPI document (the auth and scope are these)."""

    def wrap(fn: Handler):
        @functools.wraps(fn)
        async def handler(request: Request) -> Response:
            ctx = Ctx(request)
            if auth != "none":
                await ctx.authenticate(auth == "required", scope, user, standing)
            else:
                await ctx._ip_hit()
            if params:
                ctx.params = await parse_params(request)
            response = await fn(ctx)
            if ctx.rate is not None:
                response.headers.update(ctx.rate.headers())
            return response

        handler.routes = [Declared(method, path, doc, auth, scope)]  # type: ignore[attr-defined]
        return handler

    return wrap


def declared(modules: Iterable[ModuleType]) -> list[tuple[Declared, Callable]]:
    """Every route the handlers of ``modules`` declared, with its handler."""
    out = []
    for module in modules:
        for value in vars(module).values():
            routes = getattr(value, "routes", None)
            if getattr(value, "__module__", None) == module.__name__ and isinstance(routes, list):
                out += [(d, value) for d in routes]
    return out


def _shape(path: str) -> tuple:
    """Literal path segments sort before parameters at the same place, so a
    literal route ('/accounts/lookup') is tried before a pattern that would
    also match it ('/accounts/{id}')."""
    return tuple("{" in part for part in path.strip("/").split("/"))


def in_order(routes: list, first: tuple[str, ...] = ()) -> list:
    """Routes in the order they are tried (:class:`IndexedRouter` tries, in
    this order, only those that can match a path): the paths in ``first``,
    then the API's, each group with literal before pattern. Raises if a
    route would still hide a later one (a bug in the route table, found
    when the app is built, not by a client)."""
    ordered = sorted(
        routes,
        key=lambda r: (
            first.index(r.path) if r.path in first else len(first),
            not r.path.startswith("/api/"),
            _shape(r.path),
            r.path,
        ),
    )
    for i, later in enumerate(ordered):
        sample = later.path.replace("{", "").replace("}", "")
        methods = getattr(later, "methods", None) or {"WEBSOCKET"}
        for earlier in ordered[:i]:
            hides = earlier.path_regex.match(sample) and earlier.path != later.path
            if hides and methods & (getattr(earlier, "methods", None) or {"WEBSOCKET"}):
                raise RuntimeError(f"route {earlier.path} hides {later.path}")
    return ordered


def _key(route) -> tuple:
    """Which paths a route can match, as far as its path's text tells: the
    literal segments it starts with (up to its first parameter); for a
    Route or WebSocketRoute without a ``:path`` parameter (whose parameters
    each match one segment), its number of segments and its last segment
    when that is literal. Anything else (a Mount, a route without a path)
    keeps only what it surely has."""
    path = getattr(route, "path", None)
    if not isinstance(path, str):
        return (), None, None
    segments = path.split("/")[1:]
    head = []
    for segment in segments:
        if "{" in segment:
            break
        head.append(segment)
    if not isinstance(route, (Route, WebSocketRoute)) or ":path}" in path:
        return tuple(head), None, None
    last = segments[-1] if "{" not in segments[-1] else None
    return tuple(head), len(segments), last


class IndexedRouter(Router):
    """Starlette's router, trying only the routes that can match a path.

    Starlette tries every route in order (a regular expression each, ~1-2
    µs): a request for a route late in a table of ~200 paid for all before
    it. Here the routes are indexed by :func:`_key`; a request tries, in the
    table's order, the routes whose key its path fits. Invariant: a route
    whose pattern can match a path is among those tried (a pattern matches
    only paths that start with its literal head; one whose parameters each
    match one segment, only paths of its length ending in its literal last
    segment), so the first full match, and the first partial one (a 405),
    are Starlette's (tests/api/test_routes.py checks every route of the
    app). When none matches, Starlette's own pass decides (redirecting a
    trailing slash, the 404)."""

    def _index(self) -> dict[tuple, list]:
        if getattr(self, "_indexed", None) != len(self.routes):  # routes added later
            index: dict[tuple, list] = {}
            for i, route in enumerate(self.routes):
                index.setdefault(_key(route), []).append((i, route))
            self._by_key, self._indexed, self._literal = index, len(self.routes), {}
            # the paths of literal routes (the home timeline, the instance...)
            # are asked for as they are: their candidates found once
            paths = (getattr(r, "path", None) for r in self.routes)
            literal = {p for p in paths if isinstance(p, str) and "{" not in p}
            self._literal = {path: self._candidates(path) for path in literal}
        return self._by_key

    def candidates(self, path: str) -> list:
        """The routes that can match ``path``, in the table's order."""
        self._index()
        found = self._literal.get(path)
        return found if found is not None else self._candidates(path)

    def _candidates(self, path: str) -> list:
        index, found = self._by_key, []
        segments = path.split("/")[1:]
        count, last = len(segments), segments[-1]
        for n in range(count + 1):
            head = tuple(segments[:n])
            for key in ((head, count, last), (head, count, None), (head, None, None)):
                bucket = index.get(key)
                if bucket:
                    found += bucket
        found.sort(key=lambda pair: pair[0])
        return [route for _, route in found]

    async def app(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            return await super().app(scope, receive, send)
        scope.setdefault("router", self)
        partial = None
        for route in self.candidates(get_route_path(scope)):
            match, child_scope = route.matches(scope)
            if match is Match.FULL:
                scope["route"] = route
                scope.update(child_scope)
                return await route.handle(scope, receive, send)
            if match is Match.PARTIAL and partial is None:
                partial, partial_scope = route, child_scope
        if partial is not None:  # the path matches, the method does not: a 405
            scope["route"] = partial
            scope.update(partial_scope)
            return await partial.handle(scope, receive, send)
        await super().app(scope, receive, send)  # a redirect or the 404, as Starlette decides
