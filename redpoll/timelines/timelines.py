"""Reading timelines by id cursors, newest first.

Cursors work as Mastodon's: ``max_id`` returns statuses older than it,
``since_id`` the newest ones newer than it, ``min_id`` the ones right above
it; a page never repeats or skips a status when new ones arrive. Home, list
and public pages are ``Timelines.read_page`` (one script for the ids, one
round trip for the statuses; see redpoll/timelines/placement.py for how each topology
reads past deleted ids).
"""

from __future__ import annotations

from ..core import keys, limits, validate
from ..core.errors import ListNotFound, NotFound, UserNotFound
from ..core.models import Page
from ..records.statuses import read_statuses, settle
from ..records.users import current
from ..storage.store import Store
from . import hybrid, placement


class Records:
    """How a page read's ids become statuses (placement.Records), for the
    storage layer, which decodes no record."""

    def __init__(self, store: Store):
        self.store = store

    async def live(self, ids: list[int]) -> list:
        return await read_statuses(self.store, ids)

    async def listed(self, reply) -> Page:
        """read_page_listed.lua's reply (ids and versions, the epoch, the
        authors' revs, the counts) as a page: kept records at those versions
        are served as kept (redpoll.core.memo's rule), the others read whole, in
        one more round trip."""
        store = self.store
        flat, epoch, author_revs, counts = reply
        sids = [int(i) for i in flat[0::2]]
        # each status's counts as the script read them (interactions.state_check)
        counts = dict(zip(sids, counts))
        if not await store.memos_valid(epoch):  # the database was wiped: nothing kept holds
            statuses = await read_statuses(store, sids)
            uids = list(dict.fromkeys(s.user_id for s in statuses))
            return Page(statuses, await current(store, uids, {}), counts)
        memo = store.statuses
        kept = [memo.get(sid, version or b"1") for sid, version in zip(sids, flat[1::2])]
        missing = [sid for sid, status in zip(sids, kept) if status is None]
        revs = {int(uid): rev or None for uid, rev in zip(author_revs[0::2], author_revs[1::2])}
        if missing:
            replies = await store.batch([("HGETALL", keys.status(sid)) for sid in missing])
            fresh = dict(zip(missing, await settle(store, missing, replies)))
            kept = [status or fresh[sid] for sid, status in zip(sids, kept)]
        statuses = [status for status in kept if status is not None]
        authors = await current(store, list(dict.fromkeys(s.user_id for s in statuses)), revs)
        return Page(statuses, authors, counts)


async def _page(store: Store, timeline: str, owner_hash: str, field: str, cursors: list) -> Page:
    topo = placement.of(store)
    return await topo.page_of(
        await topo.read_page(timeline, owner_hash, field, cursors), Records(store)
    )


def _cursors(max_id, since_id, min_id, limit) -> list:
    return [
        validate.optional_id(max_id, "max_id") or "",
        validate.optional_id(since_id, "since_id") or "",
        validate.optional_id(min_id, "min_id") or "",
        validate.page_limit(limit),
    ]


async def home(
    store: Store,
    uid,
    *,
    max_id=None,
    since_id=None,
    min_id=None,
    limit=None,
    idle_after_s: int | None = None,
) -> Page:
    """A home page, after the home caught up with what the large accounts
    the user follows posted since it last did (redpoll.timelines.hybrid:
    hybrid.read_home reads the page with them, and hybrid.catch_up, only
    when they posted since, writes what the home rule lets in and reads
    the page again). ``idle_after_s``: record
    the read, and rebuild the home first if the user had been idle that
    long (fan-out skipped them)."""
    uid = validate.an_id(uid, "user_id")
    cursors = _cursors(max_id, since_id, min_id, limit)
    try:
        first = await hybrid.read_home(store, uid, cursors)
        if idle_after_s is not None and await hybrid.touch(store, uid, idle_after_s * 1000):
            first = await hybrid.read_home(store, uid, cursors)  # rebuilt: again
        handle = first.handle
        if first.stale or first.rest is not None:
            handle = await hybrid.catch_up(store, uid, first, cursors)
    except NotFound as exc:
        raise UserNotFound(f"user {uid} does not exist") from exc
    return await placement.of(store).page_of(handle, Records(store))


async def list_timeline(
    store: Store, owner, lid, *, max_id=None, since_id=None, min_id=None, limit=None
) -> Page:
    owner, lid = validate.an_id(owner, "user_id"), validate.an_id(lid, "list_id")
    cursors = _cursors(max_id, since_id, min_id, limit)
    try:
        return await _page(
            store, keys.list_timeline(owner, lid), keys.lists(owner), str(lid), cursors
        )
    except NotFound as exc:
        raise ListNotFound(f"list {lid} does not exist") from exc


async def public(store: Store, *, max_id=None, since_id=None, min_id=None, limit=None) -> Page:
    """The global timeline: every status, newest first, capped like a home
    (on a cluster, each of its shards is: Timelines.read_public)."""
    return await placement.of(store).read_public(
        _cursors(max_id, since_id, min_id, limit), Records(store)
    )


async def tag(
    store: Store, name: str, *, max_id=None, since_id=None, min_id=None, limit=None
) -> Page:
    """A hashtag's timeline (``name`` normalized by conversation.tag_name):
    the public statuses carrying it, newest first, read like the public one."""
    cursors = _cursors(max_id, since_id, min_id, limit)
    key = keys.tag_timeline(name)
    return await _page(store, key, key, "", cursors)


async def tag_combined(
    store: Store,
    name: str,
    *,
    any_=(),
    all_=(),
    none=(),
    max_id=None,
    since_id=None,
    min_id=None,
    limit=None,
) -> Page:
    """A hashtag's timeline combined as Mastodon's ``any[]``/``all[]``/``none[]``:
    public statuses carrying ``name`` or one of ``any_``, and every tag of
    ``all_``, and none of ``none``, newest first by the same id cursors.
    Candidates are the newest ids of the timelines of ``name`` and ``any_``
    (each at most limits.TAG_TIMELINE_CAP, read in one batch: each tag is
    its own slot); each candidate's own tags decide, read from its record, at
    most limits.TAG_TIMELINE_COMBINE_SCAN records per page."""
    max_id, since_id, min_id, size = _cursors(max_id, since_id, min_id, limit)
    names = list(dict.fromkeys([name, *any_]))
    lists = await store.batch(
        [("LRANGE", keys.tag_timeline(n), 0, limits.TAG_TIMELINE_CAP - 1) for n in names]
    )
    top = int(max_id) if max_id else limits.MAX_ID + 1
    bottom = int(min_id or since_id or 0)
    ids = sorted(
        {int(i) for ids in lists for i in ids if bottom < int(i) < top}, reverse=not min_id
    )  # min_id: the ones just above it, oldest first
    need, without = set(all_), set(none)
    found: list = []
    scanned = 0
    while ids and len(found) < size and scanned < limits.TAG_TIMELINE_COMBINE_SCAN:
        chunk = ids[: min(size * 2, limits.TAG_TIMELINE_COMBINE_SCAN - scanned)]
        ids = ids[len(chunk) :]
        scanned += len(chunk)
        for status in await read_statuses(store, chunk):
            carried = set(status.extra.get("tags", "").split())
            if need <= carried and not (without & carried):
                found.append(status)
                if len(found) == size:
                    break
    found.sort(key=lambda s: s.id, reverse=True)
    return Page(found)


async def profile_tagged(
    store: Store, uid, name: str, *, max_id=None, since_id=None, min_id=None, limit=None
) -> Page:
    """A user's public and unlisted statuses carrying ``#name`` (normalized),
    newest first by id cursors, as Mastodon's ``tagged=``: the candidates
    are the newest limits.PROFILE_TAGGED_SCAN of the user's set of them
    (keys.tag_posts, scored by time), ordered by id here."""
    uid = validate.an_id(uid, "user_id")
    max_id, since_id, min_id, size = _cursors(max_id, since_id, min_id, limit)
    pipe = store.pipeline()
    pipe.exists(keys.user(uid))
    pipe.zrevrange(keys.tag_posts(uid, name), 0, limits.PROFILE_TAGGED_SCAN - 1)
    exists, members = await pipe.execute()
    if not exists:
        raise UserNotFound(f"user {uid} does not exist")
    top = int(max_id) if max_id else limits.MAX_ID + 1
    bottom = int(min_id or since_id or 0)
    ids = sorted({int(i) for i in members if bottom < int(i) < top}, reverse=not min_id)[:size]
    if min_id:  # the ones just above it, shown newest first
        ids.reverse()
    return Page(await read_statuses(store, ids))


async def profile(
    store: Store, uid, *, max_id=None, since_id=None, min_id=None, limit=None
) -> Page:
    """A user's own statuses; the profile is a sorted set scored by id."""
    uid = validate.an_id(uid, "user_id")
    max_id, since_id, min_id, limit = _cursors(max_id, since_id, min_id, limit)
    top = f"({max_id}" if max_id else "+inf"
    key = keys.profile(uid)
    pipe = store.pipeline()
    pipe.exists(keys.user(uid))
    if min_id:
        pipe.zrangebyscore(key, f"({min_id}", top, start=0, num=limit)
    else:
        pipe.zrevrangebyscore(key, top, f"({since_id}" if since_id else "-inf", start=0, num=limit)
    exists, ids = await pipe.execute()
    if not exists:
        raise UserNotFound(f"user {uid} does not exist")
    if min_id:
        ids.reverse()
    return Page(await read_statuses(store, [int(i) for i in ids]))
