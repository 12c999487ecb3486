"""Refilling a home or list timeline after an unfollow or member removal
emptied part of it (SPEC 6). Runs as a job; idempotent (merge dedups)."""
from __future__ import annotations

import heapq

from . import keys, limits
from .store import Store


async def _refill(store: Store, timeline: str, sources: list[int]) -> int:
    pipe = store.pipeline()
    pipe.llen(timeline)
    pipe.lindex(timeline, -1)
    length, tail = await pipe.execute()
    need = limits.HOME_CAP - length
    if need <= 0 or not sources:
        return 0
    # everything newer than the tail is already there; take older ones
    top = f"({int(tail)}" if tail is not None else "+inf"
    pipe = store.pipeline()
    for uid in sources:
        pipe.zrevrangebyscore(keys.profile(uid), top, "-inf", start=0, num=need)
    per_source = [[int(i) for i in ids] for ids in await pipe.execute()]
    merged = heapq.merge(*per_source, reverse=True)
    picked: list[int] = []
    for sid in merged:
        if not picked or picked[-1] != sid:
            picked.append(sid)
        if len(picked) == need:
            break
    if picked:
        await store.run("merge", [timeline, timeline], [limits.HOME_CAP, "", *picked])
    return len(picked)


async def refill_home(store: Store, uid: int) -> int:
    sources = [int(i) for i in await store.client.zrange(
        keys.following(uid), 0, limits.REFILL_MAX_SOURCES - 1)]
    if not await store.client.exists(keys.user(uid)):
        return 0  # vanished: nothing to do
    return await _refill(store, keys.home(uid), sources + [uid])


async def refill_list(store: Store, owner: int, lid: int) -> int:
    if not await store.client.hexists(keys.lists(owner), lid):
        return 0
    sources = [int(i) for i in await store.client.zrange(
        keys.list_members(owner, lid), 0, limits.REFILL_MAX_SOURCES - 1)]
    return await _refill(store, keys.list_timeline(owner, lid), sources)
