"""A member's content filters (v2, and v1's view of them)."""

from __future__ import annotations

from typing import Any

from ...filters import filters, rules
from ...records import statuses
from ...relations import (
    visibility,
)
from .base import Area


class Filters(Area):
    async def all(self, uid) -> list[filters.Filter]:
        return await filters.list_filters(self.store, uid)

    async def get(self, uid, fid) -> filters.Filter:
        return await filters.get_filter(self.store, uid, fid)

    async def create(self, uid, **fields: Any) -> filters.Filter:
        return await filters.create_filter(self.store, uid, **fields)

    async def update(self, uid, fid, **fields: Any) -> filters.Filter:
        return await filters.update_filter(self.store, uid, fid, **fields)

    async def delete(self, uid, fid) -> None:
        await filters.delete_filter(self.store, uid, fid)

    async def keyword(self, uid, kid) -> tuple[filters.Filter, filters.Keyword]:
        return await filters.get_keyword(self.store, uid, kid)

    async def add_keyword(self, uid, fid, keyword, whole_word=None) -> filters.Keyword:
        return await filters.add_keyword(self.store, uid, fid, keyword, whole_word)

    async def update_keyword(self, uid, kid, keyword=None, whole_word=None) -> filters.Keyword:
        return await filters.update_keyword(self.store, uid, kid, keyword, whole_word)

    async def delete_keyword(self, uid, kid) -> None:
        await filters.delete_keyword(self.store, uid, kid)

    async def status(self, uid, fsid) -> tuple[filters.Filter, filters.FilterStatus]:
        return await filters.get_status_filter(self.store, uid, fsid)

    async def add_status(self, uid, fid, sid) -> filters.FilterStatus:
        """Filter a status ``uid`` may see (StatusNotFound otherwise)."""
        await visibility.require(self.store, uid, await statuses.get_status(self.store, sid))
        return await filters.add_status(self.store, uid, fid, sid)

    async def delete_status(self, uid, fsid) -> None:
        await filters.delete_status_filter(self.store, uid, fsid)

    async def v1_filters(self, uid) -> list[tuple[filters.Filter, filters.Keyword]]:
        return await filters.v1_list(self.store, uid)

    async def v1_create(self, uid, **fields: Any):
        return await filters.v1_create(self.store, uid, **fields)

    async def v1_update(self, uid, kid, **fields: Any):
        return await filters.v1_update(self.store, uid, kid, **fields)

    async def active(self, uid) -> rules.Active:
        """``uid``'s filters compiled, for a stream (redpoll.filters.rules)."""
        return await rules.active(self.store, uid)
