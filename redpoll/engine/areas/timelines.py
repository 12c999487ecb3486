"""What a viewer reads: timelines as stored and pages as shown (the one visibility decision when shown), threads, direct conversations, reading positions."""

from __future__ import annotations

from typing import Any

from ...accounts import markers
from ...conversations import direct_messages
from ...core import limits
from ...core.models import Page
from ...federation import threads as fed_threads
from ...federation.jobs import ContextJob
from ...interactions import bookmarks, favourites
from ...pins import pins
from ...quotes import quotes
from ...reading import pages
from ...records import statuses, users
from ...relations import visibility
from ...timelines import timelines
from .base import Area


class Timelines(Area):
    async def visible_ids(self, viewer, sids) -> set[int]:
        """Which of the statuses ``sids`` ``viewer`` may see now, mutes
        applied (the one visibility decision: a stream's replayed events)."""
        found = await statuses.get_statuses(self.store, list(dict.fromkeys(sids)))
        return {s.id for s in await visibility.visible(self.store, viewer, found, muted=True)}

    async def home(self, uid, **cursors: Any) -> Page:
        return await timelines.home(
            self.store, uid, idle_after_s=self.settings.idle_after_s, **cursors
        )

    async def profile(self, uid, **cursors: Any) -> Page:
        return await timelines.profile(self.store, uid, **cursors)

    async def public(self, **cursors: Any) -> Page:
        return await timelines.public(self.store, **cursors)

    async def of_list(self, owner, lid, **cursors: Any) -> Page:
        return await timelines.list_timeline(self.store, owner, lid, **cursors)

    async def show(self, viewer, statuses, *, also_users=()) -> pages.Shown:
        return await pages.show(self.store, viewer, statuses, also_users=also_users)

    async def status_page(self, viewer, sid) -> pages.Shown:
        return await pages.one(self.store, viewer, sid)

    async def statuses_page(self, viewer, sids) -> pages.Shown:
        return await pages.by_id(self.store, viewer, sids)

    async def quotes_page(self, uid, sid, **cursors: Any) -> pages.Shown:
        """The accepted quotes of ``uid``'s status ``sid``, newest first, as
        ``uid`` is shown them (redpoll.quotes.quoting_page)."""
        ids = await quotes.quoting_page(self.store, uid, sid, **cursors)
        found = await statuses.read_statuses(self.store, ids)
        return await pages.show(self.store, uid, found)

    async def home_page(self, uid, **cursors: Any) -> pages.Shown:
        return await pages.filled(self.store, uid, lambda **c: self.home(uid, **c), cursors)

    async def list_page(self, owner, lid, **cursors: Any) -> pages.Shown:
        return await pages.filled(
            self.store, owner, lambda **c: self.of_list(owner, lid, **c), cursors
        )

    async def public_page(
        self, viewer, origin: str | None = None, only_media: bool = False, **cursors: Any
    ) -> pages.Shown:
        """``origin``: "local" or "remote" statuses only (pages.of_origin);
        ``only_media``: statuses with attachments only, the page read on
        past those without (pages.filled, at most limits.ONLY_MEDIA_READS
        more reads)."""
        if only_media:
            return await self._media_page(viewer, self.public, origin, cursors)
        return await pages.of_origin(
            self.store, viewer, await self.public(**cursors), origin, context="public"
        )

    async def tag_page(
        self,
        viewer,
        name,
        *,
        any_=(),
        all_=(),
        none=(),
        origin=None,
        only_media: bool = False,
        **cursors: Any,
    ) -> pages.Shown:
        """A hashtag's timeline (with ``any_``/``all_``/``none``: combined
        with other hashtags) as ``viewer`` is shown it (``origin`` and
        ``only_media`` as :meth:`public_page`)."""
        if any_ or all_ or none:

            async def read(**c: Any) -> Page:
                return await timelines.tag_combined(
                    self.store, name, any_=any_, all_=all_, none=none, **c
                )
        else:

            async def read(**c: Any) -> Page:
                return await timelines.tag(self.store, name, **c)

        if only_media:
            return await self._media_page(viewer, read, origin, cursors)
        return await pages.of_origin(
            self.store, viewer, await read(**cursors), origin, context="public"
        )

    async def _media_page(self, viewer, read, origin: str | None, cursors: dict) -> pages.Shown:
        """A public or hashtag page of statuses with attachments (of
        ``origin``, when named), filled by reading on (pages.filled)."""
        of_origin = pages.of_origin_rule(origin)
        keep = (
            pages.has_media
            if of_origin is None
            else (lambda s: pages.has_media(s) and of_origin(s))
        )
        return pages.without_silenced(
            await pages.filled(
                self.store,
                viewer,
                read,
                cursors,
                keep=keep,
                reads=limits.ONLY_MEDIA_READS,
                context="public",
            )
        )

    async def profile_page(
        self,
        viewer,
        uid,
        *,
        no_replies: bool = False,
        no_reblogs: bool = False,
        only_media: bool = False,
        tagged: str | None = None,
        **cursors: Any,
    ) -> pages.Shown:
        """``tagged``: only the public and unlisted statuses with that
        hashtag (a normalized name), as Mastodon's ``tagged=``."""
        read = (
            await timelines.profile_tagged(self.store, uid, tagged, **cursors)
            if tagged
            else await self.profile(uid, **cursors)
        )
        return await pages.profile(
            self.store,
            viewer,
            read,
            no_replies=no_replies,
            no_reblogs=no_reblogs,
            only_media=only_media,
        )

    async def pinned_page(self, viewer, uid) -> pages.Shown:
        """``uid``'s pinned statuses that ``viewer`` may see, the last pinned first."""
        await users.get_user(self.store, uid)  # an unknown account: UserNotFound
        return await pages.show(
            self.store, viewer, await pins.pinned(self.store, uid), context="account"
        )

    async def favourites_page(self, uid, **cursors: Any) -> pages.Shown:
        rows = await favourites.favourites_page(self.store, uid, **cursors)
        return await pages.marked(self.store, uid, rows)

    async def bookmarks_page(self, uid, **cursors: Any) -> pages.Shown:
        rows = await bookmarks.bookmarks_page(self.store, uid, **cursors)
        return await pages.marked(self.store, uid, rows)

    async def thread(self, viewer, sid) -> tuple[pages.Shown, frozenset[int]]:
        """A status's context; for a remote status, its thread is also
        fetched from its server by a job (at most once in a while), for the
        next time it is asked."""
        shown, ancestors = await pages.thread(self.store, viewer, sid)
        if self.settings.public_url:
            status = await statuses.get_status(
                self.store, sid
            )  # (the viewer may see it: pages.thread)
            if status.extra.get("uri") and await fed_threads.due(self.store, status.extra["uri"]):
                await self.queue.enqueue(ContextJob(status.id))
        return shown, ancestors

    async def conversations(
        self, uid, **cursors: Any
    ) -> tuple[list[direct_messages.Conversation], pages.Shown, dict]:
        """A page of ``uid``'s direct conversations and what they show
        (redpoll.reading.pages.conversations)."""
        convs = await direct_messages.page(self.store, uid, **cursors)
        return (convs, *await pages.conversations(self.store, uid, convs))

    async def read_conversation(
        self, uid, conv, unread: bool = False
    ) -> tuple[direct_messages.Conversation, pages.Shown, dict]:
        """Mark a conversation read (or unread); the conversation and what it shows."""
        found = await direct_messages.mark_read(self.store, uid, conv, unread)
        return (found, *await pages.conversations(self.store, uid, [found]))

    async def remove_conversation(self, uid, conv) -> None:
        await direct_messages.remove(self.store, uid, conv)

    async def get_markers(self, uid, timelines_) -> list[markers.Marker]:
        return await markers.get_markers(self.store, uid, timelines_)

    async def set_markers(self, uid, positions: dict) -> list[markers.Marker]:
        return await markers.set_markers(self.store, uid, positions)
