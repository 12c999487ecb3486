"""redpoll/relations/visibility.py: the one decision, and delivery by the same rule.
Engine level, both modes; the read paths are in test_leak_matrix."""

from __future__ import annotations

import pytest

from redpoll import Redpoll
from redpoll.core.errors import Forbidden, StatusNotFound, ValidationError
from redpoll.relations import visibility


def test_the_rule():
    men = frozenset({7})
    for vis in ("public", "unlisted"):
        assert visibility.can_see(None, 1, vis, men, False)
    for vis in ("private", "direct"):
        assert not visibility.can_see(None, 1, vis, men, False)
        assert visibility.can_see(1, 1, vis, men, False)  # the author
        assert visibility.can_see(7, 1, vis, men, False)  # the mentioned
        assert not visibility.can_see(9, 1, vis, men, False)
    assert visibility.can_see(9, 1, "private", men, True)  # a follower
    assert not visibility.can_see(9, 1, "direct", men, True)
    assert visibility.mentioned_ids("7:men 12:bob") == {7, 12}


async def _people(rp, prefix, n):
    return [await rp.accounts.sign_up(f"{prefix}{i}") for i in range(n)]


async def test_direct_and_private_reach_only_their_audience_across_batches(settings):
    # a fan-out batch of 2: the follower list is served in several jobs
    rp = await Redpoll.open(settings.with_(fanout_batch=2))
    try:
        author, mentioned, stranger, lister = await _people(rp, "vis", 4)
        fans = await _people(rp, "visfan", 5)
        for fan in fans:
            await rp.relations.follow(fan.id, author.id)
        fan_list = await rp.lists.create(fans[0].id, "a fan's list")
        await rp.lists.add(fans[0].id, fan_list.id, author.id)
        # a list may hold an account its owner has only asked to follow (as Mastodon's)
        await rp.accounts.update_profile(author.id, locked=True)
        await rp.relations.follow(lister.id, author.id)  # a request
        other_list = await rp.lists.create(lister.id, "not following")
        await rp.lists.add(lister.id, other_list.id, author.id)
        posted = {
            vis: await rp.statuses.post(
                author.id, f"{vis} for @{mentioned.login}", {"visibility": vis}
            )
            for vis in visibility.ALL
        }
        await rp.drain()

        async def home(user):
            return {s.id for s in await rp.timelines.home(user.id, limit=40)}

        ids = {vis: s.id for vis, s in posted.items()}
        for fan in fans:
            assert await home(fan) == {ids["public"], ids["unlisted"], ids["private"]}
        assert await home(mentioned) == set(ids.values())
        assert await home(author) == set(ids.values())
        assert await home(stranger) == set()
        fan_lt = {s.id for s in await rp.timelines.of_list(fans[0].id, fan_list.id, limit=40)}
        assert fan_lt == {ids["public"], ids["unlisted"], ids["private"]}
        other_lt = {s.id for s in await rp.timelines.of_list(lister.id, other_list.id, limit=40)}
        assert other_lt == {ids["public"], ids["unlisted"]}  # never a private one
        public = {s.id for s in await rp.timelines.public(limit=40)}
        assert ids["public"] in public and not public & {ids[v] for v in visibility.ALL[1:]}
        # reads decide again: no follow, no private status, whatever a page holds
        statuses = list(posted.values())
        seen = {s.id for s in await visibility.visible(rp.store, stranger.id, statuses)}
        assert seen == {ids["public"], ids["unlisted"]}
        seen = {s.id for s in await visibility.visible(rp.store, None, statuses)}
        assert seen == {ids["public"], ids["unlisted"]}
        await rp.relations.unfollow(fans[1].id, author.id)
        seen = {s.id for s in await visibility.visible(rp.store, fans[1].id, statuses)}
        assert seen == {ids["public"], ids["unlisted"]}
        with pytest.raises(StatusNotFound):
            await visibility.require(rp.store, fans[1].id, posted["private"])
    finally:
        await rp.close()


async def test_boosting_hidden_statuses_is_refused_and_writes_nothing(rp):
    author, fan = await _people(rp, "boo", 2)
    await rp.relations.follow(fan.id, author.id)
    private = await rp.statuses.post(author.id, "followers only", {"visibility": "private"})
    direct = await rp.statuses.post(author.id, f"just @{fan.login}", {"visibility": "direct"})
    for status in (private, direct):
        with pytest.raises(Forbidden):
            await rp.statuses.boost(fan.id, status.id)
        assert await rp.statuses.states(fan.id, [status.id]) == await rp.statuses.states(
            author.id, [status.id]
        )  # no count, no flag
    with pytest.raises(Forbidden):
        await rp.statuses.boost(author.id, direct.id)
    bid = await rp.statuses.boost(author.id, private.id)  # a self-boost of a private one
    await rp.drain()
    boost = await rp.statuses.get_status(bid)
    assert boost.extra["visibility"] == "private"
    assert bid not in {s.id for s in await rp.timelines.public(limit=40)}


async def test_default_visibility_and_bad_visibility(rp):
    (author,) = await _people(rp, "def", 1)
    assert (await rp.accounts.get_user(author.id)).privacy == "public"
    await rp.accounts.update_profile(author.id, privacy="private")
    assert (await rp.accounts.get_user(author.id)).privacy == "private"
    plain = await rp.statuses.post(author.id, "no visibility named")
    assert visibility.of(plain) == "private"
    named = await rp.statuses.post(author.id, "named", {"visibility": "public"})
    assert visibility.of(named) == "public" and "visibility" not in named.extra
    before = (await rp.accounts.get_user(author.id)).posts
    with pytest.raises(ValidationError):
        await rp.statuses.post(author.id, "odd", {"visibility": "friends"})
    with pytest.raises(ValidationError):
        await rp.accounts.update_profile(author.id, privacy="friends")
    assert (await rp.accounts.get_user(author.id)).posts == before
    assert (await rp.accounts.get_user(author.id)).privacy == "private"
