"""Defining roles and giving them: Mastodon keeps both in its web pages (its
client API has no route for them), so small Redpoll endpoints under
``/api/v1/redpoll/admin/`` with the admin scopes. Each needs a role with
``manage_roles`` (403 "This action is not allowed" otherwise) and follows
Mastodon's rules for UserRole (redpoll.admin.custom_roles): a role gives
no permission it lacks and places no role above itself (422), changes and
deletes only roles below it (403)."""

from __future__ import annotations

from starlette.responses import Response

from ..core import limits
from ..core.errors import ValidationError
from ..render import admin as admin_entities
from ..render import entities
from .context import Ctx
from .contract import BOOL, INT, STR, Doc, array, obj, path_param, request_body
from .responses import JSON
from .routing import endpoint

READ = ("admin:read",)
WRITE = ("admin:write",)

ROLE = obj(
    {
        "id": STR,
        "name": STR,
        "color": STR,
        "permissions": STR,
        "permission_names": array(STR),
        "highlighted": BOOL,
        "position": INT,
        "everyone": BOOL,
        "built_in": BOOL,
    }
)
ROLE_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
FIELDS = {
    "name": {"type": "string", "maxLength": limits.ROLE_NAME_MAX_CHARS},
    "permissions": {
        "type": "string",
        "pattern": "^[0-9]{1,8}$",
        "description": "The permission flags as a decimal number (Mastodon's UserRole::FLAGS)",
    },
    "position": {"type": "integer", "minimum": 0, "maximum": limits.ROLE_POSITION_MAX},
    "color": {"type": "string", "maxLength": 7},
    "highlighted": {"type": "boolean"},
}


def _role_id(ctx: Ctx) -> int:
    raw = ctx.request.path_params["id"]
    try:
        return (
            int(raw) if raw == "-99" or (raw.isascii() and raw.isdigit()) and len(raw) <= 16 else -1
        )
    except ValueError:
        return -1


def _bits(ctx: Ctx) -> int | None:
    raw = ctx.params.str("permissions", max_chars=8)
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit()):
        raise ValidationError("permissions", "must be a decimal number of permission flags")
    return int(raw)


def _position(ctx: Ctx) -> int | None:
    value = ctx.params.number("position")
    if value is None:
        return None
    if value != int(value):
        raise ValidationError("position", "must be a whole number")
    return int(value)


@endpoint(
    "GET",
    "/api/v1/redpoll/admin/roles",
    auth="required",
    scope=READ,
    doc=Doc("Every role: the everyone role, then by position (manage_roles)", "Admin", array(ROLE)),
)
async def list_roles(ctx: Ctx) -> Response:
    return JSON([entities.role_definition(r) for r in await ctx.rp.admin.roles(ctx.uid)])


@endpoint(
    "POST",
    "/api/v1/redpoll/admin/roles",
    auth="required",
    scope=WRITE,
    doc=Doc(
        "Define a role (manage_roles; no permission the caller lacks, no position above its own)",
        "Admin",
        ROLE,
        body=request_body(FIELDS, required=("name", "position")),
    ),
)
async def define_role(ctx: Ctx) -> Response:
    p = ctx.params
    name = p.str("name", required=True, max_chars=limits.ROLE_NAME_MAX_CHARS) or ""
    position = _position(ctx)
    if position is None:
        raise ValidationError("position", "is missing")
    role = await ctx.rp.admin.define_role(
        ctx.uid,
        name,
        _bits(ctx) or 0,
        position,
        color=p.str("color", max_chars=7) or "",
        highlighted=p.bool("highlighted"),
    )
    return JSON(entities.role_definition(role))


@endpoint(
    "PUT",
    "/api/v1/redpoll/admin/roles/{id}",
    auth="required",
    scope=WRITE,
    doc=Doc(
        "Change what is given of a role (manage_roles; a role below the caller's, or its own "
        "name and colour; the everyone role: its permissions)",
        "Admin",
        ROLE,
        params=[ROLE_ID],
        body=request_body(FIELDS),
    ),
)
async def update_role(ctx: Ctx) -> Response:
    p = ctx.params
    role = await ctx.rp.admin.update_role(
        ctx.uid,
        _role_id(ctx),
        name=p.str("name", max_chars=limits.ROLE_NAME_MAX_CHARS),
        permissions=_bits(ctx),
        position=_position(ctx),
        color=p.str("color", max_chars=7) if p.raw("color") is not None else None,
        highlighted=p.bool("highlighted") if p.has("highlighted") else None,
    )
    return JSON(entities.role_definition(role))


@endpoint(
    "DELETE",
    "/api/v1/redpoll/admin/roles/{id}",
    auth="required",
    scope=WRITE,
    doc=Doc(
        "Delete a role below the caller's (manage_roles): its holders hold none",
        "Admin",
        ROLE,
        params=[ROLE_ID],
    ),
)
async def remove_role(ctx: Ctx) -> Response:
    return JSON(entities.role_definition(await ctx.rp.admin.remove_role(ctx.uid, _role_id(ctx))))


@endpoint(
    "PUT",
    "/api/v1/redpoll/admin/accounts/{id}/role",
    auth="required",
    scope=("admin:write", "admin:write:accounts"),
    doc=Doc(
        "Give an account a role (role_id; -99 or none: no role) (manage_roles; the account's "
        "role below the caller's, the role given not above it)",
        "Admin",
        obj({"id": STR}),
        params=[path_param()],
        body=request_body({"role_id": {"type": "string", "pattern": "^-?[0-9]{1,16}$"}}),
    ),
)
async def give_role(ctx: Ctx) -> Response:
    raw = ctx.params.str("role_id", max_chars=17)
    try:
        role_id = int(raw) if raw else None
    except ValueError:
        raise ValidationError("role_id", "must be a role's id") from None
    found = await ctx.rp.admin.set_role_id(ctx.uid, ctx.path_id(), role_id)
    return JSON(admin_entities.account(found, ctx.base))
