"""What follows a member's block of a domain (redpoll.relations.domain_blocks),
as Mastodon's AfterBlockDomainFromAccountService: the member's follows of
the domain's accounts end (their servers are sent the Undo), the domain's
accounts that follow the member are refused (a Reject goes to each, and
they are no longer counted), and their pending follow requests are
refused too. Notifications from the domain are not shown from then on
(redpoll.reading.notification_view asks the block when it shows them).

Each step is idempotent and reads what is still there, so :func:`cleanup`
run again (its job replayed, a call cut short) finishes what a run before
began; the sets are walked in bounded steps (limits.DOMAIN_BLOCK_STEP)."""

from __future__ import annotations

from ..bus.queue import JobQueue
from ..core import keys as core_keys
from ..core import limits
from ..core.models import User
from ..core.settings import Settings
from ..records import users
from ..relations import domain_blocks, follow_requests, follows
from ..storage.store import Store
from . import delivery, documents, followers, inbox, keys, outbox, remote


async def _on(store: Store, key: str, domain: str) -> list[User]:
    """The accounts of ``domain`` in the sorted set ``key`` (walked in
    steps of limits.DOMAIN_BLOCK_STEP)."""
    found, cursor = [], 0
    while True:
        cursor, rows = await store.zscan(key, cursor, count=limits.DOMAIN_BLOCK_STEP)
        ids = [int(m) for m, _ in rows]
        found += [
            u
            for u in await users.get_users(store, ids)
            if domain_blocks.domain_of(u.login) == domain
        ]
        if not cursor:
            return list({u.id: u for u in found}.values())


async def preview(store: Store, uid: int, domain: str) -> tuple[int, int]:
    """What blocking ``domain`` would end for ``uid`` (Mastodon 4.3's
    domain block preview): how many of its accounts ``uid`` follows, and
    how many follow ``uid``. Reads only, in the same bounded steps."""
    following = await _on(store, core_keys.following(uid), domain)
    followers_there = await _on(store, keys.remote_followers(uid), domain)
    return len(following), len(followers_there)


async def cleanup(store: Store, queue: JobQueue, settings: Settings, uid: int, domain: str) -> int:
    """Carry out the member's block of ``domain`` (the module's steps);
    how many follows, followers and requests it ended. Idempotent."""
    ended = 0
    for target in await _on(store, core_keys.following(uid), domain):
        if await follows.unfollow(store, queue, uid, target.id):
            await outbox.follow(store, queue, settings, uid, target.id, False)
            ended += 1
    me = await users.get_user(store, uid)
    base = (settings.public_url or "").rstrip("/")
    for follower in await _on(store, keys.remote_followers(uid), domain):
        if await followers.end_remote_follow(store, uid, follower.id) and base:
            details = await remote.details(store, follower.id)
            local = documents.actor_id(base, me.login)
            follow = documents.activity(
                "Follow", f"{details.get('uri', '')}#follows/{uid}", details.get("uri", ""), local
            )
            reject = documents.activity(
                "Reject", f"{local}#rejects/follows/{follower.id}", local, follow
            )
            await delivery.send(store, queue, uid, details.get("inbox", ""), reject)
            ended += 1
    pending = await store.hkeys(keys.follow_request(uid))
    for requester in await users.get_users(store, [int(x) for x in pending]):
        if domain_blocks.domain_of(requester.login) != domain:
            continue
        if base:  # refused, and its server told (answer_request: idempotent steps)
            ended += bool(
                await inbox.answer_request(store, queue, settings, uid, requester.id, False)
            )
        else:  # not federating now: only dropped here
            await follow_requests.drop(store, requester.id, uid)
            await store.hdel(keys.follow_request(uid), str(requester.id))
            ended += 1
    return ended
