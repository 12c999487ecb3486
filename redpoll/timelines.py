"""Reading timelines by id cursors, newest first (SPEC 3).

Cursors work as Mastodon's: ``max_id`` returns statuses older than it,
``since_id`` the newest ones newer than it, ``min_id`` the ones right above
it; a page never repeats or skips a status when new ones arrive. The ids of a
page come from one script, the statuses from one pipelined round trip; on a
single server the script also skips deleted statuses, and statuses already
decoded in this process are not read again.
"""
from __future__ import annotations

from redis.exceptions import ResponseError

from . import keys, validate
from .errors import ListNotFound, UserNotFound
from .models import Page, Status
from .statuses import decode_statuses, read_statuses
from .store import Store
from .users import current, rev_reads


def _cursors(max_id, since_id, min_id, limit) -> list:
    return [validate.optional_id(max_id, "max_id") or "",
            validate.optional_id(since_id, "since_id") or "",
            validate.optional_id(min_id, "min_id") or "",
            validate.page_limit(limit)]


#: Reads of one page at most, when deleted ids make it come up short.
TOP_UP_ROUNDS = 8


async def _list_page(store: Store, timeline: str, owner_hash: str, field: str, cursors: list):
    """The page's ids, as stored (deleted statuses included)."""
    return await store.run("read_page", [timeline, owner_hash], [*cursors, field])


async def _page_here(store: Store, timeline: str, owner_hash: str, field: str,
                     cursors: list) -> Page:
    """Single server only. One script call reads the ids, leaving out those
    of statuses deleted lately (keys.DELETED_STATUSES) and reading on past
    them for up to ``TOP_UP_ROUNDS`` pages of ids. One batch then reads the
    statuses not yet decoded in this process and the 'rev' of the authors of
    those that are; authors are decoded again only when their record changed
    (users.current)."""
    ids = await store.run("read_page", [timeline, owner_hash, keys.DELETED_STATUSES],
                          [*cursors, field, cursors[3] * TOP_UP_ROUNDS])
    records = store.status_records
    sids = [int(i) for i in ids]
    kept = [records.get(sid) for sid in sids]
    missing = [sid for sid, status in zip(sids, kept) if status is None]
    known = list(dict.fromkeys(status.user_id for status in kept if status is not None))
    epoch, *replies = await store.batch([("GET", keys.EPOCH),
                                         *(("HGETALL", keys.status(sid)) for sid in missing),
                                         *rev_reads(known)])
    if not await store.memos_valid(epoch):  # the database was wiped: nothing kept holds
        statuses = await read_statuses(store, sids)
        uids = list(dict.fromkeys(s.user_id for s in statuses))
        return Page(statuses, await current(store, uids, {}))
    fresh = dict(zip(missing, decode_statuses(store, missing, replies[:len(missing)])))
    statuses = [status or fresh[sid] for sid, status in zip(sids, kept)]
    statuses = [status for status in statuses if status is not None]
    revs = dict(zip(known, replies[len(missing):]))
    authors = await current(store, list(dict.fromkeys(s.user_id for s in statuses)), revs)
    return Page(statuses, authors)


async def _live_page(store: Store, timeline: str, owner_hash: str, field: str,
                     cursors: list) -> Page:
    """A page of statuses that reads on past deleted ones.

    A deleted status's id stays in follower and list timelines until its
    cleanup job gets there. A page of only such ids would come back empty, and
    a client takes an empty page for the end (or, paging up with ``min_id``,
    for being caught up) and never sees the statuses beyond it. So while ids
    were dropped, read on from where the raw page stopped, in the page's own
    direction, and keep the ``limit`` closest to the cursor.

    On a single server read_page.lua does that itself in one call; on a
    cluster the status keys are in other slots, so it is done here in rounds.
    """
    if not store.cluster:
        return await _page_here(store, timeline, owner_hash, field, cursors)
    max_id, since_id, min_id, limit = cursors
    found: list[Status] = []
    for _ in range(TOP_UP_ROUNDS):
        ids = await _list_page(store, timeline, owner_hash, field,
                               [max_id, since_id, min_id, limit])
        statuses = await read_statuses(store, [int(i) for i in ids])
        if min_id:
            found = statuses + found
            min_id = int(ids[0]) if ids else min_id
        else:
            found += statuses
            max_id = int(ids[-1]) if ids else max_id
        if len(ids) < limit or len(found) >= limit:
            break
    return Page(found[-limit:] if min_id else found[:limit])


async def home(store: Store, uid, *, max_id=None, since_id=None, min_id=None, limit=None) -> Page:
    uid = validate.an_id(uid, "user_id")
    cursors = _cursors(max_id, since_id, min_id, limit)
    try:
        return await _live_page(store, keys.home(uid), keys.user(uid), "id", cursors)
    except ResponseError as exc:
        raise UserNotFound(f"user {uid} does not exist") from exc


async def list_timeline(store: Store, owner, lid, *, max_id=None, since_id=None, min_id=None,
                        limit=None) -> Page:
    owner, lid = validate.an_id(owner, "user_id"), validate.an_id(lid, "list_id")
    cursors = _cursors(max_id, since_id, min_id, limit)
    try:
        return await _live_page(store, keys.list_timeline(owner, lid), keys.lists(owner),
                                str(lid), cursors)
    except ResponseError as exc:
        raise ListNotFound(f"list {lid} does not exist") from exc


async def public(store: Store, *, max_id=None, since_id=None, min_id=None,
                 limit=None) -> Page:
    """The global timeline: every status, newest first, capped like a home."""
    cursors = _cursors(max_id, since_id, min_id, limit)
    if not store.cluster:
        return await _page_here(store, keys.PUBLIC_TIMELINE, keys.PUBLIC_TIMELINE, "", cursors)
    ids = await _list_page(store, keys.PUBLIC_TIMELINE, keys.PUBLIC_TIMELINE, "", cursors)
    return Page(await read_statuses(store, [int(i) for i in ids]))


async def tag(store: Store, name: str, *, max_id=None, since_id=None, min_id=None,
              limit=None) -> Page:
    """A hashtag's timeline (``name`` normalized by conversation.tag_name):
    the public statuses carrying it, newest first, read like the public one."""
    cursors = _cursors(max_id, since_id, min_id, limit)
    key = keys.tag_timeline(name)
    if not store.cluster:
        return await _page_here(store, key, key, "", cursors)
    ids = await _list_page(store, key, key, "", cursors)
    return Page(await read_statuses(store, [int(i) for i in ids]))


async def profile(store: Store, uid, *, max_id=None, since_id=None, min_id=None,
                  limit=None) -> Page:
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
