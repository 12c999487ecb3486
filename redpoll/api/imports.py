"""A member's CSV imports (redpoll.portability.imports): the files
Mastodon's settings take (``/settings/imports``, which has no REST API);
Redpoll's are bearer-token endpoints, for the web app and any client. An
import runs as a job in bounded steps; its record says how far it is."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.responses import Response

from ..core import limits
from ..core.errors import ValidationError
from ..portability import imports
from ..portability.exports import FILES, Here
from ..render.entities import iso
from .context import Ctx
from .contract import INT, STR, Doc, array, obj, path_param
from .params import parse_params
from .responses import JSON
from .routing import endpoint

IMPORT = obj(
    {
        "id": STR,
        "type": {"enum": list(imports.KINDS)},
        "mode": {"enum": list(imports.MODES)},
        "state": {"enum": ["scheduled", "in_progress", "pruning", "finished"]},
        "filename": STR,
        "total_items": INT,
        "processed_items": INT,
        "imported_items": INT,
        "failed_items": INT,
        "created_at": {"type": "string", "format": "date-time"},
        "finished_at": {"type": ["string", "null"], "format": "date-time"},
    }
)
UPLOAD = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["type", "data"],
                "properties": {
                    "type": {"enum": list(imports.KINDS)},
                    "mode": {"enum": list(imports.MODES), "default": "merge"},
                    "data": {
                        "type": "string",
                        "format": "binary",
                        "description": f"the CSV file, at most {limits.IMPORT_BYTES_MAX} bytes",
                    },
                    "filename": STR,
                },
            }
        }
    },
}


def entity(found: imports.Import) -> dict:
    return {
        "id": str(found.id),
        "type": found.kind,
        "mode": found.mode,
        "state": found.state,
        "filename": found.filename,
        "total_items": found.total,
        "processed_items": found.processed,
        "imported_items": found.imported,
        "failed_items": found.processed - found.imported,
        "created_at": iso(found.created_at),
        "finished_at": iso(found.finished_at) if found.finished_at else None,
    }


@endpoint(
    "POST",
    "/api/v1/redpoll/imports",
    auth="required",
    scope="write",
    params=False,
    doc=Doc(
        "Import a CSV file of Mastodon's (follows, blocks, mutes, domain "
        "blocks, bookmarks, lists), merged or overwriting; 202, done by a job",
        "Accounts",
        IMPORT,
        body=UPLOAD,
        ok_status="202",
    ),
)
async def start(ctx: Ctx) -> Response:
    files: dict[str, bytes] = {}
    ctx.params = await parse_params(
        ctx.request, files, limits.IMPORT_BYTES_MAX + 64 * 1024, "The file is too large"
    )
    p = ctx.params
    kind = p.str("type", required=True, max_chars=40)
    data = files.get("data")
    if data is None:
        raise ValidationError("data", "is missing (send the CSV file as multipart form data)")
    found = await ctx.rp.imports.start(
        ctx.uid,
        kind,
        p.str("mode", max_chars=20) or "merge",
        data,
        p.str("filename", max_chars=200) or FILES.get(kind or "", ""),
        Here(urlsplit(ctx.base).netloc, ctx.base),
    )
    return JSON(entity(found), status_code=202)


@endpoint(
    "GET",
    "/api/v1/redpoll/imports",
    auth="required",
    scope="read",
    doc=Doc("One's CSV imports, newest first", "Accounts", array(IMPORT)),
)
async def listed(ctx: Ctx) -> Response:
    return JSON([entity(found) for found in await ctx.rp.imports.listed(ctx.uid)])


@endpoint(
    "GET",
    "/api/v1/redpoll/imports/{id}",
    auth="required",
    scope="read",
    doc=Doc("One CSV import and how far it is", "Accounts", IMPORT, params=[path_param()]),
)
async def one(ctx: Ctx) -> Response:
    return JSON(entity(await ctx.rp.imports.get(ctx.uid, ctx.path_id())))
