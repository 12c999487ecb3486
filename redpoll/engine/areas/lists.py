"""A member's lists and their members."""

from __future__ import annotations

from ...core.models import User
from ...lists import lists
from .base import Area


class Lists(Area):
    async def create(self, owner, title) -> lists.UserList:
        return await lists.create_list(self.store, owner, title)

    async def all(self, owner) -> list[lists.UserList]:
        return await lists.get_lists(self.store, owner)

    async def get(self, owner, lid) -> lists.UserList:
        return await lists.get_list(self.store, owner, lid)

    async def rename(self, owner, lid, title) -> lists.UserList:
        return await lists.rename_list(self.store, owner, lid, title)

    async def delete(self, owner, lid) -> None:
        await lists.delete_list(self.store, owner, lid)

    async def add(self, owner, lid, member) -> bool:
        return await lists.add_member(self.store, owner, lid, member)

    async def unlistable(self, owner, ids) -> list[int]:
        return await lists.unlistable(self.store, owner, ids)

    async def remove(self, owner, lid, member) -> bool:
        return await lists.remove_member(self.store, self.queue, owner, lid, member)

    async def members(self, owner, lid) -> list[User]:
        return await lists.members(self.store, owner, lid)

    async def member_ids(self, owner, lid) -> frozenset[int]:
        return await lists.member_ids(self.store, owner, lid)

    async def containing(self, owner, member) -> list[lists.UserList]:
        return await lists.lists_of(self.store, owner, member)
