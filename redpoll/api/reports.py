"""Reports: POST /api/v1/reports. Moderators read and resolve
them with ``redpoll admin reports`` / ``resolve`` (redpoll/moderation/moderation.py)."""

from __future__ import annotations

from starlette.responses import Response

from ..core import limits
from ..core.errors import ValidationError
from ..moderation import moderation
from ..render import entities
from .context import Ctx
from .contract import BOOL, ID, STR, Doc, obj, request_body
from .responses import JSON
from .routing import endpoint


def report_entity(r: moderation.Report, target: dict) -> dict:
    """Mastodon's Report entity."""
    return {
        "id": str(r.id),
        "action_taken": r.resolved_at is not None,
        "action_taken_at": entities.iso(r.resolved_at) if r.resolved_at else None,
        "category": r.category,
        "comment": r.comment,
        "forwarded": False,
        "created_at": entities.iso(r.created_at),
        "status_ids": [str(s) for s in r.statuses] or None,
        "rule_ids": [str(i) for i in r.rule_ids] or None,
        "target_account": target,
    }


@endpoint(
    "POST",
    "/api/v1/reports",
    auth="required",
    scope="write:reports",
    doc=Doc(
        "Report an account (and some of its statuses) to the moderators",
        "Accounts",
        obj({"id": STR, "category": STR, "comment": STR, "action_taken": BOOL}),
        body=request_body(
            {
                "account_id": ID,
                "status_ids": {
                    "type": "array",
                    "items": ID,
                    "maxItems": limits.REPORT_STATUSES_MAX,
                },
                "comment": {"type": "string", "maxLength": limits.REPORT_COMMENT_MAX_CHARS},
                "category": {"enum": ["spam", "legal", "violation", "other"]},
                "rule_ids": {"type": "array", "items": ID, "maxItems": limits.INSTANCE_RULES_MAX},
                "forward": BOOL,
            },
            required=("account_id",),
        ),
    ),
)
async def create(ctx: Ctx) -> Response:
    p = ctx.params
    account = p.cursor("account_id")
    if account is None:
        raise ValidationError("account_id", "is missing")
    status_ids = p.ids("status_ids", max_count=limits.REPORT_STATUSES_MAX)
    rule_ids = p.ids("rule_ids", max_count=limits.INSTANCE_RULES_MAX)
    p.bool("forward")
    category = p.str("category", max_chars=20) or "other"
    comment = p.str("comment", max_chars=100_000) or ""
    r, user = await ctx.rp.moderation.report(
        ctx.uid, account, status_ids, comment, category, rule_ids
    )
    return JSON(report_entity(r, entities.account(user, ctx.base)))
