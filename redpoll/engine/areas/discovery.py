"""Finding people and posts: search, trends, the directory, suggestions."""

from __future__ import annotations

import logging
from typing import Any

from ...cards import cards
from ...conversations import tags
from ...core.errors import NotFound, RedpollError
from ...core.models import User
from ...reading import directory as profile_directory
from ...reading import pages
from ...records import statuses, users
from ...search import search
from ...suggestions import suggestions as follow_suggestions
from ...trends import links as trend_links
from ...trends import ranking
from ...trends import review as trend_review
from ...trends import statuses as trend_statuses
from .base import Area, Deps
from .federation import Federation

log = logging.getLogger("redpoll.engine")


class Discovery(Area):
    def __init__(self, deps: Deps, federation: Federation):
        super().__init__(deps)
        #: a ``name@host`` searched for is looked up on its server through it
        self.federation = federation

    async def search(self, query: search.Query) -> search.Results:
        """``resolve``: a ``name@host`` of another server is looked up there
        first (WebFinger), and shown first if found."""
        found = await search.search(self.store, query)
        if query.resolve and self.settings.public_url and query.type in (None, "accounts"):
            handle = query.q.strip().removeprefix("acct:").lstrip("@")
            if "@" in handle and not any(handle.lower().endswith("@" + h) for h in query.hosts):
                try:
                    user = await self.federation.resolve_account(handle)
                except RedpollError as exc:
                    log.info("could not resolve %s: %s", handle, exc)
                else:
                    found.accounts[:] = [user] + [u for u in found.accounts if u.id != user.id]
        return found

    @property
    def _trends_audience(self) -> trend_review.Audience:
        """Whom the public trends are read for (redpoll.trends.review)."""
        return trend_review.public(self.settings.trends_review)

    async def trending_tags(
        self, viewer, *, offset=None, limit=None, now: int | None = None
    ) -> list[tags.Tag]:
        return await tags.trending(
            self.store, viewer, offset=offset, limit=limit, now=now, audience=self._trends_audience
        )

    async def trending_links(
        self, *, offset=None, limit=None, now: int | None = None
    ) -> list[ranking.Trend]:
        return await ranking.trending(
            self.store, "link", offset=offset, limit=limit, now=now, audience=self._trends_audience
        )

    async def trending_links_shown(
        self, *, offset=None, limit=None, now: int | None = None
    ) -> list[tuple[ranking.Trend, dict | None]]:
        """The trending links, each with the preview card kept for it (a
        post's card job made it; None while there is none)."""
        found = await self.trending_links(offset=offset, limit=limit, now=now)
        kept = await cards.kept_cards(self.store, [t.item for t in found])
        return [(t, kept.get(t.item)) for t in found]

    async def trending_page(
        self, viewer, *, offset=None, limit=None, now: int | None = None
    ) -> pages.Shown:
        """The trending statuses as ``viewer`` is shown them (mutes applied)."""
        sids = await trend_statuses.trending(
            self.store, offset=offset, limit=limit, now=now, audience=self._trends_audience
        )
        return await pages.timeline(
            self.store,
            viewer,
            await statuses.get_statuses(self.store, sids),
            muted=True,
            context="public",
        )

    async def link_page(self, viewer, url, *, local: bool = False, **cursors: Any) -> pages.Shown:
        """A trending link's timeline (Mastodon 4.3's LinkFeed): the public
        statuses that carried it, of discoverable accounts (``local``: of
        this server's only), newest first, as ``viewer`` is shown them;
        NotFound for a link that does not trend now."""
        link = trend_links.normalize(url) if isinstance(url, str) else None
        if link is None or not await ranking.trends(
            self.store, "link", link, audience=self._trends_audience
        ):
            raise NotFound("the link does not trend")
        read = await statuses.get_statuses(
            self.store, await trend_links.statuses(self.store, link, **cursors)
        )
        authors = {u.id: u for u in await users.get_users(self.store, {s.user_id for s in read})}
        kept = [
            s
            for s in read
            if (a := authors.get(s.user_id)) is not None
            and a.discoverable
            and not (local and a.remote)
        ]
        return await pages.timeline(
            self.store, viewer, kept, muted=True, read=read, context="public"
        )

    async def directory(self, viewer, **query: Any) -> list[User]:
        """A page of the profile directory (redpoll.reading.directory)."""
        return await profile_directory.directory(self.store, viewer, **query)

    async def suggestions(self, uid, *, limit=None) -> list[follow_suggestions.Suggestion]:
        return await follow_suggestions.suggestions(self.store, uid, limit=limit)

    async def dismiss_suggestion(self, uid, target) -> None:
        await follow_suggestions.dismiss(self.store, uid, target)
