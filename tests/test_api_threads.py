"""Replies, threads, mentions and hashtags through Mastodon.py against a
real ``redpoll serve`` (issue 9)."""
from __future__ import annotations

import time

import pytest
from mastodon import MastodonNotFoundError

from redpoll.api.process import ServeProcess

from test_api_mastodon import new_app, register, serve_env, unique


@pytest.fixture(scope="module")
def api(server):
    with ServeProcess(serve_env(server)) as srv:
        yield srv
        assert srv.process.poll() is None, srv.logs()[-3000:]


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
    with pytest.raises(MastodonNotFoundError):
        bob.tag(unique("never"))


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
        boost.id, thread.id, own.id]
    assert [s.id for s in ann.account_statuses(me, exclude_reblogs=True)] == [
        reply.id, thread.id, own.id]
