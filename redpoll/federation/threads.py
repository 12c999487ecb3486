"""A remote status's thread, fetched from its server when someone here asks
for its context: its parents up the ``inReplyTo`` chain and the replies its
``replies`` collection lists, kept as statuses (inbox.keep_note: once per
note id), at most limits.FED_CONTEXT_FETCHED, at most once per
limits.FED_CONTEXT_EVERY_S per status. Run by a job (jobs.ContextJob), so
the request that asked answers with what is known, and a later one shows
the rest, as Mastodon's. Each note comes from its own server: one listed in
a collection on another host is fetched from its id, and a note answered
for an id on another host is dropped."""

from __future__ import annotations

import logging

from ..bus.queue import JobQueue
from ..core import limits
from ..core.errors import RedpollError
from ..core.settings import Settings
from ..records import statuses
from ..storage.store import Store
from . import client, keys, remote
from .inbox import Here, keep_note

log = logging.getLogger("redpoll.federation")


async def due(store: Store, uri: str) -> bool:
    """Whether the thread of ``uri`` should be fetched now (SET NX with a
    TTL: once per limits.FED_CONTEXT_EVERY_S, whoever asks)."""
    return bool(
        await store.set(keys.context_fetched(uri), "1", nx=True, ex=limits.FED_CONTEXT_EVERY_S)
    )


def _id(value) -> str:
    if isinstance(value, dict):
        value = value.get("id")
    return value if isinstance(value, str) else ""


async def fetch(store: Store, queue: JobQueue, settings: Settings, sid: int) -> int:
    """Fetch the thread of remote status ``sid``; how many notes were kept."""
    here = Here.of(settings)
    status = await statuses.get_status(store, sid)
    uri = status.extra.get("uri")
    if not uri:
        return 0
    signer = await remote.instance_signer(store, here.base)
    budget = limits.FED_CONTEXT_FETCHED
    kept = 0

    async def note_at(url: str) -> dict | None:
        # (the document of its own id only: client.fetch_object)
        return await client.fetch_object(url, loopback=here.loopback, signer=signer)

    async def keep(doc: dict) -> bool:
        nonlocal kept
        if await store.get(keys.note(_id(doc))):
            return False
        author = await remote.known_or_fetch(
            store, here.base, _id(doc.get("attributedTo")), loopback=here.loopback
        )
        await keep_note(store, queue, settings, here, author, doc)
        kept += 1
        return True

    try:
        root = await note_at(uri)
    except RedpollError as exc:
        log.info("could not fetch the thread of %s: %s", uri, exc)
        return 0
    if root is None:
        return 0
    # parents first (a reply is kept as one only when its parent is known)
    chain, parent = [], _id(root.get("inReplyTo"))
    while parent and len(chain) < budget and not await store.get(keys.note(parent)):
        if parent.startswith(here.base + "/"):
            break  # one of ours
        doc = await _quiet(note_at(parent))
        if doc is None:
            break
        chain.append(doc)
        parent = _id(doc.get("inReplyTo"))
    for doc in reversed(chain):
        await _quiet(keep(doc))
    replies = root.get("replies")
    if isinstance(replies, str):
        replies = await _quiet(client.fetch_json(replies, loopback=here.loopback, signer=signer))
    first = replies.get("first") if isinstance(replies, dict) else None
    if isinstance(first, str):
        first = await _quiet(client.fetch_json(first, loopback=here.loopback, signer=signer))
    items = (
        (first or {}).get("items") or (first or {}).get("orderedItems") or []
        if isinstance(first, dict)
        else []
    )
    for item in items[: max(budget - len(chain), 0)]:
        doc = (
            item
            if isinstance(item, dict) and remote.host_of(_id(item)) == remote.host_of(uri)
            else await _quiet(note_at(_id(item)))
        )
        if isinstance(doc, dict):
            await _quiet(keep(doc))
    return kept


async def _quiet(call):
    """A note or collection that cannot be had (gone, refused, not a note):
    left out of the thread."""
    try:
        return await call
    except RedpollError as exc:
        log.info("left out of a thread: %s", exc)
        return None
