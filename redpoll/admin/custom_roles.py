"""Roles an owner defines, by Mastodon's rules for UserRole (its
UserRolePolicy and the model's validations):

- only a role with ``manage_roles`` lists, creates, changes or deletes roles;
- it gives only permissions it has itself and places a role no higher than
  its own position (422 otherwise: Mastodon's "elevated");
- it changes only roles below its own position, or its own role (whose
  permissions and position it may not change);
- it deletes only roles below its own, never its own nor the everyone role;
- the everyone role (id -99, what an account without a role holds) keeps
  its position -1 and may hold no permission but ``invite_users``;
- the built-in roles (Moderator, Admin, Owner) are fixed here: they are
  listed and given, not changed or deleted (422).

Every change is one script (role_write.lua: the name is one role's, and the
definition is the one the decision read, else 409), then the holders'
badges (the account entity's ``roles``, redpoll.admin.roles.badge) are
rewritten, then the audit entry: each step idempotent, so a call cut short
is finished by making it again. Deleting a role first takes it from its
holders (they hold no role, as Mastodon's ``dependent: :nullify``), then
deletes the definition; cut short, deleting it again finishes.
"""

from __future__ import annotations

from dataclasses import replace

from ..core import limits, validate
from ..core.errors import Forbidden, NotFound, ValidationError
from ..records import users
from ..storage.store import Store
from . import audit, keys, roles, staff
from .roles import Role


async def listed(store: Store, actor: int | None) -> list[Role]:
    """Every role (the everyone role first, then by position)."""
    roles.require(await staff.role_of(store, actor), "manage_roles")
    return (await roles.load(store)).all()


def _name(value, table: roles.Roles, except_id: int | None = None) -> str:
    name = validate.text(value or "", "name", limits.ROLE_NAME_MAX_CHARS).strip()
    if not name:
        raise ValidationError("name", "can't be blank")
    low = name.lower()
    if low == "none" or any(
        r.id != except_id and (r.key == low or r.name.lower() == low) for r in table.assignable()
    ):
        raise ValidationError("name", "is taken by another role")
    return name


def _color(value) -> str:
    color = validate.text(value or "", "color", 7, allow_empty=True).strip()
    if color and not roles.COLOR.match(color):
        raise ValidationError("color", "must be # and 3 or 6 hexadecimal digits")
    return color


def _position(value, actor: Role) -> int:
    try:
        position = int(value)
    except (TypeError, ValueError):
        raise ValidationError("position", "must be a whole number") from None
    if not 0 <= position <= limits.ROLE_POSITION_MAX:
        raise ValidationError("position", f"must be from 0 to {limits.ROLE_POSITION_MAX}")
    if position > actor.position:
        raise ValidationError("position", "may not be above your own role's")
    return position


def _permissions(value: int, actor: Role) -> int:
    if value < 0 or value & ~roles.ALL:
        raise ValidationError("permissions", "unknown permission bits")
    if actor.computed & value != value:
        raise ValidationError("permissions", "may not include a permission your role lacks")
    return value


async def define(
    store: Store,
    actor: int | None,
    name: str,
    permissions: int,
    position: int,
    color: str = "",
    highlighted: bool = False,
) -> Role:
    """A new role; it is the audit log's ``create`` of a UserRole."""
    me = await staff.role_of(store, actor)
    roles.require(me, "manage_roles")
    table = await roles.load(store)
    role = Role(
        0,
        _name(name, table),
        "",
        _position(position, me),
        _permissions(permissions, me),
        bool(highlighted),
        _color(color),
    )
    rid = int(
        await store.run(
            "role_write",
            [keys.ROLES, keys.ROLE_SEQ],
            ["create", roles.FIRST_ID, limits.ROLES_MAX, role.name.lower(), role.to_json()],
        )
    )
    role = replace(role, id=rid, key=str(rid))
    await audit.record(store, actor, "create", "UserRole", rid, role.name, _summary(role))
    return role


def _summary(role: Role) -> str:
    return f"position {role.position}: " + (", ".join(roles.names_of(role.permissions)) or "-")


async def _target(store: Store, rid) -> tuple[Role, str]:
    """The role ``rid`` as defined now, and its stored JSON ("" for the
    everyone role never changed)."""
    try:
        rid = int(rid)
    except (TypeError, ValueError):
        raise NotFound("Record not found") from None
    raw = await store.hget(keys.ROLES, str(rid))
    found = (await roles.load(store)).by_id(rid)
    if found is None:
        raise NotFound("Record not found")
    return found, raw.decode() if raw else ""


def _check_built_in(target: Role) -> None:
    if target.key in roles.BUILT_IN:
        raise ValidationError("id", "the built-in roles (Moderator, Admin, Owner) are fixed")


async def update(
    store: Store,
    actor: int | None,
    rid,
    *,
    name=None,
    permissions: int | None = None,
    position=None,
    color=None,
    highlighted: bool | None = None,
) -> Role:
    """Change a role (what is given); the audit log's ``update``."""
    me = await staff.role_of(store, actor)
    roles.require(me, "manage_roles")
    target, raw = await _target(store, rid)
    own = me.id == target.id
    if not (me.overrides(target) or own):
        raise Forbidden(roles.NOT_ALLOWED)
    _check_built_in(target)
    table = await roles.load(store)
    new = replace(target, inherited=0)
    if target.everyone:
        if any(v is not None for v in (name, position, color, highlighted)):
            raise ValidationError("id", "the everyone role has only its permissions to change")
        if permissions is not None:
            if permissions & ~roles.EVERYONE_DEFAULT:
                raise ValidationError("permissions", "the everyone role may only invite users")
            new = replace(new, permissions=_permissions(permissions, me))
    else:
        if name is not None:
            new = replace(new, name=_name(name, table, target.id))
        if color is not None:
            new = replace(new, color=_color(color))
        if highlighted is not None:
            new = replace(new, highlighted=bool(highlighted))
        if permissions is not None and permissions != target.permissions:
            if own:
                raise ValidationError("permissions", "you may not change your own role's")
            new = replace(new, permissions=_permissions(permissions, me))
        if position is not None and int(position) != target.position:
            if own:
                raise ValidationError("position", "you may not change your own role's")
            new = replace(new, position=_position(position, me))
    await store.run(
        "role_write",
        [keys.ROLES, keys.ROLE_SEQ],
        ["update", str(target.id), raw, new.name.lower(), new.to_json()],
    )
    if not target.everyone:
        for uid in await _holders(store, target.key):
            await staff.set_fields(store, uid, rb=roles.badge(new))
    await audit.record(
        store, actor, "update", "UserRole", target.id, new.name or "everyone", _summary(new)
    )
    return (await roles.load(store)).by_id(target.id) or new


async def remove(store: Store, actor: int | None, rid) -> Role:
    """Delete a role: its holders hold none; the audit log's ``destroy``."""
    me = await staff.role_of(store, actor)
    roles.require(me, "manage_roles")
    target, raw = await _target(store, rid)
    if target.everyone or not me.overrides(target) or me.id == target.id:
        raise Forbidden(roles.NOT_ALLOWED)
    _check_built_in(target)
    for uid in await _holders(store, target.key):
        await staff.set_fields(store, uid, role="", rb="")
        await staff.index_role(store, uid, "")
    await store.run("role_write", [keys.ROLES, keys.ROLE_SEQ], ["delete", str(target.id), raw])
    await audit.record(store, actor, "destroy", "UserRole", target.id, target.name)
    return target


async def _holders(store: Store, key: str) -> list[int]:
    """The accounts holding the role ``key`` (from the staff index, which
    names at least every holder: a role is indexed before it is given)."""
    uids = sorted(int(u) for u in await store.smembers(keys.STAFF))
    return [u.id for u in await users.get_users(store, uids) if u.role == key]
