"""Mastodon's admin dashboard (``view_dashboard``, admin:read): measures,
dimensions and retention (redpoll.admin.metrics), and the public instance
activity of the last 12 weeks (redpoll.instance.activity). A member is
refused with Mastodon's 403."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.responses import Response

from ..core import limits
from ..render.entities import VERSION
from .context import Ctx
from .contract import INSTANCE_TAG, STR, Doc, array, obj, request_body
from .responses import JSON
from .routing import endpoint

READ = ("admin:read",)
DAY_S = 86_400
NULLABLE_STR = {"type": ["string", "null"]}
NUMBER = {"type": "number"}
POINT = obj({"date": STR, "value": STR})
MEASURE = obj(
    {"key": STR, "unit": NULLABLE_STR, "total": STR, "data": array(POINT)},
    {"human_value": STR, "previous_total": STR},
)
DIMENSION = obj({"key": STR, "data": array(obj({"key": STR, "human_key": STR, "value": STR}))})
COHORT = obj(
    {
        "period": STR,
        "frequency": STR,
        "data": array(obj({"date": STR, "rate": NUMBER, "value": STR})),
    }
)
WEEK = obj({"week": STR, "statuses": STR, "logins": STR, "registrations": STR})
PERIOD = {"start_at": STR, "end_at": STR}
KEYS = {"type": "array", "items": STR}


def day_iso(day: int) -> str:
    """A UTC day (since the epoch) as Mastodon dates a measure's point."""
    return datetime.fromtimestamp(day * DAY_S, UTC).strftime("%Y-%m-%dT00:00:00.000+00:00")


def _human_bytes(n: int) -> str:
    """Rails' number_to_human_size, as Mastodon shows a size."""
    size, unit = float(n), "Bytes"
    for name in ("KB", "MB", "GB", "TB"):
        if size < 1024:
            break
        size, unit = size / 1024, name
    if unit == "Bytes":
        return f"{n} Bytes"
    return f"{size:.3g} {unit}"


@endpoint(
    "POST",
    "/api/v1/admin/measures",
    auth="required",
    scope=READ,
    doc=Doc(
        "Totals of a period and one value a day (view_dashboard): active_users, "
        "new_users, interactions, opened_reports, resolved_reports, tag_accounts, tag_uses, "
        "instance_statuses",
        "Admin",
        array(MEASURE),
        body=request_body(
            {
                **PERIOD,
                "keys": KEYS,
                "tag_accounts": obj({"id": STR}),
                "tag_uses": obj({"id": STR}),
                "instance_statuses": obj({"domain": STR}),
            },
            required=("start_at", "end_at"),
        ),
    ),
)
async def measures(ctx: Ctx) -> Response:
    p = ctx.params
    extra = {k: p.nested(k) for k in ("tag_accounts", "tag_uses", "instance_statuses")}
    found = await ctx.rp.admin.measures(
        ctx.uid, p.raw("keys"), p.raw("start_at"), p.raw("end_at"), extra
    )
    return JSON(
        [
            {
                "key": m.key,
                "unit": None,
                "total": str(m.total),
                "previous_total": str(m.previous_total),
                "data": [{"date": day_iso(d), "value": str(v)} for d, v in m.data],
            }
            for m in found
        ]
    )


@endpoint(
    "POST",
    "/api/v1/admin/dimensions",
    auth="required",
    scope=READ,
    doc=Doc(
        "Breakdowns of a period (view_dashboard): servers, space_usage and "
        "software_versions have rows; languages, sources, tag_*, instance_* none",
        "Admin",
        array(DIMENSION),
        body=request_body(
            {
                **PERIOD,
                "keys": KEYS,
                "limit": {"type": "integer", "minimum": 1, "maximum": limits.DIMENSION_ROWS_MAX},
            },
            required=("start_at", "end_at"),
        ),
    ),
)
async def dimensions(ctx: Ctx) -> Response:
    p = ctx.params
    found = await ctx.rp.admin.dimensions(
        ctx.uid, p.raw("keys"), p.raw("start_at"), p.raw("end_at"), p.raw("limit")
    )
    out = []
    for key, rows in found:
        data = []
        if key == "software_versions":
            data.append(
                {
                    "key": "mastodon",
                    "human_key": "Mastodon",
                    "value": VERSION,
                    "human_value": VERSION,
                }
            )
        for r in rows:
            row = {"key": r.key, "human_key": r.human_key, "value": str(r.value)}
            if r.unit == "bytes":
                row |= {"unit": "bytes", "human_value": _human_bytes(int(r.value))}
            else:
                row["human_value"] = str(r.value)
            data.append(row)
        out.append({"key": key, "data": data})
    return JSON(out)


@endpoint(
    "POST",
    "/api/v1/admin/retention",
    auth="required",
    scope=READ,
    doc=Doc(
        "Of each day's (month's) sign-ups, how many were active later (view_dashboard)",
        "Admin",
        array(COHORT),
        body=request_body(
            {**PERIOD, "frequency": {"enum": ["day", "month"]}}, required=("start_at", "end_at")
        ),
    ),
)
async def retention(ctx: Ctx) -> Response:
    p = ctx.params
    frequency = p.raw("frequency") or "day"
    found = await ctx.rp.admin.retention(ctx.uid, p.raw("start_at"), p.raw("end_at"), frequency)
    return JSON(
        [
            {
                "period": day_iso(c.start),
                "frequency": frequency,
                "data": [
                    {"date": day_iso(d), "rate": rate, "value": str(value)}
                    for d, value, rate in c.data
                ],
            }
            for c in found
        ]
    )


@endpoint(
    "GET",
    "/api/v1/instance/activity",
    auth="none",
    params=False,
    doc=Doc(
        "Statuses, logins and sign-ups of each of the last 12 weeks, this one first",
        INSTANCE_TAG,
        array(WEEK),
    ),
)
async def instance_activity(ctx: Ctx) -> Response:
    weeks = await ctx.rp.instance.activity()
    return JSON(
        [
            {
                "week": str(w.start),
                "statuses": str(w.statuses),
                "logins": str(w.logins),
                "registrations": str(w.registrations),
            }
            for w in weeks
        ],
        headers={"Cache-Control": f"public, max-age={limits.INSTANCE_ACTIVITY_CACHE_S}"},
    )
