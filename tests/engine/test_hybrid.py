"""Hybrid fan-out and idle users (redpoll.timelines.hybrid): a home
catching up with a large account's statuses when read gives the same pages
as fanned-out ones, through the engine and through a real ``redpoll serve`` read by
Mastodon.py; crossing the threshold both ways; idle users skipped and rebuilt."""

from __future__ import annotations

import asyncio

import pytest
from conftest import flush
from redis.asyncio.cluster import RedisCluster
from support.hybrid import NEVER, home_ids, scenario, walks  # noqa: F401

from redpoll import Redpoll
from redpoll.core import keys, limits
from redpoll.relations import edges
from redpoll.relations.jobs import FollowNoteJob
from redpoll.timelines import placement


@pytest.mark.parametrize("threshold", [0, 3])
async def test_merged_pages_equal_fanned_out_pages(settings, server, srv, threshold):
    got = {}
    for t in (NEVER, threshold):
        flush(server[2])
        rp = await Redpoll.open(settings.with_(fanout_threshold=t))
        try:
            got[t] = await scenario(rp, srv, t)
        finally:
            await rp.close()
    fanned, merged = got[NEVER], got[threshold]
    texts = fanned["texts"]
    # the merge did happen: posting put big1's later statuses in no home
    # (its first, the walk's, is fanned out); the viewer's reads brought
    # them in, each once (its reply to a stranger left out, as fan-out does)
    assert fanned["big_homes"] == (8, 8) and merged["big_homes"] == (1, 8)
    for view in ("viewer", "viewer2", "blocked", "api", "api_counts"):
        assert merged[view] == fanned[view], view
    counts = fanned["api_counts"]
    assert counts[texts["b1 0"]] == (2, 0) and counts[texts["s1 0"]] == (1, 0)
    assert counts[texts["b1 3"]][1] == 1  # small2 boosted it
    # and the pages say what fan-out decides (so "equal" is not "equally wrong")
    shown = [i for p in fanned["viewer"]["down"] for i in p]
    assert len(shown) == len(set(shown))
    assert texts["b1 late 2"] == shown[0]
    for gone in (
        "b1 1",
        "s1 1",
        "@small2 b2 direct",
        "@stranger b1 reply to a stranger",
        "not followed",
    ):
        assert texts[gone] not in shown, gone
    for there in ("b2 private", "@small1 b1 reply to small1", "b1 unlisted", "b3 own"):
        assert texts[there] in shown, there
    assert len(shown) == 23  # with big2's boost of the stranger's status; no other boost
    blocked = [i for p in fanned["blocked"]["down"] for i in p]
    assert texts["b2 0"] not in blocked and texts["b1 0"] in blocked
    api_shown = [i for p in fanned["api"]["down"] for i in p]
    assert texts["s2 0"] not in api_shown  # muted, at the API
    assert fanned["viewer"]["up"][0][-1] == shown[-2]  # the one above the oldest


async def test_crossing_the_threshold_both_ways(settings):
    rp = await Redpoll.open(settings.with_(fanout_threshold=3))  # back below 1.5 followers
    try:
        author = (await rp.accounts.sign_up("grower")).id
        fans = [(await rp.accounts.sign_up(f"gfan{i}")).id for i in range(5)]
        for fan in fans[:2]:
            await rp.relations.follow(fan, author)
        first = (await rp.statuses.post(author, "small still")).id
        for fan in fans[2:]:
            await rp.relations.follow(fan, author)  # 5 > 3
        walker = (await rp.statuses.post(author, "the walk")).id  # still fanned out, marks everyone
        user = await rp.store.client.hget(keys.user(author), keys.FANOUT_MODE_FIELD)
        assert user == b"big"
        for fan in fans:
            assert await rp.store.client.smembers(keys.large_following(fan)) == {
                str(author).encode()
            }
            assert {first, walker} <= set(await home_ids(rp, keys.home(fan)))
        merged = [(await rp.statuses.post(author, f"merged {i}")).id for i in range(3)]
        late = (await rp.accounts.sign_up("late")).id
        await rp.relations.follow(late, author)  # follows a large account: the backfill brings
        # its newest at once, and the follow's job marks it for the read-time merge
        await rp.drain()
        assert await rp.store.client.smembers(keys.large_following(late)) == {str(author).encode()}
        for fan in fans + [late]:
            home = await home_ids(rp, keys.home(fan))
            if fan != late:
                assert not set(merged) & set(home)
            page = [s.id for s in await rp.timelines.home(fan)]
            assert page == [*reversed(merged), walker, first], fan
        for fan in fans[1:] + [late]:
            await rp.relations.unfollow(fan, author)  # 1 follower left: < 1.5
        await rp.drain()
        back = (await rp.statuses.post(author, "fanned out again")).id
        assert await rp.store.client.hget(keys.user(author), keys.FANOUT_MODE_FIELD) is None
        assert not await rp.store.client.smembers(keys.large_following(fans[0]))
        home = await home_ids(rp, keys.home(fans[0]))
        assert home == [back, *reversed(merged), walker, first]  # once each, in the home now
        assert [s.id for s in await rp.timelines.home(fans[0])] == home
        assert [s.id for s in await rp.timelines.home(fans[1])] == []  # unfollowed
    finally:
        await rp.close()


async def test_a_post_by_a_large_author_writes_o1(settings):
    """The posting call of a large author touches its own home and the
    public timeline, not its followers' homes, however many they are."""
    rp = await Redpoll.open(settings.with_(fanout_threshold=10, fanout_batch=7))
    try:
        author = (await rp.accounts.sign_up("star")).id
        fans = [(await rp.accounts.sign_up(f"sfan{i}")).id for i in range(30)]
        for fan in fans:
            await rp.relations.follow(fan, author)
        await rp.statuses.post(author, "walk")  # marks the 30 (several batches, jobs)
        await rp.drain()
        sid = (await rp.statuses.post(author, "cheap")).id
        assert await rp.queue.depth() == 0  # no continuation of its fan-out
        for fan in fans:
            assert sid not in await home_ids(rp, keys.home(fan))
            assert (await rp.timelines.home(fan, limit=1))[0].id == sid
        assert (await home_ids(rp, keys.home(author)))[0] == sid
        assert (await home_ids(rp, placement.of(rp.store).public_key(sid)))[0] == sid
    finally:
        await rp.close()


async def test_idle_users_are_skipped_then_rebuilt(settings):
    rp = await Redpoll.open(settings.with_(idle_after_s=1))
    try:
        author = (await rp.accounts.sign_up("poster")).id
        other = (await rp.accounts.sign_up("poster2")).id
        idle = (await rp.accounts.sign_up("sleeper")).id
        active = (await rp.accounts.sign_up("reader")).id
        unknown = (await rp.accounts.sign_up("never")).id  # never read: not known to be idle
        for fan in (idle, active, unknown):
            await rp.relations.follow(fan, author)
            await rp.relations.follow(fan, other)
        before = (await rp.statuses.post(author, "before")).id
        await rp.timelines.home(idle)
        await asyncio.sleep(1.2)
        await rp.timelines.home(active)  # read lately: not idle
        missed = [
            (await rp.statuses.post(author, "missed 1")).id,
            (await rp.statuses.post(other, "missed other")).id,
            (await rp.statuses.post(author, "missed 2")).id,
        ]
        await rp.drain()
        # skipped by fan-out, and the home dropped once (its score marks it)
        assert not await rp.store.client.exists(keys.home(idle))
        assert await rp.store.client.zscore(keys.HOME_SEEN, idle) < 0
        for fan in (active, unknown):
            assert await home_ids(rp, keys.home(fan)) == [*reversed(missed), before]
        page = [s.id for s in await rp.timelines.home(idle)]  # back: rebuilt first
        assert page == [*reversed(missed), before]
        assert await home_ids(rp, keys.home(idle)) == page
        assert await rp.store.client.zscore(keys.HOME_SEEN, idle) > 0
        newest = (await rp.statuses.post(author, "now active")).id
        assert (await home_ids(rp, keys.home(idle)))[0] == newest  # fanned out again
    finally:
        await rp.close()


def test_settings_name_the_threshold_and_the_idle_period():
    from redpoll import Settings
    from redpoll.core.errors import ConfigError

    s = Settings.from_env({"REDPOLL_FANOUT_THRESHOLD": "0", "REDPOLL_IDLE_AFTER_S": "60"})
    assert (s.fanout_threshold, s.idle_after_s) == (0, 60)
    d = Settings.from_env({})
    assert (d.fanout_threshold, d.idle_after_s) == (limits.FANOUT_THRESHOLD, limits.IDLE_AFTER_S)
    with pytest.raises(ConfigError, match="REDPOLL_IDLE_AFTER_S"):
        Settings.from_env({"REDPOLL_IDLE_AFTER_S": "0"})


async def test_a_user_back_while_fan_out_drops_idle_homes_keeps_theirs(settings):
    """The shared record says idle, the user's own (written first when they
    read) says not: the drop, atomic with that check, leaves the home, and
    the shared record is not marked."""
    rp = await Redpoll.open(settings.with_(idle_after_s=1))
    try:
        author = (await rp.accounts.sign_up("poster")).id
        back, gone = (await rp.accounts.sign_up("back")).id, (await rp.accounts.sign_up("gone")).id
        for fan in (back, gone):
            await rp.relations.follow(fan, author)
        first = (await rp.statuses.post(author, "first")).id
        long_ago = 1_000
        await rp.store.client.zadd(keys.HOME_SEEN, {back: long_ago, gone: long_ago})
        await rp.store.client.set(keys.home_read(gone), long_ago)
        await rp.store.client.set(keys.home_read(back), 2**50)  # read just now, elsewhere
        second = (await rp.statuses.post(author, "second")).id
        assert await home_ids(rp, keys.home(back)) == [first]  # skipped, kept
        assert not await rp.store.client.exists(keys.home(gone))
        assert await rp.store.client.zscore(keys.HOME_SEEN, back) == long_ago
        assert await rp.store.client.zscore(keys.HOME_SEEN, gone) == -long_ago
        for fan in (back, gone):
            assert [s.id for s in await rp.timelines.home(fan)] == [second, first]
    finally:
        await rp.close()


async def test_a_follow_cut_short_is_marked_by_its_replayed_journal(settings):
    """A follow of a large account whose call died after the edge was
    written: its journal's replay adds the account to the follower's large
    set, so the follower's home merges it."""
    rp = await Redpoll.open(settings.with_(fanout_threshold=1))
    try:
        star = (await rp.accounts.sign_up("star")).id
        for i in range(2):
            await rp.relations.follow((await rp.accounts.sign_up(f"f{i}")).id, star)
        sid = (await rp.statuses.post(star, "walks, then big")).id
        late = (await rp.accounts.sign_up("late")).id
        await edges.add(rp.store, edges.follow_edge(late, star))  # the call died here
        assert not await rp.store.client.smembers(keys.large_following(late))
        await rp.queue.enqueue(FollowNoteJob(late, star))
        await rp.drain()
        assert await rp.store.client.smembers(keys.large_following(late)) == {str(star).encode()}
        newer = (await rp.statuses.post(star, "merged")).id
        assert [s.id for s in await rp.timelines.home(late)] == [newer, sid]
    finally:
        await rp.close()


async def large_setup(rp, name: str):
    """A large account (threshold 1, two followers: the walk made it large)
    and the reader following it; its first status came in by the walk."""
    big = (await rp.accounts.sign_up(f"{name}big")).id
    reader = (await rp.accounts.sign_up(f"{name}reader")).id
    other = (await rp.accounts.sign_up(f"{name}other")).id
    for fan in (reader, other):
        await rp.relations.follow(fan, big)
    walk = (await rp.statuses.post(big, "the walk")).id
    await rp.drain()
    assert await rp.store.client.smembers(keys.large_following(reader)) == {str(big).encode()}
    return big, reader, walk


async def profile_reads(rp) -> int:
    """ZRANGE calls the server(s) counted so far (scripts' own included):
    reading a profile is one."""
    kw = {"target_nodes": RedisCluster.PRIMARIES} if rp.settings.cluster else {}
    info = await rp.store.info("commandstats", **kw)
    nodes = info.values() if rp.settings.cluster else [info]
    return sum(node.get("cmdstat_zrange", {}).get("calls", 0) for node in nodes)


async def test_a_page_reads_a_large_accounts_news_once(settings):
    """A page learns in its own round trip which large accounts posted since
    the home caught up (their 'pseq' against the home's marks); it catches
    up once, and the pages after read no profile until the account posts."""
    rp = await Redpoll.open(settings.with_(fanout_threshold=1))
    try:
        big, reader, walk = await large_setup(rp, "news")
        r = rp.store.client
        posted = [(await rp.statuses.post(big, f"news {i}")).id for i in range(3)]
        await rp.drain()
        before = await profile_reads(rp)
        assert [s.id for s in await rp.timelines.home(reader)] == [*reversed(posted), walk]
        assert await profile_reads(rp) > before  # the news read
        assert await home_ids(rp, keys.home(reader)) == [*reversed(posted), walk]
        seq = await r.hget(keys.user(big), "pseq")
        assert await r.hget(keys.large_marks(reader), big) == seq
        before = await profile_reads(rp)
        for _ in range(3):  # nothing new: no profile read, nothing written
            assert [s.id for s in await rp.timelines.home(reader)] == [*reversed(posted), walk]
        assert await profile_reads(rp) == before
        newer = (await rp.statuses.post(big, "one more")).id
        await rp.drain()
        assert (await rp.timelines.home(reader, limit=1))[0].id == newer
        assert await home_ids(rp, keys.home(reader)) == [newer, *reversed(posted), walk]
        assert await r.hget(keys.large_marks(reader), big) == await r.hget(keys.user(big), "pseq")
    finally:
        await rp.close()


async def test_a_catch_up_repeated_leaves_each_status_once(settings):
    """A catch-up writes the home before the marks: one cut short between
    the two (on a cluster, or a script stopped by an error) leaves the
    statuses in and the marks behind, and the next page catches up again
    (idempotent): each status once, the marks moved."""
    rp = await Redpoll.open(settings.with_(fanout_threshold=1))
    try:
        big, reader, walk = await large_setup(rp, "again")
        r = rp.store.client
        old = await r.hget(keys.user(big), "pseq")
        await r.hset(keys.large_marks(reader), big, old)
        posted = [(await rp.statuses.post(big, f"again {i}")).id for i in range(2)]
        await rp.drain()
        page = [s.id for s in await rp.timelines.home(reader)]
        assert page == [*reversed(posted), walk]
        await r.hset(keys.large_marks(reader), big, old)  # the marks' write lost
        assert [s.id for s in await rp.timelines.home(reader)] == page
        assert await home_ids(rp, keys.home(reader)) == page
        assert await r.hget(keys.large_marks(reader), big) == await r.hget(keys.user(big), "pseq")
    finally:
        await rp.close()


async def test_unfollowing_a_large_account_takes_what_came_in_out(settings):
    rp = await Redpoll.open(settings.with_(fanout_threshold=1))
    try:
        big, reader, walk = await large_setup(rp, "unf")
        sid = await rp.statuses.post(big, "caught up with")
        await rp.drain()
        assert [s.id for s in await rp.timelines.home(reader)] == [sid.id, walk]
        await rp.relations.unfollow(reader, big)
        await rp.drain()
        assert await home_ids(rp, keys.home(reader)) == []
        assert not await rp.store.client.hgetall(keys.large_marks(reader))
        assert not await rp.store.client.smembers(keys.large_following(reader))
        await rp.statuses.post(big, "after the unfollow")
        await rp.drain()
        assert await rp.timelines.home(reader) == []
    finally:
        await rp.close()


async def test_a_status_recorded_after_a_newer_one_still_comes_in(settings):
    """Ids are taken before the profile write, so an author's status can
    reach their profile after a newer one did (two posts at once). A home
    that caught up in between reads limits.CATCH_UP_OVERLAP ids below the
    news, and so still finds the older one."""
    rp = await Redpoll.open(settings.with_(fanout_threshold=1))
    try:
        big, reader, walk = await large_setup(rp, "late")
        older = (await rp.statuses.post(big, "older, recorded late")).id
        newer = (await rp.statuses.post(big, "newer, recorded first")).id
        await rp.drain()
        r = rp.store.client
        # as it stood between the two profile writes: the older not recorded yet
        await r.zrem(keys.profile(big), older)
        await r.hincrby(keys.user(big), "pseq", -1)
        assert [s.id for s in await rp.timelines.home(reader)] == [newer, walk]
        await r.zadd(keys.profile(big), {older: older})  # its record_post now
        await r.hincrby(keys.user(big), "pseq", 1)
        assert [s.id for s in await rp.timelines.home(reader)] == [newer, older, walk]
    finally:
        await rp.close()


async def test_a_catch_up_keeps_the_homes_cap(settings, monkeypatch):
    """A home with no mark yet (a rebuilt idle home) catches up with up to
    CATCH_UP_PER_ACCOUNT ids of each account, more than its cap: it ends
    at its cap, with the newest."""
    monkeypatch.setattr(limits, "HOME_CAP", 4)
    rp = await Redpoll.open(settings.with_(fanout_threshold=1))
    try:
        big, reader, walk = await large_setup(rp, "cap")
        posted = [(await rp.statuses.post(big, f"cap {i}")).id for i in range(6)]
        await rp.drain()
        await rp.store.client.delete(keys.large_marks(reader))  # as a rebuild leaves it
        page = [s.id for s in await rp.timelines.home(reader)]
        assert page == posted[::-1][:4]
        assert await home_ids(rp, keys.home(reader)) == page
    finally:
        await rp.close()


async def test_an_idle_user_back_gets_both_their_large_and_their_small_accounts(settings):
    """An idle user's home was dropped by fan-out; while they were away a
    small account and a large one posted. Their first page rebuilds the
    home from the small one and catches up with the large one: both show."""
    rp = await Redpoll.open(settings.with_(fanout_threshold=1, idle_after_s=1))
    try:
        big, reader, walk = await large_setup(rp, "idle")
        small = (await rp.accounts.sign_up("idlesmall")).id
        await rp.relations.follow(reader, small)
        await rp.timelines.home(reader)  # read, then away
        await asyncio.sleep(1.2)
        missed = (await rp.statuses.post(small, "while away")).id  # skipped: the home dropped
        await rp.drain()
        assert not await rp.store.client.exists(keys.home(reader))
        later = (await rp.statuses.post(big, "large, later")).id
        await rp.drain()
        page = [s.id for s in await rp.timelines.home(reader)]
        assert page == [later, missed, walk]
    finally:
        await rp.close()


async def test_a_boost_caught_up_with_counts_for_later_boosts(settings):
    """A large account's boost that a home caught up with is, for fan-out's
    recent-window check, a boost the home holds: a small account's boost of
    the same status right after is left out, as when both are fanned out."""
    pages = {}
    for t in (NEVER, 1):
        rp = await Redpoll.open(settings.with_(fanout_threshold=t))
        try:
            tag = f"b{t % 7}"
            big = (await rp.accounts.sign_up(f"{tag}big")).id
            small = (await rp.accounts.sign_up(f"{tag}small")).id
            stranger = (await rp.accounts.sign_up(f"{tag}stranger")).id
            reader = (await rp.accounts.sign_up(f"{tag}reader")).id
            other = (await rp.accounts.sign_up(f"{tag}other")).id
            for fan in (reader, other):
                await rp.relations.follow(fan, big)
            await rp.relations.follow(reader, small)
            await rp.statuses.post(big, "the walk")
            original = (await rp.statuses.post(stranger, "boosted twice")).id
            first = await rp.statuses.boost(big, original)
            await rp.drain()
            await rp.timelines.home(reader)  # the catch-up (large) or nothing new (fanned out)
            await rp.statuses.boost(small, original)
            await rp.drain()
            page = await rp.timelines.home(reader)
            # one boost of it, the first: the second one left out
            pages[t] = [(s.id == first, s.extra.get("reblog_of") == str(original)) for s in page]
            assert pages[t][0] == (True, True), t
        finally:
            await rp.close()
    assert pages[1] == pages[NEVER]
