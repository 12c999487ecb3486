"""Bodies that never change while a process runs (the web app's files, the
OpenAPI document, the features document) answered compressed: brotli
(quality 11) where the client's Accept-Encoding takes it, else gzip (level
9), else as they are. Each body is compressed the first time a client asks
for that encoding and kept (:data:`_KEPT`), keyed by the name its caller
gives it, which must name that body's content (the static folder's version
with the file's name, a document's ETag): a changed body has a new name, so
a kept copy is never of another body. The set of such bodies is fixed (the
static folder, two documents), so the store is bounded by them. Every answer says ``Vary:
Accept-Encoding``. A body under limits.COMPRESS_MIN_BYTES, or one that would
not shrink, is sent as it is.

API answers are made per request: :func:`squeezed` compresses one at the
cheap levels limits names (redpoll.api.app.Edge decides which)."""

from __future__ import annotations

import gzip

import brotli
from starlette.requests import Request
from starlette.responses import Response

from ..core import limits

#: encodings in the order they are preferred
ENCODINGS = ("br", "gzip")
_KEPT: dict[tuple[str, str], bytes] = {}


def accepted(header: str) -> str | None:
    """The preferred encoding among :data:`ENCODINGS` that ``header`` (an
    Accept-Encoding) takes with a q above 0, or None."""
    taken: set[str] = set()
    for part in header.lower().split(","):
        name, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q > 0:
            taken.add(name.strip())
    for encoding in ENCODINGS:
        if encoding in taken or "*" in taken:
            return encoding
    return None


def encoded(name: str, body: bytes, encoding: str) -> bytes:
    """``body`` (the content ``name`` names) compressed with ``encoding``,
    made once and kept."""
    key = (name, encoding)
    kept = _KEPT.get(key)
    if kept is None:
        if encoding == "br":
            kept = brotli.compress(body, quality=11)
        else:
            kept = gzip.compress(body, compresslevel=9, mtime=0)
        _KEPT[key] = kept
    return kept


def squeezed(body: bytes, encoding: str) -> bytes:
    """``body`` (an API answer, made for one request) compressed with
    ``encoding`` at the API's levels (limits.API_BROTLI_QUALITY,
    limits.API_GZIP_LEVEL): cheap enough to run on every answer."""
    if encoding == "br":
        return brotli.compress(body, quality=limits.API_BROTLI_QUALITY, mode=brotli.MODE_TEXT)
    return gzip.compress(body, compresslevel=limits.API_GZIP_LEVEL, mtime=0)


def answer(
    request: Request, name: str, body: bytes, media_type: str, headers: dict[str, str]
) -> Response:
    """``body`` answered to ``request`` in the best encoding it accepts
    (``name``: what names its content, see the module)."""
    out = {**headers, "Vary": "Accept-Encoding"}
    encoding = accepted(request.headers.get("accept-encoding", ""))
    if encoding is not None and len(body) >= limits.COMPRESS_MIN_BYTES:
        packed = encoded(name, body, encoding)
        if len(packed) < len(body):
            out["Content-Encoding"] = encoding
            body = packed
    return Response(body, media_type=media_type, headers=out)
