"""Direct conversations: GET /api/v1/conversations, POST
/api/v1/conversations/:id/read, DELETE /api/v1/conversations/:id."""
from __future__ import annotations

from starlette.responses import Response

from .. import direct_messages
from ..render import entities
from .http import JSON, Ctx, endpoint, link_header
from .statuses import render_statuses


async def _entities(ctx: Ctx, convs: list[direct_messages.Conversation]) -> list[dict]:
    """Mastodon's Conversation entities; a conversation whose last status the
    caller may no longer see (deleted, a block) shows none and only the
    accounts it can."""
    statuses = await ctx.rp.get_statuses([c.last_status for c in convs])
    rendered = {int(e["id"]): e for e in await render_statuses(ctx, statuses)}
    by_id = {s.id: s for s in statuses}
    people = {uid for s in statuses for uid in direct_messages.participants(s)} - {ctx.uid}
    users = {u.id: u for u in await ctx.rp.get_users(sorted(people))}
    out = []
    for c in convs:
        status = by_id.get(c.last_status)
        others = [users[u] for u in direct_messages.participants(status)
                  if u != ctx.uid and u in users] if status is not None else []
        out.append(entities.direct_conversation(
            c.id, c.unread, [entities.account(u, ctx.base) for u in others],
            rendered.get(c.last_status)))
    return out


@endpoint(auth="required", scope="read:statuses")
async def conversations(ctx: Ctx) -> Response:
    convs = await direct_messages.page(ctx.rp.store, ctx.uid, **ctx.params.cursors())
    headers = link_header(ctx, [c.last_status for c in convs], key=lambda sid: sid)
    return JSON(await _entities(ctx, convs), headers=headers)


@endpoint(auth="required", scope="write:conversations")
async def read(ctx: Ctx) -> Response:
    conv = await direct_messages.mark_read(ctx.rp.store, ctx.uid, ctx.path_id())
    return JSON((await _entities(ctx, [conv]))[0])


@endpoint(auth="required", scope="write:conversations")
async def remove(ctx: Ctx) -> Response:
    await direct_messages.remove(ctx.rp.store, ctx.uid, ctx.path_id())
    return JSON({})
