"""Strikes and appeals, the server's rules and settings, and the audit log:
what Mastodon keeps in its web pages rather than its client API, so small
Redpoll endpoints under ``/api/v1/redpoll/``. A member reads the warnings
about their own account and appeals one (``/api/v1/redpoll/warnings``);
staff reach the rest under ``/api/v1/redpoll/admin/`` with the admin
scopes, each route refused (403 "This action is not allowed") to a role
without its permission (redpoll.admin.roles): an account's warnings
``manage_users``, appeals ``manage_appeals``, rules ``manage_rules``,
settings ``manage_settings``, the audit log ``view_audit_log``."""

from __future__ import annotations

from starlette.responses import Response

from ..core import limits
from ..core.models import now_ms
from ..instance.registrations import MODES
from ..moderation.warnings import Warning
from ..render import entities
from .context import Ctx
from .contract import BOOL, STR, Doc, array, obj, path_param, query_param, ref, request_body
from .instance import rule_entity
from .responses import JSON
from .routing import endpoint

READ_ADMIN = ("admin:read", "admin:read:accounts")
WRITE_ADMIN = ("admin:write", "admin:write:accounts")
WARNING = ref("AccountWarning")
RULE = obj({"id": STR, "text": STR, "hint": STR})
SETTINGS = obj(
    {
        "title": STR,
        "short_description": STR,
        "extended_description": STR,
        "email": STR,
        "show_domain_blocks": {"enum": ["", "disabled", "users", "all"]},
        "show_domain_blocks_rationale": {"enum": ["", "disabled", "users", "all"]},
    }
)
AUDIT_ENTRY = obj(
    {
        "id": STR,
        "action": STR,
        "target_type": STR,
        "target_id": STR,
        "target": STR,
        "text": STR,
        "created_at": {"type": "string", "format": "date-time"},
        "account": {"oneOf": [{"type": "null"}, ref("Account")]},
    }
)


def _appeal(w: Warning) -> dict | None:
    if w.appeal is None:
        return None
    return {"text": w.appeal.text, "state": w.appeal.state}


async def _warnings(ctx: Ctx, found: list[Warning]) -> list[dict]:
    now = now_ms()
    users = {u.id: u for u in await ctx.rp.accounts.get_users(list({w.account for w in found}))}
    out = []
    for w in found:
        user = users.get(w.account)
        if user is None:
            continue
        shown = (
            entities.suspended_account(user, ctx.base)
            if user.suspended
            else entities.account(user, ctx.base)
        )
        out.append(
            entities.account_warning(
                w.id, w.action, w.text, w.status_ids, w.created_at, shown, _appeal(w)
            )
            | _window(w, now)
        )
    return out


def _window(w: Warning, now: int) -> dict:
    """Redpoll's fields beside Mastodon's AccountWarning: until when the
    warning may be appealed (limits.APPEAL_WINDOW_S after it) and whether
    its account may appeal it now (once, within that time)."""
    return {
        "appealable_until": entities.iso(w.appealable_until),
        "appealable": w.appeal is None and now < w.appealable_until,
    }


# --- one's own warnings -----------------------------------------------------------------
@endpoint(
    "GET",
    "/api/v1/redpoll/warnings",
    auth="required",
    scope="read:accounts",
    doc=Doc(
        "The moderators' warnings about your account, newest first", "Accounts", array(WARNING)
    ),
)
async def my_warnings(ctx: Ctx) -> Response:
    return JSON(await _warnings(ctx, await ctx.rp.moderation.warnings(ctx.uid)))


@endpoint(
    "GET",
    "/api/v1/redpoll/warnings/{id}",
    auth="required",
    scope="read:accounts",
    doc=Doc("One warning about your account", "Accounts", WARNING, params=[path_param()]),
)
async def my_warning(ctx: Ctx) -> Response:
    found = await ctx.rp.moderation.warning(ctx.uid, ctx.path_id())
    return JSON((await _warnings(ctx, [found]))[0])


@endpoint(
    "POST",
    "/api/v1/redpoll/warnings/{id}/appeal",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Appeal a warning about your account: once, within "
        f"{limits.APPEAL_WINDOW_S // 86_400} days of it (422 otherwise)",
        "Accounts",
        WARNING,
        params=[path_param()],
        body=request_body(
            {"text": {"type": "string", "maxLength": limits.APPEAL_MAX_CHARS}}, required=("text",)
        ),
    ),
)
async def appeal(ctx: Ctx) -> Response:
    text = ctx.params.str("text", required=True, max_chars=limits.APPEAL_MAX_CHARS)
    found = await ctx.rp.moderation.appeal(ctx.uid, ctx.path_id(), text or "")
    return JSON((await _warnings(ctx, [found]))[0])


# --- staff: warnings and appeals -------------------------------------------------------------
@endpoint(
    "GET",
    "/api/v1/redpoll/admin/accounts/{id}/warnings",
    auth="required",
    scope=READ_ADMIN,
    doc=Doc(
        "The warnings about an account, newest first (manage_users)",
        "Admin",
        array(WARNING),
        params=[path_param()],
    ),
)
async def account_warnings(ctx: Ctx) -> Response:
    return JSON(await _warnings(ctx, await ctx.rp.admin.warnings_of(ctx.uid, ctx.path_id())))


@endpoint(
    "GET",
    "/api/v1/redpoll/admin/appeals",
    auth="required",
    scope=READ_ADMIN,
    doc=Doc(
        "The appealed warnings, newest first, by their appeal's state (manage_appeals)",
        "Admin",
        array(WARNING),
        params=[query_param("state", {"enum": ["pending", "approved", "rejected"]})],
    ),
)
async def appeals(ctx: Ctx) -> Response:
    state = ctx.params.str("state", max_chars=20) or None
    return JSON(await _warnings(ctx, await ctx.rp.admin.appeals(ctx.uid, state)))


def _decision(verb: str, approve: bool, summary: str):
    @endpoint(
        "POST",
        f"/api/v1/redpoll/admin/appeals/{{id}}/{verb}",
        auth="required",
        scope=WRITE_ADMIN,
        doc=Doc(summary, "Admin", WARNING, params=[path_param()]),
    )
    async def handler(ctx: Ctx) -> Response:
        found = await ctx.rp.admin.decide_appeal(ctx.uid, ctx.path_id(), approve)
        return JSON((await _warnings(ctx, [found]))[0])

    return handler


approve_appeal = _decision(
    "approve",
    True,
    "Approve a warning's appeal: its action is undone (manage_appeals; 422 once decided)",
)
reject_appeal = _decision(
    "reject", False, "Reject a warning's appeal (manage_appeals; 422 once decided)"
)


# --- staff: the server's rules and settings ---------------------------------------------------
@endpoint(
    "GET",
    "/api/v1/redpoll/admin/rules",
    auth="required",
    scope=("admin:read",),
    doc=Doc("The server's rules, in their order (manage_rules)", "Admin", array(RULE)),
)
async def rules(ctx: Ctx) -> Response:
    return JSON([rule_entity(r) for r in await ctx.rp.admin.rules(ctx.uid)])


@endpoint(
    "POST",
    "/api/v1/redpoll/admin/rules",
    auth="required",
    scope=("admin:write",),
    doc=Doc(
        "Add a rule at the end (manage_rules)",
        "Admin",
        RULE,
        body=request_body(
            {
                "text": {"type": "string", "maxLength": limits.INSTANCE_RULE_MAX_CHARS},
                "hint": {"type": "string", "maxLength": limits.INSTANCE_RULE_MAX_CHARS},
            },
            required=("text",),
        ),
    ),
)
async def add_rule(ctx: Ctx) -> Response:
    p = ctx.params
    text = p.str("text", required=True, max_chars=limits.INSTANCE_RULE_MAX_CHARS) or ""
    hint = p.str("hint", max_chars=limits.INSTANCE_RULE_MAX_CHARS) or ""
    return JSON(rule_entity(await ctx.rp.admin.add_rule(ctx.uid, text, hint)))


@endpoint(
    "DELETE",
    "/api/v1/redpoll/admin/rules/{id}",
    auth="required",
    scope=("admin:write",),
    doc=Doc("Remove a rule (manage_rules)", "Admin", obj({}), params=[path_param()]),
)
async def remove_rule(ctx: Ctx) -> Response:
    await ctx.rp.admin.remove_rule(ctx.uid, ctx.path_id())
    return JSON({})


def _settings(found: dict, content: str) -> dict:
    return {
        "title": found.get("title") or "",
        "short_description": found.get("short_description") or "",
        "extended_description": content,
        "email": found.get("email") or "",
        "show_domain_blocks": found.get("show_domain_blocks") or "",
        "show_domain_blocks_rationale": found.get("show_domain_blocks_rationale") or "",
    }


@endpoint(
    "GET",
    "/api/v1/redpoll/admin/settings",
    auth="required",
    scope=("admin:read",),
    doc=Doc(
        "The server's title, descriptions and contact address as set ('' : the default) "
        "(manage_settings)",
        "Admin",
        SETTINGS,
    ),
)
async def settings(ctx: Ctx) -> Response:
    return JSON(_settings(*await ctx.rp.admin.settings(ctx.uid)))


@endpoint(
    "PUT",
    "/api/v1/redpoll/admin/settings",
    auth="required",
    scope=("admin:write",),
    doc=Doc(
        "Change the settings given ('' : back to the default) (manage_settings)",
        "Admin",
        SETTINGS,
        body=request_body(
            {
                "title": {"type": "string", "maxLength": limits.INSTANCE_TITLE_MAX_CHARS},
                "short_description": {
                    "type": "string",
                    "maxLength": limits.INSTANCE_SHORT_DESCRIPTION_MAX_CHARS,
                },
                "extended_description": {
                    "type": "string",
                    "maxLength": limits.INSTANCE_DESCRIPTION_MAX_CHARS,
                },
                "email": {"type": "string", "maxLength": limits.EMAIL_MAX_CHARS},
                "show_domain_blocks": {"enum": ["", "disabled", "users", "all"]},
                "show_domain_blocks_rationale": {"enum": ["", "disabled", "users", "all"]},
            }
        ),
    ),
)
async def set_settings(ctx: Ctx) -> Response:
    p = ctx.params
    changes = {}
    bounds = {
        "title": limits.INSTANCE_TITLE_MAX_CHARS,
        "short_description": limits.INSTANCE_SHORT_DESCRIPTION_MAX_CHARS,
        "email": limits.EMAIL_MAX_CHARS,
        "show_domain_blocks": 8,
        "show_domain_blocks_rationale": 8,
    }
    for name, most in bounds.items():
        if p.raw(name) is not None:
            changes[name] = p.str(name, max_chars=most) or ""
    description = None
    if p.raw("extended_description") is not None:
        description = (
            p.str("extended_description", max_chars=limits.INSTANCE_DESCRIPTION_MAX_CHARS) or ""
        )
    return JSON(_settings(*await ctx.rp.admin.set_settings(ctx.uid, changes, description)))


REGISTRATIONS = obj({"mode": STR, "message": STR, "reason_required": BOOL})


def _registrations(found) -> dict:
    return {
        "mode": found.mode,
        "message": found.message,
        "reason_required": found.reason_required,
    }


@endpoint(
    "GET",
    "/api/v1/redpoll/admin/registrations",
    auth="required",
    scope=("admin:read",),
    doc=Doc(
        "Who may sign up: the mode (open, approval, closed), the message shown while "
        "closed, whether a sign-up awaiting approval gives a reason (manage_settings)",
        "Admin",
        REGISTRATIONS,
    ),
)
async def registrations(ctx: Ctx) -> Response:
    return JSON(_registrations(await ctx.rp.admin.registrations(ctx.uid)))


@endpoint(
    "PUT",
    "/api/v1/redpoll/admin/registrations",
    auth="required",
    scope=("admin:write",),
    doc=Doc(
        "Change who may sign up (manage_settings; audited); message and reason_required "
        "stay as they are when not given",
        "Admin",
        REGISTRATIONS,
        body=request_body(
            {
                "mode": {"type": "string", "enum": list(MODES)},
                "message": {
                    "type": "string",
                    "maxLength": limits.REGISTRATIONS_MESSAGE_MAX_CHARS,
                },
                "reason_required": BOOL,
            },
            required=("mode",),
        ),
    ),
)
async def set_registrations(ctx: Ctx) -> Response:
    p = ctx.params
    mode = p.str("mode", required=True, max_chars=20) or ""
    message = None
    if p.raw("message") is not None:
        message = p.str("message", max_chars=limits.REGISTRATIONS_MESSAGE_MAX_CHARS) or ""
    reason = p.bool("reason_required") if p.raw("reason_required") is not None else None
    found = await ctx.rp.admin.set_registrations(ctx.uid, mode, message, reason)
    return JSON(_registrations(found))


# --- staff: the audit log ----------------------------------------------------------------
@endpoint(
    "GET",
    "/api/v1/redpoll/admin/audit_log",
    auth="required",
    scope=("admin:read",),
    doc=Doc(
        "The moderation actions, newest first: who did what to what (view_audit_log)",
        "Admin",
        array(AUDIT_ENTRY),
        params=[
            query_param("limit", {"type": "integer", "minimum": 1, "maximum": 200}),
            query_param("before", {"type": "string", "pattern": "^[0-9]{1,20}-[0-9]{1,20}$"}),
        ],
    ),
)
async def audit_log(ctx: Ctx) -> Response:
    p = ctx.params
    raw = p.raw("limit")
    limit = (
        min(int(raw), 200)
        if isinstance(raw, str) and (raw.isascii() and raw.isdigit()) and int(raw) > 0
        else 50
    )
    before = p.str("before", max_chars=41) or None
    found = await ctx.rp.admin.read_audit_log(ctx.uid, limit, before)
    people = {
        u.id: u for u in await ctx.rp.accounts.get_users(list({e.actor for e in found if e.actor}))
    }
    return JSON(
        [
            {
                "id": e.id,
                "action": e.action,
                "target_type": e.type,
                "target_id": e.target,
                "target": e.name,
                "text": e.text,
                "created_at": entities.iso(e.at),
                "account": entities.account(people[e.actor], ctx.base)
                if e.actor in people
                else None,
            }
            for e in found
        ]
    )
