"""Reading a request body, bounded: the one body limit of the HTTP edge
(``limits.API_MAX_BODY_BYTES``) for REST and streams alike."""
from __future__ import annotations

from starlette.requests import Request

from ..core import limits
from .errors import WebError


async def read_body(request: Request, max_bytes: int = limits.API_MAX_BODY_BYTES,
                    too_big: str = "") -> bytes:
    """The body, refused with 413 once it passes ``max_bytes`` (by default
    ``limits.API_MAX_BODY_BYTES``; uploads have their own bound), at once
    when Content-Length says so, with the message ``too_big``. A client
    that leaves mid-body raises Starlette's ``ClientDisconnect``."""
    cached = getattr(request, "_body", None)
    if cached is not None:
        return cached
    refused = WebError(413, too_big or f"Request body larger than {max_bytes} bytes")
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise WebError(400, "Invalid Content-Length")
        if int(length) > max_bytes:
            raise refused
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise refused
        chunks.append(chunk)
    body = b"".join(chunks)
    request._body = body  # starlette's own cache: request.form() reads it from here
    return body
