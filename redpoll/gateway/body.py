"""Reading a request body, bounded: the one body limit of the HTTP edge
(``limits.API_MAX_BODY_BYTES``) for REST and streams alike."""
from __future__ import annotations

from starlette.requests import Request

from ..core import limits
from .errors import WebError


async def read_body(request: Request) -> bytes:
    """The body, refused with 413 once it passes ``limits.API_MAX_BODY_BYTES``
    (at once when Content-Length says so). A client that leaves mid-body
    raises Starlette's ``ClientDisconnect``."""
    cached = getattr(request, "_body", None)
    if cached is not None:
        return cached
    too_big = WebError(413, f"Request body larger than {limits.API_MAX_BODY_BYTES} bytes")
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise WebError(400, "Invalid Content-Length")
        if int(length) > limits.API_MAX_BODY_BYTES:
            raise too_big
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limits.API_MAX_BODY_BYTES:
            raise too_big
        chunks.append(chunk)
    body = b"".join(chunks)
    request._body = body  # starlette's own cache: request.form() reads it from here
    return body
