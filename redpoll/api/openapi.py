"""The OpenAPI 3.1 document of the API (GET /openapi.json). Filled in below."""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from .http import JSON


def build(base: str = "") -> dict:
    return {"openapi": "3.1.0", "info": {"title": "Redpoll", "version": "0.1.0"}, "paths": {}}


async def document(request: Request) -> Response:
    return JSON(build(str(request.base_url).rstrip("/")))
