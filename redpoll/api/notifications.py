"""Notifications (v1 and grouped v2) and read markers (issue 9)."""
from __future__ import annotations

from starlette.responses import Response

from .. import markers, notifications, validate
from ..errors import ValidationError
from ..notifications import Notification
from . import entities
from .http import JSON, NOT_FOUND, ApiError, Ctx, endpoint, link_header
from .statuses import render_statuses

#: Types grouped in /api/v2/notifications unless ``grouped_types`` says otherwise.
GROUPABLE = ("favourite", "follow", "reblog")
#: Types whose notification is about a status (left out when it is gone).
WITH_STATUS = ("mention", "status", "reblog", "favourite", "poll", "update")


def _types(ctx: Ctx, name: str) -> list:
    value = ctx.params.raw(name)
    if value in (None, ""):
        return []
    items = value if isinstance(value, list) else [value]
    if len(items) > len(notifications.TYPES) or not all(isinstance(i, str) for i in items):
        raise ValidationError(name, "must be a list of notification types")
    return items


def _query(ctx: Ctx) -> dict:
    p = ctx.params
    p.cursors()  # each a single value
    return {"max_id": p.cursor("max_id"), "since_id": p.cursor("since_id"),
            "min_id": p.cursor("min_id"), "limit": p.raw("limit"),
            "types": _types(ctx, "types"), "exclude_types": _types(ctx, "exclude_types"),
            "account_id": p.cursor("account_id")}


async def _context(ctx: Ctx, notes: list[Notification]):
    """The accounts and rendered statuses the notifications name, by id;
    notifications whose account or status is gone are left out."""
    users = await ctx.rp.get_users(list(dict.fromkeys(n.actor for n in notes)))
    accounts = {u.id: entities.account(u, ctx.base) for u in users}
    sids = list(dict.fromkeys(n.status for n in notes if n.status))
    rendered = await render_statuses(ctx, await ctx.rp.get_statuses(sids))
    statuses = {int(s["id"]): s for s in rendered}
    kept = [n for n in notes if n.actor in accounts and (
        n.type not in WITH_STATUS or n.status in statuses)]
    return kept, accounts, statuses


def _entity(n: Notification, accounts: dict, statuses: dict) -> dict:
    out = {"id": str(n.id), "type": n.type, "group_key": f"ungrouped-{n.id}",
           "created_at": entities.iso(n.created_at), "account": accounts[n.actor]}
    if n.status:
        out["status"] = statuses[n.status]
    return out


@endpoint(auth="required", scope="read:notifications")
async def list_notifications(ctx: Ctx) -> Response:
    notes = await ctx.rp.notifications(ctx.uid, **_query(ctx))
    kept, accounts, statuses = await _context(ctx, notes)
    return JSON([_entity(n, accounts, statuses) for n in kept],
                headers=link_header(ctx, notes))


@endpoint(auth="required", scope="read:notifications")
async def get_notification(ctx: Ctx) -> Response:
    try:
        note = await notifications.get(ctx.rp.store, ctx.uid, ctx.path_id())
    except notifications.NotificationNotFound:
        raise ApiError(404, NOT_FOUND) from None
    kept, accounts, statuses = await _context(ctx, [note])
    if not kept:
        raise ApiError(404, NOT_FOUND)
    return JSON(_entity(note, accounts, statuses))


@endpoint(auth="required", scope="write:notifications")
async def dismiss(ctx: Ctx) -> Response:
    await notifications.dismiss(ctx.rp.store, ctx.uid, ctx.path_id())
    return JSON({})


@endpoint(auth="required", scope="write:notifications")
async def clear(ctx: Ctx) -> Response:
    await notifications.clear(ctx.rp.store, ctx.uid)
    return JSON({})


@endpoint(auth="required", scope="read:notifications")
async def unread_count(ctx: Ctx) -> Response:
    """Notifications newer than the ``notifications`` marker, at most
    ``limit`` (Mastodon: default 100, at most 1000)."""
    cap = ctx.params.raw("limit")
    cap = 100 if cap in (None, "") else _limit(cap, 1000)
    after = await markers.last_read(ctx.rp.store, ctx.uid, "notifications")
    count = await notifications.count_after(ctx.rp.store, ctx.uid, after, cap)
    return JSON({"count": count})


def _limit(value, maximum: int) -> int:
    return validate.page_limit(value, maximum, maximum)


@endpoint(auth="required", scope="read:notifications")
async def grouped(ctx: Ctx) -> Response:
    """GET /api/v2/notifications: the page's notifications grouped by type and
    status (for ``grouped_types``), with the accounts and statuses they name
    listed once."""
    grouped_types = _types(ctx, "grouped_types") or list(GROUPABLE)
    for name in ("expand_accounts",):
        ctx.params.str(name, max_chars=40)
    ctx.params.bool("include_filtered")
    notes = await ctx.rp.notifications(ctx.uid, **_query(ctx))
    kept, accounts, statuses = await _context(ctx, notes)
    groups: dict[str, dict] = {}
    for n in kept:  # newest first
        if n.type in grouped_types and n.type in GROUPABLE:
            key = f"{n.type}-{n.status}" if n.status else n.type
        else:
            key = f"ungrouped-{n.id}"
        group = groups.get(key)
        if group is None:
            group = groups[key] = {
                "group_key": key, "notifications_count": 0, "type": n.type,
                "most_recent_notification_id": str(n.id), "page_max_id": str(n.id),
                "latest_page_notification_at": entities.iso(n.created_at),
                "sample_account_ids": []}
            if n.status:
                group["status_id"] = str(n.status)
        group["notifications_count"] += 1
        group["page_min_id"] = str(n.id)
        if len(group["sample_account_ids"]) < 8 and str(n.actor) not in group["sample_account_ids"]:
            group["sample_account_ids"].append(str(n.actor))
    used_accounts = {a for g in groups.values() for a in g["sample_account_ids"]}
    used_statuses = {g.get("status_id") for g in groups.values()}
    body = {"accounts": [a for a in accounts.values() if a["id"] in used_accounts],
            "statuses": [s for s in statuses.values() if s["id"] in used_statuses],
            "notification_groups": list(groups.values())}
    return JSON(body, headers=link_header(ctx, notes))


# --- markers ---------------------------------------------------------------------------
def _marker(m: markers.Marker) -> dict:
    return {"last_read_id": str(m.last_read_id), "version": m.version,
            "updated_at": entities.iso(m.updated_at)}


@endpoint(auth="required", scope="read:statuses")
async def get_markers(ctx: Ctx) -> Response:
    value = ctx.params.raw("timeline")
    names = value if isinstance(value, list) else ([] if value in (None, "") else [value])
    if len(names) > len(markers.TIMELINES) * 2:
        raise ValidationError("timeline", "too many timelines")
    found = await markers.get_markers(ctx.rp.store, ctx.uid,
                                      [n for n in names if n in markers.TIMELINES])
    return JSON({m.timeline: _marker(m) for m in found})


@endpoint(auth="required", scope="write:statuses")
async def set_markers(ctx: Ctx) -> Response:
    """Body ``{"home": {"last_read_id": "1"}}`` (JSON) or
    ``home[last_read_id]=1`` (form); unknown timelines are ignored."""
    positions = {}
    for name in markers.TIMELINES:
        nested = ctx.params.raw(name)
        last = nested.get("last_read_id") if isinstance(nested, dict) else \
            ctx.params.raw(f"{name}[last_read_id]")
        if nested is not None and not isinstance(nested, dict):
            raise ValidationError(name, "must be an object with last_read_id")
        if last is not None:
            positions[name] = last
    return JSON({m.timeline: _marker(m)
                 for m in await markers.set_markers(ctx.rp.store, ctx.uid, positions)})

