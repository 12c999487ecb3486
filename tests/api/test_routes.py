"""The route table: each handler declares its route and its contract where
it is written (redpoll.api.http.endpoint / route); the app assembles the
declaring modules and orders the routes so that none hides another."""
from __future__ import annotations

import importlib
import pkgutil

import pytest
from starlette.routing import Route

import redpoll.api
from redpoll.api.app import MODULES, ROUTES, create_app
from redpoll.api.contract import build
from redpoll.api.http import declared, in_order


async def _noop(request):  # a handler for the table tests
    return None


def test_a_literal_route_is_tried_before_a_pattern_that_matches_it():
    ordered = in_order([Route("/a/{id}", _noop), Route("/a/b", _noop), Route("/c", _noop)],
                       first=("/c",))
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
