"""Named bounds of the conversation's growing structures: each
test goes past one bound (lowered for the test) and checks the structure
stays within it, and that caps checked in a script hold under races."""

from __future__ import annotations

import asyncio

import pytest

from redpoll.conversations import tags
from redpoll.core import keys, limits
from redpoll.core.errors import Conflict, ValidationError


async def users(rp, prefix, n):
    return [await rp.accounts.sign_up(f"{prefix}{i}") for i in range(n)]


async def test_favourite_and_boost_versions_keep_a_bounded_few_undone(rp, monkeypatch):
    monkeypatch.setattr(limits, "VERSIONS_UNDONE_KEPT", 3)
    [author, keeper, fan] = await users(rp, "vauthor", 3)
    others = await users(rp, "vfan", 6)
    status = await rp.statuses.post(author.id, "counted")
    await rp.statuses.favourite(keeper.id, status.id)
    await rp.statuses.boost(keeper.id, status.id)
    for user in others:
        await rp.statuses.favourite(user.id, status.id)
        await rp.statuses.unfavourite(user.id, status.id)
        await rp.statuses.boost(user.id, status.id)
        await rp.statuses.unboost(user.id, status.id)
    c = rp.store.client
    # the standing favourite/boost and the 3 newest undone ones
    assert await c.hlen(keys.favourite_versions(status.id)) == 1 + 3
    assert await c.hlen(keys.reblog_versions(status.id)) == 1 + 3
    assert set(await c.hkeys(keys.favourite_versions(status.id))) == {
        str(u.id).encode() for u in [keeper, *others[-3:]]
    }
    assert await c.zcard(keys.versions_undone(keys.favourite_versions(status.id))) == 3
    [state] = await rp.statuses.states(keeper.id, [status.id])
    assert (state.favourites, state.reblogs, state.favourited) == (1, 1, True)
    # one user's own versions: favourites and boosts of many statuses undone
    posts = [await rp.statuses.post(author.id, f"p{i}") for i in range(6)]
    for post in posts:
        await rp.statuses.favourite(fan.id, post.id)
        await rp.statuses.unfavourite(fan.id, post.id)
        await rp.statuses.boost(fan.id, post.id)
        await rp.statuses.unboost(fan.id, post.id)
    await rp.statuses.favourite(fan.id, status.id)
    assert await c.hlen(keys.favourite_applied(fan.id)) == 1 + 3
    assert await c.hlen(keys.reblog_applied(fan.id)) == 3
    assert await c.zcard(keys.versions_undone(keys.reblog_applied(fan.id))) == 3


async def test_notification_index_keeps_a_bounded_few_undone_or_dismissed(rp, monkeypatch):
    from redpoll.notifications import notifications

    monkeypatch.setattr(limits, "NOTIFICATION_INDEX_DONE_KEPT", 3)
    [author] = await users(rp, "nauthor", 1)
    fans = await users(rp, "nfan", 6)
    status = await rp.statuses.post(author.id, "x")
    await rp.statuses.favourite(fans[0].id, status.id)
    [note] = await rp.notifications.listed(author.id)
    await notifications.dismiss(rp.store, author.id, note.id)
    c = rp.store.client
    assert await c.hlen(keys.notification_index(author.id)) == 1  # dismissed: remembered
    await rp.statuses.favourite(fans[0].id, status.id)  # ... so a repeat does not notify again
    assert await rp.notifications.listed(author.id) == []
    for fan in fans[1:]:
        await rp.statuses.favourite(fan.id, status.id)
        await rp.statuses.unfavourite(fan.id, status.id)
    # the dismissed one was the oldest: it went with the undone past the bound
    assert await c.hlen(keys.notification_index(author.id)) == 3
    assert await c.zcard(keys.notification_index_done(author.id)) == 3
    await rp.statuses.favourite(fans[-1].id, status.id)
    assert [n.actor for n in await rp.notifications.listed(author.id)] == [fans[-1].id]


async def test_home_remembers_a_bounded_number_of_boosts(rp, monkeypatch):
    monkeypatch.setattr(limits, "HOME_REBLOGS_KEPT", 3)
    [reader, booster, author] = await users(rp, "hb", 3)
    await rp.relations.follow(reader.id, booster.id)
    posts = [await rp.statuses.post(author.id, f"b{i}") for i in range(6)]
    boosts = [await rp.statuses.boost(booster.id, p.id) for p in posts]
    await rp.drain()
    home = [s.id for s in await rp.timelines.home(reader.id)]
    assert home[:6] == list(reversed(boosts))
    assert await rp.store.client.zcard(keys.home_reblogs(reader.id)) == 3
    # the newest are the ones kept, by boost id
    kept = await rp.store.client.zrange(keys.home_reblogs(reader.id), 0, -1, withscores=True)
    assert [int(score) for _, score in kept] == boosts[-3:]


async def test_followed_tags_cap_holds_under_racing_follows(rp, monkeypatch):
    monkeypatch.setattr(limits, "FOLLOWED_TAGS_MAX", 3)
    [user] = await users(rp, "tagger", 1)
    names = [f"racetag{i}" for i in range(8)]
    results = await asyncio.gather(
        *(tags.set_following(rp.store, rp.queue, user.id, n, True) for n in names),
        return_exceptions=True,
    )
    assert sum(isinstance(r, Conflict) for r in results) == 5
    assert [r for r in results if not isinstance(r, Exception) and not r.following] == []
    assert await rp.store.client.zcard(keys.followed_tags(user.id)) == 3
    assert len(await tags.followed(rp.store, user.id)) == 3
    # following one followed already is not refused at the cap
    followed = (await tags.followed(rp.store, user.id))[0]
    assert (await tags.set_following(rp.store, rp.queue, user.id, followed, True)).following


async def test_bookmarks_cap_holds_under_racing_bookmarks(rp, monkeypatch):
    monkeypatch.setattr(limits, "BOOKMARKS_MAX", 2)
    [author, reader] = await users(rp, "bm", 2)
    posts = [await rp.statuses.post(author.id, f"m{i}") for i in range(5)]
    results = await asyncio.gather(
        *(rp.statuses.bookmark(reader.id, p.id) for p in posts), return_exceptions=True
    )
    assert sum(isinstance(r, ValidationError) for r in results) == 3
    assert await rp.store.client.zcard(keys.bookmarks(reader.id)) == 2


async def test_favourites_cap_refuses_and_writes_nothing(rp, monkeypatch):
    monkeypatch.setattr(limits, "FAVOURITES_MAX", 2)
    [author, fan] = await users(rp, "fv", 2)
    posts = [await rp.statuses.post(author.id, f"f{i}") for i in range(3)]
    await rp.statuses.favourite(fan.id, posts[0].id)
    await rp.statuses.favourite(fan.id, posts[1].id)
    await rp.statuses.favourite(fan.id, posts[1].id)  # favourited already: not refused
    with pytest.raises(ValidationError):
        await rp.statuses.favourite(fan.id, posts[2].id)
    [state] = await rp.statuses.states(fan.id, [posts[2].id])
    assert (state.favourites, state.favourited) == (0, False)
    assert await rp.store.client.zcard(keys.favourites(fan.id)) == 2
    assert len(await rp.notifications.listed(author.id)) == 2


async def test_boosts_cap_refuses_and_writes_nothing(rp, monkeypatch):
    monkeypatch.setattr(limits, "REBLOGS_MAX", 2)
    [author, fan] = await users(rp, "bv", 2)
    posts = [await rp.statuses.post(author.id, f"b{i}") for i in range(3)]
    first = await rp.statuses.boost(fan.id, posts[0].id)
    await rp.statuses.boost(fan.id, posts[1].id)
    assert await rp.statuses.boost(fan.id, posts[0].id) == first  # boosted already: not refused
    with pytest.raises(ValidationError):
        await rp.statuses.boost(fan.id, posts[2].id)
    [state] = await rp.statuses.states(fan.id, [posts[2].id])
    assert (state.reblogs, state.reblogged) == (0, False)
    assert await rp.store.client.zcard(keys.reblogs(fan.id)) == 2
    await rp.statuses.unboost(fan.id, posts[0].id)  # room again
    await rp.statuses.boost(fan.id, posts[2].id)
    assert await rp.store.client.zcard(keys.reblogs(fan.id)) == 2
