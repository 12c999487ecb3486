"""A member's CSV exports (redpoll.portability.exports), in the files
Mastodon's settings make and its import reads. Mastodon serves these from
its web settings (``/settings/exports/follows.csv``...); Redpoll's are
bearer-token endpoints, for the web app and any client."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.responses import Response

from ..portability.exports import FILES
from .context import Ctx
from .contract import STR, Doc
from .routing import endpoint

WHAT = {
    "follows": ("read:follows", "whom you follow, with each follow's options"),
    "lists": ("read:lists", "your lists and their members"),
    "blocks": ("read:blocks", "the accounts you block"),
    "mutes": ("read:mutes", "the accounts you mute"),
    "domain_blocks": ("read:blocks", "the domains you block"),
    "bookmarks": ("read:bookmarks", "your bookmarks (each status's ActivityPub id)"),
}


def _exporter(kind: str):
    scope, what = WHAT[kind]

    @endpoint(
        "GET",
        f"/api/v1/redpoll/exports/{kind}.csv",
        auth="required",
        scope=scope,
        doc=Doc(f"A CSV of {what}, as Mastodon's export", "Accounts", STR, ok_type="text/csv"),
    )
    async def export(ctx: Ctx) -> Response:
        body = await ctx.rp.accounts.export(ctx.uid, kind, urlsplit(ctx.base).netloc, ctx.base)
        return Response(
            body,
            media_type="text/csv; charset=utf-8",
            headers={
                "Content-Disposition": f'attachment; filename="{FILES[kind]}"',
                "Cache-Control": "private, no-store",
            },
        )

    export.__name__ = f"export_{kind}"
    return export


follows = _exporter("follows")
lists = _exporter("lists")
blocks = _exporter("blocks")
mutes = _exporter("mutes")
domain_blocks = _exporter("domain_blocks")
bookmarks = _exporter("bookmarks")
