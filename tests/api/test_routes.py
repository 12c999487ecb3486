"""The route table: each handler declares its route and its contract where
it is written (redpoll.api.routing.endpoint / route); the app assembles the
declaring modules and orders the routes so that none hides another."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from starlette.routing import Route

import redpoll.api
from redpoll.api.app import MODULES, ROUTES, create_app
from redpoll.api.contract import build
from redpoll.api.routing import declared, in_order


async def _noop(request):  # a handler for the table tests
    return None


def test_a_literal_route_is_tried_before_a_pattern_that_matches_it():
    ordered = in_order(
        [Route("/a/{id}", _noop), Route("/a/b", _noop), Route("/c", _noop)], first=("/c",)
    )
    assert [r.path for r in ordered] == ["/c", "/a/b", "/a/{id}"]


def test_two_routes_one_hiding_the_other_are_refused_when_the_app_is_built():
    with pytest.raises(RuntimeError, match="hides"):
        in_order([Route("/a/{x}", _noop, methods=["GET"]), Route("/a/{y}", _noop, methods=["GET"])])


def test_every_module_that_declares_routes_is_assembled():
    """A handler declared in a module the app does not assemble would be a
    route that silently is not there."""
    for info in pkgutil.iter_modules(redpoll.api.__path__):
        module = importlib.import_module(f"redpoll.api.{info.name}")
        if declared([module]):
            assert module in MODULES, f"redpoll.api.{info.name} declares routes; add it to MODULES"


def test_the_app_routes_and_the_document_name_the_same_operations():
    routed = {(r.path, m.lower()) for r in ROUTES for m in r.methods - {"HEAD"}}
    documented = {(p, m) for p, item in build(create_app().routes)["paths"].items() for m in item}
    assert routed == documented


def test_a_handler_that_takes_two_scopes_documents_both():
    op = build(ROUTES)["paths"]["/api/v1/accounts/verify_credentials"]["get"]
    assert op["security"] == [{"bearer": ["read:accounts"]}, {"bearer": ["profile"]}]


def _first_match(routes, path: str, method: str):
    """Starlette's own rule: the first route that matches fully, else the
    first that matches but for the method (a 405), else None."""
    from starlette.routing import Match

    scope = {"type": "http", "path": path, "method": method, "root_path": ""}
    partial = None
    for route in routes:
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return route, "full"
        if match is Match.PARTIAL and partial is None:
            partial = route
    return (partial, "partial") if partial is not None else (None, None)


def _samples(path: str) -> list[str]:
    import re

    return [re.sub(r"\{[^}]+\}", fill, path) for fill in ("123", "abc", "a.b")]


def test_the_indexed_router_picks_the_route_starlette_would_for_every_route():
    """IndexedRouter tries only the routes whose literal head a path starts
    with; for every route of the app (and paths beside them) it must pick
    the same route as Starlette's scan of the whole table."""
    app = create_app()
    router, routes = app.router, app.routes
    paths = {
        p for r in routes if isinstance(getattr(r, "path", None), str) for p in _samples(r.path)
    }
    paths |= {p + "/" for p in list(paths)} | {p + "/extra" for p in list(paths)} | {"/", "/nope"}
    for path in sorted(paths):
        tried = router.candidates(path)
        for method in ("GET", "POST", "DELETE"):
            want = _first_match(routes, path, method)
            assert _first_match(tried, path, method) == want, (path, method)
    # it does try fewer: a thread's path is matched against a handful, not the table
    assert len(router.candidates("/api/v1/statuses/123/context")) < len(routes) / 10


async def test_the_indexed_router_answers_like_starlette_over_http():
    import httpx
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse

    from redpoll.api.routing import IndexedRouter

    async def named(request):
        return PlainTextResponse(request.scope["route"].path)

    table = [
        Route("/a/b", named, methods=["GET"]),
        Route("/a/{x}", named, methods=["GET"]),
        Route("/a/{x}/c", named, methods=["POST"]),
        Route("/d/", named, methods=["GET"]),
    ]
    app = Starlette(routes=table)
    app.router = IndexedRouter(table)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as http:
        assert (await http.get("/a/b")).text == "/a/b"
        assert (await http.get("/a/q")).text == "/a/{x}"
        assert (
            await http.get("/a/q/c")
        ).status_code == 405  # the path matches, the method does not
        assert (await http.post("/a/q/c")).text == "/a/{x}/c"
        moved = await http.get("/d")  # Starlette's own pass redirects the missing slash
        assert moved.status_code == 307 and moved.headers["location"] == "http://t/d/"
        assert (await http.get("/nowhere")).status_code == 404
