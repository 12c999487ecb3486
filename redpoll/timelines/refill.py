"""Refilling a home or list timeline after an unfollow or member removal
emptied part of it, and rebuilding the home of a user who comes back after
being idle. Runs as a job, or before a page; idempotent (merge dedups).
What comes in is what the home rule lets in (redpoll.timelines.home_rule),
as Mastodon's populate_home and merges apply its feed filters."""

from __future__ import annotations

from ..core import keys, limits
from ..storage.store import Store
from . import home_rule, placement


async def _refill(
    store: Store,
    timeline: str,
    guard: str,
    sources: list[int],
    own: int | None = None,
    list_of: tuple[int, int] | None = None,
) -> int:
    """Fill ``timeline`` up to the cap from the profiles of ``sources``,
    which must be members of the ``guard`` set (following / list members)
    unless they are ``own``: the home of ``own``, or the list ``list_of``
    (owner, list id), by its rule."""
    viewer, lid = list_of if list_of is not None else (own, None)
    pipe = store.pipeline()
    pipe.llen(timeline)
    pipe.lindex(timeline, -1)
    length, tail = await pipe.execute()
    need = limits.HOME_CAP - length
    if need <= 0 or not sources:
        return 0
    # everything newer than the tail is already there; take older ones
    top = f"({int(tail)}" if tail is not None else "+inf"
    replies = await store.batch(
        [c for uid in sources for c in home_rule.profile_reads(uid, top, need)]
    )
    per_source = [
        home_rule.profile_batch(uid, ids, ruled)
        for uid, ids, ruled in zip(sources, replies[0::2], replies[1::2])
    ]
    picked, boosts = await home_rule.take(
        store, home_rule.Batch.newest(per_source, need), viewer, lid
    )
    if picked:
        record = home_rule.boost_record(viewer, lid) if viewer is not None else None
        await placement.of(store).merge(
            timeline, timeline, "", picked, record, home_rule.boost_pairs(boosts)
        )
        await _drop_departed(
            store, timeline, guard, sources, [b.ids for b in per_source], set(picked), own
        )
    return len(picked)


async def _drop_departed(
    store: Store,
    timeline: str,
    guard: str,
    sources: list[int],
    per_source: list[list[int]],
    picked: set[int],
    own: int | None,
) -> None:
    """The sources were read before the merge. One unfollowed (or removed from
    the list, or the list deleted) meanwhile has had its statuses taken out
    already, and the merge may just have put some back: take them out again.
    unmerge.lua removes them only while the source is still absent, and an
    unfollow that lands after this check removes them itself."""
    mine = [
        (uid, [i for i in ids if i in picked])
        for uid, ids in zip(sources, per_source)
        if uid != own
    ]
    mine = [(uid, ids) for uid, ids in mine if ids]
    if not mine:
        return
    pipe = store.pipeline()
    for uid, _ in mine:
        pipe.zscore(guard, uid)
    for (uid, ids), score in zip(mine, await pipe.execute()):
        if score is None:
            await placement.of(store).unmerge(timeline, guard, uid, ids)


async def refill_home(store: Store, uid: int) -> int:
    sources = [
        int(i) for i in await store.zrange(keys.following(uid), 0, limits.REFILL_MAX_SOURCES - 1)
    ]
    if not await store.exists(keys.user(uid)):
        return 0  # vanished: nothing to do
    return await _refill(store, keys.home(uid), keys.following(uid), sources + [uid], own=uid)


async def refill_list(store: Store, owner: int, lid: int) -> int:
    if not await store.hexists(keys.lists(owner), lid):
        return 0
    sources = [
        int(i)
        for i in await store.zrange(keys.list_members(owner, lid), 0, limits.REFILL_MAX_SOURCES - 1)
    ]
    return await _refill(
        store,
        keys.list_timeline(owner, lid),
        keys.list_members(owner, lid),
        sources,
        list_of=(owner, lid),
    )


async def rebuild_home(store: Store, uid: int) -> int:
    """A returning idle user's home (redpoll.timelines.hybrid.touch): fan-out skipped
    them, so what is missing is newer than the home's newest entry (for a
    user with large accounts, whose home a page's catch-up may have written
    after the drop: anything). The newest limits.REBUILD_PER_SOURCE
    statuses above it of each account they follow are merged in, those the
    home rule lets in (its facts read in one round trip, when a status
    needs any). Large accounts are left out: their marks are dropped, so
    the page that follows catches up with each from its newest statuses.
    Idempotent (merge.lua dedupes); an account unfollowed meanwhile is
    taken out again (_drop_departed)."""
    sources = [
        int(i) for i in await store.zrange(keys.following(uid), 0, limits.REFILL_MAX_SOURCES - 1)
    ]
    head, large, hidden, _ = await store.batch(
        [
            ("LINDEX", keys.home(uid), 0),
            ("SMEMBERS", keys.large_following(uid)),
            ("SMEMBERS", keys.hidden_reblogs(uid)),
            ("DEL", keys.large_marks(uid)),
        ]
    )
    large_ids = {int(a) for a in large}
    sources = [s for s in sources if s not in large_ids]
    # what is missing is newer than the home's newest entry, unless the user
    # follows large accounts: a page's catch-up may have put one of theirs
    # there, newer than what fan-out skipped (then each source's newest)
    bottom = f"({int(head)}" if head is not None and not large else "-inf"
    replies = await store.batch(
        [
            c
            for s in sources
            for c in home_rule.profile_reads(s, "+inf", limits.REBUILD_PER_SOURCE, bottom)
        ]
    )
    per_source = [
        home_rule.profile_batch(s, ids, ruled)
        for s, ids, ruled in zip(sources, replies[0::2], replies[1::2])
    ]
    picked, boosts = await home_rule.take(
        store,
        home_rule.Batch.newest(per_source, limits.HOME_CAP),
        uid,
        hidden=frozenset(int(h) for h in hidden),
    )
    if picked:
        await placement.of(store).merge(
            keys.home(uid),
            keys.following(uid),
            "",
            picked,
            keys.home_reblogs(uid),
            home_rule.boost_pairs(boosts),
        )
        await _drop_departed(
            store,
            keys.home(uid),
            keys.following(uid),
            sources,
            [b.ids for b in per_source],
            set(picked),
            uid,
        )
    return len(picked)
