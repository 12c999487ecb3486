"""The base URL (``scheme://host[:port]``) of the links a client is sent.

``REDPOLL_PUBLIC_URL`` (``Settings.public_url``), when set, is every link's
base. Otherwise each client gets the base of its own request (its ``Host``
header and scheme, validated by Starlette as ``request.base_url`` does), so
one client's ``Host`` never shows up in what another client is sent, on REST
pages and on stream events alike.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection

from ..core import limits
from ..core.memo import Bounded

#: Starlette's base_url costs ~40 µs; its answer is kept per distinct inputs.
_BASES: Bounded[str] = Bounded(limits.API_BASE_URLS_KEPT)
_HTTP = {"ws": "http", "wss": "https"}


def base_url(scope, public_url: str | None = None) -> str:
    """The link base for the request (HTTP or WebSocket) in ``scope``."""
    if public_url:
        return public_url
    host = None
    for name, value in scope["headers"]:
        if name == b"host":
            host = value
            break
    key = (
        scope.get("scheme"),
        host,
        scope.get("root_path"),
        scope.get("app_root_path"),
        scope.get("server"),
    )
    base = _BASES.get(key)
    if base is None:
        url = HTTPConnection(scope).base_url
        scheme = _HTTP.get(url.scheme, url.scheme)
        base = str(url.replace(scheme=scheme)).rstrip("/")
        _BASES.put(key, base)
    return base
