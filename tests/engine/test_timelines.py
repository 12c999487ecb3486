"""Timelines: home, profile and list timelines, newest first, paged
by id cursors with Mastodon's semantics."""

from __future__ import annotations

import asyncio
import random

import pytest

from redpoll.core import keys, limits
from redpoll.core.errors import ListNotFound, UserNotFound
from redpoll.timelines import placement

KINDS = ["home", "profile", "list"]


def ids(page) -> list[int]:
    return [s.id for s in page]


def mastodon_page(timeline_desc, max_id=None, since_id=None, min_id=None, limit=None):
    """The reference: what Mastodon returns for these cursors over a
    newest-first list of ids. With min_id, since_id is ignored (as Mastodon's
    paginate_by_min_id does)."""
    limit = min(limit or limits.PAGE_DEFAULT, limits.PAGE_MAX)
    lower = min_id if min_id is not None else since_id
    chosen = [
        i for i in timeline_desc if (max_id is None or i < max_id) and (lower is None or i > lower)
    ]
    return chosen[-limit:] if min_id is not None else chosen[:limit]


class World:
    """alice posts; bob follows alice; carol follows alice and has a list
    holding her (a list holds only accounts its owner follows); dave
    posts too, so alice's ids have gaps (cursors may name ids that are not in
    the timeline)."""

    def __init__(self, rp, alice, bob, carol, dave, lid):
        self.rp, self.alice, self.bob, self.carol, self.dave, self.lid = (
            rp,
            alice,
            bob,
            carol,
            dave,
            lid,
        )

    def read(self, kind, **cursors):
        if kind == "home":
            return self.rp.timelines.home(self.bob.id, **cursors)
        if kind == "profile":
            return self.rp.timelines.profile(self.alice.id, **cursors)
        return self.rp.timelines.of_list(self.carol.id, self.lid, **cursors)

    def raw_key(self, kind):
        return {
            "home": keys.home(self.bob.id),
            "list": keys.list_timeline(self.carol.id, self.lid),
            "profile": None,
        }[kind]

    async def post(self, text="x"):
        return (await self.rp.statuses.post(self.alice.id, text)).id


@pytest.fixture
async def world(rp):
    alice = await rp.accounts.sign_up("alice")
    bob = await rp.accounts.sign_up("bob")
    carol = await rp.accounts.sign_up("carol")
    dave = await rp.accounts.sign_up("dave")
    await rp.relations.follow(bob.id, alice.id)
    await rp.relations.follow(carol.id, alice.id)
    lst = await rp.lists.create(carol.id, "alice only")
    await rp.lists.add(carol.id, lst.id, alice.id)
    return World(rp, alice, bob, carol, dave, lst.id)


async def post_with_gaps(world, count):
    """``count`` statuses by alice, with a status by dave after every third;
    returns (alice's ids ascending, dave's ids)."""
    mine, noise = [], []
    for i in range(count):
        mine.append(await world.post(f"alice {i}"))
        if i % 3 == 2:
            noise.append((await world.rp.statuses.post(world.dave.id, f"dave {i}")).id)
    return mine, noise


# --- order -------------------------------------------------------------------
async def test_newest_first_everywhere(rp, world):
    erin = await rp.accounts.sign_up("erin")
    await rp.relations.follow(world.bob.id, erin.id)
    await rp.relations.follow(world.carol.id, erin.id)
    expected_home, expected_alice = [], []
    for i in range(12):
        author = world.alice if i % 2 else erin
        sid = (await rp.statuses.post(author.id, f"{i}")).id
        expected_home.insert(0, sid)
        if author is world.alice:
            expected_alice.insert(0, sid)
    assert ids(await rp.timelines.home(world.bob.id)) == expected_home
    assert ids(await rp.timelines.profile(world.alice.id)) == expected_alice
    assert ids(await rp.timelines.of_list(world.carol.id, world.lid)) == expected_alice
    # the list is its own timeline: carol's home has erin too, her list only alice
    assert ids(await rp.timelines.home(world.carol.id)) == expected_home
    assert ids(await rp.timelines.home(world.alice.id)) == expected_alice  # own statuses
    page = await rp.timelines.home(world.bob.id)
    assert [s.login for s in page] == [
        "alice" if i in expected_alice else "erin" for i in expected_home
    ]


# --- paging semantics ----------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
async def test_paging_matches_mastodon(world, kind):
    mine, noise = await post_with_gaps(world, 45)
    desc = mine[::-1]
    s = mine  # s[0] oldest

    async def page(**cursors):
        return ids(await world.read(kind, **cursors))

    # the spelled-out cases first
    assert await page() == desc[:20]  # default limit
    assert await page(limit=5) == desc[:5]
    assert await page(limit="5") == desc[:5]
    assert await page(limit=1000) == desc[:40]  # capped
    assert await page(limit=limits.PAGE_MAX) == desc[:40]
    assert await page(max_id=s[10]) == s[9::-1]  # strictly older
    assert await page(max_id=s[30], limit=3) == [s[29], s[28], s[27]]
    assert await page(since_id=s[5], limit=10) == s[44:34:-1]  # the newest ones
    assert await page(min_id=s[5], limit=10) == s[15:5:-1]  # right above, newest first
    assert await page(max_id=s[20], since_id=s[5]) == s[19:5:-1]
    assert await page(max_id=s[20], since_id=s[5], limit=4) == s[19:15:-1]
    assert await page(max_id=s[20], min_id=s[5], limit=4) == s[9:5:-1]
    assert await page(max_id=s[0]) == []
    assert await page(since_id=s[-1]) == []
    assert await page(min_id=s[-1]) == []
    assert await page(max_id=limits.MAX_ID) == desc[:20]
    assert await page(min_id=s[40], limit=40) == s[44:40:-1]  # fewer than limit above
    # cursors naming ids that are not in this timeline (dave's) still bound it
    gap = noise[4]
    assert await page(max_id=gap, limit=40) == [i for i in desc if i < gap][:40]
    assert await page(min_id=gap, limit=3) == [i for i in mine if i > gap][:3][::-1]
    assert (
        await page(since_id=str(gap), max_id=str(s[30]))
        == [i for i in desc if gap < i < s[30]][:20]
    )

    # then many combinations against the reference
    rng = random.Random(1234)
    candidates = [None, *mine, *noise, mine[0] - 1 or None, mine[-1] + 1]
    for _ in range(60):
        cursors = {
            "max_id": rng.choice(candidates),
            "since_id": rng.choice(candidates),
            "min_id": rng.choice(candidates),
            "limit": rng.choice([None, 1, 3, 7, 20, 40, 99]),
        }
        for name in rng.sample(["max_id", "since_id", "min_id"], rng.randint(0, 3)):
            cursors[name] = None
        cursors = {k: v for k, v in cursors.items() if v is not None}
        assert await page(**cursors) == mastodon_page(desc, **cursors), cursors


@pytest.mark.parametrize("kind", KINDS)
async def test_walk_down_while_new_statuses_arrive(world, kind):
    """max_id paging never repeats or skips, however many statuses arrive
    between pages; the newcomers are then found with min_id from the top."""
    posted = [await world.post(f"old {i}") for i in range(100)]
    seen, arrived = [], []
    page = await world.read(kind, limit=7)
    top = page[0].id
    while page:
        seen += ids(page)
        for _ in range(2):  # newer statuses land on top meanwhile
            arrived.append(await world.post("new"))
        await world.rp.statuses.post(world.dave.id, "noise")
        page = await world.read(kind, max_id=page[-1].id, limit=7)
    assert seen == posted[::-1]
    assert len(seen) == len(set(seen)) == 100

    # catch up from where the walk started: pages right above the cursor
    caught, cursor = [], top
    while True:
        page = ids(await world.read(kind, min_id=cursor, limit=6))
        if not page:
            break
        assert page == sorted(page, reverse=True)
        caught = page + caught
        cursor = page[0]
    assert caught == arrived[::-1]


@pytest.mark.parametrize("kind", KINDS)
async def test_walk_up_with_min_id(world, kind):
    floor = (await world.rp.statuses.post(world.dave.id, "before everything")).id
    posted = [await world.post(f"{i}") for i in range(60)]
    walked, cursor, rounds = [], floor, 0
    while True:
        page = ids(await world.read(kind, min_id=cursor, limit=9))
        if not page:
            break
        assert page == sorted(page, reverse=True)
        walked += page[::-1]
        cursor = page[0]
        rounds += 1
        if rounds <= 3:  # arrivals during the walk are reached too
            posted.append(await world.post("late"))
    assert walked == posted
    assert len(set(walked)) == len(walked)


# --- deleted statuses ------------------------------------------------------------
async def test_deleted_statuses_never_show(world):
    rp = world.rp
    posted = [await world.post(f"{i}") for i in range(12)]
    gone = {posted[-1], posted[5], posted[6], posted[0]}
    for sid in gone:
        await rp.statuses.delete(sid, world.alice.id)
    kept_desc = [i for i in posted[::-1] if i not in gone]

    async def check_all():
        assert ids(await rp.timelines.home(world.bob.id, limit=40)) == kept_desc
        assert ids(await rp.timelines.home(world.alice.id, limit=40)) == kept_desc
        assert ids(await rp.timelines.profile(world.alice.id, limit=40)) == kept_desc
        assert ids(await rp.timelines.of_list(world.carol.id, world.lid, limit=40)) == kept_desc
        # cursors that name a deleted status still work
        assert ids(await rp.timelines.home(world.bob.id, max_id=posted[6])) == [
            i for i in kept_desc if i < posted[6]
        ]
        # a page whose raw ids are all deleted reads on instead of coming back
        # empty, which a client would take for the end of the timeline
        assert ids(
            await rp.timelines.of_list(world.carol.id, world.lid, min_id=posted[4], limit=2)
        ) == [posted[8], posted[7]]
        assert ids(await rp.timelines.home(world.bob.id, max_id=posted[7], limit=2)) == [
            posted[4],
            posted[3],
        ]
        assert (
            ids(await rp.timelines.home(world.bob.id, since_id=posted[4], max_id=posted[7])) == []
        )
        walked, cursor = [], posted[0]
        while page := ids(await rp.timelines.home(world.bob.id, min_id=cursor, limit=2)):
            walked = page + walked
            cursor = page[0]
        assert walked == kept_desc
        walked, page = [], await rp.timelines.home(world.bob.id, limit=3)
        while page:
            walked += ids(page)
            page = await rp.timelines.home(world.bob.id, max_id=page[-1].id, limit=3)
        assert walked == kept_desc
        assert (await rp.accounts.get_user(world.alice.id)).posts == len(kept_desc)

    # before the cleanup jobs ran: the ids are still in the follower's and the
    # list's timelines, and reading filters them out
    raw_home = {int(i) for i in await rp.store.client.lrange(keys.home(world.bob.id), 0, -1)}
    raw_list = {
        int(i)
        for i in await rp.store.client.lrange(keys.list_timeline(world.carol.id, world.lid), 0, -1)
    }
    assert gone <= raw_home and gone <= raw_list
    await check_all()

    await rp.drain()
    for key in (
        keys.home(world.bob.id),
        keys.home(world.alice.id),
        keys.list_timeline(world.carol.id, world.lid),
    ):
        raw = [int(i) for i in await rp.store.client.lrange(key, 0, -1)]
        assert raw == kept_desc, key
    await check_all()


# --- the cap -------------------------------------------------------------------------
async def test_home_cap_keeps_the_newest(world):
    rp = world.rp
    total = limits.HOME_CAP + 15
    gate = asyncio.Semaphore(8)

    async def one(i):
        async with gate:
            return (await rp.statuses.post(world.alice.id, f"#{i}")).id

    # concurrent posts deliver out of order near the cap too
    posted = sorted(await asyncio.gather(*(one(i) for i in range(total))))
    await rp.drain()
    newest = posted[::-1][: limits.HOME_CAP]
    for key in (
        keys.home(world.bob.id),
        keys.home(world.alice.id),
        keys.list_timeline(world.carol.id, world.lid),
    ):
        assert await rp.store.client.llen(key) == limits.HOME_CAP, key
        assert [int(i) for i in await rp.store.client.lrange(key, 0, -1)] == newest, key
    # profiles are not capped
    assert await rp.store.client.zcard(keys.profile(world.alice.id)) == total
    assert (await rp.accounts.get_user(world.alice.id)).posts == total
    # a follow made now backfills up to the cap, newest first
    await rp.relations.follow(world.dave.id, world.alice.id)
    assert [int(i) for i in await rp.store.client.lrange(keys.home(world.dave.id), 0, -1)] == newest
    # one more post pushes the oldest out
    extra = await world.post("one more")
    home = [int(i) for i in await rp.store.client.lrange(keys.home(world.bob.id), 0, -1)]
    assert len(home) == limits.HOME_CAP
    assert home == [extra] + newest[:-1]
    # the end of a capped home is reached by paging
    walked, page = [], await rp.timelines.home(world.bob.id, limit=40)
    while page:
        walked += ids(page)
        page = await rp.timelines.home(world.bob.id, max_id=page[-1].id, limit=40)
    assert walked == home


# --- delivery out of order ---------------------------------------------------------
async def test_out_of_order_delivery(rp, world):
    frank = await rp.accounts.sign_up("frank")
    s = [await world.post(f"{i}") for i in range(6)]  # frank follows nobody
    home = keys.home(frank.id)

    async def deliver(sid, cap=limits.HOME_CAP):
        return sum(await rp.store.run_grouped("deliver", [home], [sid, cap]))

    async def raw():
        return [int(i) for i in await rp.store.client.lrange(home, 0, -1)]

    assert await deliver(s[3]) == 1
    assert await deliver(s[1]) == 1  # older than the head: goes below it
    assert await deliver(s[5]) == 1
    assert await deliver(s[2]) == 1  # into the middle
    assert await deliver(s[0]) == 1  # to the tail
    assert await raw() == [s[5], s[3], s[2], s[1], s[0]]
    for again in (s[5], s[3], s[0], s[2]):  # head, middle, tail: repeats are no-ops
        assert await deliver(again) == 0
    assert await raw() == [s[5], s[3], s[2], s[1], s[0]]
    assert await deliver(s[4]) == 1
    assert ids(await rp.timelines.home(frank.id)) == s[::-1]
    assert ids(await rp.timelines.home(frank.id, max_id=s[4], limit=2)) == [s[3], s[2]]


async def test_out_of_order_delivery_with_a_cap(rp, world):
    frank = await rp.accounts.sign_up("frank")
    home = keys.home(frank.id)
    cap = 50

    async def deliver(sid):
        return sum(await rp.store.run_grouped("deliver", [home], [sid, cap]))

    async def raw():
        return [int(i) for i in await rp.store.client.lrange(home, 0, -1)]

    for sid in (10, 20, 30, 40, 50):
        await deliver(sid)
    assert await deliver(5) == 1 and await raw() == [50, 40, 30, 20, 10, 5]
    rng = random.Random(99)
    delivered = list(range(100, 400, 3))
    order = delivered + rng.sample(delivered, 40)  # some twice
    rng.shuffle(order)
    for sid in order:
        await deliver(sid)
        now = await raw()
        assert now == sorted(set(now), reverse=True) and len(now) <= cap
    assert await raw() == sorted(delivered, reverse=True)[:cap]
    assert await deliver(7) == 0  # older than everything in a full timeline
    assert await deliver(1000) == 1
    assert (await raw())[:2] == [1000, 397] and len(await raw()) == cap


# --- unknown owners ------------------------------------------------------------------
async def test_unknown_user_timelines(rp, world):
    for read in (rp.timelines.home, rp.timelines.profile):
        with pytest.raises(UserNotFound):
            await read(987_654)
        with pytest.raises(UserNotFound):
            await read(987_654, max_id=5, limit=3)
    assert not await rp.store.client.exists(keys.home(987_654))


async def test_unknown_list_timelines(rp, world):
    await world.post("hi")
    with pytest.raises(ListNotFound):
        await rp.timelines.of_list(world.carol.id, world.lid + 100)
    with pytest.raises(ListNotFound):  # somebody else's list
        await rp.timelines.of_list(world.bob.id, world.lid)
    with pytest.raises(ListNotFound):  # an owner that does not exist
        await rp.timelines.of_list(987_654, world.lid)
    assert len(await rp.timelines.of_list(world.carol.id, world.lid)) == 1
    await rp.lists.delete(world.carol.id, world.lid)
    with pytest.raises(ListNotFound):
        await rp.timelines.of_list(world.carol.id, world.lid)


async def test_empty_timelines(rp, world):
    assert await rp.timelines.home(world.dave.id) == []
    assert await rp.timelines.profile(world.dave.id, max_id=10, since_id=2) == []
    assert await rp.timelines.of_list(world.carol.id, world.lid, min_id=1) == []


async def test_paging_past_a_run_of_deleted_statuses(world):
    """Many deleted ids in a row, before cleanup: pages still reach past them."""
    rp = world.rp
    posted = [await world.post(f"{i}") for i in range(30)]
    for sid in posted[5:25]:
        await rp.statuses.delete(sid, world.alice.id)
    kept_desc = [i for i in posted[::-1] if i not in posted[5:25]]
    for read in (
        lambda **c: rp.timelines.home(world.bob.id, **c),
        lambda **c: rp.timelines.of_list(world.carol.id, world.lid, **c),
    ):
        down, page = [], await read(limit=4)
        while page:
            down += ids(page)
            page = await read(max_id=page[-1].id, limit=4)
        assert down == kept_desc
        up, cursor = [], posted[0]
        while page := ids(await read(min_id=cursor, limit=4)):
            up = page + up
            cursor = page[0]
        assert up == kept_desc[:-1]
        assert ids(await read(max_id=posted[25], limit=3)) == [posted[4], posted[3], posted[2]]
        assert ids(await read(min_id=posted[4], limit=3)) == [posted[27], posted[26], posted[25]]


async def test_a_page_brings_its_authors_as_they_are_now(world):
    """On a single server the page's read brings the authors' records along
    (the HTTP API then needs no second read); on a cluster it cannot (other
    slots) and brings none. Either way the statuses are the same."""
    rp = world.rp
    await world.post("a")
    await rp.statuses.post(world.bob.id, "b")
    page = await rp.timelines.home(world.bob.id)
    assert sorted({s.user_id for s in page}) == sorted([world.alice.id, world.bob.id])
    if rp.store.cluster:
        assert page.authors == {}
        return
    assert page.authors == {
        u.id: u for u in await rp.accounts.get_users([world.alice.id, world.bob.id])
    }
    await rp.relations.follow(world.dave.id, world.alice.id)  # alice's record changes
    again = await rp.timelines.home(world.bob.id)
    assert again.authors[world.alice.id].followers == page.authors[world.alice.id].followers + 1
    public = await rp.timelines.public()
    assert set(public.authors) == {s.user_id for s in public}


async def test_a_wiped_database_handing_out_the_same_ids_is_not_served_from_memory(rp, server):
    """Ids are counters: after a wipe the same ids come back for other
    statuses and users. What the process kept by id must not answer for them."""
    from conftest import flush

    async def scene(text):
        a, b = (
            await rp.accounts.sign_up(f"wipe_a{len(text)}"),
            await rp.accounts.sign_up(f"wipe_b{len(text)}"),
        )
        await rp.relations.follow(b.id, a.id)
        await rp.statuses.post(a.id, text)
        return a, b

    a, b = await scene("before the wipe")
    before = await rp.timelines.home(b.id)
    assert [s.text for s in before] == ["before the wipe"]
    flush(server[2])
    await rp.queue.ensure_groups()
    a2, b2 = await scene("after the wipe, longer")
    assert (a2.id, b2.id) == (a.id, b.id)  # the same ids again
    after = await rp.timelines.home(b2.id)
    assert [s.id for s in after] == [s.id for s in before]
    assert [s.text for s in after] == ["after the wipe, longer"]
    assert [s.text for s in await rp.statuses.get_statuses([after[0].id])] == [
        "after the wipe, longer"
    ]
    if not rp.store.cluster:
        assert after.authors[a2.id].login == a2.login


async def test_public_timeline_pages_like_one_list_over_its_shards(rp):
    """The public timeline: one LIST on a single server, PUBLIC_TIMELINE_SHARDS
    LISTs in slots of their own on a cluster (so that public posts spread
    over the masters). Either way every cursor gives what Mastodon gives over
    the one newest-first timeline, deleted statuses left out, unlisted ones
    never in it."""
    from redis.cluster import key_slot

    authors = [await rp.accounts.sign_up(f"pub{i}") for i in range(3)]
    posted = []
    for n in range(60):
        extra = {"visibility": "unlisted"} if n % 7 == 3 else None
        s = await rp.statuses.post(authors[n % 3].id, f"public {n}", extra)
        if extra is None:
            posted.append(s.id)
    for sid in posted[5:50:9]:  # a few deleted, spread over the shards
        author = (await rp.statuses.get_status(sid)).user_id
        await rp.statuses.delete(sid, author)
        posted.remove(sid)
    await rp.drain()
    expected = sorted(posted, reverse=True)
    slots = {key_slot(placement.of(rp.store).public_key(sid).encode()) for sid in posted}
    assert len(slots) == (limits.PUBLIC_TIMELINE_SHARDS if rp.store.cluster else 1)
    # a walk by max_id, pages of 7: the whole timeline once, in order
    walked, max_id = [], None
    while True:
        page = ids(await rp.timelines.public(limit=7, max_id=max_id))
        if not page:
            break
        walked += page
        max_id = page[-1]
    assert walked == expected
    rng = random.Random(5)
    for _ in range(25):
        cursor = rng.choice(expected)
        limit = rng.choice([1, 4, 20])
        for name in ("max_id", "since_id", "min_id"):
            got = ids(await rp.timelines.public(limit=limit, **{name: cursor}))
            assert got == mastodon_page(expected, limit=limit, **{name: cursor}), (name, cursor)


async def test_a_page_brings_its_statuses_counts_as_they_are_now(rp):
    """On a single server the page script reads each status's counts with the
    page (Page.counts), so the request's next round trip does not ask for
    them one by one; a cluster's page leaves them to that round trip. Either
    way the counts are the ones of this read."""
    from redpoll.records import state

    ann, bob = await rp.accounts.sign_up("counts_a"), await rp.accounts.sign_up("counts_b")
    first = await rp.statuses.post(ann.id, "one")
    second = await rp.statuses.post(ann.id, "two")
    await rp.statuses.favourite(bob.id, second.id)
    page = await rp.timelines.home(ann.id)
    assert [s.id for s in page] == [second.id, first.id]
    if rp.store.cluster:
        assert page.counts == {}
    else:
        assert set(page.counts) == {first.id, second.id}
    commands, parse = state.state_check(ann.id, [s.id for s in page], page.counts)
    assert any(c[0] == "HMGET" for c in commands) == bool(rp.store.cluster)
    states = parse(await rp.store.batch(commands))
    assert [s.favourites for s in states] == [1, 0]
    await rp.statuses.favourite(ann.id, first.id)  # a later page shows the later count
    page = await rp.timelines.home(ann.id)
    commands, parse = state.state_check(ann.id, [s.id for s in page], page.counts)
    states = parse(await rp.store.batch(commands))
    assert [(s.favourites, s.favourited) for s in states] == [(1, False), (1, True)]
