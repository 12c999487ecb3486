"""Staff roles, as Mastodon's ``UserRole``: permission flags with Mastodon's
bit values, and the three roles it seeds (Moderator, Admin, Owner, with
their ids, positions and permissions). An account holds one role, by name,
in its user record's ``role`` field (``redpoll admin role``; "" for none).

A role may act on an account only when its position is above that
account's role (``overrides``), as Mastodon's policies require for
suspending, silencing, disabling and changing roles. An owner's
``administrator`` flag grants every permission.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import Forbidden, ValidationError
from ..core.models import User

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

#: Mastodon's answer to a staff action the caller's role does not allow
NOT_ALLOWED = "This action is not allowed"


def _bits(*names: str) -> int:
    return sum(FLAGS[n] for n in names)


@dataclass(frozen=True, slots=True)
class Role:
    id: int
    name: str
    #: the stored name (user record ``role``): "" for none
    key: str
    position: int
    permissions: int
    highlighted: bool = True
    color: str = ""

    @property
    def computed(self) -> int:
        """Every flag when ``administrator`` is set (Mastodon's computed_permissions)."""
        return ALL if self.permissions & FLAGS["administrator"] else self.permissions

    def can(self, *any_of: str) -> bool:
        return any(self.computed & FLAGS[p] == FLAGS[p] for p in any_of)

    def overrides(self, other: Role) -> bool:
        return self.position > other.position

    @property
    def staff(self) -> bool:
        """Mastodon's ``permissions=staff`` filter: a role that may manage reports."""
        return self.can("manage_reports")


#: an account without a role (Mastodon's "everyone": it invites users)
NONE = Role(-99, "", "", -1, _bits("invite_users"), highlighted=False)
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
#: what ``redpoll admin role`` takes
NAMES = (*BUILT_IN, "none")


def of(user: User | None) -> Role:
    """The role an account holds (an unknown name: none)."""
    if user is None:
        return NONE
    return BUILT_IN.get(user.role, NONE)


def named(name: str) -> Role:
    """A role by the name ``redpoll admin role`` takes; 'none' is no role."""
    if name == "none":
        return NONE
    found = BUILT_IN.get(name)
    if found is None:
        raise ValidationError("role", "must be one of " + ", ".join(NAMES))
    return found


def require(role: Role, *any_of: str) -> None:
    """Forbidden (Mastodon's 403) unless ``role`` has one of the permissions."""
    if not role.can(*any_of):
        raise Forbidden(NOT_ALLOWED)


def require_over(role: Role, target: User, *any_of: str) -> None:
    """:func:`require`, and ``role`` placed above the target account's role."""
    require(role, *any_of)
    if not role.overrides(of(target)):
        raise Forbidden(NOT_ALLOWED)
