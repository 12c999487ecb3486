"""The one error type of the HTTP edge: REST handlers, SSE, WebSocket and the
v1.1 streams all raise :class:`WebError`; each surface writes it in the shape
its clients expect (Mastodon ``{"error": ...}``; v1.1 ``{"errors": [{"code",
"message"}]}``; a WebSocket error frame ``{"error", "status"}``).
"""

from __future__ import annotations

import orjson
from starlette.responses import Response


class WebError(Exception):
    """An answer other than success: ``status``, a message for people,
    headers to send with it, and extra fields of the Mastodon body."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None, **extra):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.extra = extra

    def body(self) -> dict:
        """Mastodon's shape."""
        return {"error": self.message, **self.extra}

    def twitter_body(self) -> dict:
        """Twitter v1.1's shape (with Mastodon's ``error`` too)."""
        return {"errors": [{"code": self.status, "message": self.message}], "error": self.message}

    def response(self) -> Response:
        return Response(
            orjson.dumps(self.body()),
            status_code=self.status,
            headers=self.headers,
            media_type="application/json; charset=utf-8",
        )

    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """The headers as an ASGI ``http.response.start`` message wants them."""
        return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in self.headers.items()]
