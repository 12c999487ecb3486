"""Boosts in the engine: delivered like posts, never twice in a
home, hidden per follow, undone everywhere, gone with their original."""

from __future__ import annotations

import asyncio

import pytest

from redpoll.core import keys
from redpoll.core.errors import StatusNotFound
from redpoll.relations import follows
from redpoll.timelines import placement


async def ids_in(rp, key) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(key, 0, -1)]


async def test_boost_reaches_followers_counts_and_notifies(rp):
    ann, bob, fan = [await rp.accounts.sign_up(n) for n in ("ann", "bob", "fan")]
    await rp.relations.follow(fan.id, bob.id)
    status = await rp.statuses.post(ann.id, "boost me")
    bid = await rp.statuses.boost(bob.id, status.id)
    assert await rp.statuses.boost(bob.id, status.id) == bid  # twice is once
    assert await rp.statuses.boost(bob.id, bid) == bid  # boosting the boost boosts the original
    await rp.drain()
    assert bid in await ids_in(rp, keys.home(fan.id))
    assert bid not in await ids_in(rp, placement.of(rp.store).public_key(bid))
    [state] = await rp.statuses.states(bob.id, [status.id])
    assert state.reblogs == 1 and state.reblogged
    [note] = await rp.notifications.listed(ann.id)
    assert (note.type, note.actor, note.status) == ("reblog", bob.id, status.id)
    assert (await rp.statuses.get_status(bid)).reblog_of == status.id

    assert await rp.statuses.unboost(bob.id, status.id) is True
    assert await rp.statuses.unboost(bob.id, status.id) is False
    await rp.drain()
    assert bid not in await ids_in(rp, keys.home(fan.id))
    assert bid not in await ids_in(rp, keys.home(bob.id))
    [state] = await rp.statuses.states(bob.id, [status.id])
    assert state.reblogs == 0 and not state.reblogged
    assert await rp.notifications.listed(ann.id) == []


async def test_a_home_never_shows_a_status_twice_because_of_boosts(rp):
    ann, bob, cat, fan = [await rp.accounts.sign_up(n) for n in ("ann", "bob", "cat", "fan")]
    for who in (ann, bob, cat):
        await rp.relations.follow(fan.id, who.id)
    status = await rp.statuses.post(ann.id, "original")
    await rp.statuses.boost(bob.id, status.id)  # the original is at the top of fan's home
    await rp.drain()
    assert await ids_in(rp, keys.home(fan.id)) == [status.id]
    other = await rp.statuses.post(cat.id, "unrelated")
    first = await rp.statuses.boost(bob.id, other.id)
    second = await rp.statuses.boost(ann.id, other.id)  # another boost of the same: skipped
    await rp.drain()
    home = await ids_in(rp, keys.home(fan.id))
    assert first not in home and second not in home  # the original is near the top
    assert home.count(other.id) == 1


async def test_follow_without_reblogs_hides_boosts(rp):
    ann, bob, fan = [await rp.accounts.sign_up(n) for n in ("ann", "bob", "fan")]
    await rp.relations.follow(fan.id, bob.id)
    await follows.set_show_reblogs(rp.store, fan.id, bob.id, False)
    status = await rp.statuses.post(ann.id, "x")
    bid = await rp.statuses.boost(bob.id, status.id)
    await rp.drain()
    assert bid not in await ids_in(rp, keys.home(fan.id))
    assert bid in await ids_in(rp, keys.home(bob.id))


async def test_deleting_the_original_removes_its_boosts_and_notifications(rp):
    ann, bob, fan = [await rp.accounts.sign_up(n) for n in ("ann", "bob", "fan")]
    await rp.relations.follow(fan.id, bob.id)
    status = await rp.statuses.post(ann.id, "soon gone")
    bid = await rp.statuses.boost(bob.id, status.id)
    await rp.statuses.favourite(bob.id, status.id)
    await rp.statuses.delete(status.id, ann.id)
    await rp.drain()
    assert bid not in await ids_in(rp, keys.home(fan.id))
    assert await rp.statuses.get_statuses([bid]) == []
    assert await rp.store.client.zcard(keys.profile(bob.id)) == 0
    with pytest.raises(StatusNotFound):
        await rp.statuses.boost(bob.id, status.id)


async def test_boost_and_delete_racing_leave_no_boost_behind(rp):
    ann = await rp.accounts.sign_up("ann")
    fans = [await rp.accounts.sign_up(f"b{i}") for i in range(20)]
    for round_ in range(5):
        status = await rp.statuses.post(ann.id, f"race {round_}")

        async def try_boost(u):
            try:
                return await rp.statuses.boost(u.id, status.id)
            except StatusNotFound:
                return None

        results = await asyncio.gather(
            rp.statuses.delete(status.id, ann.id), *(try_boost(f) for f in fans)
        )
        await rp.drain()
        made = [bid for bid in results[1:] if bid]
        assert await rp.statuses.get_statuses(made) == []  # every boost made is gone
        for f in fans:
            assert await rp.store.client.zcard(keys.profile(f.id)) == 0


async def test_boosts_racing_each_answer_a_boost_that_exists(rp):
    """The same account boosting a status many times at once (a client
    retrying, the capacity bench under load): every call answers the one
    standing boost, and that boost's status can be read as soon as the call
    returns, though another call is the one writing it."""
    author = await rp.accounts.sign_up("race_author")
    original = await rp.statuses.post(author.id, "boost me at once")
    for n in range(5):
        booster = await rp.accounts.sign_up(f"race_booster{n}")

        async def boost_and_read():
            bid = await rp.statuses.boost(booster.id, original.id)
            return bid, (await rp.statuses.get_status(bid)).reblog_of  # StatusNotFound: early

        got = await asyncio.gather(*(boost_and_read() for _ in range(8)))
        assert len({bid for bid, _ in got}) == 1, got
        assert all(of == original.id for _, of in got), got
