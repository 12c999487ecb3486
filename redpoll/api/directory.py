"""Mastodon's profile directory: the discoverable accounts, by latest
status or newest first (redpoll.reading.directory); public."""

from __future__ import annotations

from starlette.responses import Response

from ..core import limits
from ..render import entities
from .context import Ctx
from .contract import ACCOUNTS_REF, BOOL, Doc, query_param
from .responses import JSON
from .routing import endpoint


@endpoint(
    "GET",
    "/api/v1/directory",
    auth="optional",
    scope="read:accounts",
    doc=Doc(
        "Discoverable accounts, by latest status (active) or newest first (new)",
        "Directory",
        ACCOUNTS_REF,
        params=[
            query_param("offset", {"type": "integer", "minimum": 0}),
            query_param(
                "limit", {"type": "integer", "minimum": 1, "maximum": limits.DIRECTORY_MAX}
            ),
            query_param("order", {"enum": ["active", "new"]}),
            query_param("local", BOOL),
        ],
    ),
)
async def directory(ctx: Ctx) -> Response:
    p = ctx.params
    found = await ctx.rp.discovery.directory(
        ctx.viewer,
        offset=p.raw("offset"),
        limit=p.raw("limit"),
        order=p.raw("order"),
        local=p.bool("local"),
    )
    return JSON([entities.account(u, ctx.base) for u in found])
