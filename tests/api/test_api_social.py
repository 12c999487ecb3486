"""Favourites, bookmarks and notifications through the Mastodon client API,
driven by Mastodon.py against a real ``redpoll serve``."""

from __future__ import annotations

import pytest
from mastodon import MastodonNotFoundError
from support.mastodon import api, new_app, register, serve_env  # noqa: F401
from support.names import unique  # noqa: F401


@pytest.fixture
def trio(api):
    app = new_app(api)
    return [register(api, app, unique(n)) for n in ("ann", "bob", "cat")]


def test_favourite_flags_counts_and_favourited_by(trio):
    ann, bob, cat = trio
    toot = ann.status_post("favourite me")
    faved = bob.status_favourite(toot.id)
    assert faved.favourited is True and faved.favourites_count == 1
    assert bob.status_favourite(toot.id).favourites_count == 1  # twice is once
    cat.status_favourite(toot.id)
    # each viewer sees their own flag, everyone the count
    assert ann.status(toot.id).favourited is False
    assert ann.status(toot.id).favourites_count == 2
    assert cat.status(toot.id).favourited is True
    who = ann.status_favourited_by(toot.id)
    assert [a.id for a in who] == [cat.me().id, bob.me().id]  # newest first
    # the timeline shows the counts as of now (a kept rendering never holds them)
    [home] = [s for s in ann.timeline_home() if s.id == toot.id]
    assert home.favourites_count == 2 and home.favourited is False
    [seen] = [s for s in bob.timeline_public() if s.id == toot.id]
    assert seen.favourited is True
    undone = bob.status_unfavourite(toot.id)
    assert undone.favourited is False and undone.favourites_count == 1
    [home] = [s for s in ann.timeline_home() if s.id == toot.id]
    assert home.favourites_count == 1


def test_favourites_list_pages_with_link_headers(trio):
    ann, bob, _ = trio
    toots = [ann.status_post(f"n{i}") for i in range(5)]
    for t in toots:
        bob.status_favourite(t.id)
    bob.status_favourite(toots[1].id)  # again: its place in the list stays
    page = bob.favourites(limit=2)
    assert [s.id for s in page] == [toots[4].id, toots[3].id]
    assert all(s.favourited for s in page)
    seen = [s.id for s in page]
    while page := bob.fetch_next(page):
        seen += [s.id for s in page]
    assert seen == [t.id for t in reversed(toots)]
    assert ann.favourites() == []


def test_bookmarks(trio):
    ann, bob, _ = trio
    toot = ann.status_post("bookmark me")
    marked = bob.status_bookmark(toot.id)
    assert marked.bookmarked is True
    assert ann.status(toot.id).bookmarked is False
    assert [s.id for s in bob.bookmarks()] == [toot.id]
    assert bob.status_unbookmark(toot.id).bookmarked is False
    assert bob.bookmarks() == []


def test_unknown_statuses_are_404_and_write_nothing(trio):
    ann, bob, _ = trio
    for call in (
        bob.status_favourite,
        bob.status_unfavourite,
        bob.status_bookmark,
        bob.status_unbookmark,
        bob.status_favourited_by,
    ):
        with pytest.raises(MastodonNotFoundError):
            call("999999999")
    assert bob.favourites() == [] and bob.bookmarks() == []
    toot = ann.status_post("gone soon")
    bob.status_favourite(toot.id)
    ann.status_delete(toot.id)
    assert bob.favourites() == []  # a deleted status leaves the list


def test_boosts_wrap_count_flag_and_undo(trio):
    ann, bob, cat = trio
    cat.account_follow(bob.me().id)
    toot = ann.status_post("boost me")
    boost = bob.status_reblog(toot.id)
    assert boost.reblog.id == toot.id and boost.account.id == bob.me().id
    assert boost.reblog.reblogs_count == 1 and boost.reblog.reblogged is True
    assert bob.status_reblog(toot.id).id == boost.id  # twice is once
    assert [a.id for a in ann.status_reblogged_by(toot.id)] == [bob.me().id]
    [note] = ann.notifications(types=["reblog"])
    assert note.account.id == bob.me().id and note.status.id == toot.id
    # in cat's home as a boost of the original, which cat does not follow
    home = cat.timeline_home()
    [seen] = [s for s in home if s.id == boost.id]
    assert seen.reblog.id == toot.id and seen.reblog.account.id == ann.me().id
    assert toot.id not in [s.id for s in ann.timeline_public() if s.reblog]
    undone = bob.status_unreblog(toot.id)
    assert undone.id == toot.id and undone.reblogged is False and undone.reblogs_count == 0
    assert boost.id not in [s.id for s in cat.timeline_home()]
    assert ann.notifications(types=["reblog"]) == []
    assert ann.status_reblogged_by(toot.id) == []


def test_follow_without_reblogs(trio):
    ann, bob, cat = trio
    rel = cat.account_follow(bob.me().id, reblogs=False)
    assert rel.following is True and rel.showing_reblogs is False
    toot = ann.status_post("not for cat")
    boost = bob.status_reblog(toot.id)
    own = bob.status_post("bob's own")
    home = [s.id for s in cat.timeline_home()]
    assert own.id in home and boost.id not in home
    assert cat.account_follow(bob.me().id, reblogs=True).showing_reblogs is True


def test_deleting_the_original_takes_boosts_along(trio):
    ann, bob, cat = trio
    cat.account_follow(bob.me().id)
    toot = ann.status_post("going")
    boost = bob.status_reblog(toot.id)
    ann.status_delete(toot.id)
    with pytest.raises(MastodonNotFoundError):
        bob.status(boost.id)
    assert boost.id not in [s.id for s in cat.timeline_home()]
    assert bob.account_statuses(bob.me().id) == []
