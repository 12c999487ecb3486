"""Replies, threads, mentions and hashtags through Mastodon.py against a
real ``redpoll serve``."""

from __future__ import annotations

import time

import httpx
import pytest
from mastodon import MastodonNotFoundError
from support.mastodon import api, new_app, register, serve_env  # noqa: F401
from support.names import unique  # noqa: F401


@pytest.fixture
def trio(api):
    app = new_app(api)
    return [register(api, app, unique(n)) for n in ("ann", "bob", "cat")]


def eventually(check, timeout=15.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def test_reply_fields_counts_and_context(trio):
    ann, bob, _ = trio
    root = ann.status_post("root of a thread")
    reply = bob.status_post("a reply", in_reply_to_id=root.id)
    assert reply.in_reply_to_id == root.id
    assert reply.in_reply_to_account_id == ann.me().id
    deeper = ann.status_post("deeper", in_reply_to_id=reply.id)
    sibling = ann.status_post("sibling", in_reply_to_id=root.id)
    assert ann.status(root.id).replies_count == 2
    ctx = bob.status_context(root.id)
    assert ctx.ancestors == []
    assert [s.id for s in ctx.descendants] == [reply.id, deeper.id, sibling.id]
    ctx = bob.status_context(deeper.id)
    assert [s.id for s in ctx.ancestors] == [root.id, reply.id]
    with pytest.raises(MastodonNotFoundError):
        bob.status_post("to nowhere", in_reply_to_id="99999999")
    with pytest.raises(MastodonNotFoundError):
        bob.status_context("99999999")
    ann.status_delete(sibling.id)
    assert ann.status(root.id).replies_count == 1


def test_a_reply_reaches_followers_only_if_they_follow_the_replied_to(trio):
    ann, bob, cat = trio
    cat.account_follow(bob.me().id)  # cat follows bob, not ann
    root = ann.status_post("ann asks")
    reply = bob.status_post("bob answers ann", in_reply_to_id=root.id)
    own = bob.status_post("bob on his own")
    assert eventually(lambda: own.id in [s.id for s in cat.timeline_home()])
    assert reply.id not in [s.id for s in cat.timeline_home()]


def test_mentions(trio):
    ann, bob, _ = trio
    bob_name = bob.me().username
    toot = ann.status_post(f"hey @{bob_name}, look")
    assert [(m.id, m.username) for m in toot.mentions] == [(bob.me().id, bob_name)]
    assert toot.id in [s.id for s in bob.timeline_home()]  # without following ann
    [note] = bob.notifications(types=["mention"])
    assert note.status.id == toot.id and note.account.id == ann.me().id


def test_hashtags_timeline_tag_and_follow(trio):
    ann, bob, _ = trio
    name = unique("Tag")
    first = ann.status_post(f"about #{name}")
    second = ann.status_post(f"more #{name.lower()} here")
    assert [t.name for t in first.tags] == [name.lower()]
    page = bob.timeline_hashtag(name)
    assert [s.id for s in page] == [second.id, first.id]
    assert [s.id for s in bob.timeline_hashtag(name, max_id=second.id)] == [first.id]
    tag = bob.tag(name)
    assert tag.name == name.lower() and tag.following is False
    assert bob.tag_follow(name).following is True
    assert [t.name for t in bob.followed_tags()] == [name.lower()]
    third = ann.status_post(f"#{name} again")
    assert third.id in [s.id for s in bob.timeline_home()]  # a followed tag feeds home
    assert bob.tag_unfollow(name).following is False
    assert bob.followed_tags() == []
    # a hashtag no status used is answered all the same, as Mastodon
    never = bob.tag(unique("Never"))
    assert never.name.startswith("never") and never.following is False
    assert len(never.history) == 7 and all(h.uses == "0" for h in never.history)
    with pytest.raises(MastodonNotFoundError):  # a name no hashtag can have
        bob.tag("123")
    # a tag timeline of such a name is empty, not an error (symbols, digits alone)
    assert bob.timeline_hashtag("♥") == [] and bob.timeline_hashtag("2024") == []


def test_tag_history_in_tag_search_and_followed_tags(trio):
    """``history``: uses and accounts per day for the last 7 days, today
    first, as strings (Mastodon's Tag entity)."""
    ann, bob, cat = trio
    name = unique("Hist").lower()
    posts = [
        ann.status_post(f"one #{name}"),
        ann.status_post(f"two #{name}"),
        bob.status_post(f"three #{name}"),
    ]
    cat.status_post(f"not public #{name}", visibility="unlisted")
    tag = cat.tag(name)
    assert len(tag.history) == 7
    day = int(tag.history[0].day.timestamp())  # Mastodon.py reads unix time as a datetime
    assert day % 86400 == 0 and abs(time.time() - day) < 86400 + 60
    assert [int(h.day.timestamp()) for h in tag.history] == [day - i * 86400 for i in range(7)]
    assert sum(int(h.uses) for h in tag.history) == 3
    days = {int(p.created_at.timestamp()) // 86400 * 86400 for p in posts}
    if len(days) == 1:  # not posted across midnight UTC
        [posted] = [h for h in tag.history if int(h.day.timestamp()) in days]
        assert (posted.uses, posted.accounts) == ("3", "2")
        assert all((h.uses, h.accounts) == ("0", "0") for h in tag.history if h is not posted)
    [found] = cat.search_v2(f"#{name}", result_type="hashtags").hashtags
    assert [(h.day, h.uses) for h in found.history] == [(h.day, h.uses) for h in tag.history]
    cat.tag_follow(name)
    [followed] = cat.followed_tags()
    assert sum(int(h.uses) for h in followed.history) == 3


def test_tag_timeline_any_all_none(api, trio):
    """``any[]``, ``all[]``, ``none[]`` combine hashtags as Mastodon's tag
    timeline does, with the same id cursors; more than 4 per mode is 422."""
    ann, bob, _ = trio
    a, b, c = (unique(n).lower() for n in ("cola", "colb", "colc"))
    only_a = ann.status_post(f"#{a}")
    a_b = ann.status_post(f"#{a} #{b}")
    only_b = bob.status_post(f"#{b}")
    a_c = ann.status_post(f"#{a} #{c}")
    b_c = bob.status_post(f"#{b} #{c}")
    ann.status_post(f"#{c} only")

    def tl(params):
        with httpx.Client(base_url=api.url, timeout=30) as client:
            r = client.get(
                f"/api/v1/timelines/tag/{a}",
                params=params,
                headers={"Authorization": f"Bearer {bob.access_token}"},
            )
        return r

    def ids(params):
        r = tl(params)
        assert r.status_code == 200, r.text
        return [s["id"] for s in r.json()]

    assert ids({}) == [a_c.id, a_b.id, only_a.id]
    assert ids({"any[]": [b]}) == [b_c.id, a_c.id, only_b.id, a_b.id, only_a.id]
    assert ids({"all[]": [b]}) == [a_b.id]
    assert ids({"none[]": [c]}) == [a_b.id, only_a.id]
    assert ids({"any[]": [b], "none[]": [c]}) == [only_b.id, a_b.id, only_a.id]
    assert ids({"any[]": [b], "all[]": [c]}) == [b_c.id, a_c.id]
    # cursors and limit over the combined timeline
    assert ids({"any[]": [b], "limit": 2}) == [b_c.id, a_c.id]
    assert ids({"any[]": [b], "max_id": a_c.id, "limit": 2}) == [only_b.id, a_b.id]
    assert ids({"any[]": [b], "min_id": only_b.id, "limit": 2}) == [b_c.id, a_c.id]
    assert ids({"any[]": [b], "since_id": only_b.id}) == [b_c.id, a_c.id]
    r = tl({"any[]": [b], "limit": 2})
    assert f"max_id={a_c.id}" in r.headers["link"]
    # bad input: a clear 422
    assert tl({"any[]": [unique(f"x{i}") for i in range(5)]}).status_code == 422
    assert tl({"none[]": ["not a tag!"]}).status_code == 422


def test_account_statuses_exclude_replies_and_reblogs(trio):
    ann, bob, _ = trio
    other = bob.status_post("bob's")
    own = ann.status_post("ann's own")
    thread = ann.status_post("ann continues", in_reply_to_id=own.id)
    reply = ann.status_post("ann answers bob", in_reply_to_id=other.id)
    boost = ann.status_reblog(other.id)
    me = ann.me().id
    everything = [s.id for s in ann.account_statuses(me)]
    assert everything == [boost.id, reply.id, thread.id, own.id]
    assert [s.id for s in ann.account_statuses(me, exclude_replies=True)] == [
        boost.id,
        thread.id,
        own.id,
    ]
    assert [s.id for s in ann.account_statuses(me, exclude_reblogs=True)] == [
        reply.id,
        thread.id,
        own.id,
    ]
