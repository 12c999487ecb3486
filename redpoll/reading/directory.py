"""Mastodon's profile directory (GET /api/v1/directory): the discoverable
accounts, none suspended, silenced, moved or awaiting approval (Mastodon's
``Account.discoverable``), none blocked either way with the viewer or muted
by them (redpoll.relations), none of a domain the viewer blocks, ``local`` ones only if asked; by their latest
status (``active``: keys.ACTIVE_ACCOUNTS, then those that never posted,
newest first) or newest first (``new``: by id, which grows with sign-up).
Offset pages; one request reads at most limits.DIRECTORY_SCAN records."""

from __future__ import annotations

from collections.abc import AsyncIterator

from ..core import keys, limits, validate
from ..core.errors import ValidationError
from ..core.models import User
from ..records.users import get_users
from ..relations import domain_blocks, relations
from ..storage.store import Store

ORDERS = ("active", "new")
BATCH = 100


def listed(user: User, local: bool) -> bool:
    return (
        user.discoverable
        and not (user.suspended or user.silenced or user.pending or user.moved_to)
        and not (local and user.remote)
    )


async def _by_id(store: Store, skip: set[int] | None = None) -> AsyncIterator[list[int]]:
    top = int(await store.get(keys.USER_SEQ) or 0)
    for hi in range(top, 0, -BATCH):
        ids = list(range(hi, max(hi - BATCH, 0), -1))
        yield [u for u in ids if not skip or u not in skip]


async def _by_activity(store: Store) -> AsyncIterator[list[int]]:
    seen: set[int] = set()
    start = 0
    while True:
        ids = [
            int(u) for u in await store.zrevrange(keys.ACTIVE_ACCOUNTS, start, start + BATCH - 1)
        ]
        if not ids:
            break
        seen.update(ids)
        yield ids
        start += BATCH
    async for ids in _by_id(store, seen):  # then those that never posted
        yield ids


async def directory(
    store: Store, viewer: int | None, *, offset=None, limit=None, order=None, local=False
) -> list[User]:
    """One page of the directory (see the module)."""
    limit = validate.page_limit(limit, limits.DIRECTORY_DEFAULT, limits.DIRECTORY_MAX)
    if offset is None or offset == "":
        offset = 0
    elif isinstance(offset, bool) or not str(offset).isdigit() or len(str(offset)) > 9:
        raise ValidationError("offset", "must be a non-negative integer")
    offset = int(offset)
    order = order or "active"
    if order not in ORDERS:
        raise ValidationError("order", "must be active or new")
    walk = _by_activity(store) if order == "active" else _by_id(store)
    out: list[User] = []
    passed = read = 0
    async for ids in walk:
        if not ids:
            continue
        read += len(ids)
        found = [u for u in await get_users(store, ids) if listed(u, local)]
        if viewer is not None and found:
            uids = [u.id for u in found]
            *replies, domains = await store.batch(
                [*relations.hidden_commands(viewer, uids), domain_blocks.read(viewer)]
            )
            hidden = relations.hidden_from(uids, replies, muted=True)
            blocked = domain_blocks.parse(domains)
            found = [
                u
                for u in found
                if u.id not in hidden and not domain_blocks.blocked_in(blocked, u.login)
            ]
        for user in found:
            if passed < offset:
                passed += 1
                continue
            out.append(user)
            if len(out) == limit:
                return out
        if read >= limits.DIRECTORY_SCAN:
            break
    return out
