"""How one account stands to another, all of it at once (Mastodon's
Relationship: follows, follow requests, the follow's options, blocks and
mutes, endorsement and private note), and following with the follow's
options."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ..bus.queue import JobQueue
from ..notifications import notifications
from ..records.users import get_users
from ..storage.store import Store
from . import domain_blocks, endorsements, follow_requests, follows, notes, relations


@dataclass(frozen=True, slots=True)
class Relationship:
    """How ``uid`` stands to ``target``; ``showing_reblogs`` and
    ``notifying`` are the options of a follow (False without one)."""

    target: int
    following: bool
    followed_by: bool
    showing_reblogs: bool
    notifying: bool
    blocking: bool
    blocked_by: bool
    muting: bool
    muting_notifications: bool
    requested: bool
    requested_by: bool
    endorsed: bool = False
    note: str = ""
    domain_blocking: bool = False


async def relationship(
    store: Store, uid: int, target: int, login: str | None = None
) -> Relationship:
    """``uid``'s relationship to ``target`` (its reads sent together;
    ``login``: the target's, if the caller read it)."""
    (
        following,
        followed_by,
        reblogs,
        notify,
        rel,
        (requested, requested_by),
        endorsed,
        note,
        blocked,
        found,
    ) = await asyncio.gather(
        follows.is_following(store, uid, target),
        follows.is_following(store, target, uid),
        follows.shows_reblogs(store, uid, target),
        notifications.notifies(store, uid, target),
        relations.relation(store, uid, target),
        follow_requests.state(store, uid, target),
        endorsements.is_endorsed(store, uid, target),
        notes.note(store, uid, target),
        domain_blocks.blocked(store, uid),
        get_users(store, [target]) if login is None else _none(),
    )
    return Relationship(
        target,
        following,
        followed_by,
        following and reblogs,
        following and notify,
        rel.blocking,
        rel.blocked_by,
        rel.mute is not None,
        rel.mute is not None and rel.mute.notifications,
        requested,
        requested_by,
        following and endorsed,
        note,
        domain_blocks.blocked_in(
            blocked, login if login is not None else found[0].login if found else ""
        ),
    )


async def relationships(store: Store, uid: int, targets: list[int]) -> list[Relationship]:
    """``uid``'s relationship to each of ``targets`` that exists, in order."""
    users = await get_users(store, targets)
    return list(await asyncio.gather(*(relationship(store, uid, u.id, u.login) for u in users)))


async def _none() -> None:
    return None


async def follow(
    store: Store,
    queue: JobQueue,
    uid: int,
    target: int,
    reblogs: bool | None = None,
    notify: bool | None = None,
) -> Relationship:
    """``uid`` follows ``target`` (redpoll.relations.follows.follow) with the follow's
    options: ``reblogs`` (show their boosts in the home) and ``notify``
    (notify of their statuses); None leaves an option as it was when
    already following, and sets the default (boosts shown, no
    notifications) on a new follow. A request to a locked account keeps
    the options until it is answered. The answer: the relationship after."""
    if reblogs is False:  # before the follow: its backfill leaves their boosts out
        await follows.set_show_reblogs(store, uid, target, False)
    new = await follows.follow(store, queue, uid, target)
    if not new and not await follows.is_following(store, uid, target):
        # a request to a locked account: its options wait for the answer
        await follow_requests.keep_options(store, uid, target, reblogs, notify)
        return await relationship(store, uid, target)
    # as Mastodon: each option unchanged when following again without it
    if reblogs is not None or new:
        await follows.set_show_reblogs(store, uid, target, True if reblogs is None else reblogs)
    if notify is not None or new:
        await notifications.set_notify(store, uid, target, bool(notify))
    return await relationship(store, uid, target)
