"""Staff roles, as Mastodon's ``UserRole``: permission flags with Mastodon's
bit values, the three roles it seeds (Moderator, Admin, Owner, with their
ids, positions and permissions; fixed here), the "everyone" role (id -99,
position -1: what an account without a role holds; its permissions may be
changed, within ``invite_users``) and the roles an owner defines
(redpoll.admin.custom_roles), kept in one hash (keys.ROLES).

An account holds one role in its user record's ``role`` field: a built-in
role's key ("moderator", "admin", "owner"), a defined role's id, or "" for
none (an id whose role was deleted reads as none). :func:`load` reads the
definitions whenever a role is needed: nothing is cached, so a change or a
deletion holds from the next request on, in every process.

A role may act on an account only when its position is above that
account's role (``overrides``), as Mastodon's policies require for
suspending, silencing, disabling and changing roles. A role's permissions
are its own and the everyone role's (Mastodon's computed_permissions); the
``administrator`` flag grants every permission.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from ..core.errors import Forbidden, ValidationError
from ..core.models import User
from ..storage.store import Store
from . import keys

#: Mastodon's UserRole::FLAGS
FLAGS: dict[str, int] = {
    "administrator": 1 << 0,
    "view_devops": 1 << 1,
    "view_audit_log": 1 << 2,
    "view_dashboard": 1 << 3,
    "manage_reports": 1 << 4,
    "manage_federation": 1 << 5,
    "manage_settings": 1 << 6,
    "manage_blocks": 1 << 7,
    "manage_taxonomies": 1 << 8,
    "manage_appeals": 1 << 9,
    "manage_users": 1 << 10,
    "manage_invites": 1 << 11,
    "manage_rules": 1 << 12,
    "manage_announcements": 1 << 13,
    "manage_custom_emojis": 1 << 14,
    "manage_webhooks": 1 << 15,
    "invite_users": 1 << 16,
    "manage_roles": 1 << 17,
    "manage_user_access": 1 << 18,
    "delete_user_data": 1 << 19,
}
ALL = sum(FLAGS.values())
#: the permissions the everyone role may hold (Mastodon's Flags::DEFAULT;
#: anything more is "dangerous" for it)
EVERYONE_DEFAULT = FLAGS["invite_users"]

#: Mastodon's answer to a staff action the caller's role does not allow
NOT_ALLOWED = "This action is not allowed"

#: Mastodon's UserRole colour: ``#`` and 3 or 6 hex digits (or none)
COLOR = re.compile(r"\A#?(?:[A-Fa-f0-9]{3}){1,2}\Z")


def _bits(*names: str) -> int:
    return sum(FLAGS[n] for n in names)


def bits(names) -> int:
    """The flags named (a ValidationError for an unknown one)."""
    out = 0
    for name in names:
        if name not in FLAGS:
            raise ValidationError("permissions", f"unknown permission {name!r}")
        out |= FLAGS[name]
    return out


def names_of(permissions: int) -> list[str]:
    return [n for n, b in FLAGS.items() if permissions & b == b]


@dataclass(frozen=True, slots=True)
class Role:
    id: int
    name: str
    #: the stored name (user record ``role``): "" for none, a built-in
    #: role's key, or a defined role's id
    key: str
    position: int
    permissions: int
    highlighted: bool = True
    color: str = ""
    #: the everyone role's permissions, which every role has too
    inherited: int = 0

    @property
    def computed(self) -> int:
        """Mastodon's computed_permissions: its own and the everyone role's,
        every flag when ``administrator`` is among them."""
        held = self.permissions | self.inherited
        return ALL if held & FLAGS["administrator"] else held

    def can(self, *any_of: str) -> bool:
        return any(self.computed & FLAGS[p] == FLAGS[p] for p in any_of)

    def overrides(self, other: Role) -> bool:
        return self.position > other.position

    @property
    def staff(self) -> bool:
        """Mastodon's ``permissions=staff`` filter: a role that may manage reports."""
        return self.can("manage_reports")

    @property
    def everyone(self) -> bool:
        return self.id == EVERYONE_ID

    @property
    def built_in(self) -> bool:
        return self.key in BUILT_IN or self.id == OPERATOR.id

    def to_json(self) -> str:
        return json.dumps(
            {
                "id": self.id,
                "name": self.name,
                "color": self.color,
                "position": self.position,
                "permissions": self.permissions,
                "highlighted": self.highlighted,
            },
            sort_keys=True,
        )

    @staticmethod
    def from_json(raw: bytes | str) -> Role:
        d = json.loads(raw)
        rid = int(d["id"])
        return Role(
            rid,
            str(d.get("name", "")),
            "" if rid == EVERYONE_ID else str(rid),
            int(d.get("position", 0)),
            int(d.get("permissions", 0)),
            bool(d.get("highlighted", False)),
            str(d.get("color", "")),
        )


EVERYONE_ID = -99
#: an account without a role (Mastodon's "everyone": it invites users)
NONE = Role(EVERYONE_ID, "", "", -1, EVERYONE_DEFAULT, highlighted=False)
MODERATOR = Role(
    1,
    "Moderator",
    "moderator",
    10,
    _bits(
        "invite_users",
        "view_dashboard",
        "view_audit_log",
        "manage_users",
        "manage_reports",
        "manage_taxonomies",
    ),
)
ADMIN = Role(
    2,
    "Admin",
    "admin",
    100,
    _bits(
        "invite_users",
        "view_dashboard",
        "view_audit_log",
        "manage_users",
        "manage_user_access",
        "delete_user_data",
        "manage_reports",
        "manage_taxonomies",
        "manage_federation",
        "manage_settings",
        "manage_blocks",
        "manage_appeals",
        "manage_rules",
        "manage_invites",
        "manage_announcements",
        "manage_custom_emojis",
        "manage_webhooks",
        "manage_roles",
    ),
)
OWNER = Role(3, "Owner", "owner", 1000, _bits("administrator"))
#: whoever runs ``redpoll admin`` on the server's database: every permission
OPERATOR = Role(0, "Operator", "operator", 10**6, ALL, highlighted=False)

BUILT_IN = {r.key: r for r in (MODERATOR, ADMIN, OWNER)}
BY_ID = {r.id: r for r in (MODERATOR, ADMIN, OWNER)}
#: what ``redpoll admin role`` takes besides the defined roles' names
NAMES = (*BUILT_IN, "none")
#: the first id a defined role gets (the built-in ones have 1 to 3)
FIRST_ID = 100


@dataclass(frozen=True, slots=True)
class Roles:
    """Every role as the definitions read just now say (:func:`load`)."""

    everyone: Role
    defined: dict[int, Role]

    def _with_everyone(self, role: Role) -> Role:
        return replace(role, inherited=self.everyone.permissions)

    def of(self, user: User | None) -> Role:
        """The role an account holds (an unknown or deleted one: none)."""
        if user is None or not user.role:
            return self.everyone
        found = BUILT_IN.get(user.role)
        if found is None and user.role.isdigit():
            found = self.defined.get(int(user.role))
        return self.everyone if found is None else self._with_everyone(found)

    def by_id(self, rid: int) -> Role | None:
        if rid == EVERYONE_ID:
            return self.everyone
        found = BY_ID.get(rid) or self.defined.get(rid)
        return None if found is None else self._with_everyone(found)

    def named(self, name: str) -> Role:
        """A role by the name ``redpoll admin role`` takes (a built-in key,
        or any role's name, any case); 'none' is no role."""
        low = name.strip().lower()
        if low == "none":
            return self.everyone
        for role in self.all():
            if not role.everyone and (role.key == low or role.name.lower() == low):
                return role
        raise ValidationError(
            "role", "must be none or one of " + ", ".join(r.name for r in self.assignable())
        )

    def all(self) -> list[Role]:
        """Every role, the everyone role first, then by position and id."""
        rest = [self._with_everyone(r) for r in (*BUILT_IN.values(), *self.defined.values())]
        return [self.everyone, *sorted(rest, key=lambda r: (r.position, r.id))]

    def assignable(self) -> list[Role]:
        return self.all()[1:]


def decode(rows: dict) -> Roles:
    """The table from the definitions hash as read (field: id, value: JSON)."""
    everyone = NONE
    defined: dict[int, Role] = {}
    for raw in rows.values():
        role = Role.from_json(raw)
        if role.id == EVERYONE_ID:
            everyone = replace(NONE, permissions=role.permissions & EVERYONE_DEFAULT)
        elif role.id >= FIRST_ID:
            defined[role.id] = role
    return Roles(everyone, defined)


async def load(store: Store) -> Roles:
    """Every role's definition, read now (one HGETALL of keys.ROLES; never
    kept: a role changed or deleted counts from the next call on)."""
    return decode(await store.hgetall(keys.ROLES))


async def of(store: Store, user: User | None) -> Role:
    """The role an account holds, as its definition reads now."""
    return (await load(store)).of(user)


def require(role: Role, *any_of: str) -> None:
    """Forbidden (Mastodon's 403) unless ``role`` has one of the permissions."""
    if not role.can(*any_of):
        raise Forbidden(NOT_ALLOWED)


def require_over(role: Role, target: Role, *any_of: str) -> None:
    """:func:`require`, and ``role`` placed above the target account's role."""
    require(role, *any_of)
    if not role.overrides(target):
        raise Forbidden(NOT_ALLOWED)


def badge(role: Role) -> str:
    """What the user record keeps of a highlighted defined role for the
    account entity's ``roles`` (its ``rb`` field: id, name, colour as JSON;
    "" for any other role): display only, rewritten by every change of the
    role (redpoll.admin.custom_roles); permissions are never read from it."""
    if not role.highlighted or role.key in BUILT_IN or role.everyone:
        return ""
    return json.dumps({"id": str(role.id), "name": role.name, "color": role.color})
