"""Mastodon's admin API: accounts (v1 and v2 lists, show, actions and
their lifting, approval, deletion), reports (list, show, assign, resolve,
reopen, update) and domain blocks (CRUD). Each route asks for its scope
(``admin:read``/``admin:write`` or the resource's sub-scope); the domain
(redpoll.admin) checks the caller's role and answers 403 "This action is
not allowed" for a permission it lacks."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.responses import Response

from ..core import limits
from ..core.errors import ValidationError
from ..federation import domains
from ..moderation.admin_accounts import Filter
from ..moderation.report_views import ReportView
from ..render import admin as entities
from .context import Ctx
from .contract import BOOL, ID, PAGE, STR, Doc, array, obj, path_param, query_param, request_body
from .instance import rule_entity
from .responses import JSON
from .routing import endpoint
from .statuses import status_entities

READ_ACCOUNTS = ("admin:read", "admin:read:accounts")
WRITE_ACCOUNTS = ("admin:write", "admin:write:accounts")
READ_REPORTS = ("admin:read", "admin:read:reports")
WRITE_REPORTS = ("admin:write", "admin:write:reports")
READ_BLOCKS = ("admin:read", "admin:read:domain_blocks")
WRITE_BLOCKS = ("admin:write", "admin:write:domain_blocks")
READ_EMAIL = ("admin:read", "admin:read:email_domain_blocks")
WRITE_EMAIL = ("admin:write", "admin:write:email_domain_blocks")
READ_ALLOWS = ("admin:read", "admin:read:domain_allows")
WRITE_ALLOWS = ("admin:write", "admin:write:domain_allows")
READ_IP = ("admin:read", "admin:read:ip_blocks")
WRITE_IP = ("admin:write", "admin:write:ip_blocks")
READ_CANONICAL = ("admin:read", "admin:read:canonical_email_blocks")
WRITE_CANONICAL = ("admin:write", "admin:write:canonical_email_blocks")

ADMIN_ACCOUNT = obj(
    {"id": ID, "username": STR, "suspended": BOOL, "silenced": BOOL, "disabled": BOOL},
    {"email": {"type": ["string", "null"]}, "account": {"type": "object"}},
)
ADMIN_REPORT = obj({"id": ID, "action_taken": BOOL, "category": STR, "comment": STR})
DOMAIN_BLOCK = obj({"id": ID, "domain": STR, "severity": STR, "reject_media": BOOL})
RELAY = obj({"id": ID, "inbox_url": STR, "state": STR, "enabled": BOOL})
EMPTY_OBJ = {"type": "object"}
ADMIN_PAGE = [
    *PAGE[:3],
    query_param(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": limits.ADMIN_PAGE_MAX},
        f"Page size (default {limits.ADMIN_PAGE_DEFAULT}, at most {limits.ADMIN_PAGE_MAX})",
    ),
]
V1_FILTERS = [
    query_param(name, BOOL)
    for name in ("local", "remote", "active", "pending", "disabled", "silenced", "suspended")
] + [
    query_param("staff", BOOL),
    *(query_param(n, STR) for n in ("by_domain", "username", "display_name", "email", "ip")),
]
V2_FILTERS = [
    query_param("origin", {"enum": ["local", "remote"]}),
    query_param("status", {"enum": ["active", "pending", "disabled", "silenced", "suspended"]}),
    query_param("permissions", {"enum": ["staff"]}),
    *(query_param(n, STR) for n in ("by_domain", "username", "display_name", "email", "ip")),
    query_param("invited_by", ID),
    query_param("role_ids", array(ID)),
]


def _page_links(ctx: Ctx, ids: list[int], full: bool, resume: int | None) -> dict:
    """Mastodon's Link header for an admin list: ``next`` when the page is
    full (or the walk stopped at its bound: from where it stopped), ``prev``
    when it is not empty."""
    url = ctx.base + ctx.request.scope["path"]
    keep = [
        (k, v)
        for k, v in ctx.request.query_params.multi_items()
        if k not in ("max_id", "min_id", "since_id")
    ]
    links = []
    after = ids[-1] if full and ids else resume
    if after is not None:
        links.append(f'<{url}?{urlencode([*keep, ("max_id", after)])}>; rel="next"')
    if ids:
        links.append(f'<{url}?{urlencode([*keep, ("min_id", ids[0])])}>; rel="prev"')
    return {"Link": ", ".join(links)} if links else {}


def _text(ctx: Ctx, name: str) -> str | None:
    return ctx.params.str(name, max_chars=1000)


async def _accounts(ctx: Ctx, flt: Filter) -> Response:
    p = ctx.params
    limit = p.raw("limit")
    found, resume = await ctx.rp.admin.accounts(
        ctx.uid,
        flt,
        max_id=p.cursor("max_id"),
        since_id=p.cursor("since_id"),
        min_id=p.cursor("min_id"),
        limit=limit,
    )
    size = (
        int(limit)
        if isinstance(limit, str) and (limit.isascii() and limit.isdigit())
        else limits.ADMIN_PAGE_DEFAULT
    )
    headers = _page_links(
        ctx, [a.user.id for a in found], len(found) >= min(size, limits.ADMIN_PAGE_MAX), resume
    )
    return JSON([entities.account(a, ctx.base) for a in found], headers=headers)


@endpoint(
    "GET",
    "/api/v1/admin/accounts",
    auth="required",
    scope=READ_ACCOUNTS,
    doc=Doc(
        "Accounts as moderators see them, newest first (by default local and not suspended)",
        "Admin",
        array(ADMIN_ACCOUNT),
        paged=True,
        params=[*V1_FILTERS, *ADMIN_PAGE],
    ),
)
async def accounts_v1(ctx: Ctx) -> Response:
    p = ctx.params
    status = "active"
    for name in ("active", "pending", "disabled", "silenced", "suspended"):
        if p.has(name):
            status = name
    flt = Filter(
        origin="remote" if p.has("remote") else "local",
        status=status,
        by_domain=_text(ctx, "by_domain"),
        username=_text(ctx, "username"),
        display_name=_text(ctx, "display_name"),
        email=_text(ctx, "email"),
        ip=_text(ctx, "ip"),
        staff=p.has("staff"),
    )
    return await _accounts(ctx, flt)


@endpoint(
    "GET",
    "/api/v2/admin/accounts",
    auth="required",
    scope=READ_ACCOUNTS,
    doc=Doc(
        "Accounts as moderators see them, newest first, by origin, status, role...",
        "Admin",
        array(ADMIN_ACCOUNT),
        paged=True,
        params=[*V2_FILTERS, *ADMIN_PAGE],
    ),
)
async def accounts_v2(ctx: Ctx) -> Response:
    p = ctx.params
    permissions = _text(ctx, "permissions")
    if permissions not in (None, "staff"):
        raise ValidationError("permissions", "must be staff")
    invited = p.cursor("invited_by")
    flt = Filter(
        origin=_text(ctx, "origin"),
        status=_text(ctx, "status"),
        by_domain=_text(ctx, "by_domain"),
        username=_text(ctx, "username"),
        display_name=_text(ctx, "display_name"),
        email=_text(ctx, "email"),
        ip=_text(ctx, "ip"),
        staff=permissions == "staff",
        role_ids=tuple(p.ids("role_ids")),
        invited_by=invited,
    )
    return await _accounts(ctx, flt)


@endpoint(
    "GET",
    "/api/v1/admin/accounts/{id}",
    auth="required",
    scope=READ_ACCOUNTS,
    doc=Doc("One account as moderators see it", "Admin", ADMIN_ACCOUNT, params=[path_param()]),
)
async def account(ctx: Ctx) -> Response:
    return JSON(entities.account(await ctx.rp.admin.account(ctx.uid, ctx.path_id()), ctx.base))


@endpoint(
    "POST",
    "/api/v1/admin/accounts/{id}/action",
    auth="required",
    scope=WRITE_ACCOUNTS,
    doc=Doc(
        "Act on an account: warn (none), disable, sensitive, silence or suspend; "
        "resolves the report given, or every open report about it",
        "Admin",
        EMPTY_OBJ,
        params=[path_param()],
        body=request_body(
            {
                "type": {"enum": ["none", "disable", "sensitive", "silence", "suspend"]},
                "report_id": ID,
                "warning_preset_id": ID,
                "text": {"type": "string", "maxLength": limits.ADMIN_WARNING_MAX_CHARS},
                "send_email_notification": BOOL,
            }
        ),
    ),
)
async def action(ctx: Ctx) -> Response:
    p = ctx.params
    uid = ctx.path_id()
    kind = p.str("type", max_chars=20) or "none"
    report_id = p.cursor("report_id")
    p.cursor("warning_preset_id")  # (no presets here: one given is not found below)
    if p.has("warning_preset_id"):
        raise ValidationError("warning_preset_id", "there are no warning presets")
    text = p.str("text", max_chars=limits.ADMIN_WARNING_MAX_CHARS) or ""
    send = p.bool("send_email_notification", True)
    await ctx.rp.admin.act(ctx.uid, uid, kind, report_id=report_id, text=text, send_email=send)
    return JSON({})


def _account_route(verb: str, summary: str):
    @endpoint(
        "POST",
        f"/api/v1/admin/accounts/{{id}}/{verb}",
        auth="required",
        scope=WRITE_ACCOUNTS,
        doc=Doc(summary, "Admin", ADMIN_ACCOUNT, params=[path_param()]),
    )
    async def handler(ctx: Ctx) -> Response:
        found = await getattr(ctx.rp.admin, verb)(ctx.uid, ctx.path_id())
        return JSON(entities.account(found, ctx.base))

    return handler


enable = _account_route("enable", "Let a disabled account sign in again")
unsilence = _account_route("unsilence", "Lift a silence")
unsuspend = _account_route("unsuspend", "Lift a suspension (403 for an account not suspended)")
unsensitive = _account_route("unsensitive", "Stop marking an account's media sensitive")


@endpoint(
    "POST",
    "/api/v1/admin/accounts/{id}/approve",
    auth="required",
    scope=WRITE_ACCOUNTS,
    doc=Doc(
        "Approve an account waiting for approval (403 for one not pending)",
        "Admin",
        ADMIN_ACCOUNT,
        params=[path_param()],
    ),
)
async def approve(ctx: Ctx) -> Response:
    return JSON(entities.account(await ctx.rp.admin.approve(ctx.uid, ctx.path_id()), ctx.base))


@endpoint(
    "POST",
    "/api/v1/admin/accounts/{id}/reject",
    auth="required",
    scope=WRITE_ACCOUNTS,
    doc=Doc(
        "Reject an account waiting for approval: it is deleted (403 for one not pending)",
        "Admin",
        EMPTY_OBJ,
        params=[path_param()],
    ),
)
async def reject(ctx: Ctx) -> Response:
    await ctx.rp.admin.reject(ctx.uid, ctx.path_id())
    return JSON({})


@endpoint(
    "DELETE",
    "/api/v1/admin/accounts/{id}",
    auth="required",
    scope=WRITE_ACCOUNTS,
    doc=Doc(
        "Delete a suspended account for good (its keys go once its jobs drained)",
        "Admin",
        EMPTY_OBJ,
        params=[path_param()],
    ),
)
async def delete_account(ctx: Ctx) -> Response:
    await ctx.rp.admin.delete_account(ctx.uid, ctx.path_id())
    return JSON({})


# --- reports ---------------------------------------------------------------------------
def _report(ctx: Ctx, view: ReportView) -> dict:
    return entities.report(
        view.report,
        view.people,
        status_entities(ctx, view.shown),
        [rule_entity(r) for r in view.rules],
        ctx.base,
    )


@endpoint(
    "GET",
    "/api/v1/admin/reports",
    auth="required",
    scope=READ_REPORTS,
    doc=Doc(
        "Reports, newest first: open ones, or resolved ones (resolved=true)",
        "Admin",
        array(ADMIN_REPORT),
        paged=True,
        params=[
            query_param("resolved", BOOL),
            query_param("unresolved", BOOL),
            query_param("account_id", ID),
            query_param("target_account_id", ID),
            *ADMIN_PAGE,
        ],
    ),
)
async def reports(ctx: Ctx) -> Response:
    p = ctx.params
    limit = p.raw("limit")
    found = await ctx.rp.admin.reports(
        ctx.uid,
        resolved=p.bool("resolved"),
        unresolved=p.bool("unresolved"),
        account_id=p.cursor("account_id"),
        target_account_id=p.cursor("target_account_id"),
        max_id=p.cursor("max_id"),
        since_id=p.cursor("since_id"),
        min_id=p.cursor("min_id"),
        limit=limit,
    )
    size = (
        int(limit)
        if isinstance(limit, str) and (limit.isascii() and limit.isdigit())
        else limits.ADMIN_PAGE_DEFAULT
    )
    ids = [v.report.id for v in found]
    headers = _page_links(ctx, ids, len(ids) >= min(size, limits.ADMIN_PAGE_MAX), None)
    return JSON([_report(ctx, v) for v in found], headers=headers)


@endpoint(
    "GET",
    "/api/v1/admin/reports/{id}",
    auth="required",
    scope=READ_REPORTS,
    doc=Doc("One report", "Admin", ADMIN_REPORT, params=[path_param()]),
)
async def report(ctx: Ctx) -> Response:
    return JSON(_report(ctx, await ctx.rp.admin.report(ctx.uid, ctx.path_id())))


@endpoint(
    "PUT",
    "/api/v1/admin/reports/{id}",
    auth="required",
    scope=WRITE_REPORTS,
    doc=Doc(
        "Change a report's category and rules",
        "Admin",
        ADMIN_REPORT,
        params=[path_param()],
        body=request_body(
            {
                "category": {"enum": ["spam", "legal", "violation", "other"]},
                "rule_ids": {"type": "array", "items": ID},
            }
        ),
    ),
)
async def update_report(ctx: Ctx) -> Response:
    p = ctx.params
    category = p.str("category", max_chars=20)
    rule_ids = p.ids("rule_ids") if p.raw("rule_ids") is not None else None
    view = await ctx.rp.admin.update_report(ctx.uid, ctx.path_id(), category, rule_ids)
    return JSON(_report(ctx, view))


def _report_route(verb: str, op: str, summary: str):
    @endpoint(
        "POST",
        f"/api/v1/admin/reports/{{id}}/{verb}",
        auth="required",
        scope=WRITE_REPORTS,
        doc=Doc(summary, "Admin", ADMIN_REPORT, params=[path_param()]),
    )
    async def handler(ctx: Ctx) -> Response:
        return JSON(_report(ctx, await ctx.rp.admin.moderate_report(ctx.uid, ctx.path_id(), op)))

    return handler


assign_to_self = _report_route("assign_to_self", "assign", "Take a report on oneself")
unassign = _report_route("unassign", "unassign", "Leave a report unassigned")
resolve = _report_route("resolve", "resolve", "Mark a report resolved")
reopen = _report_route("reopen", "reopen", "Open a resolved report again")


# --- domain blocks ---------------------------------------------------------------------
BLOCK_FIELDS = {
    "severity": {"enum": list(domains.SEVERITIES)},
    "reject_media": BOOL,
    "reject_reports": BOOL,
    "private_comment": {"type": "string", "maxLength": limits.ADMIN_COMMENT_MAX_CHARS},
    "public_comment": {"type": "string", "maxLength": limits.ADMIN_COMMENT_MAX_CHARS},
    "obfuscate": BOOL,
}


def _block_changes(ctx: Ctx) -> dict:
    p = ctx.params
    out: dict = {}
    if p.has("severity"):
        out["severity"] = p.str("severity", max_chars=20)
    for name in ("reject_media", "reject_reports", "obfuscate"):
        if p.raw(name) is not None:
            out[name] = p.bool(name)
    for name in ("private_comment", "public_comment"):
        if p.raw(name) is not None:
            out[name] = p.str(name, max_chars=limits.ADMIN_COMMENT_MAX_CHARS) or ""
    return out


@endpoint(
    "GET",
    "/api/v1/admin/domain_blocks",
    auth="required",
    scope=READ_BLOCKS,
    doc=Doc("The blocked domains, newest first", "Admin", array(DOMAIN_BLOCK), paged=True),
)
async def domain_blocks(ctx: Ctx) -> Response:
    found = await ctx.rp.admin.domain_blocks(ctx.uid)
    return JSON([entities.domain_block(b) for b in found])


@endpoint(
    "GET",
    "/api/v1/admin/domain_blocks/{id}",
    auth="required",
    scope=READ_BLOCKS,
    doc=Doc("One domain block", "Admin", DOMAIN_BLOCK, params=[path_param()]),
)
async def domain_block(ctx: Ctx) -> Response:
    return JSON(entities.domain_block(await ctx.rp.admin.domain_block(ctx.uid, ctx.path_id())))


@endpoint(
    "POST",
    "/api/v1/admin/domain_blocks",
    auth="required",
    scope=WRITE_BLOCKS,
    doc=Doc(
        "Block a domain (and its subdomains): severity silence (default), suspend "
        "or noop; 422 with the existing block when one covers it already",
        "Admin",
        DOMAIN_BLOCK,
        body=request_body({"domain": STR, **BLOCK_FIELDS}, required=("domain",)),
    ),
)
async def create_domain_block(ctx: Ctx) -> Response:
    host = ctx.params.str("domain", required=True, max_chars=300)
    changes = _block_changes(ctx)
    severity = changes.pop("severity", None)
    try:
        found = await ctx.rp.admin.create_domain_block(ctx.uid, host, severity, **changes)
    except domains.AlreadyBlocked as exc:
        existing = exc.existing
        return JSON(
            {
                "error": f"You have already imposed stricter limits on {existing.host}.",
                "existing_domain_block": entities.domain_block(existing),
            },
            status_code=422,
        )
    return JSON(entities.domain_block(found))


@endpoint(
    "PUT",
    "/api/v1/admin/domain_blocks/{id}",
    auth="required",
    scope=WRITE_BLOCKS,
    doc=Doc(
        "Change a domain block",
        "Admin",
        DOMAIN_BLOCK,
        params=[path_param()],
        body=request_body(BLOCK_FIELDS),
    ),
)
async def update_domain_block(ctx: Ctx) -> Response:
    found = await ctx.rp.admin.update_domain_block(ctx.uid, ctx.path_id(), **_block_changes(ctx))
    return JSON(entities.domain_block(found))


@endpoint(
    "DELETE",
    "/api/v1/admin/domain_blocks/{id}",
    auth="required",
    scope=WRITE_BLOCKS,
    doc=Doc("Lift a domain block", "Admin", EMPTY_OBJ, params=[path_param()]),
)
async def delete_domain_block(ctx: Ctx) -> Response:
    await ctx.rp.admin.remove_domain_block(ctx.uid, ctx.path_id())
    return JSON({})


# --- e-mail domain blocks and canonical e-mail blocks -------------------------------------
EMAIL_BLOCK = obj({"id": ID, "domain": STR, "created_at": STR, "history": array(EMPTY_OBJ)})
CANONICAL_BLOCK = obj({"id": ID, "canonical_email_hash": STR})


@endpoint(
    "GET",
    "/api/v1/admin/email_domain_blocks",
    auth="required",
    scope=READ_EMAIL,
    doc=Doc("The blocked e-mail domains, newest first", "Admin", array(EMAIL_BLOCK)),
)
async def email_domain_blocks(ctx: Ctx) -> Response:
    found = await ctx.rp.admin.email_domain_blocks(ctx.uid)
    return JSON([entities.email_domain_block(b) for b in found])


@endpoint(
    "GET",
    "/api/v1/admin/email_domain_blocks/{id}",
    auth="required",
    scope=READ_EMAIL,
    doc=Doc("One e-mail domain block", "Admin", EMAIL_BLOCK, params=[path_param()]),
)
async def email_domain_block(ctx: Ctx) -> Response:
    found = await ctx.rp.admin.email_domain_block(ctx.uid, ctx.path_id())
    return JSON(entities.email_domain_block(found))


@endpoint(
    "POST",
    "/api/v1/admin/email_domain_blocks",
    auth="required",
    scope=WRITE_EMAIL,
    doc=Doc(
        "Refuse sign-ups with addresses at a domain (and the domains under it)",
        "Admin",
        EMAIL_BLOCK,
        body=request_body({"domain": STR}, required=("domain",)),
    ),
)
async def block_email_domain(ctx: Ctx) -> Response:
    domain = ctx.params.str("domain", required=True, max_chars=300)
    return JSON(entities.email_domain_block(await ctx.rp.admin.block_email_domain(ctx.uid, domain)))


@endpoint(
    "DELETE",
    "/api/v1/admin/email_domain_blocks/{id}",
    auth="required",
    scope=WRITE_EMAIL,
    doc=Doc("Lift an e-mail domain block", "Admin", EMPTY_OBJ, params=[path_param()]),
)
async def unblock_email_domain(ctx: Ctx) -> Response:
    await ctx.rp.admin.unblock_email_domain(ctx.uid, ctx.path_id())
    return JSON({})


@endpoint(
    "GET",
    "/api/v1/admin/canonical_email_blocks",
    auth="required",
    scope=READ_CANONICAL,
    doc=Doc(
        "The blocked canonical e-mail addresses, newest first", "Admin", array(CANONICAL_BLOCK)
    ),
)
async def canonical_email_blocks(ctx: Ctx) -> Response:
    found = await ctx.rp.admin.canonical_email_blocks(ctx.uid)
    return JSON([entities.canonical_email_block(b) for b in found])


@endpoint(
    "GET",
    "/api/v1/admin/canonical_email_blocks/{id}",
    auth="required",
    scope=READ_CANONICAL,
    doc=Doc("One canonical e-mail block", "Admin", CANONICAL_BLOCK, params=[path_param()]),
)
async def canonical_email_block(ctx: Ctx) -> Response:
    found = await ctx.rp.admin.canonical_email_block(ctx.uid, ctx.path_id())
    return JSON(entities.canonical_email_block(found))


@endpoint(
    "POST",
    "/api/v1/admin/canonical_email_blocks/test",
    auth="required",
    scope=READ_CANONICAL,
    doc=Doc(
        "The canonical e-mail blocks an address matches",
        "Admin",
        array(CANONICAL_BLOCK),
        body=request_body({"email": STR}, required=("email",)),
    ),
)
async def test_canonical_email(ctx: Ctx) -> Response:
    email = ctx.params.str("email", required=True, max_chars=limits.EMAIL_MAX_CHARS)
    found = await ctx.rp.admin.test_canonical_email(ctx.uid, email)
    return JSON([entities.canonical_email_block(b) for b in found])


@endpoint(
    "POST",
    "/api/v1/admin/canonical_email_blocks",
    auth="required",
    scope=WRITE_CANONICAL,
    doc=Doc(
        "Refuse sign-ups with an address (its canonical form's hash), or a hash as given",
        "Admin",
        CANONICAL_BLOCK,
        body=request_body({"email": STR, "canonical_email_hash": STR}),
    ),
)
async def block_canonical_email(ctx: Ctx) -> Response:
    p = ctx.params
    email = p.str("email", max_chars=limits.EMAIL_MAX_CHARS)
    digest = p.str("canonical_email_hash", max_chars=64)
    found = await ctx.rp.admin.block_canonical_email(ctx.uid, email, digest)
    return JSON(entities.canonical_email_block(found))


@endpoint(
    "DELETE",
    "/api/v1/admin/canonical_email_blocks/{id}",
    auth="required",
    scope=WRITE_CANONICAL,
    doc=Doc("Lift a canonical e-mail block", "Admin", EMPTY_OBJ, params=[path_param()]),
)
async def unblock_canonical_email(ctx: Ctx) -> Response:
    await ctx.rp.admin.unblock_canonical_email(ctx.uid, ctx.path_id())
    return JSON({})


# --- IP blocks ---------------------------------------------------------------------------
IP_BLOCK = obj({"id": ID, "ip": STR, "severity": STR, "comment": STR})
IP_FIELDS = {
    "ip": STR,
    "severity": {"enum": ["sign_up_requires_approval", "sign_up_block", "no_access"]},
    "comment": {"type": "string", "maxLength": limits.ADMIN_COMMENT_MAX_CHARS},
    "expires_in": {"type": "integer", "minimum": 1},
}


def _ip_fields(ctx: Ctx) -> dict:
    p = ctx.params
    out: dict = {}
    for name in ("ip", "severity", "comment"):
        if p.raw(name) is not None:
            out[name] = p.str(name, max_chars=limits.ADMIN_COMMENT_MAX_CHARS)
    if p.has("expires_in"):
        out["expires_in"] = p.raw("expires_in")
    return out


@endpoint(
    "GET",
    "/api/v1/admin/ip_blocks",
    auth="required",
    scope=READ_IP,
    doc=Doc("The IP blocks not expired, newest first", "Admin", array(IP_BLOCK)),
)
async def ip_blocks(ctx: Ctx) -> Response:
    return JSON([entities.ip_block(b) for b in await ctx.rp.admin.ip_blocks(ctx.uid)])


@endpoint(
    "GET",
    "/api/v1/admin/ip_blocks/{id}",
    auth="required",
    scope=READ_IP,
    doc=Doc("One IP block", "Admin", IP_BLOCK, params=[path_param()]),
)
async def ip_block(ctx: Ctx) -> Response:
    return JSON(entities.ip_block(await ctx.rp.admin.ip_block(ctx.uid, ctx.path_id())))


@endpoint(
    "POST",
    "/api/v1/admin/ip_blocks",
    auth="required",
    scope=WRITE_IP,
    doc=Doc(
        "Block an address or a range: sign_up_block and no_access refuse its sign-ups",
        "Admin",
        IP_BLOCK,
        body=request_body(IP_FIELDS, required=("ip", "severity")),
    ),
)
async def create_ip_block(ctx: Ctx) -> Response:
    f = _ip_fields(ctx)
    found = await ctx.rp.admin.create_ip_block(
        ctx.uid, f.get("ip"), f.get("severity"), f.get("comment"), f.get("expires_in")
    )
    return JSON(entities.ip_block(found))


@endpoint(
    "PUT",
    "/api/v1/admin/ip_blocks/{id}",
    auth="required",
    scope=WRITE_IP,
    doc=Doc(
        "Change an IP block", "Admin", IP_BLOCK, params=[path_param()], body=request_body(IP_FIELDS)
    ),
)
async def update_ip_block(ctx: Ctx) -> Response:
    found = await ctx.rp.admin.update_ip_block(ctx.uid, ctx.path_id(), **_ip_fields(ctx))
    return JSON(entities.ip_block(found))


@endpoint(
    "DELETE",
    "/api/v1/admin/ip_blocks/{id}",
    auth="required",
    scope=WRITE_IP,
    doc=Doc("Lift an IP block", "Admin", EMPTY_OBJ, params=[path_param()]),
)
async def delete_ip_block(ctx: Ctx) -> Response:
    await ctx.rp.admin.remove_ip_block(ctx.uid, ctx.path_id())
    return JSON({})


# --- domain allows -----------------------------------------------------------------------
DOMAIN_ALLOW = obj({"id": ID, "domain": STR, "created_at": STR})


@endpoint(
    "GET",
    "/api/v1/admin/domain_allows",
    auth="required",
    scope=READ_ALLOWS,
    doc=Doc(
        "The allowed domains, newest first (in the limited federation mode, the "
        "only ones this server federates with)",
        "Admin",
        array(DOMAIN_ALLOW),
    ),
)
async def domain_allows(ctx: Ctx) -> Response:
    return JSON([entities.domain_allow(a) for a in await ctx.rp.admin.domain_allows(ctx.uid)])


@endpoint(
    "GET",
    "/api/v1/admin/domain_allows/{id}",
    auth="required",
    scope=READ_ALLOWS,
    doc=Doc("One allowed domain", "Admin", DOMAIN_ALLOW, params=[path_param()]),
)
async def domain_allow(ctx: Ctx) -> Response:
    return JSON(entities.domain_allow(await ctx.rp.admin.domain_allow(ctx.uid, ctx.path_id())))


@endpoint(
    "POST",
    "/api/v1/admin/domain_allows",
    auth="required",
    scope=WRITE_ALLOWS,
    doc=Doc(
        "Allow a domain (the allow there already, if there is one)",
        "Admin",
        DOMAIN_ALLOW,
        body=request_body({"domain": STR}, required=("domain",)),
    ),
)
async def allow_domain(ctx: Ctx) -> Response:
    host = ctx.params.str("domain", required=True, max_chars=300)
    return JSON(entities.domain_allow(await ctx.rp.admin.allow_domain(ctx.uid, host)))


@endpoint(
    "DELETE",
    "/api/v1/admin/domain_allows/{id}",
    auth="required",
    scope=WRITE_ALLOWS,
    doc=Doc("Remove an allowed domain", "Admin", EMPTY_OBJ, params=[path_param()]),
)
async def remove_domain_allow(ctx: Ctx) -> Response:
    await ctx.rp.admin.remove_domain_allow(ctx.uid, ctx.path_id())
    return JSON({})


# --- relays (Mastodon has only its admin page: these are Redpoll's) ---------------------------
@endpoint(
    "GET",
    "/api/v1/redpoll/admin/relays",
    auth="required",
    scope=("admin:read",),
    doc=Doc("The relays this server follows (manage_federation)", "Admin", array(RELAY)),
)
async def relays(ctx: Ctx) -> Response:
    return JSON([r.entity() for r in await ctx.rp.federation.admin_relays(ctx.uid)])


@endpoint(
    "POST",
    "/api/v1/redpoll/admin/relays",
    auth="required",
    scope=("admin:write",),
    doc=Doc(
        "Follow a relay by its inbox URL (manage_federation): pending until it accepts",
        "Admin",
        RELAY,
        body=request_body({"inbox_url": STR}, required=("inbox_url",)),
    ),
)
async def add_relay(ctx: Ctx) -> Response:
    url = ctx.params.str("inbox_url", required=True, max_chars=limits.FED_RELAY_URL_MAX_CHARS)
    return JSON((await ctx.rp.federation.admin_relay_add(ctx.uid, url)).entity())


@endpoint(
    "DELETE",
    "/api/v1/redpoll/admin/relays/{id}",
    auth="required",
    scope=("admin:write",),
    doc=Doc(
        "Stop following a relay: the Undo of its Follow sent (manage_federation)",
        "Admin",
        RELAY,
        params=[path_param()],
    ),
)
async def remove_relay(ctx: Ctx) -> Response:
    return JSON((await ctx.rp.federation.admin_relay_remove(ctx.uid, ctx.path_id())).entity())
