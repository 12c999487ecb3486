"""The accounts' changes of layout (redpoll.storage.migration).

1. ``account-search-index``: the users a database holds from before the
   account search index existed go into it (every sign-up and profile
   change since indexes itself).
6. ``staff-index``: the accounts holding a staff role from before the
   staff index existed go into it (every role given since indexes itself).
"""

from __future__ import annotations

from ..admin import staff
from ..core import keys, limits
from ..storage.migration import Migration
from ..storage.store import Store
from .account_index import index_account


async def index_users(store: Store, cursor: str, batch: int) -> tuple[str | None, int]:
    """Index the users ``cursor`` .. ``cursor + batch - 1`` (user ids, from
    1) that are not in the index yet. Idempotent and safe beside live
    changes: each user goes in with the rev read together with its name (one
    HMGET), and index_account.lua (atomic, on the index's slot) applies
    terms only from a newer rev, so a newer rename is never undone."""
    first = int(cursor or 1)
    last = int(await store.get(keys.USER_SEQ) or 0)
    uids = list(range(first, min(first + batch, last + 1)))
    if not uids:
        return None, 0
    held, *rows = await store.batch(
        [
            ("HMGET", keys.SEARCH_INDEXED, *uids),
            *(("HMGET", keys.user(u), "rev", "login", "name") for u in uids),
        ]
    )
    done = 0
    for uid, indexed, (rev, login, name) in zip(uids, held, rows):
        if indexed is None and login is not None:
            await index_account(store, uid, int(rev or 1), login.decode(), (name or b"").decode())
            done += 1
    nxt = uids[-1] + 1
    return (str(nxt) if nxt <= last else None), done


async def index_staff(store: Store, cursor: str, batch: int) -> tuple[str | None, int]:
    """Put the users ``cursor`` .. ``cursor + batch - 1`` that hold a role
    into the staff index (one SADD each: idempotent, and a role given or
    taken meanwhile indexes itself after its write)."""
    first = int(cursor or 1)
    last = int(await store.get(keys.USER_SEQ) or 0)
    uids = list(range(first, min(first + batch, last + 1)))
    if not uids:
        return None, 0
    rows = await store.batch([("HGET", keys.user(u), "role") for u in uids])
    done = 0
    for uid, role in zip(uids, rows):
        if role:
            await staff.index_role(store, uid, role.decode())
            done += 1
    nxt = uids[-1] + 1
    return (str(nxt) if nxt <= last else None), done


MIGRATIONS = [
    Migration(
        number=1,
        name="account-search-index",
        about="put the users from before the account search index into it",
        step=index_users,
        batch=limits.SEARCH_BACKFILL_BATCH,
        done_before=keys.SEARCH_BUILT,
    ),
    Migration(
        number=6,
        name="staff-index",
        about="put the accounts holding a staff role into the staff index",
        step=index_staff,
        batch=limits.SEARCH_BACKFILL_BATCH,
    ),
]
