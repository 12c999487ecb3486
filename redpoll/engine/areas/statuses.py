"""Statuses and what is done to them: posting (once per key), editing, deleting, scheduling, favourites, boosts, bookmarks, pins, polls, quotes, muted threads."""

from __future__ import annotations

from typing import Any

from ...conversations import thread_mutes
from ...core import validate
from ...core.errors import RedpollError, StatusNotFound
from ...core.models import Status, User
from ...federation import outbox as fed_outbox
from ...federation.jobs import PollVoteJob
from ...interactions import bookmarks, favourites
from ...pins import pins
from ...polls import polls
from ...posting import boosts, deleting, editing, idempotency, posting
from ...quotes import quotes
from ...reading import pages
from ...records import state, statuses, users
from ...relations import (
    visibility,
)
from ...scheduling import scheduled
from ...search import index as search_index
from .base import Area


class Statuses(Area):
    async def post(
        self,
        author_id,
        text,
        extra=None,
        in_reply_to=None,
        media=(),
        poll: polls.PollSpec | None = None,
        *,
        allowed_mentions: frozenset[int] | None = None,
    ) -> Status:
        """``media``: ids of the author's uploads to attach (at most 4);
        ``poll``: a poll with it (polls.spec); ``allowed_mentions``: the
        accounts it may mention (posting.prepare)."""
        return await posting.post(
            self.store,
            self.queue,
            self.settings,
            author_id,
            text,
            extra,
            in_reply_to,
            media,
            poll,
            allowed_mentions=allowed_mentions,
        )

    async def post_once(
        self,
        author_id,
        key: str,
        text,
        extra=None,
        in_reply_to=None,
        media=(),
        poll: polls.PollSpec | None = None,
        *,
        allowed_mentions: frozenset[int] | None = None,
    ) -> Status:
        """Post at most once per Idempotency-Key (redpoll.posting.idempotency)."""
        return await idempotency.post_once(
            self.store,
            self.queue,
            self.settings,
            author_id,
            key,
            text,
            extra,
            in_reply_to,
            media,
            poll,
            allowed_mentions=allowed_mentions,
        )

    async def get_status(self, sid) -> Status:
        return await statuses.get_status(self.store, sid)

    async def get_statuses(self, ids) -> list[Status]:
        return await statuses.get_statuses(self.store, ids)

    async def delete(self, sid, by_user) -> None:
        await deleting.delete_status(self.store, self.queue, sid, by_user)

    async def edit(
        self,
        uid,
        sid,
        text,
        *,
        spoiler_text: str = "",
        sensitive: bool = False,
        language: str | None = None,
        media=None,
        poll=editing.KEEP,
    ) -> Status:
        """Edit one's own status (redpoll.posting.editing); the status as
        edited. ``poll``: a polls.PollSpec, None (none), or as it is."""
        return await editing.edit(
            self.store,
            self.queue,
            uid,
            sid,
            text,
            spoiler_text=spoiler_text,
            sensitive=sensitive,
            language=language,
            media=media,
            poll=poll,
        )

    async def history(self, viewer, sid) -> tuple[Status, User | None, list[dict]]:
        """The versions of status ``sid`` if ``viewer`` may see it (the one
        visibility decision; StatusNotFound otherwise), oldest first, with
        the status and its author's record (None when gone)."""
        status = await self.seen_status(viewer, sid)
        found = await users.get_users(self.store, [status.user_id])
        return status, (found[0] if found else None), await editing.history(self.store, status)

    async def source(self, uid, sid) -> Status:
        """One's own status, for its source text; StatusNotFound for
        another's (as Mastodon: 404), or a missing one."""
        status = await self.get_status(sid)
        if status.user_id != validate.an_id(uid, "user_id"):
            raise StatusNotFound(f"status {sid} does not exist")
        return status

    async def schedule(
        self,
        author_id,
        at_ms: int,
        text,
        extra=None,
        in_reply_to=None,
        media=(),
        poll=None,
        key=None,
    ) -> scheduled.Scheduled:
        """A status to be posted at ``at_ms`` (at least 5 minutes ahead) by
        a job, once; ``poll`` kept as sent, ``key`` the Idempotency-Key."""
        return await scheduled.schedule(
            self.store, self.queue, author_id, at_ms, text, extra, in_reply_to, media, poll, key
        )

    async def scheduled(self, uid, **cursors: Any) -> list[scheduled.Scheduled]:
        return await scheduled.page(self.store, uid, **cursors)

    async def scheduled_one(self, uid, sid) -> scheduled.Scheduled:
        return await scheduled.get(self.store, uid, sid)

    async def reschedule(self, uid, sid, at_ms: int) -> scheduled.Scheduled:
        return await scheduled.reschedule(self.store, uid, sid, at_ms)

    async def cancel_scheduled(self, uid, sid) -> None:
        await scheduled.cancel(self.store, uid, sid)

    async def favourite(self, uid, sid) -> bool:
        changed = await favourites.set_favourite(self.store, self.queue, uid, sid, True)
        if changed:  # a remote status's server hears of it (a Like)
            await fed_outbox.like(self.store, self.queue, self.settings, uid, sid, True)
        return changed

    async def unfavourite(self, uid, sid) -> bool:
        changed = await favourites.set_favourite(self.store, self.queue, uid, sid, False)
        if changed:
            await fed_outbox.like(self.store, self.queue, self.settings, uid, sid, False)
        return changed

    async def boost(self, uid, sid) -> int:
        return await boosts.boost(self.store, self.queue, self.settings, uid, sid)

    async def unboost(self, uid, sid) -> bool:
        return await boosts.unboost(self.store, self.queue, uid, sid)

    async def bookmark(self, uid, sid) -> bool:
        return await bookmarks.set_bookmark(self.store, uid, sid, True)

    async def unbookmark(self, uid, sid) -> bool:
        return await bookmarks.set_bookmark(self.store, uid, sid, False)

    async def pin(self, uid, sid) -> Status:
        return await pins.pin(self.store, uid, sid)

    async def unpin(self, uid, sid) -> Status:
        return await pins.unpin(self.store, uid, sid)

    async def poll(self, viewer, pid) -> pages.Shown:
        """The status of poll ``pid`` (a poll's id is its status's) as
        ``viewer`` is shown it, with the votes; StatusNotFound when they
        may not see it, PollNotFound when it has no poll."""
        shown = await pages.one(self.store, viewer, pid)
        if not shown.statuses or polls.Poll.of(shown.statuses[0]) is None:
            raise polls.PollNotFound(f"poll {pid} does not exist")
        return shown

    async def vote(self, uid, pid, choices) -> pages.Shown:
        """``uid`` votes in poll ``pid`` (one they may see); as :meth:`poll` after.
        With federation on, the vote is journaled (jobs.PollVoteJob, held
        before it): what follows it for other servers (fed_outbox.after_vote,
        idempotent) is done here, or by a worker if this call is cut short."""
        status = await self.seen_status(uid, pid)
        if not self.settings.public_url:
            await polls.vote(self.store, uid, status.id, choices)
            await search_index.add_to_library(self.store, uid, status.id)  # (idempotent)
            return await self.poll(uid, status.id)
        held = await self.queue.hold(
            PollVoteJob(sid=status.id, author=status.user_id, uid=validate.an_id(uid, "user_id"))
        )
        try:
            await polls.vote(self.store, uid, status.id, choices)
        except RedpollError:  # refused, nothing written: nothing follows
            await self.queue.release(held)
            raise
        await search_index.add_to_library(self.store, uid, status.id)  # (idempotent)
        await fed_outbox.after_vote(self.store, self.queue, self.settings, uid, status.id)
        await self.queue.release(held)
        return await self.poll(uid, status.id)

    async def poll_states(self, statuses) -> dict[int, state.PollState]:
        """The votes of the polls among ``statuses`` as anyone is shown
        them (a stream's rendering), by status id, in one round trip."""
        commands, parse = polls.state_reads(None, list(statuses))
        return parse(await self.store.batch(commands)) if commands else {}

    async def states(self, viewer, sids) -> list[state.StatusState]:
        return await state.states(self.store, viewer, list(sids))

    async def seen_status(self, viewer, sid) -> Status:
        """The status ``sid`` if ``viewer`` may see it; StatusNotFound
        otherwise, as for a status that does not exist."""
        return await visibility.require(self.store, viewer, await self.get_status(sid))

    async def revoke_quote(self, uid, sid, quoting_sid) -> pages.Shown:
        """``uid`` revokes the quote ``quoting_sid`` makes of their status
        ``sid``; the quoting status as ``uid`` is shown it."""
        quoting = await quotes.revoke(self.store, uid, sid, quoting_sid)
        return await pages.one(self.store, uid, quoting.id)

    async def set_quote_policy(self, uid, sid, policy: str | None) -> pages.Shown:
        """``uid``'s status ``sid`` gets the quote approval ``policy``."""
        status = await quotes.set_policy(self.store, uid, sid, policy)
        return await pages.one(self.store, uid, status.id)

    async def favourited_by(self, sid, **page: Any):
        """Who favourited the status ``sid``: (users, cursor)."""
        return await favourites.favourited_by(self.store, sid, **page)

    async def reblogged_by(self, sid, **page: Any):
        """Who boosted the status ``sid``: (users, cursor)."""
        return await boosts.reblogged_by(self.store, sid, **page)

    async def mute_thread(self, uid, sid, on: bool = True) -> None:
        """Mute (or unmute) the thread of status ``sid``, which ``uid`` must
        be able to see (redpoll.conversations.thread_mutes)."""
        uid = validate.an_id(uid, "user_id")
        status = await self.seen_status(uid, sid)
        await thread_mutes.mute(self.store, uid, status, on)
