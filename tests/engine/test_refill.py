"""Refilling home timelines after an unfollow emptied part of them."""

from __future__ import annotations

import asyncio
import random

from redpoll.core import keys, limits
from redpoll.timelines import refill
from redpoll.timelines.jobs import RefillJob


async def raw_home(rp, uid) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(keys.home(uid), 0, -1)]


async def post_interleaved(rp, plan: dict[int, int]) -> dict[int, list[int]]:
    """Post plan[uid] statuses per author, mixing authors so their ids interleave."""
    queue = [uid for uid, n in plan.items() for _ in range(n)]
    random.Random(len(queue)).shuffle(queue)
    out: dict[int, list[int]] = {uid: [] for uid in plan}
    for start in range(0, len(queue), 100):
        posted = await asyncio.gather(
            *(
                rp.statuses.post(uid, f"p{start + i}")
                for i, uid in enumerate(queue[start : start + 100])
            )
        )
        for s in posted:
            out[s.user_id].append(s.id)
    return out


def newest(ids, n=limits.HOME_CAP) -> list[int]:
    return sorted(set(ids), reverse=True)[:n]


async def test_full_homes_are_refilled_from_remaining_followees_in_id_order(rp):
    b, c, d = [await rp.accounts.sign_up(n) for n in ("b", "c", "d")]
    r1, r2, r3 = [await rp.accounts.sign_up(n) for n in ("r1", "r2", "r3")]
    ids = await post_interleaved(rp, {b.id: 400, c.id: 550, d.id: 550, r3.id: 60})
    for who, targets in ((r1, (b, c, d)), (r2, (b, d)), (r3, (b, c))):
        for t in targets:
            await rp.relations.follow(who.id, t.id)
    assert await raw_home(rp, r1.id) == newest(ids[b.id] + ids[c.id] + ids[d.id])
    assert await raw_home(rp, r3.id) == newest(ids[b.id] + ids[c.id] + ids[r3.id])
    assert len(await raw_home(rp, r1.id)) == limits.HOME_CAP

    # deleted statuses must not come back through the refill
    dead = sorted(ids[c.id])[:5]
    for sid in dead:
        await rp.statuses.delete(sid, c.id)
    c_alive = [i for i in ids[c.id] if i not in dead]
    await rp.drain()

    await rp.relations.unfollow(r1.id, b.id)
    await rp.relations.unfollow(r2.id, d.id)
    await rp.relations.unfollow(r3.id, c.id)
    # at once: only the unfollowed user's statuses are gone, nothing added yet
    r1_now = await raw_home(rp, r1.id)
    assert not set(r1_now) & set(ids[b.id])
    assert r1_now == [i for i in newest(ids[b.id] + c_alive + ids[d.id]) if i not in ids[b.id]]
    assert len(r1_now) < limits.HOME_CAP

    await rp.drain()
    expected = {
        r1.id: newest(c_alive + ids[d.id]),  # more than the cap is left
        r2.id: newest(ids[b.id]),  # fewer than the cap is left
        r3.id: newest(ids[b.id] + ids[r3.id]),  # their own statuses count too
    }
    for uid, want in expected.items():
        home = await raw_home(rp, uid)
        assert len(home) == len(set(home)), uid
        assert home == want, uid
    assert len(expected[r1.id]) == limits.HOME_CAP

    # a refill job run again (at-least-once delivery) changes nothing
    for uid in expected:
        await rp.queue.enqueue(RefillJob(uid))
    await rp.drain()
    for uid, want in expected.items():
        assert await raw_home(rp, uid) == want, uid
    assert [s.id for s in await rp.timelines.home(r1.id, limit=40)] == expected[r1.id][:40]


async def test_refollow_before_refill_runs_leaves_no_duplicates(rp):
    r = await rp.accounts.sign_up("reader")
    b = await rp.accounts.sign_up("b")
    c = await rp.accounts.sign_up("c")
    ids = await post_interleaved(rp, {b.id: 15, c.id: 15})
    await rp.relations.follow(r.id, b.id)
    await rp.relations.follow(r.id, c.id)
    await rp.relations.unfollow(r.id, b.id)
    await rp.relations.follow(r.id, b.id)
    await rp.relations.unfollow(r.id, c.id)
    await rp.drain()
    assert await raw_home(rp, r.id) == newest(ids[b.id])
    await rp.relations.follow(r.id, c.id)
    await rp.drain()
    assert await raw_home(rp, r.id) == newest(ids[b.id] + ids[c.id])


async def test_refill_of_emptied_home_includes_own_statuses(rp):
    r = await rp.accounts.sign_up("reader")
    b = await rp.accounts.sign_up("b")
    own = [(await rp.statuses.post(r.id, f"own {i}")).id for i in range(3)]
    b_ids = (await post_interleaved(rp, {b.id: limits.HOME_CAP}))[b.id]
    await rp.relations.follow(r.id, b.id)
    assert await raw_home(rp, r.id) == newest(b_ids)  # own ones are older, out of the cap
    await rp.relations.unfollow(r.id, b.id)
    assert await raw_home(rp, r.id) == []
    await rp.drain()
    assert await raw_home(rp, r.id) == sorted(own, reverse=True)


async def test_refill_job_for_vanished_or_unfollowing_user_is_harmless(rp):
    r = await rp.accounts.sign_up("reader")
    b = await rp.accounts.sign_up("b")
    await rp.statuses.post(b.id, "x")
    await rp.queue.enqueue(RefillJob(r.id + 999))  # no such user
    await rp.queue.enqueue(RefillJob(r.id))  # follows nobody
    await rp.drain()
    assert await raw_home(rp, r.id) == []
    assert not await rp.store.client.exists(keys.home(r.id + 999))
    assert await rp.queue.depth() == 0


async def test_refill_racing_an_unfollow_does_not_bring_the_unfollowed_back(rp):
    """A refill job reads the followees, then the user unfollows one of them
    before the job writes. Forced here by handing the job's step the followee
    list as it was read before the unfollow."""
    r = await rp.accounts.sign_up("reader")
    b = await rp.accounts.sign_up("b")
    c = await rp.accounts.sign_up("c")
    ids = await post_interleaved(rp, {b.id: 600, c.id: 600})
    await rp.relations.follow(r.id, b.id)
    await rp.relations.follow(r.id, c.id)
    stale_sources = [b.id, c.id, r.id]
    await rp.relations.unfollow(r.id, c.id)
    assert not set(await raw_home(rp, r.id)) & set(ids[c.id])

    await refill._refill(rp.store, keys.home(r.id), keys.following(r.id), stale_sources, own=r.id)
    home = await raw_home(rp, r.id)
    assert not set(home) & set(ids[c.id])
    await rp.drain()
    assert await raw_home(rp, r.id) == newest(ids[b.id])


async def test_list_refill_racing_a_list_delete_leaves_no_orphan_timeline(rp):
    """The list refill job checked the list and read its members, then the
    list was deleted before the job wrote (forced as above)."""
    o = await rp.accounts.sign_up("owner")
    m = await rp.accounts.sign_up("member")
    await post_interleaved(rp, {m.id: 30})
    lst = await rp.lists.create(o.id, "short-lived")
    await rp.relations.follow(o.id, m.id)
    await rp.lists.add(o.id, lst.id, m.id)
    await rp.lists.delete(o.id, lst.id)
    await refill._refill(
        rp.store, keys.list_timeline(o.id, lst.id), keys.list_members(o.id, lst.id), [m.id]
    )
    assert not await rp.store.client.exists(keys.list_timeline(o.id, lst.id))
