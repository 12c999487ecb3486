"""Direct conversations: GET /api/v1/conversations, POST
/api/v1/conversations/:id/read, DELETE /api/v1/conversations/:id."""

from __future__ import annotations

from starlette.responses import Response

from ..conversations import direct_messages
from ..reading import pages
from ..render import entities
from .context import Ctx
from .contract import ACCOUNTS_REF, BOOL, ID, PAGE, Doc, array, obj, path_param
from .responses import JSON, link_header
from .routing import endpoint
from .statuses import status_entities


def _entities(
    ctx: Ctx, convs: list[direct_messages.Conversation], shown: pages.Shown, by_id: dict
) -> list[dict]:
    """Mastodon's Conversation entities (from redpoll.reading.pages.conversations's
    answer); a conversation whose last status the caller may no longer see
    (deleted, a block) shows none and only the accounts it can."""
    rendered = {int(e["id"]): e for e in status_entities(ctx, shown)}
    users = shown.users
    out = []
    for c in convs:
        status = by_id.get(c.last_status)
        others = (
            [users[u] for u in direct_messages.participants(status) if u != ctx.uid and u in users]
            if status is not None
            else []
        )
        out.append(
            entities.direct_conversation(
                c.id,
                c.unread,
                [entities.account(u, ctx.base) for u in others],
                rendered.get(c.last_status),
            )
        )
    return out


@endpoint(
    "GET",
    "/api/v1/conversations",
    auth="required",
    scope="read:statuses",
    doc=Doc(
        "Your direct conversations, the one with the newest status first (cursors are "
        "last status ids)",
        "Statuses",
        array(obj({"id": ID, "unread": BOOL, "accounts": ACCOUNTS_REF})),
        paged=True,
        params=PAGE,
    ),
)
async def conversations(ctx: Ctx) -> Response:
    convs, shown, by_id = await ctx.rp.timelines.conversations(ctx.uid, **ctx.params.cursors())
    headers = link_header(ctx, [c.last_status for c in convs], key=lambda sid: sid)
    return JSON(_entities(ctx, convs, shown, by_id), headers=headers)


@endpoint(
    "POST",
    "/api/v1/conversations/{id}/read",
    auth="required",
    scope="write:conversations",
    doc=Doc(
        "Mark a conversation read",
        "Statuses",
        obj({"id": ID, "unread": BOOL, "accounts": ACCOUNTS_REF}),
        params=[path_param()],
    ),
)
async def read(ctx: Ctx) -> Response:
    conv, shown, by_id = await ctx.rp.timelines.read_conversation(ctx.uid, ctx.path_id())
    return JSON(_entities(ctx, [conv], shown, by_id)[0])


@endpoint(
    "POST",
    "/api/v1/conversations/{id}/unread",
    auth="required",
    scope="write:conversations",
    doc=Doc(
        "Mark a conversation unread again",
        "Statuses",
        obj({"id": ID, "unread": BOOL, "accounts": ACCOUNTS_REF}),
        params=[path_param()],
    ),
)
async def unread(ctx: Ctx) -> Response:
    conv, shown, by_id = await ctx.rp.timelines.read_conversation(
        ctx.uid, ctx.path_id(), unread=True
    )
    return JSON(_entities(ctx, [conv], shown, by_id)[0])


@endpoint(
    "DELETE",
    "/api/v1/conversations/{id}",
    auth="required",
    scope="write:conversations",
    doc=Doc("Take a conversation off your list", "Statuses", obj({}), params=[path_param()]),
)
async def remove(ctx: Ctx) -> Response:
    await ctx.rp.timelines.remove_conversation(ctx.uid, ctx.path_id())
    return JSON({})
