"""Between two accounts: follows (with their federation side), requests, blocks, mutes, domain blocks, endorsements, notes, and the pages of them."""

from __future__ import annotations

import asyncio
from typing import Any

from ...core import validate
from ...core.errors import RedpollError
from ...core.models import User
from ...federation import followers as fed_followers
from ...federation import inbox as fed_inbox
from ...federation import keys as fed_keys
from ...federation import member_blocks
from ...federation import outbox as fed_outbox
from ...federation.jobs import DomainBlockJob
from ...reading import pages
from ...records import users
from ...relations import (
    domain_blocks,
    endorsements,
    follow_requests,
    follows,
    notes,
    relations,
    relationship,
)
from .base import Area


class Relations(Area):
    async def follow(self, uid, target) -> bool:
        return await follows.follow(self.store, self.queue, uid, target)

    async def unfollow(self, uid, target) -> bool:
        changed = await follows.unfollow(self.store, self.queue, uid, target)
        if changed:  # a remote account hears of it (an Undo of the Follow)
            await fed_outbox.follow(self.store, self.queue, self.settings, uid, target, False)
        return changed

    async def is_following(self, uid, target) -> bool:
        return await follows.is_following(self.store, uid, target)

    async def following_ids(self, uid) -> frozenset[int]:
        return await follows.following_ids(self.store, uid)

    async def block(self, uid, target) -> None:
        await relations.block(self.store, self.queue, uid, target)
        # a remote account: its follow of uid ends here too, and its server hears of the block
        if await fed_outbox.follow(
            self.store, self.queue, self.settings, uid, target, True, kind="Block"
        ):
            await fed_followers.end_remote_follow(
                self.store, validate.an_id(uid, "user_id"), validate.an_id(target, "account_id")
            )

    async def unblock(self, uid, target) -> None:
        await relations.unblock(self.store, uid, target)
        await fed_outbox.follow(
            self.store, self.queue, self.settings, uid, target, False, kind="Block"
        )

    async def mute(self, uid, target, duration_s=0, notifications: bool = True):
        return await relations.mute(self.store, uid, target, duration_s, notifications)

    async def unmute(self, uid, target) -> None:
        await relations.unmute(self.store, uid, target)

    async def relation(self, uid, target) -> relations.Relation:
        return await relations.relation(self.store, uid, target)

    async def hidden_ids(self, uid) -> frozenset[int]:
        return await relations.hidden_ids(self.store, uid)

    async def hidden_of(self, uid) -> tuple[frozenset[int], frozenset[str]]:
        """Whom ``uid``'s streams hide (blocked either way, muted) and the
        domains ``uid`` blocks, read together."""
        ids, domains = await asyncio.gather(
            relations.hidden_ids(self.store, uid), domain_blocks.blocked(self.store, uid)
        )
        return ids, domains

    async def followers(self, uid, **page: Any):
        """Local and remote followers, newest first (federation.followers.listed)."""
        return await fed_followers.listed(self.store, uid, **page)

    async def following(self, uid, **page: Any):
        return await follows.following(self.store, uid, **page)

    async def relationship(self, uid, target) -> relationship.Relationship:
        return await relationship.relationship(self.store, uid, target)

    async def relationships(self, uid, targets) -> list[relationship.Relationship]:
        return await relationship.relationships(self.store, uid, list(targets))

    async def block_domain(self, uid, domain) -> str:
        """``uid`` blocks ``domain`` (redpoll.relations.domain_blocks), then
        the follows both ways and the requests of its accounts end
        (redpoll.federation.member_blocks; again on a repeat, idempotent).
        The domain as kept."""
        host = domain_blocks.normalize(domain)
        # journaled: held before the block, released after its cleanup (a
        # call cut short is finished by the worker that replays it)
        held = await self.queue.hold(DomainBlockJob(uid, host))
        try:
            await domain_blocks.block(self.store, uid, host)
            await member_blocks.cleanup(self.store, self.queue, self.settings, uid, host)
        except RedpollError:
            await self.queue.release(held)
            raise
        await self.queue.release(held)
        return host

    async def unblock_domain(self, uid, domain) -> bool:
        return await domain_blocks.unblock(self.store, uid, domain)

    async def blocked_domains(self, uid, **page: Any) -> tuple[list[str], int | None]:
        return await domain_blocks.page(self.store, uid, **page)

    async def domain_block_preview(self, uid, domain) -> tuple[int, int]:
        """(follows, followers) of ``uid`` on ``domain`` that a block of it
        would end (Mastodon 4.3's preview)."""
        return await member_blocks.preview(
            self.store, validate.an_id(uid, "user_id"), domain_blocks.normalize(domain)
        )

    async def endorse(self, uid, target, on: bool = True) -> bool:
        return await endorsements.endorse(self.store, uid, target, on)

    async def endorsements(self, uid, viewer, **page: Any):
        """The accounts ``uid`` endorses as ``viewer`` is shown them: (users, cursor)."""
        found, cursor = await endorsements.endorsements(self.store, uid, **page)
        return await relations.shown_accounts(self.store, viewer, found), cursor

    async def set_note(self, uid, target, comment) -> str:
        return await notes.set_note(self.store, uid, target, comment)

    async def familiar_followers(self, viewer, targets) -> dict[int, list[User]]:
        """For each of ``targets``: the accounts ``viewer`` follows that
        follow it, local or remote (a local account's remote followers are
        kept apart: federation.keys.remote_followers), as ``viewer`` is shown
        accounts (relations.shown_accounts)."""
        found = await follows.familiar_followers(
            self.store, viewer, list(targets), also=fed_keys.remote_followers
        )
        wanted = sorted({i for ids in found.values() for i in ids})
        shown = {
            u.id: u
            for u in await relations.shown_accounts(
                self.store, viewer, await users.get_users(self.store, wanted)
            )
        }
        return {t: [shown[i] for i in ids if i in shown] for t, ids in found.items()}

    async def follow_with_options(
        self, uid, target, reblogs: bool | None = None, notify: bool | None = None
    ) -> relationship.Relationship:
        rel = await relationship.follow(self.store, self.queue, uid, target, reblogs, notify)
        # a remote account is sent the Follow (again, if it was lost: its
        # server keeps one follow per pair)
        await fed_outbox.follow(self.store, self.queue, self.settings, uid, target, True)
        return rel

    async def blocked_accounts(self, uid, **page: Any) -> tuple[list[User], list[int]]:
        return await pages.accounts(
            self.store, await relations.blocked_page(self.store, uid, **page)
        )

    async def muted_accounts(
        self, uid, **page: Any
    ) -> tuple[list[User], list[int], dict[int, int]]:
        """The muted accounts, the page's marks, and when each mute ends
        (ms; 0: never), by account id."""
        rows = await relations.muted_terms_page(self.store, uid, **page)
        users, marks = await pages.accounts(self.store, [(t, mark) for t, mark, _ in rows])
        return users, marks, {t: ends for t, _, ends in rows}

    async def follow_requesters(self, uid, **page: Any) -> tuple[list[User], list[int]]:
        return await pages.accounts(
            self.store, await follow_requests.pending_page(self.store, uid, **page)
        )

    async def authorize_follow(self, owner, requester) -> bool:
        """``owner`` lets ``requester`` follow them (UserNotFound for an unknown requester)."""
        await users.get_user(self.store, requester)
        answered = await fed_inbox.answer_request(
            self.store, self.queue, self.settings, owner, requester, True
        )
        if answered is not None:  # a remote account's request (redpoll.federation)
            return answered
        return await follows.authorize_request(self.store, self.queue, owner, requester)

    async def reject_follow(self, owner, requester) -> bool:
        """``owner`` turns down ``requester``'s request (UserNotFound for an unknown requester)."""
        await users.get_user(self.store, requester)
        answered = await fed_inbox.answer_request(
            self.store, self.queue, self.settings, owner, requester, False
        )
        if answered is not None:
            return answered
        return await follow_requests.reject(self.store, owner, requester)
