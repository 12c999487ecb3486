"""Collections of accounts a member features (Mastodon 4.6)."""

from __future__ import annotations

from typing import Any

from ...collections import collections as featured_collections
from .base import Area


class Collections(Area):
    async def create(self, owner, **fields: Any):
        return await featured_collections.create(self.store, owner, **fields)

    async def update(self, owner, cid, **fields: Any):
        return await featured_collections.update(self.store, owner, cid, **fields)

    async def delete(self, owner, cid) -> None:
        await featured_collections.delete(self.store, owner, cid)

    async def view(self, cid, viewer):
        """(collection, accounts) as ``viewer`` is shown them."""
        return await featured_collections.view(self.store, cid, viewer)

    async def of_account(self, uid, viewer, **page: Any) -> list:
        return await featured_collections.of_account(self.store, uid, viewer, **page)

    async def featuring(self, uid, viewer, **page: Any) -> list:
        return await featured_collections.featuring(self.store, uid, viewer, **page)

    async def item(self, uid, cid, op: str, target):
        """``op``: 'add' (``target`` an account), 'remove' or 'revoke' (an item)."""
        act = {
            "add": featured_collections.add_item,
            "remove": featured_collections.remove_item,
            "revoke": featured_collections.revoke_item,
        }[op]
        return await act(self.store, uid, cid, target)
