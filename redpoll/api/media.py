"""The HTTP endpoints of media: uploads (``/api/v1/media``, ``/api/v2/media``),
reading and describing one's unattached uploads, and the stored files
(``/system/media/...``). The web layer: handlers parse, call the engine,
render; nothing below the web layer imports this module.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response

from ..core import limits
from ..core.errors import NotFound, ValidationError
from ..gateway import links
from ..media import entity, storage
from ..media.uploads import FAILED, PROCESSING, Upload
from .context import Ctx, path_id
from .contract import Doc, path_param, ref, request_body
from .params import parse_params
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint, route

TOO_BIG = (
    f"File too large: images up to {limits.MEDIA_IMAGE_MAX_BYTES // (1024 * 1024)} MB "
    f"({limits.MEDIA_IMAGE_MAX_BYTES} bytes) are accepted"
)
FILE_HEADERS = {"Cache-Control": storage.CACHE_CONTROL, "X-Content-Type-Options": "nosniff"}


async def upload_form(ctx: Ctx, max_bytes: int) -> dict[str, bytes]:
    """The request's parameters (into ``ctx.params``) and its files by field."""
    files: dict[str, bytes] = {}
    ctx.params = await parse_params(ctx.request, files, max_bytes, TOO_BIG)
    return files


def _file(files: dict[str, bytes], ctx: Ctx) -> bytes:
    if ctx.params.has("thumbnail") or "thumbnail" in files:
        raise ValidationError(
            "thumbnail", "custom thumbnails are for video and audio, which are not supported yet"
        )
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
    return await ctx.rp.media.upload(
        ctx.uid,
        data,
        description=p.str("description", max_chars=10**6),
        focus=p.str("focus", max_chars=100),
        wait=wait,
    )


MEDIA = ref("MediaAttachment")
FOCUS = {"type": "string", "pattern": "^-?[0-9.]+,-?[0-9.]+$"}
UPLOAD = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {
                        "type": "string",
                        "format": "binary",
                        "description": "JPEG, PNG, WebP or GIF, at most "
                        f"{limits.MEDIA_IMAGE_MAX_BYTES} bytes and "
                        f"{limits.MEDIA_IMAGE_MATRIX_MAX} pixels",
                    },
                    "description": {
                        "type": "string",
                        "maxLength": limits.MEDIA_DESCRIPTION_MAX_CHARS,
                    },
                    "focus": FOCUS,
                },
            }
        }
    },
}
DIGITS = {"type": "string", "pattern": "^[0-9a-f]{2}$"}


def _answer(ctx: Ctx, upload: Upload, status: int = 200) -> Response:
    if upload.state == FAILED:  # as Mastodon answers a failed processing
        raise ApiError(422, upload.error or "Error processing the uploaded media")
    if upload.state == PROCESSING and status == 200:
        status = 206
    return JSON(upload.entity(ctx.base), status_code=status)


@endpoint(
    "POST",
    "/api/v2/media",
    auth="required",
    scope="write:media",
    params=False,
    doc=Doc(
        "Upload an image; 202 with url null while it is processed",
        "Media",
        MEDIA,
        body=UPLOAD,
        ok_status="202",
        also=("200",),
    ),
)
async def upload_v2(ctx: Ctx) -> Response:
    """202 with ``url`` null while the image is processed (GET
    /api/v1/media/:id then answers 206 until it is ready, 200 after)."""
    upload = await _upload(ctx, wait=False)
    return _answer(ctx, upload, 202 if upload.state == PROCESSING else 200)


@endpoint(
    "POST",
    "/api/v1/media",
    auth="required",
    scope="write:media",
    params=False,
    doc=Doc("Upload an image, processed before the answer", "Media", MEDIA, body=UPLOAD),
)
async def upload_v1(ctx: Ctx) -> Response:
    """Processed before the answer: 200 with every URL."""
    return _answer(ctx, await _upload(ctx, wait=True))


@endpoint(
    "GET",
    "/api/v1/media/{id}",
    auth="required",
    scope="write:media",
    doc=Doc(
        "One of your uploads not attached to a status: 206 while processing, 200 ready",
        "Media",
        MEDIA,
        params=[path_param()],
        also=("206",),
    ),
)
async def get_media(ctx: Ctx) -> Response:
    """One's own upload, while not attached (as Mastodon; 404 otherwise)."""
    return _answer(ctx, await ctx.rp.media.attachment(ctx.uid, ctx.path_id()))


@endpoint(
    "DELETE",
    "/api/v1/media/{id}",
    auth="required",
    scope="write:media",
    doc=Doc(
        "Delete one of your uploads not attached to a status (Mastodon 4.4): an empty "
        "object; 422 while a status uses it",
        "Media",
        {"type": "object", "maxProperties": 0},
        params=[path_param()],
    ),
)
async def delete_media(ctx: Ctx) -> Response:
    await ctx.rp.media.delete_attachment(ctx.uid, ctx.path_id())
    return JSON({})


@endpoint(
    "PUT",
    "/api/v1/media/{id}",
    auth="required",
    scope="write:media",
    params=False,
    doc=Doc(
        "Describe an upload not attached yet (description, focus)",
        "Media",
        MEDIA,
        params=[path_param()],
        also=("206",),
        body=request_body(
            {
                "description": {"type": "string", "maxLength": limits.MEDIA_DESCRIPTION_MAX_CHARS},
                "focus": FOCUS,
            }
        ),
    ),
)
async def update_media(ctx: Ctx) -> Response:
    files = await upload_form(ctx, limits.API_MAX_BODY_BYTES)
    if ctx.params.has("thumbnail") or "thumbnail" in files:
        raise ValidationError(
            "thumbnail", "custom thumbnails are for video and audio, which are not supported yet"
        )
    p = ctx.params
    description = p.str("description", max_chars=10**6)
    if description is None and p.raw("description") == "":
        description = ""
    return _answer(
        ctx,
        await ctx.rp.media.attachment(
            ctx.uid, ctx.path_id(), description=description, focus=p.str("focus", max_chars=100)
        ),
    )


@route(
    "GET",
    storage.URL_PATH + "/{d1}/{d2}/{file}",
    doc=Doc(
        "A stored file (by its unguessable name; cached for a year)",
        "Media",
        {"type": "string", "format": "binary"},
        ok_type="image/jpeg",
        params=[
            {"name": "d1", "in": "path", "required": True, "schema": DIGITS},
            {"name": "d2", "in": "path", "required": True, "schema": DIGITS},
            {
                "name": "file",
                "in": "path",
                "required": True,
                "schema": {
                    "type": "string",
                    "pattern": "^[0-9a-f]{32}[.](jpg|png|webp|gif|mp4|webm|m4a|mp3|ogg|wav|flac)$",
                },
            },
        ],
    ),
)
async def media_file(request: Request) -> Response:
    """A stored file (the local backend's): by its name alone, to whoever
    asks (names are unguessable; docs/design.md, "Media"); cached for a
    year (a name never changes content)."""
    params = request.path_params
    name = f"{params['d1']}/{params['d2']}/{params['file']}"
    path = request.app.state.rp.media.file(name)
    if path is None or not path.is_file():  # (a name that is not a stored name: None)
        raise ApiError(404, NOT_FOUND)
    return FileResponse(
        path, media_type=storage.CONTENT_TYPES[name.rsplit(".", 1)[1]], headers=FILE_HEADERS
    )


def _proxy_doc(summary: str, params: list) -> Doc:
    return Doc(
        summary,
        "Media",
        None,
        params=params,
        ok_type="text/plain",
        ok_status="302",
        extra_headers={"Location": {"schema": {"type": "string", "format": "uri"}}},
    )


def _str_param(name: str, pattern: str) -> dict:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": pattern},
    }


async def _to(request: Request, where) -> Response:
    """A redirect to ``await where`` (a path here or a URL elsewhere); not
    cached: once the copy is kept here, the client is to be sent there. As
    the stored files, not rate limited (a page shows many images)."""
    try:
        url = await where
    except NotFound:
        raise ApiError(404, NOT_FOUND) from None
    rp = request.app.state.rp
    target = links.base_url(request.scope, rp.settings.public_url) + url if url[:1] == "/" else url
    # an empty text/plain body, as documented (schemathesis checks the type)
    return RedirectResponse(
        target, 302, headers={"Cache-Control": "no-store", "Content-Type": "text/plain"}
    )


@route(
    "GET",
    entity.PROXY_PATH + "/{sid}/{aid}/{token}/{style}",
    doc=_proxy_doc(
        "Another server's attachment: to the copy kept here, or (its fetch "
        "queued) to its server (Mastodon's media proxy)",
        [
            _str_param("sid", "^[0-9]+$"),
            _str_param("aid", "^[0-9]+$"),
            _str_param("token", "^[0-9a-f]{16}$"),
            _str_param("style", "^(original|small)$"),
        ],
    ),
)
async def media_proxy(request: Request) -> Response:
    p = request.path_params
    sid, aid = path_id(request, "sid"), path_id(request, "aid")
    rp = request.app.state.rp
    return await _to(request, rp.media.proxy(sid, aid, p["token"], p["style"]))


@route(
    "GET",
    entity.PROXY_PATH + "/emoji/{host}/{shortcode}",
    doc=_proxy_doc(
        "A remote custom emoji's image: to the copy kept here (404 while it is "
        "fetched, its fetch queued; never to its server)",
        [_str_param("host", "^[0-9a-f]{32}$"), _str_param("shortcode", "^[A-Za-z0-9_]+$")],
    ),
)
async def media_proxy_emoji(request: Request) -> Response:
    p = request.path_params
    return await _to(request, request.app.state.rp.media.proxy_emoji(p["host"], p["shortcode"]))


@route(
    "GET",
    entity.PROXY_PATH + "/cards/{sid}/{part}",
    doc=_proxy_doc(
        "A link preview card's image: to the copy kept here (404 while it is "
        "fetched again, its fetch queued; never to its server)",
        [_str_param("sid", "^[0-9]+$"), _str_param("part", "^[0-9a-f]{64}[.][0-9]+$")],
    ),
)
async def media_proxy_card(request: Request) -> Response:
    # (sid 0: a trending link's card, which no status names)
    sid = 0 if request.path_params["sid"] == "0" else path_id(request, "sid")
    part = request.path_params["part"]
    if len(part) >= 90:
        raise ApiError(404, NOT_FOUND)
    return await _to(request, request.app.state.rp.media.proxy_card(sid, part))


@route(
    "GET",
    entity.PROXY_PATH + "/accounts/{uid}/{kind}",
    doc=_proxy_doc(
        "A remote account's avatar or header: to the copy kept here, or (its "
        "fetch queued) to its server",
        [_str_param("uid", "^[0-9]+$"), _str_param("kind", "^(avatar|header)$")],
    ),
)
async def media_proxy_profile(request: Request) -> Response:
    uid = path_id(request, "uid")
    return await _to(
        request, request.app.state.rp.media.proxy_profile(uid, request.path_params["kind"])
    )
