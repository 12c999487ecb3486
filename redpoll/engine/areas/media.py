"""Uploads, their files, and other servers' media kept here."""

from __future__ import annotations

from ...cards import cards
from ...core import limits, validate
from ...federation import emoji, remote_media
from ...media import remote as remote_cache
from ...media import uploads
from ...media.storage import LocalStorage
from .base import Area


class Media(Area):
    async def upload(
        self, owner, data: bytes, *, description=None, focus=None, wait: bool = True
    ) -> uploads.Upload:
        """Upload an image as an attachment to come: processed before this
        returns (``wait``), or after (the record says processing until then)."""
        upload, task = await uploads.start(
            self.store,
            self.queue,
            self.media_storage,
            validate.an_id(owner, "owner"),
            data,
            desc=uploads.description(description),
            focus_xy=uploads.focus(focus),
        )
        return await uploads.wait(task) if wait else upload

    async def attachment(self, owner, mid, *, description=None, focus=None) -> uploads.Upload:
        """``owner``'s upload ``mid`` not yet attached to a status, with a new
        description or focus when given (NotFound otherwise)."""
        changes = {}
        if description is not None:
            changes["desc"] = uploads.description(description)
        if focus is not None:
            changes["focus"] = uploads.focus(focus) or "0,0"
        return await uploads.get(
            self.store, validate.an_id(owner, "owner"), validate.an_id(mid, "id"), changes
        )

    async def delete_attachment(self, owner, mid) -> None:
        """``owner``'s upload ``mid`` not attached to a status, deleted
        (NotFound; uploads.MediaInUse while attached: Mastodon 4.4)."""
        await uploads.delete_unattached(
            self.store, self.queue, validate.an_id(owner, "owner"), validate.an_id(mid, "id")
        )

    async def sweep(self, now_ms: int | None = None) -> int:
        """Remove uploads never attached, older than a day as of ``now_ms``."""
        return await uploads.sweep(self.store, self.media_storage, now_ms)

    def file(self, name: str):
        """The local file of a stored name (None: not one, or not stored locally)."""
        storage = self.media_storage
        return storage.path(name) if isinstance(storage, LocalStorage) else None

    async def proxy(self, sid: int, aid: int, token: str, style: str) -> str:
        """Where the media proxy sends a client for a remote attachment (the
        copy kept here, or its server's URL, its fetch queued)."""
        return await remote_media.proxy_attachment(self.store, self.queue, sid, aid, token, style)

    async def proxy_profile(self, uid: int, kind: str) -> str:
        return await remote_media.proxy_profile_image(self.store, self.queue, uid, kind)

    async def proxy_emoji(self, host_digest: str, shortcode: str) -> str:
        """Where the media proxy sends a client for a remote custom emoji (the
        copy kept here; NotFound while it is fetched)."""
        return await emoji.proxy(self.store, self.queue, self.media_storage, host_digest, shortcode)

    async def proxy_card(self, sid: int, part: str) -> str:
        """Where the media proxy sends a client for a link card's image (the
        copy kept here; NotFound while it is fetched again)."""
        return await cards.proxy_image(
            self.store, self.queue, self.settings, remote_media.media_rejected, sid, part
        )

    async def cache_clear(self, older_than_s: float | None = None) -> int:
        """Drop the copies of other servers' media kept here: all of them, or
        those fetched more than ``older_than_s`` ago; how many."""
        bounds = remote_media.bounds(self.settings)
        age = 0 if older_than_s is None else older_than_s
        dropped = 0
        while True:
            done = await remote_cache.evict(
                self.store, self.media_storage, bounds, older_than_s=age
            )
            dropped += done
            if done < limits.REMOTE_MEDIA_EVICT_BATCH:
                return dropped

    async def cache_stats(self) -> tuple[int, int]:
        """(copies of other servers' media kept here, bytes they weigh)."""
        return await remote_cache.kept(self.store)
