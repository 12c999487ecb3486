"""redpoll/relations/relations.py: blocks and mutes at engine level, both
modes; what they hide through every read path is in test_leak_matrix."""

from __future__ import annotations

import asyncio

import pytest

from redpoll import Redpoll
from redpoll.core import keys
from redpoll.core.errors import Forbidden, ValidationError
from redpoll.relations import relations, visibility
from redpoll.relations.jobs import BlockJob


async def _people(rp, prefix, n):
    return [await rp.accounts.sign_up(f"{prefix}{i}") for i in range(n)]


async def _home(rp, uid) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(keys.home(uid), 0, -1)]


async def test_block_ends_follows_both_ways_and_refuses_new_ones(rp):
    a, b = await _people(rp, "blk", 2)
    await rp.relations.follow(a.id, b.id)
    await rp.relations.follow(b.id, a.id)
    post = await rp.statuses.post(b.id, "before the block")
    await rp.drain()
    assert post.id in await _home(rp, a.id)
    await rp.relations.block(a.id, b.id)
    await rp.relations.block(a.id, b.id)  # twice is once
    assert (await rp.accounts.get_user(a.id)).followers == 0 and (
        await rp.accounts.get_user(a.id)
    ).following == 0
    assert (await rp.accounts.get_user(b.id)).followers == 0 and (
        await rp.accounts.get_user(b.id)
    ).following == 0
    assert post.id not in await _home(rp, a.id)
    for x, y in ((a, b), (b, a)):
        with pytest.raises(Forbidden):
            await rp.relations.follow(x.id, y.id)
    rel = await rp.relations.relation(a.id, b.id)
    assert rel.blocking and not rel.blocked_by
    assert (await rp.relations.relation(b.id, a.id)).blocked_by
    assert await visibility.visible(rp.store, a.id, [await rp.statuses.get_status(post.id)]) == []
    assert [u for u, _ in await relations.blocked_page(rp.store, a.id)] == [b.id]
    await rp.relations.unblock(a.id, b.id)
    assert await rp.relations.relation(a.id, b.id) == relations.Relation()
    assert await rp.relations.follow(a.id, b.id)  # not restored, but allowed again
    with pytest.raises(ValidationError):
        await rp.relations.block(a.id, a.id)


async def test_a_cut_short_block_is_finished_by_its_journal(rp):
    a, b = await _people(rp, "jblk", 2)
    await rp.relations.follow(b.id, a.id)
    # the call died after its first step: only a's side is written; the
    # held journal's replay (what a worker does after job_claim_ms) finishes it
    job = BlockJob(uid=a.id, target=b.id, op=1)
    await rp.store.client.zadd(keys.blocking(a.id), {str(b.id): 1})
    await relations.apply_block(rp.store, job)
    await relations.apply_block(rp.store, job)  # a second replay changes nothing
    assert (await rp.relations.relation(b.id, a.id)).blocked_by
    assert not await rp.relations.is_following(b.id, a.id)
    assert (await rp.accounts.get_user(a.id)).followers == 0


async def test_block_while_a_fan_out_is_in_flight_leaves_nothing_in_the_home(settings):
    # batches of 1: the author's followers are served by jobs after the call
    rp = await Redpoll.open(settings.with_(fanout_batch=1))
    try:
        author, *fans = await _people(rp, "fly", 6)
        for fan in fans:
            await rp.relations.follow(fan.id, author.id)
        blocker = fans[-1]  # the last follower: served by the last job
        post = await rp.statuses.post(author.id, "in flight")
        await rp.relations.block(blocker.id, author.id)
        await rp.drain()
        assert post.id not in await _home(rp, blocker.id)
        for fan in fans[:-1]:
            assert post.id in await _home(rp, fan.id)
    finally:
        await rp.close()


async def test_mute_hides_from_timelines_not_profiles_and_expires(rp):
    a, b = await _people(rp, "mut", 2)
    await rp.relations.follow(a.id, b.id)
    post = await rp.statuses.post(b.id, "muted soon")
    status = await rp.statuses.get_status(post.id)
    terms = await rp.relations.mute(a.id, b.id, duration_s=0, notifications=False)
    assert terms.expires_at == 0 and not terms.notifications
    assert await visibility.visible(rp.store, a.id, [status], muted=True) == []
    assert await visibility.visible(rp.store, a.id, [status]) == [status]  # a profile
    rel = await rp.relations.relation(a.id, b.id)
    assert rel.mute is not None and not rel.mute.notifications
    assert [u for u, _ in await relations.muted_page(rp.store, a.id)] == [b.id]
    await rp.relations.mute(a.id, b.id, duration_s=1)  # new terms: a second, with notifications
    assert (await rp.relations.relation(a.id, b.id)).mute.notifications
    await asyncio.sleep(1.2)
    assert (await rp.relations.relation(a.id, b.id)).mute is None  # expired, with no job run
    assert await visibility.visible(rp.store, a.id, [status], muted=True) == [status]
    assert await relations.muted_page(rp.store, a.id) == []
    await rp.relations.mute(a.id, b.id)
    await rp.relations.unmute(a.id, b.id)
    assert await rp.relations.hidden_ids(a.id) == frozenset()
    for bad in (-1, 1.5, True, 10**12):
        with pytest.raises(ValidationError):
            await rp.relations.mute(a.id, b.id, duration_s=bad)
