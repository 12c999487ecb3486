"""Who is acting: the role of the account behind an admin call (``None``:
the operator at ``redpoll admin``, who may do everything), and the one
writer of the user-record fields moderators change, and the index of the
accounts holding a staff role (admin_keys.STAFF: who is told of a sign-up)."""

from __future__ import annotations

from ..core import keys, limits
from ..core.errors import UserNotFound
from ..records import users
from ..storage.store import Store
from . import keys as admin_keys
from . import roles


async def role_of(store: Store, actor: int | None) -> roles.Role:
    if actor is None:
        return roles.OPERATOR
    try:
        return roles.of(await users.get_user(store, actor))
    except UserNotFound:
        return roles.NONE


async def set_fields(store: Store, uid: int, **fields: str) -> None:
    """Set (or, with "", clear) fields of the user record ``uid`` and bump its
    ``rev``: one script (account_flags.lua), atomic, idempotent; UserNotFound
    when the account is gone."""
    args: list[str] = []
    for name, value in fields.items():
        args += [name, value]
    try:
        await store.run("account_flags", [keys.user(uid)], args)
    except UserNotFound:
        raise UserNotFound(f"user {uid} does not exist") from None


async def index_role(store: Store, uid: int, key: str) -> None:
    """Keep ``uid`` in the staff index while it holds a role (``key`` "":
    none). One SADD or SREM: idempotent, run after the role's own write, so
    a call cut short is finished by giving the role again."""
    if key:
        await store.sadd(admin_keys.STAFF, uid)
    else:
        await store.srem(admin_keys.STAFF, uid)


async def holding(store: Store, *any_of: str) -> list[int]:
    """The ids of the accounts whose role has one of the permissions (read
    from their records: the index may name an account whose role went)."""
    uids = sorted(int(u) for u in await store.smembers(admin_keys.STAFF))
    uids = uids[: limits.SIGN_UP_NOTIFIED_STAFF_MAX]
    found = await users.get_users(store, uids)
    return [u.id for u in found if not u.suspended and roles.of(u).can(*any_of)]
