"""Notifications (v1, grouped v2) and read markers through Mastodon.py
against a real ``redpoll serve``."""

from __future__ import annotations

import time

import httpx
import pytest
from mastodon import MastodonAPIError, MastodonNotFoundError
from support.mastodon import api, new_app, register, serve_env  # noqa: F401
from support.names import unique  # noqa: F401


def settled(api, follow: bool, seconds: float = 15.0) -> None:
    """Wait until ``api``'s follow notifications agree with ``follow`` (one
    there or none): a follow's notification comes from a job, moments after
    the call (redpoll.relations.follows)."""
    deadline = time.monotonic() + seconds
    while any(n.type == "follow" for n in api.notifications()) != follow:
        assert time.monotonic() < deadline, "the follow notification never settled"
        time.sleep(0.02)


@pytest.fixture
def trio(api):
    app = new_app(api)
    return [register(api, app, unique(n)) for n in ("ann", "bob", "cat")]


@pytest.fixture
def four(api):
    app = new_app(api)
    return [register(api, app, unique(n)) for n in ("ann", "bob", "cat", "dan")]


def test_favourite_and_follow_notifications_and_their_undo(trio):
    ann, bob, cat = trio
    ann_id, bob_id, cat_id = ann.me().id, bob.me().id, cat.me().id
    toot = ann.status_post("notify me")
    bob.status_favourite(toot.id)
    cat.status_favourite(toot.id)
    bob.account_follow(ann_id)
    settled(ann, True)
    notes = ann.notifications()
    assert [(n.type, n.account.id) for n in notes] == [
        ("follow", bob_id),
        ("favourite", cat_id),
        ("favourite", bob_id),
    ]
    assert notes[1].status.id == toot.id and notes[1].status.favourites_count == 2
    assert "status" not in notes[0] or notes[0].status is None
    # one by id, and filters
    assert ann.notifications(id=notes[1].id).account.id == cat_id
    assert [n.type for n in ann.notifications(types=["follow"])] == ["follow"]
    assert [n.type for n in ann.notifications(exclude_types=["follow"])] == ["favourite"] * 2
    assert [n.account.id for n in ann.notifications(account_id=bob_id)] == [bob_id, bob_id]
    # undo removes them
    cat.status_unfavourite(toot.id)
    bob.account_unfollow(ann_id)
    settled(ann, False)
    assert [(n.type, n.account.id) for n in ann.notifications()] == [("favourite", bob_id)]
    assert bob.notifications() == []  # nothing about one's own actions


def test_paging_dismiss_clear(trio):
    ann, bob, _ = trio
    toots = [ann.status_post(f"t{i}") for i in range(5)]
    for t in toots:
        bob.status_favourite(t.id)
    page = ann.notifications(limit=2)
    assert [n.status.id for n in page] == [toots[4].id, toots[3].id]
    seen = [n.status.id for n in page]
    while page := ann.fetch_next(page):
        seen += [n.status.id for n in page]
    assert seen == [t.id for t in reversed(toots)]
    newest = ann.notifications(limit=5)
    ann.notifications_dismiss(newest[0].id)
    assert newest[0].id not in [n.id for n in ann.notifications()]
    with pytest.raises(MastodonNotFoundError):
        ann.notifications(id=newest[0].id)
    with pytest.raises(MastodonNotFoundError):
        ann.notifications_dismiss(newest[0].id)
    ann.notifications_clear()
    assert ann.notifications() == []
    with pytest.raises(MastodonAPIError):
        ann.notifications(types=["no-such-type"])


def test_a_deleted_status_takes_its_notifications_along(trio):
    ann, bob, _ = trio
    toot = ann.status_post("short-lived")
    bob.status_favourite(toot.id)
    assert len(ann.notifications()) == 1
    ann.status_delete(toot.id)
    assert ann.notifications() == []


def test_grouped_notifications(trio):
    ann, bob, cat = trio
    toot = ann.status_post("popular")
    other = ann.status_post("less so")
    bob.status_favourite(toot.id)
    cat.status_favourite(toot.id)
    bob.status_favourite(other.id)
    cat.account_follow(ann.me().id)
    settled(ann, True)
    result = ann.grouped_notifications()
    groups = result.notification_groups
    assert [(g.type, g.notifications_count) for g in groups] == [
        ("follow", 1),
        ("favourite", 1),
        ("favourite", 2),
    ]
    assert groups[2].status_id == toot.id
    assert groups[2].sample_account_ids == [cat.me().id, bob.me().id]  # newest first
    assert {s.id for s in result.statuses} == {toot.id, other.id}
    assert {a.id for a in result.accounts} == {bob.me().id, cat.me().id}
    # Mastodon's group keys: "<type>-<status>-<hour bucket>", "follow-<hour bucket>";
    # the v1 entities carry the same keys
    assert groups[2].group_key.startswith(f"favourite-{toot.id}-")
    assert groups[0].group_key.startswith("follow-")
    v1 = ann.notifications()
    assert [n.group_key for n in v1] == [
        groups[0].group_key,
        groups[1].group_key,
        groups[2].group_key,
        groups[2].group_key,
    ]
    assert groups[2].most_recent_notification_id == v1[2].id
    assert (groups[2].page_min_id, groups[2].page_max_id) == (v1[3].id, v1[2].id)
    assert groups[2].latest_page_notification_at == v1[2].created_at
    # grouped_types leaves the others ungrouped
    flat = ann.grouped_notifications(grouped_types=["follow"]).notification_groups
    assert [g.group_key for g in flat] == [groups[0].group_key] + [
        f"ungrouped-{n.id}" for n in v1[1:]
    ]


def test_groups_span_pages(four):
    """A group whose notifications are spread over pages is counted, on each
    page, with all of its notifications up to that page's newest."""
    ann, bob, cat, dan = four
    toot = ann.status_post("spread")
    other = ann.status_post("between")
    bob.status_favourite(toot.id)
    cat.status_favourite(other.id)
    dan.status_favourite(toot.id)
    first = ann.grouped_notifications(limit=1, expand_accounts="full")
    [g] = first.notification_groups
    assert g.status_id == toot.id and g.notifications_count == 2
    assert g.sample_account_ids == [dan.me().id, bob.me().id]
    assert {a.id for a in first.accounts} == {dan.me().id, bob.me().id}
    second = ann.fetch_next(first)
    [g2] = second.notification_groups
    assert g2.status_id == other.id and g2.notifications_count == 1
    third = ann.fetch_next(second)
    [g3] = third.notification_groups
    assert g3.group_key == g.group_key and g3.notifications_count == 1  # up to this page
    assert g3.sample_account_ids == [bob.me().id]
    assert ann.fetch_next(third) is None or ann.fetch_next(third).notification_groups == []
    # newer groups by min_id
    back = ann.grouped_notifications(min_id=g3.most_recent_notification_id)
    assert [x.status_id for x in back.notification_groups] == [toot.id, other.id]


def test_one_group_its_accounts_dismiss_and_unread(trio):
    ann, bob, cat = trio
    toot = ann.status_post("one group")
    bob.status_favourite(toot.id)
    cat.status_favourite(toot.id)
    bob.account_follow(ann.me().id)
    settled(ann, True)
    groups = ann.grouped_notifications().notification_groups
    fav = next(g for g in groups if g.type == "favourite")
    one = ann.grouped_notification(fav.group_key)
    [whole] = one.notification_groups
    assert whole.notifications_count == 2 and whole.sample_account_ids == [cat.me().id, bob.me().id]
    assert [s.id for s in one.statuses] == [toot.id]
    assert [a.id for a in ann.grouped_notification_accounts(fav.group_key)] == [
        cat.me().id,
        bob.me().id,
    ]
    assert ann.unread_grouped_notifications_count() == 2  # two groups, three notifications
    assert ann.notifications_unread_count().count == 3
    assert ann.unread_grouped_notifications_count(grouped_types=["follow"]) == 3
    assert ann.unread_grouped_notifications_count(types=["favourite"]) == 1
    ann.dismiss_grouped_notification(fav.group_key)
    assert [n.type for n in ann.notifications()] == ["follow"]
    with pytest.raises(MastodonNotFoundError):
        ann.grouped_notification(fav.group_key)
    ann.dismiss_grouped_notification(fav.group_key)  # gone already: Mastodon answers {} too
    with pytest.raises(MastodonNotFoundError):
        ann.grouped_notification("no-such-group")
    # another user cannot read or dismiss the group by its key
    [follow] = ann.grouped_notifications().notification_groups
    with pytest.raises(MastodonNotFoundError):
        bob.grouped_notification(follow.group_key)
    bob.dismiss_grouped_notification(follow.group_key)
    assert [n.type for n in ann.notifications()] == ["follow"]
    # an ungrouped key is one notification
    [note] = ann.notifications()
    ann.dismiss_grouped_notification(f"ungrouped-{note.id}")
    assert ann.notifications() == [] and ann.unread_grouped_notifications_count() == 0
    # a repeat of the action does not bring a dismissed group back
    bob.status_favourite(toot.id)
    assert ann.notifications() == []


def test_markers_and_unread_count(trio):
    ann, bob, _ = trio
    toots = [ann.status_post(f"m{i}") for i in range(3)]
    for t in toots:
        bob.status_favourite(t.id)
    assert ann.markers_get(["home", "notifications"]) == {}
    assert ann.notifications_unread_count().count == 3
    notes = ann.notifications()
    set_ = ann.markers_set(["notifications", "home"], [notes[1].id, toots[2].id])
    assert set_.notifications.last_read_id == notes[1].id and set_.notifications.version == 1
    assert ann.notifications_unread_count().count == 1
    again = ann.markers_set("notifications", notes[0].id)
    assert again.notifications.version == 2
    got = ann.markers_get(["home", "notifications"])
    assert got.home.last_read_id == toots[2].id and got.notifications.last_read_id == notes[0].id
    assert ann.notifications_unread_count().count == 0
    assert bob.markers_get("home") == {}  # one's own


def test_follow_with_notify_gets_status_notifications(trio):
    ann, bob, _ = trio
    bob_id = bob.me().id
    rel = ann.account_follow(bob_id, notify=True)
    assert rel.notifying is True
    toot = bob.status_post("news from bob")
    bob.status_post("a reply to someone else", in_reply_to_id=ann.status_post("q").id)
    [note] = ann.notifications(types=["status"])
    assert note.status.id == toot.id and note.account.id == bob_id
    bob.status_delete(toot.id)
    assert ann.notifications(types=["status"]) == []
    assert ann.account_follow(bob_id, notify=True).notifying is True
    assert ann.account_unfollow(bob_id).notifying is False
    bob.status_post("after the unfollow")
    assert ann.notifications(types=["status"]) == []
    assert ann.account_follow(bob_id).notifying is False


def test_grouped_notifications_with_partial_avatars(four, api):
    """expand_accounts=partial_avatars (Mastodon 4.3; Mastodon.py's default):
    each group's most recent account in full in ``accounts``, the rest of
    its sample as PartialAccountWithAvatar in ``partial_accounts``; ``full``
    lists them all in full and no partial_accounts; any other value is
    Mastodon's 400."""
    ann, bob, cat, dan = four
    toot = ann.status_post("liked by three")
    for m in (bob, cat, dan):
        m.status_favourite(toot.id)
    ids = [m.me().id for m in (dan, cat, bob)]  # newest first
    partial = ann.grouped_notifications(expand_accounts="partial_avatars")
    (group,) = partial.notification_groups
    assert group.sample_account_ids == ids
    assert [a.id for a in partial.accounts] == [ids[0]] and "note" in partial.accounts[0]
    assert sorted(a.id for a in partial.partial_accounts) == sorted(ids[1:])
    full = ann.grouped_notifications(expand_accounts="full")
    assert sorted(a.id for a in full.accounts) == sorted(ids)
    with httpx.Client(base_url=api.url, timeout=30) as c:
        raw = c.get(
            "/api/v2/notifications",
            params={"expand_accounts": "partial_avatars"},
            headers={"Authorization": f"Bearer {ann.access_token}"},
        ).json()
        fields = {"id", "acct", "url", "avatar", "avatar_static", "locked", "bot"}
        assert [set(a) for a in raw["partial_accounts"]] == [fields, fields]
        whole = c.get(
            "/api/v2/notifications",
            params={"expand_accounts": "full"},
            headers={"Authorization": f"Bearer {ann.access_token}"},
        ).json()
        assert "partial_accounts" not in whole and len(whole["accounts"]) == 3
        wrong = c.get(
            "/api/v2/notifications",
            params={"expand_accounts": "some"},
            headers={"Authorization": f"Bearer {ann.access_token}"},
        )
    assert wrong.status_code == 400
    assert wrong.json() == {
        "error": "Invalid value for 'expand_accounts': 'some', allowed values are "
        "'full' and 'partial_avatars'"
    }
