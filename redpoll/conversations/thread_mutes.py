"""Muted threads (Mastodon's muted conversations): a member who mutes a
thread gets no more notifications about its statuses, whoever acts on
them; the thread itself still shows. A thread is named by its first
status: a reply records it (its ``thread`` extra, from its parent at
post time); a status that replies to nothing is its own thread's first;
a reply written before replies recorded it is walked up to its first
(at most limits.CONTEXT_ANCESTORS_MAX parents).

The mute is one set per member (keys.thread_mutes), applied when
notifications are shown or counted (redpoll.reading.notification_view),
never when they are made: an unmute shows them again, as a mute of an
account does.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core import keys, limits
from ..core.errors import LimitReached
from ..core.models import Status
from ..records.statuses import get_status_or_none
from ..storage.store import Store


def thread_of(status: Status) -> int | None:
    """The thread ``status`` belongs to, where its record says (None: a
    reply written before replies recorded it)."""
    thread = status.extra.get("thread")
    if thread:
        return int(thread)
    return None if status.extra.get("in_reply_to_id") else status.id


async def threads_of(store: Store, statuses: Iterable[Status]) -> dict[int, int]:
    """Each status's thread, by status id (an older reply walked up)."""
    out: dict[int, int] = {}
    for s in statuses:
        thread = thread_of(s)
        if thread is None:
            thread = await _walk(store, s)
        out[s.id] = thread
    return out


async def _walk(store: Store, status: Status) -> int:
    current = status
    for _ in range(limits.CONTEXT_ANCESTORS_MAX):
        parent = current.extra.get("in_reply_to_id")
        if not parent:
            return current.id
        found = await get_status_or_none(store, int(parent))
        if found is None:
            return int(parent)  # (a thread whose first status is gone keeps its id)
        if thread_of(found) is not None:
            return thread_of(found) or found.id
        current = found
    return current.id


async def mute(store: Store, uid: int, status: Status, on: bool) -> None:
    """Mute (``on``) or unmute the thread of ``status`` for ``uid``; twice is
    once. LimitReached (nothing written) past limits.THREAD_MUTES_MAX."""
    thread = (await threads_of(store, [status]))[status.id]
    if on:  # the cap's check and the add in one script (thread_mute.lua: atomic)
        done = await store.run(
            "thread_mute", [keys.thread_mutes(uid)], [thread, limits.THREAD_MUTES_MAX]
        )
        if done == -1:
            raise LimitReached(f"at most {limits.THREAD_MUTES_MAX} muted threads")
    else:
        await store.srem(keys.thread_mutes(uid), thread)


async def muted(store: Store, uid: int, status: Status) -> bool:
    thread = (await threads_of(store, [status]))[status.id]
    return bool(await store.sismember(keys.thread_mutes(uid), thread))
