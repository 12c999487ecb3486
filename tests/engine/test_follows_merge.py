"""The follow backfill's merge (merge.lua, through ``edges.add``) against a
plain Python model of it: newest first, each id once, at most the cap, an
all-older batch appended (a refill)."""

from __future__ import annotations

import random

from redpoll.core import keys, limits
from redpoll.relations import edges


def model(home: list[int], ids: list[int], cap: int) -> list[int]:
    """What a merge of ``ids`` (newest first, each once) into ``home`` leaves."""
    if not ids:
        return home
    if not home or ids[0] < home[-1]:  # empty, or all older: append what fits
        return home + ids[: max(0, cap - len(home))]
    return sorted(set(home) | set(ids), reverse=True)[:cap]


def cases(rng: random.Random, cap: int) -> list[tuple[str, list[int], list[int]]]:
    """(name, home, ids): the shapes a merge meets, and random ones."""

    def desc(xs):
        return sorted(set(xs), reverse=True)

    span = range(5_000, 5_000 + 40 * cap)
    out = [
        ("empty home", [], desc(rng.sample(span, cap // 2))),
        ("empty batch", desc(rng.sample(span, 5)), []),
        (
            "interleaved",
            desc(range(10_000, 10_000 + 2 * cap, 2)),
            desc(range(10_001, 10_001 + 2 * cap, 2)),
        ),
        ("all newer", desc(range(100, 100 + cap // 2)), desc(range(900_000, 900_000 + cap // 3))),
        (
            "refill: all older",
            desc(range(800_000, 800_000 + cap // 3)),
            desc(range(1_000, 1_000 + cap)),
        ),
        ("refill into a full home", desc(range(800_000, 800_000 + cap)), desc(range(10, 20))),
        ("again: all present", desc(range(50, 50 + cap // 2)), desc(range(50, 50 + cap // 2))),
        (
            "newer head kept, then interleaved",
            desc(list(range(700_000, 700_010)) + list(range(3_000, 3_000 + cap, 3))),
            desc(range(3_001, 3_001 + cap, 3)),
        ),
        (
            "duplicates and interleaving at the cap",
            desc(range(20_000, 20_000 + cap)),
            desc(list(range(20_000, 20_000 + cap, 5)) + list(range(20_001, 20_001 + 3 * cap, 7))),
        ),
        # numbers, not strings: 99,999 < 100,000 although "99999" > "100000"
        ("ids crossing a digit", desc(range(99_990, 100_010, 2)), desc(range(99_991, 100_011, 2))),
        # (a cap lowered since the home was filled): cut to the cap
        (
            "a home longer than the cap",
            desc(range(60_000, 60_000 + 2 * cap + 14, 2)),
            [60_003, 60_001],
        ),
        ("one id between", [9, 7, 5, 3], [6]),
        ("one id at the tail", [9, 7, 5, 3], [3]),
    ]
    for k in range(12):
        home = desc(rng.sample(span, rng.randint(0, cap)))
        ids = desc(rng.sample(span, rng.randint(0, cap)))
        out.append((f"random {k}", home, ids))
    return out


async def test_merge_matches_the_model(rp):
    store = rp.store
    rng = random.Random(7)
    uid, member = 41, "42"
    home, guard = keys.home(uid), keys.following(uid)  # one slot on a cluster
    await store.client.zadd(guard, {member: 1})
    for cap in (10, 37, limits.HOME_CAP):
        for name, before, ids in cases(rng, cap):
            await store.client.delete(home)
            if before:
                await store.client.rpush(home, *before)
            assert await store.run("merge", [home, guard], [cap, member, *ids]) == 1
            after = [int(x) for x in await store.client.lrange(home, 0, -1)]
            assert after == model(before, ids, cap), (cap, name)
    # the guard: without the follow, nothing changes
    await store.client.zrem(guard, member)
    await store.client.delete(home)
    await store.client.rpush(home, 5, 3)
    assert await store.run("merge", [home, guard], [10, member, 4]) == 0
    assert [int(x) for x in await store.client.lrange(home, 0, -1)] == [5, 3]


async def test_follow_backfill_matches_the_model(rp):
    """``edges.add``: both sides with b's profile read (one round trip on a
    single server), then merge.lua; the newest BACKFILL of b's profile
    merged into a's home (plain statuses: the home rule takes them all)."""
    store, cap = rp.store, limits.HOME_CAP
    rng = random.Random(11)
    for k, (name, before, ids) in enumerate(cases(rng, cap)):
        a, b = 1_000 + 2 * k, 1_001 + 2 * k
        for uid in (a, b):
            await store.client.hset(keys.user(uid), mapping={"id": uid})
        # b's profile: the case's ids and older ones past the backfill
        profile = list(ids)
        if len(ids) == limits.BACKFILL:  # and older ones the backfill leaves out
            profile += [i for i in range(ids[-1] - 1, max(ids[-1] - 100, 0), -1) if i not in before]
        if profile:
            await store.client.zadd(keys.profile(b), {i: i for i in profile})
        if before:
            await store.client.rpush(keys.home(a), *before)
        assert await edges.add(store, edges.follow_edge(a, b)) is True, name
        after = [int(x) for x in await store.client.lrange(keys.home(a), 0, -1)]
        newest = sorted(profile, reverse=True)[: limits.BACKFILL]
        assert after == model(before, newest, cap), name


async def test_a_merge_into_a_home_records_the_boosts_that_went_in(rp):
    """merge.lua with the home's boost record: the boosts among the ids are
    recorded (original -> boost) where they are in the home after the merge
    (one cut by the cap is not), as deliver_boost.lua records its own."""
    store = rp.store
    uid, member = 43, "44"
    home, guard, record = keys.home(uid), keys.following(uid), keys.home_reblogs(uid)
    await store.client.zadd(guard, {member: 1})
    await store.client.rpush(home, 90, 80, 70)
    args = [3, member, limits.HOME_REBLOGS_KEPT, 2, 85, 5, 60, 6, 85, 60]
    for _ in range(2):  # idempotent
        assert await store.run("merge", [home, guard, record], args) == 1
    assert [int(x) for x in await store.client.lrange(home, 0, -1)] == [90, 85, 80]
    assert await store.client.zrange(record, 0, -1, withscores=True) == [(b"5", 85.0)]
