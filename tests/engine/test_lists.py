"""Lists: lifecycle, membership with backfill/removal/refill, reverse index,
limits and owner scoping."""

from __future__ import annotations

import asyncio

import pytest

from redpoll.core import keys, limits
from redpoll.core.errors import Forbidden, ListNotFound, UserNotFound, ValidationError
from redpoll.relations import edges
from redpoll.relations.jobs import FollowNoteJob


async def raw_list(rp, key) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(key, 0, -1)]


async def listed_in(rp, uid) -> set[str]:
    return {x.decode() for x in await rp.store.client.zrange(keys.listed_in(uid), 0, -1)}


async def member_ids(rp, owner, lid) -> set[int]:
    return {int(x) for x in await rp.store.client.zrange(keys.list_members(owner, lid), 0, -1)}


async def post_concurrently(rp, uid, n, prefix) -> list[int]:
    ids = []
    for start in range(0, n, 100):
        posted = await asyncio.gather(
            *(rp.statuses.post(uid, f"{prefix} {start + i}") for i in range(min(100, n - start)))
        )
        ids += [s.id for s in posted]
    return ids


async def test_create_get_rename_get_lists_delete(rp):
    o = await rp.accounts.sign_up("owner")
    assert await rp.lists.all(o.id) == []
    news = await rp.lists.create(o.id, "News")
    pals = await rp.lists.create(o.id, "Pals ✨")
    assert (news.owner, news.title) == (o.id, "News")
    assert news.id != pals.id
    assert await rp.lists.get(o.id, news.id) == news
    assert await rp.lists.get(str(o.id), str(pals.id)) == pals
    assert await rp.lists.all(o.id) == [news, pals]

    renamed = await rp.lists.rename(o.id, news.id, "Headlines")
    assert renamed.title == "Headlines" and renamed.id == news.id
    assert (await rp.lists.get(o.id, news.id)).title == "Headlines"

    await rp.lists.delete(o.id, news.id)
    assert await rp.lists.all(o.id) == [pals]
    with pytest.raises(ListNotFound):
        await rp.lists.get(o.id, news.id)
    with pytest.raises(ListNotFound):
        await rp.lists.delete(o.id, news.id)
    # ids are not reused after a delete
    again = await rp.lists.create(o.id, "News")
    assert again.id not in (news.id, pals.id)


async def test_create_list_checks_owner_and_title(rp):
    o = await rp.accounts.sign_up("owner")
    with pytest.raises(UserNotFound):
        await rp.lists.create(o.id + 50, "nobody's")
    for bad in ("", "   ", "x" * (limits.LIST_TITLE_MAX_CHARS + 1), None, 5, "a\x00b"):
        with pytest.raises(ValidationError):
            await rp.lists.create(o.id, bad)
    lst = await rp.lists.create(o.id, "y" * limits.LIST_TITLE_MAX_CHARS)
    with pytest.raises(ValidationError):
        await rp.lists.rename(o.id, lst.id, "z" * (limits.LIST_TITLE_MAX_CHARS + 1))
    assert (await rp.lists.get(o.id, lst.id)).title == "y" * limits.LIST_TITLE_MAX_CHARS
    assert not await rp.store.client.exists(keys.lists(o.id + 50))
    assert len(await rp.lists.all(o.id)) == 1


async def test_lists_per_user_limit(rp):
    o = await rp.accounts.sign_up("owner")
    made = await asyncio.gather(
        *(rp.lists.create(o.id, f"l{i}") for i in range(limits.LISTS_PER_USER))
    )
    assert len({m.id for m in made}) == limits.LISTS_PER_USER
    with pytest.raises(Forbidden):
        await rp.lists.create(o.id, "one too many")
    assert len(await rp.lists.all(o.id)) == limits.LISTS_PER_USER
    # concurrent creations racing for the last slot: exactly one wins
    await rp.lists.delete(o.id, made[0].id)
    results = await asyncio.gather(
        *(rp.lists.create(o.id, f"race{i}") for i in range(8)), return_exceptions=True
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1
    assert all(isinstance(r, Forbidden) for r in results if isinstance(r, BaseException))
    assert len(await rp.lists.all(o.id)) == limits.LISTS_PER_USER


async def test_list_member_limit(rp):
    o = await rp.accounts.sign_up("owner")
    m = await rp.accounts.sign_up("member")
    await rp.relations.follow(o.id, m.id)
    lst = await rp.lists.create(o.id, "huge")
    # fill the member set directly: the members need not exist for the bound
    fake = {str(10_000_000 + i): i + 1 for i in range(limits.LIST_MAX_MEMBERS)}
    await rp.store.client.zadd(keys.list_members(o.id, lst.id), fake)
    with pytest.raises(Forbidden):
        await rp.lists.add(o.id, lst.id, m.id)
    assert m.id not in await member_ids(rp, o.id, lst.id)
    assert await listed_in(rp, m.id) == set()


async def test_unknown_list_raises_list_not_found(rp):
    o = await rp.accounts.sign_up("owner")
    m = await rp.accounts.sign_up("member")
    missing = 987654
    calls = [
        rp.lists.get(o.id, missing),
        rp.lists.rename(o.id, missing, "t"),
        rp.lists.delete(o.id, missing),
        rp.lists.add(o.id, missing, m.id),
        rp.lists.remove(o.id, missing, m.id),
        rp.timelines.of_list(o.id, missing),
        rp.lists.members(o.id, missing),
    ]
    for call in calls:
        with pytest.raises(ListNotFound):
            await call
    assert await listed_in(rp, m.id) == set()
    assert not await rp.store.client.exists(
        keys.list_members(o.id, missing), keys.list_timeline(o.id, missing), keys.lists(o.id)
    )
    assert await rp.queue.depth() == 0


async def test_lists_are_owner_scoped(rp):
    alice = await rp.accounts.sign_up("alice")
    mallory = await rp.accounts.sign_up("mallory")
    m = await rp.accounts.sign_up("member")
    s = await rp.statuses.post(m.id, "hi")
    for u in (alice, mallory):
        await rp.relations.follow(u.id, m.id)
    lst = await rp.lists.create(alice.id, "private")
    await rp.lists.add(alice.id, lst.id, m.id)
    for call in (
        rp.lists.get(mallory.id, lst.id),
        rp.lists.rename(mallory.id, lst.id, "mine"),
        rp.lists.delete(mallory.id, lst.id),
        rp.timelines.of_list(mallory.id, lst.id),
        rp.lists.members(mallory.id, lst.id),
        rp.lists.add(mallory.id, lst.id, m.id),
        rp.lists.remove(mallory.id, lst.id, m.id),
    ):
        with pytest.raises(ListNotFound):
            await call
    assert await rp.lists.all(mallory.id) == []
    assert (await rp.lists.get(alice.id, lst.id)).title == "private"
    assert [x.id for x in await rp.timelines.of_list(alice.id, lst.id)] == [s.id]
    assert await member_ids(rp, alice.id, lst.id) == {m.id}
    assert await listed_in(rp, m.id) == {keys.listed_member(alice.id, lst.id)}


async def test_add_member_backfills_and_indexes(rp):
    o = await rp.accounts.sign_up("owner")
    m1 = await rp.accounts.sign_up("m1")
    m2 = await rp.accounts.sign_up("m2")
    ids1, ids2 = [], []
    for i in range(4):
        ids1.append((await rp.statuses.post(m1.id, f"one {i}")).id)
        ids2.append((await rp.statuses.post(m2.id, f"two {i}")).id)
    for m in (m1, m2):
        await rp.relations.follow(o.id, m.id)
    home = await raw_list(rp, keys.home(o.id))
    lst = await rp.lists.create(o.id, "mine")
    assert await rp.lists.add(o.id, lst.id, m1.id) is True
    assert await raw_list(rp, keys.list_timeline(o.id, lst.id)) == sorted(ids1, reverse=True)
    assert await rp.lists.add(o.id, lst.id, m2.id) is True
    both = sorted(ids1 + ids2, reverse=True)
    assert await raw_list(rp, keys.list_timeline(o.id, lst.id)) == both
    assert [s.id for s in await rp.timelines.of_list(o.id, lst.id)] == both

    assert await rp.lists.add(o.id, lst.id, m1.id) is False  # no-op
    assert await raw_list(rp, keys.list_timeline(o.id, lst.id)) == both
    assert [u.id for u in await rp.lists.members(o.id, lst.id)] == [m1.id, m2.id]
    for m in (m1, m2):
        assert await listed_in(rp, m.id) == {keys.listed_member(o.id, lst.id)}
    # listing changes no follow, and the owner's home is untouched
    assert (await rp.accounts.get_user(o.id)).following == 2
    assert await raw_list(rp, keys.home(o.id)) == home


async def test_add_unknown_member_leaves_no_trace(rp):
    o = await rp.accounts.sign_up("owner")
    m = await rp.accounts.sign_up("member")
    lst = await rp.lists.create(o.id, "l")
    await rp.relations.follow(o.id, m.id)
    await rp.lists.add(o.id, lst.id, m.id)
    ghost = m.id + 300
    with pytest.raises(UserNotFound):
        await rp.lists.add(o.id, lst.id, ghost)
    assert await member_ids(rp, o.id, lst.id) == {m.id}
    assert not await rp.store.client.exists(keys.listed_in(ghost))
    with pytest.raises(ValidationError):
        await rp.lists.add(o.id, lst.id, "nope")


async def test_remove_member_removes_at_once_then_refills(rp):
    """A full list timeline loses one member's statuses at once; the refill
    job then takes the remaining member's older statuses."""
    o = await rp.accounts.sign_up("owner")
    loud = await rp.accounts.sign_up("loud")
    quiet = await rp.accounts.sign_up("quiet")
    old_quiet = await post_concurrently(rp, quiet.id, 20, "old quiet")
    loud_ids, new_quiet = [], []
    for start in range(0, 1000, 100):  # interleave the two members' ids
        posted = await asyncio.gather(
            *(
                rp.statuses.post(loud.id if i % 10 else quiet.id, f"p{start + i}")
                for i in range(100)
            )
        )
        for s in posted:
            (loud_ids if s.user_id == loud.id else new_quiet).append(s.id)
    lst = await rp.lists.create(o.id, "both")
    for m in (quiet, loud):
        await rp.relations.follow(o.id, m.id)
    await rp.lists.add(o.id, lst.id, quiet.id)
    await rp.lists.add(o.id, lst.id, loud.id)
    timeline = keys.list_timeline(o.id, lst.id)
    everything = sorted(old_quiet + new_quiet + loud_ids, reverse=True)
    assert await raw_list(rp, timeline) == everything[: limits.HOME_CAP]
    assert not set(old_quiet) & set(await raw_list(rp, timeline))  # pushed out by the cap

    assert await rp.lists.remove(o.id, lst.id, loud.id) is True
    assert await raw_list(rp, timeline) == sorted(new_quiet, reverse=True)
    assert loud.id not in await member_ids(rp, o.id, lst.id)
    assert await listed_in(rp, loud.id) == set()
    assert await rp.queue.depth() >= 1

    await rp.drain()
    after = await raw_list(rp, timeline)
    assert after == sorted(old_quiet + new_quiet, reverse=True)
    assert len(after) == len(set(after))
    assert await rp.lists.remove(o.id, lst.id, loud.id) is False


async def test_delete_list_removes_keys_and_reverse_index(rp):
    o = await rp.accounts.sign_up("owner")
    members = [await rp.accounts.sign_up(f"m{i}") for i in range(4)]
    for m in members:
        await rp.statuses.post(m.id, f"by {m.login}")
    for m in members:
        await rp.relations.follow(o.id, m.id)
    lst = await rp.lists.create(o.id, "doomed")
    keeper = await rp.lists.create(o.id, "kept")
    for m in members:
        await rp.lists.add(o.id, lst.id, m.id)
    await rp.lists.add(o.id, keeper.id, members[0].id)
    client = rp.store.client
    assert (
        await client.exists(keys.list_members(o.id, lst.id), keys.list_timeline(o.id, lst.id)) == 2
    )

    await rp.lists.delete(o.id, lst.id)
    assert not await client.exists(keys.list_members(o.id, lst.id))
    assert not await client.exists(keys.list_timeline(o.id, lst.id))
    assert await listed_in(rp, members[0].id) == {keys.listed_member(o.id, keeper.id)}
    for m in members[1:]:
        assert await listed_in(rp, m.id) == set()
    # a later post reaches the surviving list and does not resurrect the dead one
    s = await rp.statuses.post(members[0].id, "after")
    await rp.drain()
    assert not await client.exists(keys.list_timeline(o.id, lst.id))
    assert (await raw_list(rp, keys.list_timeline(o.id, keeper.id)))[0] == s.id


async def test_stale_reverse_index_entry_is_healed_by_delivery(rp):
    """A delete_list cut short after its script leaves listed_in entries behind;
    the next delivery that meets one drops it instead of writing to the list."""
    o = await rp.accounts.sign_up("owner")
    m = await rp.accounts.sign_up("member")
    await rp.relations.follow(o.id, m.id)
    lst = await rp.lists.create(o.id, "gone soon")
    await rp.lists.add(o.id, lst.id, m.id)
    await rp.store.run(
        "list_drop",
        [keys.lists(o.id), keys.list_members(o.id, lst.id), keys.list_timeline(o.id, lst.id)],
        [lst.id],
    )
    assert await listed_in(rp, m.id) == {keys.listed_member(o.id, lst.id)}
    await rp.statuses.post(m.id, "hello")
    await rp.drain()
    assert await listed_in(rp, m.id) == set()
    assert not await rp.store.client.exists(keys.list_timeline(o.id, lst.id))


async def test_concurrent_add_remove_keeps_both_sides_in_agreement(rp):
    o = await rp.accounts.sign_up("owner")
    ms = [await rp.accounts.sign_up(f"m{i}") for i in range(5)]
    for m in ms:
        await rp.statuses.post(m.id, f"s {m.login}")
        await rp.relations.follow(o.id, m.id)
    lst = await rp.lists.create(o.id, "busy")
    calls = []
    for round_ in range(12):
        for i, m in enumerate(ms):
            add = (round_ + i) % 2 == 0
            calls.append(
                rp.lists.add(o.id, lst.id, m.id) if add else rp.lists.remove(o.id, lst.id, m.id)
            )
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert [r for r in results if isinstance(r, BaseException)] == []
    await rp.drain()
    inside = await member_ids(rp, o.id, lst.id)
    tag = keys.listed_member(o.id, lst.id)
    posts = {}
    for m in ms:
        assert (m.id in inside) == (tag in await listed_in(rp, m.id)), m.login
        posts[m.id] = {int(x) for x in await rp.store.client.zrange(keys.profile(m.id), 0, -1)}
    want = set().union(*(posts[uid] for uid in inside))
    assert set(await raw_list(rp, keys.list_timeline(o.id, lst.id))) == want


# --- only accounts the owner follows ------------------------------------------------------
async def test_only_accounts_the_owner_follows_can_be_added(rp):
    """As Mastodon's: adding an account the owner does not follow is refused
    and changes nothing; once followed it is added, with its backfill; the
    owner may list themselves."""
    o = await rp.accounts.sign_up("owner")
    m = await rp.accounts.sign_up("member")
    s = await rp.statuses.post(m.id, "hello")
    lst = await rp.lists.create(o.id, "l")
    with pytest.raises(ValidationError) as refused:
        await rp.lists.add(o.id, lst.id, m.id)
    assert "follow" in str(refused.value)
    assert await member_ids(rp, o.id, lst.id) == set()
    assert await listed_in(rp, m.id) == set()
    assert await raw_list(rp, keys.list_timeline(o.id, lst.id)) == []

    await rp.relations.follow(o.id, m.id)
    assert await rp.lists.add(o.id, lst.id, m.id) is True
    assert await member_ids(rp, o.id, lst.id) == {m.id}
    assert await listed_in(rp, m.id) == {keys.listed_member(o.id, lst.id)}
    assert [x.id for x in await rp.timelines.of_list(o.id, lst.id)] == [s.id]
    mine = await rp.statuses.post(o.id, "me")
    assert await rp.lists.add(o.id, lst.id, o.id) is True
    assert await member_ids(rp, o.id, lst.id) == {m.id, o.id}
    assert [x.id for x in await rp.timelines.of_list(o.id, lst.id)] == [mine.id, s.id]


async def test_unfollow_takes_the_account_out_of_every_list(rp):
    """As Mastodon's UnfollowService: the account leaves the owner's lists
    (both sides, its statuses out of their timelines), and what it posts
    later reaches none of them; the other members stay."""
    o = await rp.accounts.sign_up("owner")
    m = await rp.accounts.sign_up("member")
    keep = await rp.accounts.sign_up("keep")
    for u in (m, keep):
        await rp.relations.follow(o.id, u.id)
    gone_s = await rp.statuses.post(m.id, "going")
    kept_s = await rp.statuses.post(keep.id, "staying")
    one, two = await rp.lists.create(o.id, "one"), await rp.lists.create(o.id, "two")
    for lst in (one, two):
        await rp.lists.add(o.id, lst.id, m.id)
    await rp.lists.add(o.id, one.id, keep.id)
    assert gone_s.id in await raw_list(rp, keys.list_timeline(o.id, two.id))

    assert await rp.relations.unfollow(o.id, m.id) is True
    assert await member_ids(rp, o.id, one.id) == {keep.id}
    assert await member_ids(rp, o.id, two.id) == set()
    assert [u.id for u in await rp.lists.members(o.id, one.id)] == [keep.id]
    assert await listed_in(rp, m.id) == set()
    assert await raw_list(rp, keys.list_timeline(o.id, one.id)) == [kept_s.id]
    assert await raw_list(rp, keys.list_timeline(o.id, two.id)) == []
    later = await rp.statuses.post(m.id, "after the unfollow")
    await rp.drain()
    assert later.id not in await raw_list(rp, keys.list_timeline(o.id, one.id))
    assert [x.id for x in await rp.timelines.of_list(o.id, two.id)] == []
    assert [x.id for x in await rp.timelines.of_list(o.id, one.id)] == [kept_s.id]
    # following again does not put it back in the lists
    await rp.relations.follow(o.id, m.id)
    assert await member_ids(rp, o.id, one.id) == {keep.id}


@pytest.mark.parametrize("who_blocks", ["owner", "member"])
async def test_a_block_either_way_takes_the_account_out_of_lists(rp, who_blocks):
    o = await rp.accounts.sign_up("owner")
    m = await rp.accounts.sign_up("member")
    await rp.relations.follow(o.id, m.id)
    await rp.relations.follow(m.id, o.id)
    lst = await rp.lists.create(o.id, "l")
    theirs = await rp.lists.create(m.id, "theirs")
    await rp.lists.add(o.id, lst.id, m.id)
    await rp.lists.add(m.id, theirs.id, o.id)
    await rp.statuses.post(m.id, "before")
    await (
        rp.relations.block(o.id, m.id) if who_blocks == "owner" else rp.relations.block(m.id, o.id)
    )
    for owner, lid, member in ((o, lst, m), (m, theirs, o)):
        assert await member_ids(rp, owner.id, lid.id) == set()
        assert await listed_in(rp, member.id) == set()
        assert await raw_list(rp, keys.list_timeline(owner.id, lid.id)) == []
    await rp.statuses.post(m.id, "after")
    await rp.drain()
    assert await raw_list(rp, keys.list_timeline(o.id, lst.id)) == []


async def test_a_pending_request_may_be_listed_until_it_is_refused(rp):
    """As Mastodon's: an account one has asked to follow (locked) may be
    listed; its public statuses show, its private ones only once the request
    is authorized (then merged in); a refused or withdrawn request takes it
    out of the lists."""
    o = await rp.accounts.sign_up("owner")
    lou = await rp.accounts.sign_up("lou")
    await rp.accounts.update_profile(lou.id, locked=True)
    open_s = await rp.statuses.post(lou.id, "for all")
    secret = await rp.statuses.post(lou.id, "followers only", {"visibility": "private"})
    lst = await rp.lists.create(o.id, "l")
    await rp.relations.follow(o.id, lou.id)  # a request
    assert not await rp.relations.is_following(o.id, lou.id)
    assert await rp.lists.add(o.id, lst.id, lou.id) is True
    assert await raw_list(rp, keys.list_timeline(o.id, lst.id)) == [open_s.id]
    assert await rp.relations.authorize_follow(lou.id, o.id) is True
    assert await member_ids(rp, o.id, lst.id) == {lou.id}
    assert await raw_list(rp, keys.list_timeline(o.id, lst.id)) == [secret.id, open_s.id]

    other = await rp.accounts.sign_up("other")
    mine = await rp.lists.create(other.id, "mine")
    await rp.relations.follow(other.id, lou.id)
    await rp.lists.add(other.id, mine.id, lou.id)
    assert await rp.relations.reject_follow(lou.id, other.id) is True
    assert await member_ids(rp, other.id, mine.id) == set()
    assert await listed_in(rp, lou.id) == {keys.listed_member(o.id, lst.id)}
    await rp.relations.follow(other.id, lou.id)
    await rp.lists.add(other.id, mine.id, lou.id)
    await rp.relations.unfollow(other.id, lou.id)  # withdrawn
    assert await member_ids(rp, other.id, mine.id) == set()
    with pytest.raises(ValidationError):
        await rp.lists.add(other.id, mine.id, lou.id)


async def test_an_unfollow_cut_short_leaves_the_lists_to_its_journal(rp):
    """The lists' step of an unfollow is idempotent and retried: an unfollow
    cut short after the follow went (its journal, a FollowNoteJob, still
    held) has the worker that takes the journal over take the account out
    of the lists; calling unfollow again does it too."""
    o = await rp.accounts.sign_up("owner")
    m = await rp.accounts.sign_up("member")
    await rp.relations.follow(o.id, m.id)
    s = await rp.statuses.post(m.id, "hi")
    lst = await rp.lists.create(o.id, "l")
    await rp.lists.add(o.id, lst.id, m.id)
    await rp.drain()
    # cut short: the follow went, nothing after it ran
    assert await edges.remove(rp.store, edges.follow_edge(o.id, m.id))
    assert await member_ids(rp, o.id, lst.id) == {m.id}
    await rp.queue.enqueue(FollowNoteJob(o.id, m.id))  # the journal taken over
    await rp.drain()
    assert await member_ids(rp, o.id, lst.id) == set()
    assert await listed_in(rp, m.id) == set()
    assert s.id not in await raw_list(rp, keys.list_timeline(o.id, lst.id))
    # and again by hand: the same, nothing more
    await rp.store.client.zadd(keys.list_members(o.id, lst.id), {str(m.id): 1})
    assert await rp.relations.unfollow(o.id, m.id) is False
    assert await member_ids(rp, o.id, lst.id) == set()


async def test_adds_racing_unfollows_never_leave_an_unfollowed_member(rp):
    """The add's check of the follow is atomic with the add (edge_set.lua);
    an unfollow takes the account out after its follow went: whatever the
    interleaving, a member the owner no longer follows is not left."""
    o = await rp.accounts.sign_up("owner")
    ms = [await rp.accounts.sign_up(f"m{i}") for i in range(4)]
    lst = await rp.lists.create(o.id, "busy")
    for round_ in range(6):
        for m in ms:
            await rp.relations.follow(o.id, m.id)
        calls = []
        for i, m in enumerate(ms):
            calls.append(rp.lists.add(o.id, lst.id, m.id))
            if (round_ + i) % 2 == 0:
                calls.append(rp.relations.unfollow(o.id, m.id))
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert all(
            not isinstance(r, BaseException) or isinstance(r, ValidationError) for r in results
        ), results
        inside = await member_ids(rp, o.id, lst.id)
        tag = keys.listed_member(o.id, lst.id)
        for m in ms:
            followed = await rp.relations.is_following(o.id, m.id)
            assert followed or m.id not in inside, (round_, m.login)
            assert (m.id in inside) == (tag in await listed_in(rp, m.id)), m.login
    await rp.drain()
