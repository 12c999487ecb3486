"""Which of a user's notifications are shown to them now: the one answer
that REST pages, the user stream (live and replayed) and the unread counts
all ask at the moment they show or count something, never when the
notification was made.

A notification is shown when its account is not hidden from the owner
(blocked either way, muted with notifications: redpoll.relations.relations) and, for
a kind about a status, when that status still exists, the owner may see
it now (redpoll.relations.visibility), no ``hide`` filter of theirs in
the notifications context meets it (redpoll.filters.rules) and its thread
is not one they muted (redpoll.conversations.thread_mutes); for an
``added_to_collection``, when its collection is there and shown to the
owner (redpoll.collections.collections.shown: its owner not suspended, nor
blocking or blocked by the owner). A follower removed, blocked or unfollowed
keeps the notifications of the private statuses they saw, but no longer
sees them, as the statuses themselves answer 404.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..collections import collections
from ..collections.collections import Collection
from ..conversations import thread_mutes
from ..core import keys, limits, validate
from ..core.models import Status
from ..filters import rules
from ..notifications.notifications import WITH_STATUS, Notification, _grouped_types, page
from ..records.state import StatusState
from ..records.statuses import get_statuses
from ..relations import domain_blocks, relations, visibility
from ..storage.store import Store
from .checks import checked

#: Kinds about a collection (left out when it is gone or not shown to the owner).
WITH_COLLECTION = frozenset({collections.ADDED_KIND})


async def hidden_actors(store: Store, owner: int, actors: Sequence[int]) -> set[int]:
    """Accounts whose notifications ``owner`` does not get now: blocked
    either way, muted with their notifications, or on a domain ``owner``
    blocks (one round trip; a second, for the actors' logins, only for an
    owner who blocks domains)."""
    uids = [u for u in dict.fromkeys(actors) if u != owner]
    if not uids:
        return set()
    replies = await store.batch(
        [*relations.hidden_commands(owner, uids), domain_blocks.read(owner)]
    )
    hidden = relations.hidden_from(uids, replies[:3], muted=True, notifications_only=True)
    blocked = domain_blocks.parse(replies[3])
    if blocked:
        logins = await store.batch([("HGET", keys.user(u), "login") for u in uids])
        hidden |= {
            u
            for u, login in zip(uids, logins)
            if login and domain_blocks.blocked_in(blocked, login.decode())
        }
    return hidden


@dataclass
class Seen:
    """The notifications of some shown to their owner now (in order), the
    statuses they name that the owner may see (by id), and, when asked
    for, the counts and flags of those statuses and the version of the
    owner's filters (redpoll.reading.checks.checked read them with the
    visibility check)."""

    notes: list[Notification]
    statuses: dict[int, Status]
    states: dict[int, StatusState] = field(default_factory=dict)
    version: list = field(default_factory=list)
    #: the collections the notes name that are shown to the owner, by id
    collections: dict[int, Collection] = field(default_factory=dict)


async def seen(
    store: Store, owner: int, notes: Sequence[Notification], *, states: bool = False
) -> Seen:
    """Which of ``notes`` are shown to ``owner`` now (the rule above).
    ``states``: read the statuses' counts and flags with the visibility
    check (a page shows them; a stream event or a count does not)."""
    if not notes:
        return Seen([], {})
    sids = list(dict.fromkeys(n.status for n in notes if n.status))
    # the accounts hidden from the owner and the statuses named, together
    hidden, found, muted = await asyncio.gather(
        hidden_actors(store, owner, [n.actor for n in notes]),
        get_statuses(store, sids),
        store.smembers(keys.thread_mutes(owner)) if sids else _none(),
    )
    notes = [n for n in notes if n.actor not in hidden]
    out = Seen(notes, {})
    if found:
        if states:
            visible, out.states = await checked(store, owner, found, filters=out.version)
        else:
            visible = await visibility.visible(store, owner, found)
        out.statuses = {s.id: s for s in visible}
    if out.statuses:  # a hide filter of the notifications context leaves them out
        active = await (
            rules.active_at(store, owner, out.version[0])
            if out.version
            else rules.active(store, owner)
        )
        if active:
            out.statuses = {
                sid: s
                for sid, s in out.statuses.items()
                if not ((r := active.apply(s, context="notifications", viewer=owner)) and r.hidden)
            }
    if out.statuses and muted:  # the threads the owner muted
        muted_ids = {int(m) for m in muted}
        threads = await thread_mutes.threads_of(store, out.statuses.values())
        out.statuses = {sid: s for sid, s in out.statuses.items() if threads[sid] not in muted_ids}
    out.notes = [n for n in notes if n.type not in WITH_STATUS or n.status in out.statuses]
    out.collections = await collections_shown(store, owner, out.notes)
    out.notes = [
        n for n in out.notes if n.type not in WITH_COLLECTION or n.collection in out.collections
    ]
    return out


async def collections_shown(
    store: Store, owner: int, notes: Sequence[Notification]
) -> dict[int, Collection]:
    """The collections ``notes`` name (added_to_collection: the actor's) that
    are there and shown to ``owner`` now, by id; a note whose collection is
    not among them is not shown."""
    named = list(
        dict.fromkeys(
            (n.actor, n.collection) for n in notes if n.type in WITH_COLLECTION and n.collection
        )
    )
    if not named:
        return {}
    found = await collections.read(store, named)
    return {c.id: c for c, _ in await collections.shown(store, list(found.values()), owner)}


async def _none() -> set:
    return set()


async def shown(
    store: Store, owner: int, notes: Sequence[Notification]
) -> tuple[list[Notification], dict[int, Status]]:
    """The notifications of ``notes`` shown to ``owner`` now, in order, and
    the statuses they name that ``owner`` may see, by id (:func:`seen`)."""
    found = await seen(store, owner, notes)
    return found.notes, found.statuses


async def shown_one(store: Store, owner: int, note: Notification) -> Status | None | bool:
    """False when ``note`` is not shown to ``owner`` now; else its status
    (None for a kind without one)."""
    found = await shown_with(store, owner, note)
    return False if found is None else found[0]


async def shown_with(
    store: Store, owner: int, note: Notification
) -> tuple[Status | None, Collection | None] | None:
    """None when ``note`` is not shown to ``owner`` now; else its status and
    its collection (None for a kind without one)."""
    found = await seen(store, owner, [note])
    if not found.notes:
        return None
    return (
        found.statuses.get(note.status) if note.status else None,
        found.collections.get(note.collection) if note.collection else None,
    )


async def unread(
    store: Store,
    owner: int,
    after: int,
    cap: int,
    *,
    types=None,
    exclude_types=None,
    account_id=None,
) -> list[Notification]:
    """The notifications newer than ``after`` shown to ``owner`` now, oldest
    first, at most ``cap``; reads on past hidden ones up to
    limits.NOTIFICATIONS_SCAN_MAX."""
    out: list[Notification] = []
    cursor, scanned = after, 0
    while len(out) < cap and scanned < limits.NOTIFICATIONS_SCAN_MAX:
        batch = await page(
            store,
            owner,
            min_id=cursor or None,
            limit=limits.NOTIFICATIONS_PAGE_MAX,
            types=types,
            exclude_types=exclude_types,
            account_id=account_id,
        )
        if not batch:
            break
        batch.sort(key=lambda n: n.id)
        scanned += len(batch)
        cursor = batch[-1].id
        kept, _ = await shown(store, owner, batch)
        out.extend(kept)
        if len(batch) < limits.NOTIFICATIONS_PAGE_MAX:
            break
    return out[:cap]


async def unread_groups(
    store: Store,
    owner: int,
    after: int,
    cap,
    *,
    types=None,
    exclude_types=None,
    account_id=None,
    grouped_types=None,
) -> int:
    """How many notification groups hold a notification newer than
    ``after`` shown to ``owner`` now, at most ``cap`` (Mastodon: 100 by
    default, 1000 at most); ``grouped_types`` None: every groupable kind."""
    cap = validate.page_limit(
        cap, limits.NOTIFICATIONS_UNREAD_DEFAULT, limits.NOTIFICATIONS_UNREAD_MAX
    )
    grouped = set(_grouped_types(grouped_types).split(","))
    groups: set[str] = set()
    for note in await unread(
        store,
        owner,
        after,
        limits.NOTIFICATIONS_SCAN_MAX,
        types=types,
        exclude_types=exclude_types,
        account_id=account_id,
    ):
        groups.add(note.group_key if note.type in grouped else f"ungrouped-{note.id}")
        if len(groups) >= cap:
            break
    return len(groups)
