"""Lists: named sets of users with their own timelines, fed when
they post and refilled as homes are."""

from __future__ import annotations

from dataclasses import dataclass

from ..bus import events
from ..bus.queue import JobQueue
from ..core import keys, limits, validate
from ..core.errors import LimitReached, ListNotFound, NotFollowed
from ..core.models import User
from ..records.users import get_users, require_users
from ..relations import edges, unlisting
from ..storage.store import Store
from ..timelines.jobs import RefillJob


@dataclass(frozen=True, slots=True)
class UserList:
    id: int
    owner: int
    title: str

    def to_dict(self) -> dict:
        return {"id": self.id, "owner": self.owner, "title": self.title}


def _title(title) -> str:
    return validate.text(title, "title", limits.LIST_TITLE_MAX_CHARS)


async def create_list(store: Store, owner, title) -> UserList:
    owner = validate.an_id(owner, "user_id")
    title = _title(title)
    await require_users(store, owner)
    lid = await store.incr(keys.LIST_SEQ)
    try:
        await store.run(
            "list_put", [keys.lists(owner)], [lid, title, "create", limits.LISTS_PER_USER]
        )
    except LimitReached as exc:
        raise LimitReached(f"a user may own at most {limits.LISTS_PER_USER} lists") from exc
    return UserList(lid, owner, title)


async def rename_list(store: Store, owner, lid, title) -> UserList:
    owner, lid = validate.an_id(owner, "user_id"), validate.an_id(lid, "list_id")
    title = _title(title)
    try:
        await store.run("list_put", [keys.lists(owner)], [lid, title, "rename", 0])
    except ListNotFound as exc:
        raise ListNotFound(f"list {lid} does not exist") from exc
    return UserList(lid, owner, title)


async def get_lists(store: Store, owner) -> list[UserList]:
    owner = validate.an_id(owner, "user_id")
    raw = await store.hgetall(keys.lists(owner))
    found = [UserList(int(k), owner, v.decode()) for k, v in raw.items()]
    return sorted(found, key=lambda item: item.id)


async def lists_of(store: Store, owner, member) -> list[UserList]:
    """``owner``'s lists that hold ``member`` (Mastodon's
    /accounts/:id/lists), in the order of get_lists. Two round trips on the
    owner's slot (at most limits.LISTS_PER_USER lists)."""
    mine = await get_lists(store, owner)
    if not mine:
        return []
    member = validate.an_id(member, "id")
    held = await store.batch(
        [("ZSCORE", keys.list_members(item.owner, item.id), member) for item in mine]
    )
    return [item for item, score in zip(mine, held) if score is not None]


async def get_list(store: Store, owner, lid) -> UserList:
    owner, lid = validate.an_id(owner, "user_id"), validate.an_id(lid, "list_id")
    title = await store.hget(keys.lists(owner), lid)
    if title is None:
        raise ListNotFound(f"list {lid} does not exist")
    return UserList(lid, owner, title.decode())


async def delete_list(store: Store, owner, lid) -> None:
    """The list, its members and timeline go in one script; the members'
    reverse-index entries are then removed (idempotent; a leftover one is
    also healed by the next delivery that meets it)."""
    owner, lid = validate.an_id(owner, "user_id"), validate.an_id(lid, "list_id")
    try:
        members = await store.run(
            "list_drop",
            [keys.lists(owner), keys.list_members(owner, lid), keys.list_timeline(owner, lid)],
            [lid],
        )
    except ListNotFound as exc:
        raise ListNotFound(f"list {lid} does not exist") from exc
    pipe = store.pipeline()
    for member in members:
        pipe.zrem(keys.listed_in(int(member)), keys.listed_member(owner, lid))
    if members:
        await pipe.execute()
    await events.lists_changed(store, owner)  # its open streams end now


async def add_member(store: Store, owner, lid, member) -> bool:
    """Add ``member`` to the list; their newest statuses fill its timeline.
    Only an account the owner follows or has asked to follow, or the owner
    themselves (NotFollowed else, and nothing written), as on Mastodon:
    checked atomically with the add (edges.list_edge); the account leaves
    the owner's lists when that ends (redpoll.relations.unlisting)."""
    owner, lid = validate.an_id(owner, "user_id"), validate.an_id(lid, "list_id")
    member = validate.an_id(member, "member_id")
    try:
        added = await edges.add(store, edges.list_edge(owner, lid, member))
    except NotFollowed:
        await require_users(store, member)  # an unknown account: say that first
        raise
    await events.lists_changed(store, owner)  # its open streams show the member now
    return added


async def unlistable(store: Store, owner, ids) -> list[int]:
    """Those of ``ids`` that ``owner`` may not add to a list (add_member):
    redpoll.relations.unlisting's rule, checked for all of them first."""
    owner = validate.an_id(owner, "user_id")
    return await unlisting.unlistable(store, owner, [validate.an_id(i, "member_id") for i in ids])


async def remove_member(store: Store, queue: JobQueue, owner, lid, member) -> bool:
    owner, lid = validate.an_id(owner, "user_id"), validate.an_id(lid, "list_id")
    member = validate.an_id(member, "member_id")
    changed = await edges.remove(store, edges.list_edge(owner, lid, member))
    if changed:
        await queue.enqueue(RefillJob(owner, lid))
        await events.lists_changed(store, owner)  # its open streams drop the member now
    return changed


async def member_ids(store: Store, owner, lid) -> frozenset[int]:
    """Ids of a list's members (a stream's list filter); NotFound as get_list."""
    found = await get_list(store, owner, lid)
    ids = await store.zrange(keys.list_members(found.owner, found.id), 0, -1)
    return frozenset(int(i) for i in ids)


async def members(store: Store, owner, lid) -> list[User]:
    await get_list(store, owner, lid)
    ids = await store.zrange(keys.list_members(int(owner), int(lid)), 0, -1)
    return await get_users(store, [int(i) for i in ids])
