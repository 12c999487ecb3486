"""Replies, mentions and hashtags in the engine."""

from __future__ import annotations

import pytest

from redpoll.conversations import conversation
from redpoll.core import keys
from redpoll.core.errors import StatusNotFound, ValidationError
from redpoll.timelines import timelines


async def ids_in(rp, key) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(key, 0, -1)]


def test_parse_mentions_and_hashtags():
    logins, tags = conversation.parse(
        "hi @Ann and @bob_2, mail x@y.z, #Redis #ÉTÉ #2024 #redis a#b @ann (#tea)"
    )
    assert logins == ["ann", "bob_2"]
    assert tags == ["redis", "été", "tea"]


async def test_reply_reaches_only_followers_who_follow_the_replied_to(rp):
    ann, bob, fan_of_both, fan_of_bob = [
        await rp.accounts.sign_up(n) for n in ("ann", "bob", "f1", "f2")
    ]
    await rp.relations.follow(fan_of_both.id, ann.id)
    await rp.relations.follow(fan_of_both.id, bob.id)
    await rp.relations.follow(fan_of_bob.id, bob.id)
    root = await rp.statuses.post(ann.id, "a question")
    reply = await rp.statuses.post(bob.id, "an answer", in_reply_to=root.id)
    await rp.drain()
    assert reply.id in await ids_in(rp, keys.home(fan_of_both.id))
    assert reply.id not in await ids_in(rp, keys.home(fan_of_bob.id))
    assert reply.id in await ids_in(rp, keys.home(bob.id))
    own = await rp.statuses.post(bob.id, "and more", in_reply_to=reply.id)  # a reply to oneself
    await rp.drain()
    assert own.id in await ids_in(rp, keys.home(fan_of_bob.id))
    [state] = await rp.statuses.states(None, [root.id])
    assert state.replies == 1


async def test_mentions_reach_the_home_and_notify_and_delete_undoes(rp):
    ann, bob = await rp.accounts.sign_up("ann"), await rp.accounts.sign_up("bob")
    status = await rp.statuses.post(ann.id, "hello @BOB and @nobody")
    assert conversation.Conversation.of(status).mentions == ((bob.id, "bob"),)
    assert status.id in await ids_in(rp, keys.home(bob.id))  # not a follower, still there
    [note] = await rp.notifications.listed(bob.id)
    assert (note.type, note.actor, note.status) == ("mention", ann.id, status.id)
    await rp.statuses.delete(status.id, ann.id)
    await rp.drain()
    assert status.id not in await ids_in(rp, keys.home(bob.id))
    assert await rp.notifications.listed(bob.id) == []


async def test_hashtag_timeline_index_and_followers(rp):
    ann, bob = await rp.accounts.sign_up("ann"), await rp.accounts.sign_up("bob")
    from redpoll.conversations import tags

    await tags.set_following(rp.store, rp.queue, bob.id, "Redis", True)
    first = await rp.statuses.post(ann.id, "#Redis is fast")
    second = await rp.statuses.post(ann.id, "#redis #rust")
    await rp.statuses.post(ann.id, "no tags")
    page = await timelines.tag(rp.store, "redis")
    assert [s.id for s in page] == [second.id, first.id]
    assert [s.id for s in await timelines.tag(rp.store, "redis", max_id=second.id)] == [first.id]
    assert await conversation.search_tags(rp.store, "#R") == ["redis", "rust"]
    assert await conversation.search_tags(rp.store, "rus") == ["rust"]
    assert first.id in await ids_in(rp, keys.home(bob.id))  # a followed tag feeds the home
    await rp.statuses.delete(first.id, ann.id)
    await rp.drain()
    assert [s.id for s in await timelines.tag(rp.store, "redis")] == [second.id]
    assert first.id not in await ids_in(rp, keys.home(bob.id))


async def test_context_ancestors_and_depth_first_descendants(rp):
    ann = await rp.accounts.sign_up("ann")
    root = await rp.statuses.post(ann.id, "root")
    a = await rp.statuses.post(ann.id, "a", in_reply_to=root.id)
    b = await rp.statuses.post(ann.id, "b", in_reply_to=root.id)
    a1 = await rp.statuses.post(ann.id, "a1", in_reply_to=a.id)
    a1x = await rp.statuses.post(ann.id, "a1x", in_reply_to=a1.id)
    b1 = await rp.statuses.post(ann.id, "b1", in_reply_to=b.id)
    up, down = await conversation.context(rp.store, root)
    assert up == [] and down == [a.id, a1.id, a1x.id, b.id, b1.id]
    up, down = await conversation.context(rp.store, a1x)
    assert up == [root.id, a.id, a1.id] and down == []


async def test_bad_replies_and_caps_write_nothing(rp, monkeypatch):
    from redpoll.core import limits

    ann = await rp.accounts.sign_up("ann")
    before = await rp.store.client.get(keys.STATUS_SEQ)
    with pytest.raises(StatusNotFound):
        await rp.statuses.post(ann.id, "to nothing", in_reply_to=999_999)
    with pytest.raises(ValidationError):
        await rp.statuses.post(ann.id, "x", in_reply_to="nope")
    monkeypatch.setattr(limits, "TAGS_PER_STATUS", 2)
    with pytest.raises(ValidationError):
        await rp.statuses.post(ann.id, "#a1 #b1 #c1")
    with pytest.raises(ValidationError):
        await rp.statuses.post(ann.id, "spoof", extra={"mentions": "1:ann"})
    assert await rp.store.client.get(keys.STATUS_SEQ) == before
