"""All or nothing for the conversation's actions: each call is cut
short at its k-th await point, for every k until it finishes on its own;
after the jobs drain, the world is either untouched or fully changed, and
the records on the different slots agree."""

from __future__ import annotations

from support.cutshort import drive  # noqa: F401
from support.integrity import assert_clean  # noqa: F401

from redpoll.core import keys

MAX_STEPS = 300


async def every_cut(make_call, check):
    for k in range(MAX_STEPS):
        finished = await drive(make_call(k), k)
        await check(k, finished)
        if finished:
            return k
    raise AssertionError("the call never finished")


async def test_favourite_cut_short_anywhere(rp):
    ann = await rp.accounts.sign_up("ann")
    fans = [await rp.accounts.sign_up(f"f{i}") for i in range(MAX_STEPS)]
    status = await rp.statuses.post(ann.id, "x")
    c = rp.store.client

    async def check(k, finished):
        await rp.drain()
        fan = fans[k]
        truth = await c.zscore(keys.favourited_by(status.id), fan.id) is not None
        flag = await c.zscore(keys.favourites(fan.id), status.id) is not None
        noted = any(
            n.actor == fan.id
            for n in await rp.notifications.listed(ann.id, limit=80, account_id=fan.id)
        )
        assert truth == flag == noted, (k, truth, flag, noted)
        assert truth or not finished
        members = await c.zcard(keys.favourited_by(status.id))
        [state] = await rp.statuses.states(None, [status.id])
        assert state.favourites == members

    steps = await every_cut(lambda k: rp.statuses.favourite(fans[k].id, status.id), check)
    assert steps > 0  # (how many await points there are depends on the client)
    await assert_clean(rp)


async def test_boost_cut_short_anywhere(rp):
    ann, fan = await rp.accounts.sign_up("ann"), await rp.accounts.sign_up("fan")
    boosters = [await rp.accounts.sign_up(f"b{i}") for i in range(MAX_STEPS)]
    for b in boosters[:40]:
        await rp.relations.follow(fan.id, b.id)
    status = await rp.statuses.post(ann.id, "x")
    c = rp.store.client

    async def check(k, finished):
        await rp.drain()
        b = boosters[k]
        bid = await c.zscore(keys.reblogged_by(status.id), b.id)
        flag = await c.zscore(keys.reblogs(b.id), status.id)
        noted = bool(await rp.notifications.listed(ann.id, account_id=b.id))
        profile = [int(x) for x in await c.zrange(keys.profile(b.id), 0, -1)]
        assert (bid is None) == (flag is None) == (not noted) == (not profile), (k, bid, flag)
        assert bid is not None or not finished
        if bid is not None:
            assert profile == [int(bid)] and await rp.statuses.get_statuses([int(bid)])

    await every_cut(lambda k: rp.statuses.boost(boosters[k].id, status.id), check)
    # the fan follows the first 40 boosters: their home holds one boost of it
    standing = {
        int(s) for _, s in await c.zrange(keys.reblogged_by(status.id), 0, -1, withscores=True)
    }
    home = [int(x) for x in await c.lrange(keys.home(fan.id), 0, -1)]
    assert len(standing & set(home)) == 1
    await assert_clean(rp)


async def test_follow_notification_cut_short_anywhere(rp):
    ann = await rp.accounts.sign_up("ann")
    fans = [await rp.accounts.sign_up(f"f{i}") for i in range(MAX_STEPS)]
    c = rp.store.client

    async def check(k, finished):
        await rp.drain()
        fan = fans[k]
        follows = await c.zscore(keys.following(fan.id), ann.id) is not None
        followed = await c.zscore(keys.followers(ann.id), fan.id) is not None
        noted = bool(await rp.notifications.listed(ann.id, account_id=fan.id))
        assert follows == noted, (k, follows, noted)
        assert follows == followed, (k, follows, followed)  # both sides of the edge
        assert follows or not finished

    await every_cut(lambda k: rp.relations.follow(fans[k].id, ann.id), check)
    await assert_clean(rp)  # (the journal mends a cut between the two sides)


async def test_unfollow_cut_short_anywhere_leaves_both_sides_agreeing(rp):
    ann = await rp.accounts.sign_up("ann")
    fans = [await rp.accounts.sign_up(f"f{i}") for i in range(MAX_STEPS)]
    c = rp.store.client

    async def check(k, finished):
        await rp.drain()
        fan = fans[k]
        follows = await c.zscore(keys.following(fan.id), ann.id) is not None
        followed = await c.zscore(keys.followers(ann.id), fan.id) is not None
        assert follows == followed, (k, follows, followed)
        assert not follows or not finished

    for k in range(MAX_STEPS):
        await rp.relations.follow(fans[k].id, ann.id)
    await rp.drain()
    await every_cut(lambda k: rp.relations.unfollow(fans[k].id, ann.id), check)


async def test_unfollow_cut_short_anywhere_leaves_no_unfollowed_list_member(rp):
    """An unfollow takes the account out of the owner's lists after the
    follow went (redpoll.relations.unlisting): cut short anywhere, once the
    jobs drain (its journal taken over), a list holds the account only while
    the owner still follows it, and both sides of the membership agree."""
    ann = await rp.accounts.sign_up("ann")
    await rp.statuses.post(ann.id, "x")
    c = rp.store.client
    owners, lists = [], []
    for i in range(60):
        o = await rp.accounts.sign_up(f"o{i}")
        await rp.relations.follow(o.id, ann.id)
        lst = await rp.lists.create(o.id, "l")
        await rp.lists.add(o.id, lst.id, ann.id)
        owners.append(o)
        lists.append(lst)
    await rp.drain()

    async def check(k, finished):
        await rp.drain()
        o, lst = owners[k], lists[k]
        follows = await c.zscore(keys.following(o.id), ann.id) is not None
        member = await c.zscore(keys.list_members(o.id, lst.id), ann.id) is not None
        listed = await c.zscore(keys.listed_in(ann.id), keys.listed_member(o.id, lst.id))
        assert member == (listed is not None), (k, member, listed)
        assert follows or not member, (k, follows, member)
        assert not follows or not finished
        if not member:
            assert await c.llen(keys.list_timeline(o.id, lst.id)) == 0, k

    await every_cut(lambda k: rp.relations.unfollow(owners[k].id, ann.id), check)
    await assert_clean(rp)  # the journal mended the far side of any cut between the two
