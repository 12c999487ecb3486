"""Trends and suggestions in the engine: trending hashtags and links by
growth over their own week (a clock passed in, never slept on), trending
statuses by favourites and boosts within their window, shown as the viewer
may see them; who to follow, from the follow graph and the most followed,
with everything that must never be suggested left out."""

from __future__ import annotations

import pytest

from redpoll.conversations import tag_history
from redpoll.core import keys, limits
from redpoll.core.errors import ValidationError
from redpoll.core.models import now_ms
from redpoll.moderation import moderation
from redpoll.trends import history, links, ranking

DAY = 86_400_000


async def users(rp, prefix, n):
    return [await rp.accounts.sign_up(f"{prefix}{i}") for i in range(n)]


def names(found):
    return [t.name for t in found]


async def test_a_tag_new_today_outranks_one_used_as_much_every_day_and_expires(rp):
    people = await users(rp, "tg", 4)
    now = now_ms()
    for u in people[:3]:  # three accounts today: #fresh and #steady
        await rp.statuses.post(u.id, "news #Fresh #steady")
    await rp.statuses.post(people[3].id, "just #small")
    # #steady was used by three accounts on each of the five days before
    for back in range(2, 7):
        for u in people[:3]:
            await tag_history.count_use(
                rp.store, ["steady"], 10_000 + back * 10 + u.id, u.id, now - back * DAY
            )
    found = await rp.discovery.trending_tags(None, now=now)
    assert names(found) == ["fresh", "small"]  # steady grew by nothing: no trend
    fresh = found[0]
    assert (fresh.history[0].uses, fresh.history[0].accounts) == (3, 3)
    assert len(fresh.history) == limits.TAG_HISTORY_DAYS and not fresh.following
    # the viewer's following flag; limit and offset
    await rp.tags.follow(people[0].id, "small")
    found = await rp.discovery.trending_tags(people[0].id, now=now)
    assert [(t.name, t.following) for t in found] == [("fresh", False), ("small", True)]
    assert names(await rp.discovery.trending_tags(None, limit=1, offset=1, now=now)) == ["small"]
    # two days later nothing posted since is recent any more
    assert await rp.discovery.trending_tags(None, now=now + 2 * DAY) == []
    with pytest.raises(ValidationError):
        await rp.discovery.trending_tags(None, offset=-1, now=now)
    with pytest.raises(ValidationError):  # past the window read
        await rp.discovery.trending_tags(None, offset=limits.TRENDS_WINDOW, now=now)


async def test_only_public_statuses_count_and_a_replay_counts_nothing_twice(rp):
    [ann, bob] = await users(rp, "tp", 2)
    await rp.statuses.post(ann.id, "quiet #hushed", extra={"visibility": "unlisted"})
    await rp.statuses.post(
        bob.id, "secret #hushed https://example.org/x", extra={"visibility": "private"}
    )
    assert (
        await rp.discovery.trending_tags(None) == [] and await rp.discovery.trending_links() == []
    )
    status = await rp.statuses.post(ann.id, "loud #heard")
    await tag_history.count_use(rp.store, ["heard"], status.id, ann.id, status.created_at)
    [heard] = await rp.discovery.trending_tags(None)
    assert (heard.name, heard.history[0].uses, heard.history[0].accounts) == ("heard", 1, 1)


def test_the_score_is_growth_of_the_last_day_over_the_days_before():
    def days(*accounts):
        return tuple(history.Day(0, a, a) for a in accounts)

    noon = 10 * DAY + DAY // 2
    # half of yesterday still counts at noon
    assert ranking.score(days(4, 2, 0, 0, 0, 0, 0), noon) == (5.0, 5.0)
    assert ranking.score(days(4, 0, 2, 2, 2, 2, 2), noon) == (2.0, 4.0)
    assert ranking.score(days(2, 0, 2, 2, 2, 2, 2), noon)[0] == 0.0


def test_links_are_found_normalized_and_titled_by_host_and_path():
    text = (
        "see HTTPS://Example.COM/a/b?x=1#top, and (https://example.com/a/b?x=1) "
        "and http://localhost/no and ftp://x.org/y https://news.example.net."
    )
    assert links.parse(text) == ["https://example.com/a/b?x=1", "https://news.example.net/"]
    assert links.title("https://example.com/a/b?x=1") == "example.com/a/b"
    assert links.title("https://news.example.net/") == "news.example.net"


async def test_trending_links_count_accounts_not_statuses(rp):
    [ann, bob, cat] = await users(rp, "tl", 3)
    for _ in range(3):
        await rp.statuses.post(ann.id, "again https://one.example/page")
    for u in (bob, cat):
        await rp.statuses.post(u.id, "look https://two.example/ it is good")
    found = await rp.discovery.trending_links()
    assert [t.item for t in found] == ["https://two.example/", "https://one.example/page"]
    assert (found[1].history[0].uses, found[1].history[0].accounts) == (3, 1)
    assert await rp.discovery.trending_links(now=now_ms() + 2 * DAY) == []


async def test_trending_statuses_rank_by_favourites_and_boosts_within_the_window(rp):
    [ann, bob, cat, dan] = await users(rp, "ts", 4)
    one = await rp.statuses.post(ann.id, "one")
    two = await rp.statuses.post(bob.id, "two")
    await rp.statuses.post(cat.id, "nobody likes me")
    hidden = await rp.statuses.post(cat.id, "followers only", extra={"visibility": "private"})
    for u in (bob, cat, dan):
        await rp.statuses.favourite(u.id, two.id)
    await rp.statuses.favourite(bob.id, one.id)
    await rp.statuses.boost(cat.id, one.id)
    await rp.statuses.favourite(ann.id, hidden.id)
    await rp.drain()

    def ids(shown):
        return [s.id for s in shown.statuses]

    assert ids(await rp.discovery.trending_page(None)) == [two.id, one.id]
    assert ids(await rp.discovery.trending_page(None, limit=1, offset=1)) == [one.id]
    # counts are read when ranking: two unfavourites put one first
    await rp.statuses.unfavourite(cat.id, two.id)
    await rp.statuses.unfavourite(dan.id, two.id)
    assert ids(await rp.discovery.trending_page(None)) == [one.id, two.id]
    # the viewer's blocks and mutes apply
    await rp.relations.block(dan.id, ann.id)
    await rp.relations.mute(cat.id, bob.id)
    assert ids(await rp.discovery.trending_page(dan.id)) == [two.id]
    assert ids(await rp.discovery.trending_page(cat.id)) == [one.id]
    # past the window nothing trends
    later = now_ms() + limits.TRENDS_STATUS_WINDOW_S * 1000 + 1000
    assert ids(await rp.discovery.trending_page(None, now=later)) == []
    # a deleted status leaves the trends
    await rp.statuses.delete(one.id, ann.id)
    assert ids(await rp.discovery.trending_page(None)) == [two.id]


async def test_suggestions_are_friends_of_friends_then_the_most_followed(rp):
    me, a, b, x, y, z, pop, other, c = await users(rp, "sg", 9)
    await rp.relations.follow(me.id, a.id)
    await rp.relations.follow(me.id, b.id)
    for f in (a, b):
        await rp.relations.follow(f.id, x.id)  # followed by both of my followees
    await rp.relations.follow(b.id, y.id)  # by one
    await rp.relations.follow(a.id, me.id)  # me: never suggested to myself
    for u in (c, z, other, y, x):
        await rp.relations.follow(u.id, pop.id)  # the most followed, by none of my followees
    await rp.relations.follow(c.id, z.id)
    await rp.drain()  # the follows' jobs set the most followed

    found = await rp.discovery.suggestions(me.id)
    assert [s.user.id for s in found[:3]] == [x.id, y.id, pop.id]
    assert found[0].sources == ("friends_of_friends", "most_followed")  # x has 2 followers
    assert found[0].source == "past_interactions"
    assert found[2].sources == ("most_followed",) and found[2].source == "global"
    assert {s.user.id for s in found} & {me.id, a.id, b.id} == set()
    assert [s.user.id for s in await rp.discovery.suggestions(me.id, limit=2)] == [x.id, y.id]

    # what is never suggested
    await rp.relations.block(me.id, x.id)
    await rp.relations.mute(me.id, y.id)
    await rp.discovery.dismiss_suggestion(me.id, pop.id)
    await rp.accounts.update_profile(other.id, discoverable=False)
    await moderation.suspend(rp.store, z.login)
    await rp.accounts.update_profile(c.id, locked=True)
    await rp.relations.follow(me.id, c.id)  # a request, pending
    left = {s.user.id for s in await rp.discovery.suggestions(me.id)}
    assert left & {x.id, y.id, pop.id, other.id, z.id, c.id, me.id, a.id, b.id} == set()
    await rp.relations.unblock(me.id, x.id)
    assert x.id in {s.user.id for s in await rp.discovery.suggestions(me.id)}


async def test_a_newcomer_is_suggested_the_most_followed_in_order(rp):
    [fan1, fan2, fan3, big, mid, newcomer] = await users(rp, "sn", 6)
    for f in (fan1, fan2, fan3):
        await rp.relations.follow(f.id, big.id)
    await rp.relations.follow(fan1.id, mid.id)
    await rp.drain()
    found = await rp.discovery.suggestions(newcomer.id)
    assert [s.user.id for s in found] == [big.id, mid.id]
    assert all(s.sources == ("most_followed",) and s.source == "global" for s in found)
    await rp.relations.unfollow(fan1.id, mid.id)
    await rp.drain()
    assert [s.user.id for s in await rp.discovery.suggestions(newcomer.id)] == [big.id]


async def test_a_deleted_account_leaves_the_most_followed(rp):
    [fan, gone, newcomer] = await users(rp, "sd", 3)
    await rp.relations.follow(fan.id, gone.id)
    await rp.drain()
    assert [s.user.id for s in await rp.discovery.suggestions(newcomer.id)] == [gone.id]
    await moderation.delete_account(rp.store, rp.queue, gone.login)
    await rp.drain()
    await moderation.delete_account(rp.store, rp.queue, gone.login)  # the purge, after its jobs
    assert await rp.store.zscore(keys.POPULAR_ACCOUNTS, gone.id) is None
    assert await rp.discovery.suggestions(newcomer.id) == []
