"""Hashtags: one tag, featured and followed tags."""

from __future__ import annotations

from ...conversations import featured_tags, tags
from ...core import validate
from .base import Area


class Tags(Area):
    async def get(self, viewer, name) -> tags.Tag:
        return await tags.get_tag(self.store, viewer, name)

    async def featured(self, uid) -> list[featured_tags.FeaturedTag]:
        return await featured_tags.featured(self.store, validate.an_id(uid, "user_id"))

    async def feature(self, uid, name) -> featured_tags.FeaturedTag:
        return await featured_tags.feature(self.store, validate.an_id(uid, "user_id"), name)

    async def unfeature(self, uid, fid: int) -> None:
        await featured_tags.unfeature_id(self.store, validate.an_id(uid, "user_id"), fid)

    async def set_featuring(self, uid, name, on: bool) -> tags.Tag:
        """Feature (``on``) or stop featuring ``#name`` (Mastodon's
        /tags/:name/feature); the tag as the viewer sees it."""
        uid = validate.an_id(uid, "user_id")
        if on:
            try:
                await featured_tags.feature(self.store, uid, name)
            except featured_tags.Taken:
                pass  # featured already: as asked
        else:
            await featured_tags.unfeature_name(self.store, uid, name)
        return await tags.get_tag(self.store, uid, name)

    async def featured_suggestions(self, uid) -> list[tags.Tag]:
        names = await featured_tags.suggestions(self.store, validate.an_id(uid, "user_id"))
        return [await tags.get_tag(self.store, uid, n) for n in names]

    async def follow(self, uid, name, on: bool = True) -> tags.Tag:
        return await tags.set_following(self.store, self.queue, uid, name, on)

    async def followed(self, uid) -> list[tags.Tag]:
        names = await tags.followed(self.store, uid)
        return await tags.with_history(self.store, [tags.Tag(n, True, True) for n in names])
