"""The home rule (redpoll.timelines.home_rule): the pure decision, and every
way a status enters a home or a list asking it the same way: push, the
follow's backfill, the refill after an unfollow, the idle rebuild, a list's
push and backfill (Mastodon's FeedManager applies filter_from_home on
merge_into_home and populate_home as on a push)."""

from __future__ import annotations

import asyncio

import pytest

from redpoll import Redpoll
from redpoll.core import keys, limits
from redpoll.core.models import DIRECT, PRIVATE, PUBLIC, UNLISTED
from redpoll.timelines.home_rule import (
    EMPTY,
    MENTION,
    TAG,
    Batch,
    Candidate,
    Facts,
    boosts_to_drop,
    decide,
    in_home,
    in_list,
    reaches_followers,
)

V, A, B, O = 10, 20, 30, 40  # viewer (or list owner), author, another account, owner


# --- the decision itself -----------------------------------------------------------------
def test_a_plain_status_enters_and_a_direct_one_only_its_authors_home():
    assert in_home(Candidate(1, A), V, EMPTY)
    assert in_home(Candidate(1, A, UNLISTED), V, EMPTY)
    assert in_home(Candidate(1, A, PRIVATE), V, EMPTY)  # followers see private
    assert not in_home(Candidate(1, A, DIRECT), V, EMPTY)
    assert in_home(Candidate(1, V, DIRECT), V, EMPTY)  # one's own
    assert not reaches_followers(Candidate(1, A, DIRECT))
    assert reaches_followers(Candidate(1, A, PRIVATE, B, None))


def test_a_mention_reaches_the_mentioned_whatever_its_visibility_but_not_across_a_block():
    blocked = Facts(blocks=frozenset({A}))
    for visibility in (PUBLIC, UNLISTED, PRIVATE, DIRECT):
        assert in_home(Candidate(1, A, visibility, reason=MENTION), V, EMPTY), visibility
        assert not in_home(Candidate(1, A, visibility, reason=MENTION), V, blocked), visibility
    # a reply to an account the mentioned does not follow: the mention decides
    assert in_home(Candidate(1, A, PUBLIC, B, reason=MENTION), V, EMPTY)
    assert in_home(Candidate(1, V, DIRECT, reason=MENTION), V, blocked)  # one's own


def test_a_followed_hashtag_brings_public_statuses_only_and_not_across_a_block():
    assert in_home(Candidate(1, A, PUBLIC, reason=TAG), V, EMPTY)
    for visibility in (UNLISTED, PRIVATE, DIRECT):
        assert not in_home(Candidate(1, A, visibility, reason=TAG), V, EMPTY), visibility
    assert not in_home(Candidate(1, A, PUBLIC, reason=TAG), V, Facts(blocks=frozenset({A})))
    assert not in_home(Candidate(1, A, PUBLIC, None, 9, reason=TAG), V, EMPTY)  # a boost


def test_a_reply_enters_where_the_account_replied_to_is_followed_or_the_viewer():
    reply = Candidate(1, A, replies_to=B)
    assert not in_home(reply, V, EMPTY)
    assert in_home(reply, V, Facts(follows=frozenset({B})))
    assert in_home(Candidate(1, A, replies_to=V), V, EMPTY)  # a reply to me
    assert in_home(Candidate(1, V, replies_to=B), V, EMPTY)  # my own reply


def test_a_boost_is_left_out_for_a_hidden_booster_and_inside_the_window():
    boost = Candidate(5, A, reblog_of=1)
    assert in_home(boost, V, EMPTY)
    assert not in_home(boost, V, Facts(hidden=frozenset({A})))
    assert in_home(Candidate(5, V, reblog_of=1), V, Facts(hidden=frozenset({V})))  # own
    assert not in_home(boost, V, Facts(window={5: frozenset({1})}))  # original below
    other = Facts(window={5: frozenset({3})}, boosts_of={1: frozenset({3})})
    assert not in_home(boost, V, other)  # another boost of it below
    assert in_home(boost, V, Facts(window={5: frozenset({3})}, boosts_of={1: frozenset({4})}))
    assert in_home(boost, V, Facts(window={5: frozenset({5})}, boosts_of={1: frozenset({5})}))


def test_a_list_takes_replies_to_its_owner_or_to_followed_members():
    reply = Candidate(1, A, replies_to=B)
    assert not in_list(reply, O, EMPTY)
    assert not in_list(reply, O, Facts(follows=frozenset({B})))  # not a member
    assert not in_list(reply, O, Facts(members=frozenset({B})))  # a member O does not follow
    assert in_list(reply, O, Facts(follows=frozenset({B}), members=frozenset({B})))
    assert in_list(Candidate(1, A, replies_to=O), O, EMPTY)
    assert not in_list(Candidate(1, A, PRIVATE), O, EMPTY)
    assert in_list(Candidate(1, A, PRIVATE), O, Facts(follows=frozenset({A})))
    assert not in_list(Candidate(1, A, DIRECT), O, EMPTY)
    assert not in_list(Candidate(5, A, reblog_of=1), O, Facts(hidden=frozenset({A})))


def batch(*cs: Candidate) -> Batch:
    """Candidates as a merge reads them: plain ones by id only."""
    return Batch([c.id for c in cs], [c.author for c in cs], {c.id: c for c in cs if c.ruled})


def test_a_held_boost_leaves_when_its_original_comes_in_within_the_window_below_it():
    """A catch-up that brings an original in asks the rule about the boosts
    of it the home holds: within the window below one, that boost goes."""
    boost, original = 1000, 990
    home = [boost, 500]  # the boost, and something older
    record = {original: boost}  # the home's boost record: original -> boost
    assert boosts_to_drop(home, record, [original], []) == [boost]
    far = boost - 10_000  # an original far older than the window below the boost
    filler = list(range(boost - 1, boost - 1 - limits.REBLOG_WINDOW - 5, -1))
    assert boosts_to_drop([boost, *filler], {far: boost}, [far], []) == []
    # one put in before by this catch-up (came, so in the home as read), the same
    assert boosts_to_drop([boost, original, 500], {}, [], [], {original: boost}) == [boost]
    # a boost not held stays out of it
    assert boosts_to_drop([500], record, [original], []) == []


def test_decide_places_each_boost_by_age_in_what_the_timeline_will_hold():
    held = [100, 90]
    original, boost, late = (
        Candidate(95, A),
        Candidate(96, B, reblog_of=95),
        Candidate(200, B, reblog_of=95),
    )
    # the original comes in with the boost just above it: the boost stays out
    assert decide(batch(boost, original), V, None, EMPTY, held)[0] == [95]
    # far enough above it (WINDOW entries between), a later boost goes in
    filler = list(range(101, 101 + limits.REBLOG_WINDOW))
    ids, took = decide(batch(late, original), V, None, EMPTY, held + filler)
    assert ids == [200, 95] and took == [late]
    # two boosts of one original: the older goes in, the newer stays out
    twins = batch(Candidate(97, A, reblog_of=1), Candidate(96, B, reblog_of=1))
    assert decide(twins, V, None, EMPTY, held, {96: frozenset(), 97: frozenset({96})})[0] == [96]
    # plain statuses: one answer per author, asked once; ruled ones each
    mixed = batch(
        Candidate(9, A), Candidate(8, A, replies_to=B), Candidate(7, A), Candidate(6, A, DIRECT)
    )
    assert decide(mixed, V, None, EMPTY)[0] == [9, 7]
    assert decide(mixed, V, None, Facts(follows=frozenset({B})))[0] == [9, 8, 7]


def test_ruled_members_round_trip():
    for c in (
        Candidate(7, A, DIRECT),
        Candidate(7, A, PRIVATE, B, None),
        Candidate(7, A, UNLISTED, B, None),
        Candidate(7, A, PUBLIC, None, 3),
    ):
        assert c.ruled and Candidate.parse(A, c.member().encode()) == c
    assert not Candidate(7, A).ruled and not Candidate(7, A, UNLISTED).ruled
    assert Candidate.parse(A, b"7") == Candidate(7, A, DIRECT)  # as older records wrote it


# --- every path asks it -----------------------------------------------------------------
async def home(rp, uid) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(keys.home(uid), 0, -1)]


async def listed(rp, owner, lid) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(keys.list_timeline(owner, lid), 0, -1)]


async def users(rp, *names):
    return [(await rp.accounts.sign_up(n)).id for n in names]


async def test_a_reply_to_the_follower_reaches_their_home_unmentioned(rp):
    """Mastodon's "and it's not a reply to me": a followee's reply to the
    follower enters the follower's home, mention or not."""
    v, a = await users(rp, "rv", "ra")
    await rp.relations.follow(v, a)
    mine = await rp.statuses.post(v, "mine")
    reply = await rp.statuses.post(a, "no mention", None, mine.id)
    await rp.drain()
    assert reply.id in await home(rp, v)


async def test_mentions_and_followed_hashtags_enter_homes_as_the_rule_says(rp):
    """A status's conversation offers it to the mentioned and to its tags'
    followers through the rule: a direct status reaches the mentioned only,
    a followers-only one no tag follower, nothing crosses a block either
    way, and a delete or an edit that drops a mention takes it out again."""
    a, m, t, blocked, blocker = await users(rp, "ma", "mm", "mt", "mblocked", "mblocker")
    for fan in (t, blocked, blocker):
        await rp.tags.follow(fan, "birds")
    await rp.relations.block(a, blocked)
    await rp.relations.block(blocker, a)
    direct = await rp.statuses.post(
        a, "@mm @mblocked @mblocker psst #birds", {"visibility": "direct"}
    )
    private = await rp.statuses.post(a, "@mm for followers #birds", {"visibility": "private"})
    public = await rp.statuses.post(a, "@mm @mblocked public #birds")
    await rp.drain()
    assert {direct.id, private.id, public.id} <= set(await home(rp, m))
    assert set(await home(rp, t)) & {direct.id, private.id, public.id} == {public.id}
    for other in (blocked, blocker):
        assert set(await home(rp, other)) & {direct.id, private.id, public.id} == set()
    await rp.statuses.edit(a, public.id, "no mention now #birds")
    await rp.statuses.delete(private.id, a)
    await rp.drain()
    assert set(await home(rp, m)) & {public.id, private.id} == set()
    assert public.id in await home(rp, t)


async def test_the_follow_backfill_asks_the_rule(rp):
    """A follow's backfill leaves out what a push would have: a reply to an
    account the follower does not follow, a boost whose original the home
    shows just below it; it keeps a reply to an account followed and one
    to the follower."""
    v, a, b, c = await users(rp, "bv", "ba", "bb", "bc")
    await rp.relations.follow(v, b)
    from_b = await rp.statuses.post(b, "b's")
    to_c = await rp.statuses.post(c, "c's")
    theirs = await rp.statuses.post(b, "b again")
    mine = await rp.statuses.post(v, "mine")
    plain = await rp.statuses.post(a, "plain")
    reply_c = await rp.statuses.post(a, "to c", None, to_c.id)
    reply_b = await rp.statuses.post(a, "to b", None, theirs.id)
    reply_v = await rp.statuses.post(a, "to v", None, mine.id)
    boost = await rp.statuses.boost(a, from_b.id)  # from_b is in v's home, just below
    await rp.drain()
    await rp.relations.follow(v, a)
    got = await home(rp, v)
    assert {plain.id, reply_b.id, reply_v.id} <= set(got)
    assert reply_c.id not in got
    assert boost not in got
    assert got.count(from_b.id) == 1


async def test_a_follow_without_reblogs_backfills_no_boosts(rp):
    v, a, c = await users(rp, "nv", "na", "nc")
    original = await rp.statuses.post(c, "c's")
    own = await rp.statuses.post(a, "a's own")
    boost = await rp.statuses.boost(a, original.id)
    await rp.drain()
    await rp.relations.follow_with_options(v, a, reblogs=False)
    got = await home(rp, v)
    assert own.id in got
    assert boost not in got


async def test_the_refill_asks_the_rule(rp):
    """The refill after an unfollow takes older statuses of those still
    followed by the same rule."""
    v, a, b, c = await users(rp, "fv", "fa", "fb", "fc")
    to_c = await rp.statuses.post(c, "c's")
    reply = await rp.statuses.post(a, "old reply to c", None, to_c.id)
    kept = await rp.statuses.post(a, "old plain")
    await rp.drain()
    await rp.relations.follow(v, a)
    await rp.relations.follow(v, b)
    # v's home holds only newer entries (a's were pushed out), half full;
    # the unfollow of b queues the refill, which reaches below them
    await rp.store.client.delete(keys.home(v))
    await rp.store.client.rpush(keys.home(v), *range(10**9, 10**9 - limits.HOME_CAP // 2, -1))
    await rp.relations.unfollow(v, b)
    await rp.drain()
    got = await home(rp, v)
    assert kept.id in got
    assert reply.id not in got


async def test_the_idle_rebuild_asks_the_rule_with_the_window(settings):
    """A returning idle user's home is rebuilt as fan-out would have built
    it: a boost whose original came in just below it stays out."""
    rp = await Redpoll.open(settings.with_(idle_after_s=1))
    try:
        v, a, b = await users(rp, "iv", "ia", "ib")
        await rp.relations.follow(v, a)
        await rp.relations.follow(v, b)
        await rp.timelines.home(v)
        await asyncio.sleep(1.2)  # idle from now on: fan-out skips v
        original = await rp.statuses.post(a, "a's")
        boost = await rp.statuses.boost(b, original.id)
        await rp.drain()
        page = [s.id for s in await rp.timelines.home(v)]
        assert original.id in page
        assert boost not in page
        assert boost not in await home(rp, v)
    finally:
        await rp.close()


async def test_a_list_takes_what_its_rule_lets_in(rp):
    """Mastodon's list rule (replies policy "list"), on push and on a
    member's backfill: a member's reply to someone outside the list stays
    out, one to a member the owner follows goes in; a member's boost the
    owner hides stays out."""
    o, a, b, c = await users(rp, "lo", "la", "lb", "lc")
    await rp.relations.follow(o, b)
    await rp.relations.follow_with_options(o, a, reblogs=False)
    lst = await rp.lists.create(o, "friends")
    await rp.lists.add(o, lst.id, b)
    to_c = await rp.statuses.post(c, "c's")
    from_b = await rp.statuses.post(b, "b's")
    old_reply_c = await rp.statuses.post(a, "to c, before", None, to_c.id)
    old_reply_b = await rp.statuses.post(a, "to b, before", None, from_b.id)
    await rp.drain()
    await rp.lists.add(o, lst.id, a)  # the backfill
    got = await listed(rp, o, lst.id)
    assert old_reply_b.id in got
    assert old_reply_c.id not in got
    reply_c = await rp.statuses.post(a, "to c", None, to_c.id)
    reply_b = await rp.statuses.post(a, "to b", None, from_b.id)
    boost = await rp.statuses.boost(a, to_c.id)
    await rp.drain()
    got = await listed(rp, o, lst.id)
    assert reply_b.id in got
    assert reply_c.id not in got and boost not in got


@pytest.mark.parametrize("race", ["recorded meanwhile", "replayed"])
async def test_deliver_boost_guards_its_write(rp, race):
    """deliver_boost.lua decides nothing: it writes where told, except where
    the home recorded another boost of the original since the facts were
    read (that one stands), and where the boost is there already."""
    (v,) = await users(rp, f"g{race[0]}v")
    store = rp.store
    await store.client.rpush(keys.home(v), 50, 40)
    pair = keys.boost_pair(keys.home(v))
    if race == "recorded meanwhile":
        await store.client.zadd(keys.home_reblogs(v), {40: 60})
        await store.run("deliver_boost", pair, [70, limits.HOME_CAP, 40, 80, ""])
        assert await home(rp, v) == [50, 40]
    else:
        for _ in range(2):
            await store.run("deliver_boost", pair, [70, limits.HOME_CAP, 40, 80, ""])
        assert await home(rp, v) == [70, 50, 40]
        assert await store.client.zscore(keys.home_reblogs(v), 40) == 70
