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
    """The actor's role as its definition reads now (redpoll.admin.roles:
    nothing kept, so a role changed or deleted counts from this call on)."""
    if actor is None:
        return roles.OPERATOR
    try:
        user = await users.get_user(store, actor)
    except UserNotFound:
        user = None
    return await roles.of(store, user)


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
    none). One SADD or SREM: idempotent; a role is indexed before it is
    given and unindexed after it is taken, so the index names at least every
    holder (redpoll.admin.custom_roles rewrites them from it), and a call
    cut short is finished by giving the role again."""
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
    table = await roles.load(store)
    return [u.id for u in found if not u.suspended and table.of(u).can(*any_of)]
