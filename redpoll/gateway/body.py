"""Reading a request body, bounded: the one body limit of the HTTP edge
(``limits.API_MAX_BODY_BYTES``) for REST and streams alike (the inboxes
pass their own, limits.FED_INBOX_MAX_BYTES), and the nesting bound of a
JSON body (``limits.JSON_MAX_DEPTH``), checked before it is parsed."""

from __future__ import annotations

from starlette.requests import Request

from ..core import limits
from .errors import WebError


async def read_body(
    request: Request, max_bytes: int = limits.API_MAX_BODY_BYTES, too_big: str = ""
) -> bytes:
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


#: bytes.translate's table and deletions for :func:`json_depth`: braces
#: made brackets, everything but brackets and quotes deleted.
_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_MARKS = bytes(b for b in range(256) if b not in b'[]{}"')


def json_depth(body: bytes, stop_at: int = limits.JSON_MAX_DEPTH) -> int:
    """How deep the arrays and objects of the JSON text ``body`` nest
    (brackets inside strings, escaped quotes included, do not count),
    counted on the raw bytes with C-speed passes (no parser, no recursion):
    escape pairs dropped, then strings, then innermost bracket pairs, one
    level a pass, stopping once past ``stop_at``. Brackets opened and never
    closed (not JSON) count as nested. It does not check that the text is
    JSON."""
    text = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    marks = text.translate(_AS_BRACKETS, _NOT_MARKS)
    outside = b"".join(marks.split(b'"')[::2])  # even parts: outside strings
    depth = 0
    while outside and depth <= stop_at:
        inner_gone = outside.replace(b"[]", b"")
        if len(inner_gone) == len(outside):  # unbalanced: what is left opens, unclosed
            return depth + inner_gone.count(b"[")
        outside, depth = inner_gone, depth + 1
    return depth


def check_json_depth(body: bytes, max_depth: int = limits.JSON_MAX_DEPTH) -> None:
    """Refuse (400) a JSON body nesting deeper than ``max_depth``."""
    if json_depth(body, max_depth) > max_depth:
        raise WebError(400, f"The JSON body nests deeper than {max_depth} levels")
