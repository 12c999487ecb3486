"""Following and unfollowing: backfill, removal, refill, counters, paging and
the two-sided edge protocol under concurrent calls."""

from __future__ import annotations

import asyncio
import random

import pytest

from redpoll.core import keys, limits
from redpoll.core.errors import UserNotFound, ValidationError
from redpoll.relations import follows
from redpoll.relations.jobs import FollowNoteJob


async def raw_home(rp, uid) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(keys.home(uid), 0, -1)]


async def zmembers(rp, key) -> set[int]:
    return {int(x) for x in await rp.store.client.zrange(key, 0, -1)}


async def assert_counters_match(rp, uid) -> None:
    user = await rp.accounts.get_user(uid)
    client = rp.store.client
    assert user.following == await client.zcard(keys.following(uid))
    assert user.followers == await client.zcard(keys.followers(uid))


async def post_many(rp, uid, n, prefix="s") -> list[int]:
    return [(await rp.statuses.post(uid, f"{prefix} {i}")).id for i in range(n)]


# --- follow ---------------------------------------------------------------------


async def test_follow_backfills_newest_first_merged_with_existing(rp):
    alice = await rp.accounts.sign_up("alice")
    bob = await rp.accounts.sign_up("bob")
    carol = await rp.accounts.sign_up("carol")
    # interleave so the merge has to put carol's ids between bob's
    bob_ids, carol_ids, own = [], [], []
    for i in range(5):
        bob_ids.append((await rp.statuses.post(bob.id, f"b{i}")).id)
        carol_ids.append((await rp.statuses.post(carol.id, f"c{i}")).id)
        own.append((await rp.statuses.post(alice.id, f"a{i}")).id)
    assert await raw_home(rp, alice.id) == sorted(own, reverse=True)

    assert await rp.relations.follow(alice.id, bob.id) is True
    assert await raw_home(rp, alice.id) == sorted(own + bob_ids, reverse=True)

    assert await rp.relations.follow(alice.id, carol.id) is True
    expected = sorted(own + bob_ids + carol_ids, reverse=True)
    assert await raw_home(rp, alice.id) == expected
    page = await rp.timelines.home(alice.id, limit=40)
    assert [s.id for s in page] == expected
    assert await rp.relations.is_following(alice.id, bob.id)
    assert not await rp.relations.is_following(bob.id, alice.id)


async def test_follow_backfill_is_trimmed_to_home_cap(rp):
    reader = await rp.accounts.sign_up("reader")
    big = await rp.accounts.sign_up("big")
    small = await rp.accounts.sign_up("small")
    # posted concurrently: nobody follows them yet, so only ids matter
    big_ids = []
    for chunk in range(0, limits.HOME_CAP + 50, 100):
        posted = await asyncio.gather(
            *(rp.statuses.post(big.id, f"big {chunk + i}") for i in range(100))
        )
        big_ids += [s.id for s in posted]
    small_ids = await post_many(rp, small.id, 30, "small")

    await rp.relations.follow(reader.id, small.id)
    await rp.relations.follow(reader.id, big.id)
    home = await raw_home(rp, reader.id)
    assert len(home) == limits.HOME_CAP
    assert home == sorted(big_ids + small_ids, reverse=True)[: limits.HOME_CAP]
    assert len(set(home)) == len(home)
    # small's statuses are all newer than big's, so they survive the trim
    assert set(small_ids) <= set(home)


async def test_follow_twice_is_a_noop(rp):
    a = await rp.accounts.sign_up("a")
    b = await rp.accounts.sign_up("b")
    s = await rp.statuses.post(b.id, "once")
    assert await rp.relations.follow(a.id, b.id) is True
    score = await rp.store.client.zscore(keys.following(a.id), b.id)
    assert await rp.relations.follow(a.id, b.id) is False
    assert (await rp.accounts.get_user(a.id)).following == 1
    assert (await rp.accounts.get_user(b.id)).followers == 1
    # the edge keeps its original time (paging cursors stay stable)
    assert await rp.store.client.zscore(keys.following(a.id), b.id) == score
    assert (await raw_home(rp, a.id)).count(s.id) == 1
    await assert_counters_match(rp, a.id)
    await assert_counters_match(rp, b.id)


async def test_follow_note_job_syncs_only_for_its_own_follow(rp):
    """The follow's journal is released in the round trip of the change,
    before the call knows whether the follow is new: the queued job names the
    follow's score (FollowNoteJob.since) and a worker syncs the notification
    only for that follow (following again costs the worker no sync); a
    journal taken over (since 0) always syncs."""
    a = await rp.accounts.sign_up("a")
    b = await rp.accounts.sign_up("b")
    assert await rp.relations.follow(a.id, b.id) is True
    await rp.drain()
    assert [n.type for n in await rp.notifications.listed(b.id)] == ["follow"]
    # a sync draws an operation id (notifications.sync_follow): none drawn
    ops = await rp.store.client.get(keys.INTERACTION_SEQ)
    assert await rp.relations.follow(a.id, b.id) is False
    await rp.drain()
    assert await rp.store.client.get(keys.INTERACTION_SEQ) == ops
    assert [n.type for n in await rp.notifications.listed(b.id)] == ["follow"]
    score = int(await rp.store.client.zscore(keys.following(a.id), b.id))
    assert await follows.note_due(rp.store, FollowNoteJob(a.id, b.id, since=score))
    assert not await follows.note_due(rp.store, FollowNoteJob(a.id, b.id, since=score + 1))
    assert await follows.note_due(rp.store, FollowNoteJob(a.id, b.id))
    assert not await follows.note_due(rp.store, FollowNoteJob(b.id, a.id, since=1))  # no follow
    # unfollowed and followed again: a new follow, notified again
    assert await rp.relations.unfollow(a.id, b.id) is True
    await rp.drain()
    assert [n.type for n in await rp.notifications.listed(b.id)] == []
    assert await rp.relations.follow(a.id, b.id) is True
    await rp.drain()
    assert [n.type for n in await rp.notifications.listed(b.id)] == ["follow"]


async def test_follow_or_unfollow_self_is_rejected_and_writes_nothing(rp):
    a = await rp.accounts.sign_up("a")
    await rp.statuses.post(a.id, "mine")
    before = await raw_home(rp, a.id)
    with pytest.raises(ValidationError):
        await rp.relations.follow(a.id, a.id)
    with pytest.raises(ValidationError):
        await rp.relations.unfollow(a.id, str(a.id))
    client = rp.store.client
    assert not await client.exists(keys.following(a.id), keys.followers(a.id))
    user = await rp.accounts.get_user(a.id)
    assert (user.following, user.followers) == (0, 0)
    assert await raw_home(rp, a.id) == before
    assert await rp.queue.depth() == 0


@pytest.mark.parametrize("bad", [0, -1, "x", "1.5", None, True, 2**53, "٣"])
async def test_follow_bad_ids_are_validation_errors(rp, bad):
    a = await rp.accounts.sign_up("a")
    with pytest.raises(ValidationError):
        await rp.relations.follow(a.id, bad)
    with pytest.raises(ValidationError):
        await rp.relations.follow(bad, a.id)
    with pytest.raises(ValidationError):
        await rp.relations.unfollow(a.id, bad)
    assert (await rp.accounts.get_user(a.id)).following == 0


async def test_follow_unknown_user_leaves_no_trace(rp):
    a = await rp.accounts.sign_up("a")
    b = await rp.accounts.sign_up("b")
    await rp.relations.follow(a.id, b.id)
    home_before = await raw_home(rp, a.id)
    ghost = b.id + 1000
    with pytest.raises(UserNotFound):
        await rp.relations.follow(a.id, ghost)
    assert await zmembers(rp, keys.following(a.id)) == {b.id}
    assert not await rp.store.client.exists(keys.followers(ghost), keys.user(ghost))
    assert (await rp.accounts.get_user(a.id)).following == 1
    assert await raw_home(rp, a.id) == home_before
    await assert_counters_match(rp, a.id)

    # an unknown follower is refused before anything is written on b's side
    with pytest.raises(UserNotFound):
        await rp.relations.follow(ghost, b.id)
    assert await zmembers(rp, keys.followers(b.id)) == {a.id}
    assert (await rp.accounts.get_user(b.id)).followers == 1
    assert not await rp.store.client.exists(keys.following(ghost))


# --- unfollow ---------------------------------------------------------------------


async def test_unfollow_removes_at_once_then_refill_job_refills(rp):
    a = await rp.accounts.sign_up("a")
    b = await rp.accounts.sign_up("b")
    c = await rp.accounts.sign_up("c")
    await rp.relations.follow(a.id, b.id)
    await rp.relations.follow(a.id, c.id)
    b_ids, c_ids = [], []
    for i in range(4):
        b_ids.append((await rp.statuses.post(b.id, f"b{i}")).id)
        c_ids.append((await rp.statuses.post(c.id, f"c{i}")).id)
    own = (await rp.statuses.post(a.id, "own")).id
    await rp.drain()
    assert set(await raw_home(rp, a.id)) == set(b_ids + c_ids + [own])

    assert await rp.relations.unfollow(a.id, b.id) is True
    # at once, before any job ran
    home = await raw_home(rp, a.id)
    assert home == sorted(c_ids + [own], reverse=True)
    assert not set(home) & set(b_ids)
    assert [s.id for s in await rp.timelines.home(a.id)] == home
    assert not await rp.relations.is_following(a.id, b.id)
    assert a.id not in await zmembers(rp, keys.followers(b.id))
    assert await rp.queue.depth() >= 1  # the refill job

    await rp.drain()
    assert await rp.queue.depth() == 0
    assert await raw_home(rp, a.id) == sorted(c_ids + [own], reverse=True)
    for uid in (a.id, b.id, c.id):
        await assert_counters_match(rp, uid)
    assert (await rp.accounts.get_user(a.id)).following == 1
    assert (await rp.accounts.get_user(b.id)).followers == 0


async def test_unfollow_refill_brings_back_older_statuses_of_others(rp):
    """A home full of one followee's statuses is emptied by unfollowing them;
    the refill job then fills it from the others, oldest included."""
    a = await rp.accounts.sign_up("a")
    loud = await rp.accounts.sign_up("loud")
    quiet = await rp.accounts.sign_up("quiet")
    await rp.relations.follow(a.id, quiet.id)
    quiet_ids = await post_many(rp, quiet.id, 5, "quiet")
    await rp.relations.follow(a.id, loud.id)
    loud_ids = []
    for chunk in range(0, limits.HOME_CAP, 100):
        posted = await asyncio.gather(
            *(rp.statuses.post(loud.id, f"loud {chunk + i}") for i in range(100))
        )
        loud_ids += [s.id for s in posted]
    await rp.drain()
    home = await raw_home(rp, a.id)
    assert home == sorted(loud_ids, reverse=True)  # quiet's were pushed out by the cap

    await rp.relations.unfollow(a.id, loud.id)
    assert await raw_home(rp, a.id) == []
    await rp.drain()
    assert await raw_home(rp, a.id) == sorted(quiet_ids, reverse=True)


async def test_unfollow_stranger_is_a_noop(rp):
    a = await rp.accounts.sign_up("a")
    b = await rp.accounts.sign_up("b")
    s = await rp.statuses.post(b.id, "hi")
    assert await rp.relations.unfollow(a.id, b.id) is False
    assert await rp.queue.depth() == 0
    assert (await rp.accounts.get_user(a.id)).following == 0
    assert (await rp.accounts.get_user(b.id)).followers == 0
    await rp.relations.follow(a.id, b.id)
    assert await rp.relations.unfollow(a.id, b.id) is True
    assert await rp.relations.unfollow(a.id, b.id) is False
    await rp.drain()
    assert s.id not in await raw_home(rp, a.id)
    for uid in (a.id, b.id):
        await assert_counters_match(rp, uid)


async def test_unfollow_unknown_user_is_a_noop_or_not_found(rp):
    a = await rp.accounts.sign_up("a")
    # either answer is acceptable; what matters is that nothing is written
    try:
        result = await rp.relations.unfollow(a.id, a.id + 500)
    except UserNotFound:
        result = False
    assert result is False
    assert not await rp.store.client.exists(keys.followers(a.id + 500), keys.user(a.id + 500))
    await assert_counters_match(rp, a.id)


async def test_refollow_after_unfollow_restores_home(rp):
    a = await rp.accounts.sign_up("a")
    b = await rp.accounts.sign_up("b")
    ids = await post_many(rp, b.id, 6)
    await rp.relations.follow(a.id, b.id)
    await rp.relations.unfollow(a.id, b.id)
    await rp.drain()
    assert await raw_home(rp, a.id) == []
    assert await rp.relations.follow(a.id, b.id) is True
    assert await raw_home(rp, a.id) == sorted(ids, reverse=True)
    await assert_counters_match(rp, a.id)
    await assert_counters_match(rp, b.id)


# --- paging -------------------------------------------------------------------------


async def test_followers_and_following_paging(rp):
    star = await rp.accounts.sign_up("star")
    fans = [await rp.accounts.sign_up(f"fan{i}") for i in range(45)]
    for fan in fans:  # sequential, so the follow times order them
        await rp.relations.follow(fan.id, star.id)
    seen, cursor, pages = [], None, 0
    while True:
        users, cursor = await rp.relations.followers(star.id, max_score=cursor, limit=20)
        if not users:
            assert cursor is None
            break
        assert len(users) <= 20
        seen += [u.id for u in users]
        pages += 1
    assert pages == 3
    assert seen == [f.id for f in reversed(fans)]  # newest follow first, no repeats

    follower = fans[0]
    targets = [await rp.accounts.sign_up(f"t{i}") for i in range(7)]
    for t in targets:
        await rp.relations.follow(follower.id, t.id)
    first, cur = await rp.relations.following(follower.id, limit=4)
    second, cur2 = await rp.relations.following(follower.id, max_score=cur, limit=4)
    rest, cur3 = await rp.relations.following(follower.id, max_score=cur2, limit=4)
    expected = [t.id for t in reversed(targets)] + [star.id]
    assert [u.id for u in first + second] == expected
    assert rest == [] and cur3 is None
    # the page size is bounded, not an error
    big, _ = await rp.relations.followers(star.id, limit=1000)
    assert len(big) == limits.PAGE_MAX
    with pytest.raises(ValidationError):
        await rp.relations.followers(star.id, limit=0)


# --- concurrency ------------------------------------------------------------------


async def test_follow_storm_keeps_both_sides_and_counters_consistent(rp):
    rng = random.Random(7)
    users = [await rp.accounts.sign_up(f"u{i}") for i in range(14)]
    uids = [u.id for u in users]
    posted: dict[int, set[int]] = {}
    for uid in uids[:8]:
        posted[uid] = set(await post_many(rp, uid, 2, f"by {uid}"))
    for uid in uids[8:]:
        posted[uid] = set()

    pairs = [(a, b) for a in uids for b in uids if a != b]
    hot = rng.sample(pairs, 6)  # these pairs flip back and forth concurrently
    calls = []
    for _ in range(420):
        a, b = rng.choice(hot) if rng.random() < 0.4 else rng.choice(pairs)
        calls.append(
            rp.relations.follow(a, b) if rng.random() < 0.55 else rp.relations.unfollow(a, b)
        )
    for a, b in hot:  # the same pair, both ways, in flight at the same moment
        calls += [
            rp.relations.follow(a, b),
            rp.relations.unfollow(a, b),
            rp.relations.follow(a, b),
            rp.relations.unfollow(a, b),
        ]
    rng.shuffle(calls)
    # The store's pool holds 256 connections per node and fails fast beyond
    # that (redis MaxConnectionsError), so keep in flight just under it.
    gate = asyncio.Semaphore(200)

    async def gated(call):
        async with gate:
            return await call

    results = await asyncio.wait_for(
        asyncio.gather(*(gated(c) for c in calls), return_exceptions=True), 120
    )
    errors = [r for r in results if isinstance(r, BaseException)]
    assert errors == []

    client = rp.store.client
    following = {uid: await zmembers(rp, keys.following(uid)) for uid in uids}
    followers = {uid: await zmembers(rp, keys.followers(uid)) for uid in uids}
    for uid in uids:
        user = await rp.accounts.get_user(uid)
        assert user.following == len(following[uid]) == await client.zcard(keys.following(uid))
        assert user.followers == len(followers[uid]) == await client.zcard(keys.followers(uid))
    for a, b in pairs:
        assert (b in following[a]) == (a in followers[b]), (a, b)
    assert sum(len(s) for s in following.values()) > 0

    # timelines agree with the final edges once the refill jobs have run
    await rp.drain()
    for a in uids:
        want = set(posted[a]).union(*(posted[b] for b in following[a]))
        home = await raw_home(rp, a)
        assert len(home) == len(set(home))
        assert set(home) == want, a
        assert home == sorted(home, reverse=True)


async def test_follows_after_the_server_lost_its_scripts(rp, server):
    """A restarted server has no scripts cached: concurrent follows reload
    them and each still reports a new follow exactly once."""
    import redis as sync_redis

    from redpoll.storage.server import EmbeddedCluster

    handle = server[2]
    for node in handle.nodes if isinstance(handle, EmbeddedCluster) else [handle]:
        sync_redis.Redis(port=node.port).script_flush()
    star = await rp.accounts.sign_up("scriptless_star")
    fans = [await rp.accounts.sign_up(f"scriptless{i}") for i in range(20)]
    results = await asyncio.gather(*(rp.relations.follow(f.id, star.id) for f in fans))
    assert results == [True] * len(fans)
    assert (await rp.accounts.get_user(star.id)).followers == len(fans)


async def test_follow_backfill_and_refill_leave_out_direct_statuses(rp):
    """A direct status goes to its mentioned users only: neither a new
    follower's backfill nor the refill after an unfollow puts it in a home
    (reads would hide it, but the home list must not hold it either)."""
    a, b, c, friend = [await rp.accounts.sign_up(n) for n in ("dfa", "dfb", "dfc", "dff")]
    public = await rp.statuses.post(b.id, "for all")
    direct = await rp.statuses.post(b.id, f"@{friend.login} just you", {"visibility": "direct"})
    await rp.drain()
    assert await rp.relations.follow(a.id, b.id) is True
    home = await raw_home(rp, a.id)
    assert public.id in home and direct.id not in home
    # the refill after an unfollow of another account reads b's profile again
    await rp.relations.follow(a.id, c.id)
    await post_many(rp, c.id, 3, "c")
    await rp.drain()
    assert await rp.relations.unfollow(a.id, c.id) is True
    await rp.drain()
    home = await raw_home(rp, a.id)
    assert public.id in home and direct.id not in home
    # the mentioned friend has it; the author too
    assert direct.id in await raw_home(rp, friend.id)
    assert direct.id in await raw_home(rp, b.id)
    # deleted: it leaves the author's index of ruled statuses with its profile
    ruled = keys.ruled_posts(b.id)
    assert direct.id in {
        int(s) for _, s in await rp.store.client.zrange(ruled, 0, -1, withscores=True)
    }
    await rp.statuses.delete(direct.id, b.id)
    await rp.drain()
    assert direct.id not in {
        int(s) for _, s in await rp.store.client.zrange(ruled, 0, -1, withscores=True)
    }
