"""What every endpoint answers with: JSON, the engine's errors in Mastodon's
shape (:func:`error_response`, :data:`ApiError`) and Mastodon's paging
Link header."""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import urlencode

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ..accounts import auth
from ..core.errors import RedpollError, ValidationError
from ..gateway.errors import WebError


class Asked(Protocol):
    """What :func:`link_header` reads of a request's context (api.context.Ctx)."""

    request: Request

    @property
    def base(self) -> str: ...


class JSON(Response):
    media_type = "application/json; charset=utf-8"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


#: The web layer's one error type (``redpoll.gateway.errors``), by its API name.
ApiError = WebError

NOT_FOUND = "Record not found"


def error_response(exc: RedpollError) -> JSON:
    """The engine's errors as Mastodon answers them."""
    if isinstance(exc, auth.OAuthError):
        return JSON({"error": exc.code, "error_description": exc.message}, status_code=exc.status)
    if isinstance(exc, ValidationError):
        return JSON({"error": f"Validation failed: {exc.message}"}, status_code=422)
    status = exc.status if 400 <= exc.status < 600 else 500
    if status == 404:
        return JSON({"error": NOT_FOUND}, status_code=404)
    if status == 409:  # a taken name or clashing state: Mastodon says 422
        return JSON({"error": f"Validation failed: {exc.message}"}, status_code=422)
    return JSON({"error": exc.message}, status_code=status)


def link_header(ctx: Asked, items: list, key=lambda item: item.id, *, prev: bool = True) -> dict:
    """Mastodon's Link header: next = older (max_id), prev = newer (min_id)."""
    if not items:
        return {}
    url = ctx.base + ctx.request.scope["path"]  # what request.url.path is, unparsed
    keep = urlencode(
        {
            k: v
            for k, v in ctx.request.query_params.multi_items()
            if k not in ("max_id", "min_id", "since_id")
        }
    )
    url += f"?{keep}&" if keep else "?"
    # cursors are integers: nothing in them to quote
    links = [f'<{url}max_id={int(key(items[-1]))}>; rel="next"']
    if prev:
        links.append(f'<{url}min_id={int(key(items[0]))}>; rel="prev"')
    return {"Link": ", ".join(links)}
