"""A member's archive of their posts and media (redpoll.portability.archive),
as Mastodon's "Request your archive" (its web settings, ``/settings/export``,
which has no REST API): Redpoll's are bearer-token endpoints. An archive is
made by a job; once ``ready`` its ZIP is offered to its owner only, until
it is removed (limits.ARCHIVE_KEPT_S after it was asked for)."""

from __future__ import annotations

from starlette.responses import FileResponse, Response

from ..core import limits
from ..portability import archive
from ..render.entities import iso
from .context import Ctx
from .contract import INT, STR, Doc, array, obj, path_param
from .responses import JSON
from .routing import endpoint

ARCHIVE = obj(
    {
        "id": STR,
        "state": {"enum": ["processing", "ready"]},
        "created_at": {"type": "string", "format": "date-time"},
        "expires_at": {"type": "string", "format": "date-time"},
        "size": INT,
        "url": {"type": ["string", "null"], "description": "the ZIP, when ready"},
    }
)


def entity(found: archive.Archive, base: str) -> dict:
    ready = found.state == "ready"
    return {
        "id": str(found.id),
        "state": found.state,
        "created_at": iso(found.created_at),
        "expires_at": iso(found.expires_at),
        "size": found.size if ready else 0,
        "url": f"{base}/api/v1/redpoll/archives/{found.id}/file" if ready else None,
    }


@endpoint(
    "POST",
    "/api/v1/redpoll/archives",
    auth="required",
    scope="write",
    doc=Doc(
        "Request an archive of one's posts and media (a ZIP: actor.json, "
        "outbox.json, likes.json, bookmarks.json, the media files); 202, made "
        f"by a job; one every {limits.ARCHIVE_INTERVAL_S // 86400} days "
        "(429 with Retry-After before)",
        "Accounts",
        ARCHIVE,
        ok_status="202",
    ),
)
async def start(ctx: Ctx) -> Response:
    try:
        found = await ctx.rp.archives.start(ctx.uid, ctx.base)
    except archive.ArchiveTooSoon as exc:
        # a limit in time, not a malformed request: 429 and when to ask again
        return JSON(
            {"error": exc.message},
            status_code=429,
            headers={"Retry-After": str(exc.retry_after_s)},
        )
    return JSON(entity(found, ctx.base), status_code=202)


@endpoint(
    "GET",
    "/api/v1/redpoll/archives",
    auth="required",
    scope="read",
    doc=Doc("One's archives, newest first", "Accounts", array(ARCHIVE)),
)
async def listed(ctx: Ctx) -> Response:
    return JSON([entity(found, ctx.base) for found in await ctx.rp.archives.listed(ctx.uid)])


@endpoint(
    "GET",
    "/api/v1/redpoll/archives/{id}",
    auth="required",
    scope="read",
    doc=Doc("One archive and whether it is ready", "Accounts", ARCHIVE, params=[path_param()]),
)
async def one(ctx: Ctx) -> Response:
    return JSON(entity(await ctx.rp.archives.get(ctx.uid, ctx.path_id()), ctx.base))


@endpoint(
    "GET",
    "/api/v1/redpoll/archives/{id}/file",
    auth="required",
    scope="read",
    doc=Doc(
        "The ZIP of a ready archive, for its owner only (404 otherwise)",
        "Accounts",
        STR,
        ok_type="application/zip",
        params=[path_param()],
    ),
)
async def file(ctx: Ctx) -> Response:
    found, path = await ctx.rp.archives.ready_file(ctx.uid, ctx.path_id())
    # streamed from the file in chunks (FileResponse), never read whole
    return FileResponse(
        path,
        media_type="application/zip",
        filename=found.file,
        headers={"Cache-Control": "private, no-store"},
    )
