"""Who is acting: the role of the account behind an admin call (``None``:
the operator at ``redpoll admin``, who may do everything), and the one
writer of the user-record fields moderators change."""

from __future__ import annotations

from ..core import keys
from ..core.errors import UserNotFound
from ..records import users
from ..storage.store import Store
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
