"""The HTTP endpoints of media: uploads (``/api/v1/media``, ``/api/v2/media``),
reading and describing one's unattached uploads, and the stored files
(``/system/media/...``). The web layer: handlers parse, call the engine,
render; nothing below the web layer imports this module.
"""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from .. import limits
from ..api.http import JSON, NOT_FOUND, ApiError, Ctx, endpoint, parse_params
from ..errors import ValidationError
from . import storage
from .uploads import FAILED, PROCESSING, Upload

TOO_BIG = (f"File too large: images up to {limits.MEDIA_IMAGE_MAX_BYTES // (1024 * 1024)} MB "
           f"({limits.MEDIA_IMAGE_MAX_BYTES} bytes) are accepted")
FILE_HEADERS = {"Cache-Control": f"public, max-age={limits.MEDIA_CACHE_MAX_AGE_S}, immutable",
                "X-Content-Type-Options": "nosniff"}


async def upload_form(ctx: Ctx, max_bytes: int) -> dict[str, bytes]:
    """The request's parameters (into ``ctx.params``) and its files by field."""
    files: dict[str, bytes] = {}
    ctx.params = await parse_params(ctx.request, files, max_bytes, TOO_BIG)
    return files


def _file(files: dict[str, bytes], ctx: Ctx) -> bytes:
    if ctx.params.has("thumbnail") or "thumbnail" in files:
        raise ValidationError("thumbnail", "custom thumbnails are for video and audio, which "
                                           "are not supported yet")
    data = files.get("file")
    if data is None:
        raise ValidationError("file", "is missing (send the image as multipart form data)")
    if len(data) > limits.MEDIA_IMAGE_MAX_BYTES:
        raise ApiError(413, TOO_BIG)
    return data


async def _upload(ctx: Ctx, wait: bool) -> Upload:
    files = await upload_form(ctx, limits.MEDIA_UPLOAD_MAX_BODY_BYTES)
    data = _file(files, ctx)
    p = ctx.params
    return await ctx.rp.upload_media(
        ctx.uid, data, description=p.str("description", max_chars=10**6),
        focus=p.str("focus", max_chars=100), wait=wait)


def _answer(ctx: Ctx, upload: Upload, status: int = 200) -> Response:
    if upload.state == FAILED:  # as Mastodon answers a failed processing
        raise ApiError(422, upload.error or "Error processing the uploaded media")
    if upload.state == PROCESSING and status == 200:
        status = 206
    return JSON(upload.entity(ctx.base), status_code=status)


@endpoint(auth="required", scope="write:media", params=False)
async def upload_v2(ctx: Ctx) -> Response:
    """202 with ``url`` null while the image is processed (GET
    /api/v1/media/:id then answers 206 until it is ready, 200 after)."""
    upload = await _upload(ctx, wait=False)
    return _answer(ctx, upload, 202 if upload.state == PROCESSING else 200)


@endpoint(auth="required", scope="write:media", params=False)
async def upload_v1(ctx: Ctx) -> Response:
    """Processed before the answer: 200 with every URL."""
    return _answer(ctx, await _upload(ctx, wait=True))


@endpoint(auth="required", scope="write:media")
async def get_media(ctx: Ctx) -> Response:
    """One's own upload, while not attached (as Mastodon; 404 otherwise)."""
    return _answer(ctx, await ctx.rp.media_attachment(ctx.uid, ctx.path_id()))


@endpoint(auth="required", scope="write:media", params=False)
async def update_media(ctx: Ctx) -> Response:
    files = await upload_form(ctx, limits.API_MAX_BODY_BYTES)
    if ctx.params.has("thumbnail") or "thumbnail" in files:
        raise ValidationError("thumbnail", "custom thumbnails are for video and audio, which "
                                           "are not supported yet")
    p = ctx.params
    description = p.str("description", max_chars=10**6)
    if description is None and p.raw("description") == "":
        description = ""
    return _answer(ctx, await ctx.rp.media_attachment(
        ctx.uid, ctx.path_id(), description=description, focus=p.str("focus", max_chars=100)))


async def media_file(request: Request) -> Response:
    """A stored file (the local backend's): by its name alone, to whoever
    asks (names are unguessable; docs/design.md, "Media"); cached for a
    year (a name never changes content)."""
    params = request.path_params
    name = f"{params['d1']}/{params['d2']}/{params['file']}"
    path = request.app.state.rp.media_file(name)
    if path is None or not path.is_file():  # (a name that is not a stored name: None)
        raise ApiError(404, NOT_FOUND)
    return FileResponse(path, media_type=storage.CONTENT_TYPES[name.rsplit(".", 1)[1]],
                        headers=FILE_HEADERS)


ROUTES = [
    Route("/api/v2/media", upload_v2, methods=["POST"]),
    Route("/api/v1/media", upload_v1, methods=["POST"]),
    Route("/api/v1/media/{id}", get_media, methods=["GET"]),
    Route("/api/v1/media/{id}", update_media, methods=["PUT"]),
    Route(storage.URL_PATH + "/{d1}/{d2}/{file}", media_file, methods=["GET"]),
]
