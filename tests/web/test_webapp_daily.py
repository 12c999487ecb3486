"""The web app as used every day, end to end in Debian's Chromium against a
real ``redpoll serve`` (the fixtures and checks of test_webapp.py):
notifications grouped as the v2 API groups them, the Mentions filter, "Mark
all as read" and the marker shared with other apps; the Direct messages
view (a reply stays in its conversation, mark read); lists that hold only
people one follows (an unfollow takes them out) and keep direct messages out; and one state per status
and account on screen (a follower count after Follow, a favourite on one
copy of a status shown on the other, empty-timeline messages that go)."""

from __future__ import annotations

import re

from playwright.sync_api import expect
from support.browser import DESKTOP, PHONE, browser, counted, me, people, status_in, until, web  # noqa: F401


def marker(person) -> str | None:
    got = person.api("GET", "/api/v1/markers", params={"timeline[]": "notifications"}).json()
    return (got.get("notifications") or {}).get("last_read_id")


def newest_notification(person) -> str:
    return person.api("GET", "/api/v1/notifications", params={"limit": 1}).json()[0]["id"]


def test_grouped_notifications_mentions_filter_and_mark_all_read(people):  # noqa: F811
    ann, bob, cat, dan = (people(DESKTOP) for _ in range(4))
    ann_name = ann.sign_up("ann")
    for p in (bob, cat, dan):
        p.sign_up("fan")
    post = ann.api("POST", "/api/v1/statuses", data={"status": "a post to star thrice"}).json()
    assert (
        bob.api("POST", "/api/v1/statuses", data={"status": f"@{ann_name} hello there"}).status_code
        == 200
    )
    for p in (bob, cat, dan):
        assert p.api("POST", f"/api/v1/statuses/{post['id']}/favourite").status_code == 200

    a = ann.page
    a.goto("/")
    badge = a.locator("#unread")
    expect(badge).to_have_text("4")
    a.get_by_role("link", name=counted("Notifications")).click()
    group = a.locator(".notification.favourite")
    expect(group).to_have_count(1)
    expect(group.locator(".note-head")).to_contain_text(
        re.compile(r"and 2 others favourited your post")
    )
    expect(group).to_contain_text("a post to star thrice")
    expect(group.locator(".note-avatars .avatar, .note-avatars > *")).to_have_count(3)
    mention = a.locator(".notification.mention")
    expect(mention.locator(".note-head")).to_contain_text("mentioned you")
    expect(mention).to_contain_text("hello there")
    # what was new when the page opened shows as unread; the marker moves to the newest shown
    expect(a.locator(".notification.unread")).to_have_count(2)
    expect(badge).to_be_hidden()
    until(lambda: marker(ann) == newest_notification(ann))
    a.screenshot(path="/tmp/redpoll-notifications-grouped.png", full_page=True)

    # the Mentions filter shows mentions only
    a.get_by_role("link", name="Mentions", exact=True).click()
    expect(a).to_have_url(re.compile(r"/notifications/mentions$"))
    expect(a.locator(".notification")).to_have_count(1)
    expect(a.locator(".notification")).to_contain_text("hello there")

    # a follow comes in while reading mentions: the badge counts it; Mark all as read clears it
    before = marker(ann)
    bob_id = me(bob)["id"]
    assert bob.api("POST", f"/api/v1/accounts/{me(ann)['id']}/follow").status_code == 200
    del bob_id
    expect(badge).to_have_text("1", timeout=20_000)
    a.get_by_role("button", name="Mark all as read").click()
    expect(badge).to_be_hidden()
    newest = newest_notification(ann)
    assert newest != before
    until(lambda: marker(ann) == newest)
    assert ann.api("GET", "/api/v1/notifications/unread_count").json()["count"] == 0

    # another app moves the marker back: this one shows the badge again on its next load
    assert (
        ann.api("POST", "/api/v1/markers", data={"notifications[last_read_id]": before}).status_code
        == 200
    )
    a.get_by_role("link", name="Home", exact=True).click()
    a.reload()
    expect(badge).to_have_text("1")


def test_direct_messages_view_reply_stays_in_the_conversation(people):  # noqa: F811
    ann, bob = people(PHONE), people(DESKTOP)
    ann_name = ann.sign_up("ann")
    bob_name = bob.sign_up("bob")
    bob_id = me(bob)["id"]
    dm = bob.api(
        "POST",
        "/api/v1/statuses",
        data={"status": f"@{ann_name} a secret plan", "visibility": "direct"},
    ).json()
    assert dm["visibility"] == "direct"

    a = ann.page
    # a direct message still shows in Home (as Mastodon's)
    expect(status_in(a, "a secret plan")).to_be_visible()
    a.get_by_role("button", name="More", exact=True).click()
    a.get_by_role("link", name="Direct messages").click()
    expect(a).to_have_url(re.compile(r"/conversations$"))
    row = a.locator(".conversation", has_text="a secret plan")
    expect(row).to_be_visible()
    expect(row.locator(".conv-people")).to_contain_text("Unread")
    a.screenshot(path="/tmp/redpoll-conversations-phone.png", full_page=True)
    row.get_by_role("button", name="Mark read").click()
    expect(row.locator(".conv-people")).not_to_contain_text("Unread")
    until(lambda: ann.api("GET", "/api/v1/conversations").json()[0]["unread"] is False)

    # a reply from here is direct, mentions the same people, and the conversation shows it
    row.get_by_role("button", name="Reply").click()
    box = a.locator("form.compose.reply")
    expect(box.get_by_label("Visibility")).to_have_value("direct")
    area = box.get_by_role("textbox", name="Compose")
    expect(area).to_have_value(re.compile(f"@{bob_name}"))
    area.press("End")
    area.type("count me in")
    box.get_by_role("button", name="Post", exact=True).click()
    expect(a.locator(".conversation")).to_have_count(1)
    expect(a.locator(".conversation").first).to_contain_text("count me in")
    convs = until(
        lambda: [
            c
            for c in bob.api("GET", "/api/v1/conversations").json()
            if c["last_status"] and "count me in" in c["last_status"]["content"]
        ]
    )
    assert len(bob.api("GET", "/api/v1/conversations").json()) == 1
    last = convs[0]["last_status"]
    assert last["visibility"] == "direct" and last["in_reply_to_id"] == dm["id"]
    assert [m["id"] for m in last["mentions"]] == [bob_id]

    # bob answers: it comes in live, unread
    bob.api(
        "POST",
        "/api/v1/statuses",
        data={
            "status": f"@{ann_name} see you at noon",
            "visibility": "direct",
            "in_reply_to_id": last["id"],
        },
    )
    row = a.locator(".conversation").first
    expect(row).to_contain_text("see you at noon", timeout=20_000)
    expect(row.locator(".conv-people")).to_contain_text("Unread")
    expect(a.locator(".conversation")).to_have_count(1)

    # remove takes it off the list
    row.get_by_role("button", name=re.compile("Remove the conversation")).click()
    expect(a.locator(".conversation")).to_have_count(0)
    until(lambda: ann.api("GET", "/api/v1/conversations").json() == [])

    # on a phone the notifications' header, filter and mentions fit the screen
    a.get_by_role("link", name="Notifications").click()
    expect(a.locator(".notification.mention").first).to_contain_text("see you at noon")
    expect(a.get_by_role("button", name="Mark all as read")).to_be_visible()
    a.screenshot(path="/tmp/redpoll-notifications-phone.png", full_page=True)


def test_direct_messages_stay_out_of_list_timelines(people):  # noqa: F811
    ann, bob = people(DESKTOP), people(DESKTOP)
    ann_name = ann.sign_up("ann")
    bob.sign_up("bob")
    bob_id = me(bob)["id"]
    assert ann.api("POST", f"/api/v1/accounts/{bob_id}/follow").status_code == 200
    lid = ann.api("POST", "/api/v1/lists", data={"title": "Bob"}).json()["id"]
    assert (
        ann.api("POST", f"/api/v1/lists/{lid}/accounts", data={"account_ids[]": bob_id}).status_code
        == 200
    )
    bob.api("POST", "/api/v1/statuses", data={"status": "in the open"})
    bob.api(
        "POST", "/api/v1/statuses", data={"status": f"@{ann_name} just us", "visibility": "direct"}
    )
    ann.api(
        "POST", "/api/v1/statuses", data={"status": f"@{bob.name} only you", "visibility": "direct"}
    )
    listed = [s["content"] for s in ann.api("GET", f"/api/v1/timelines/list/{lid}").json()]
    home = [s["content"] for s in ann.api("GET", "/api/v1/timelines/home").json()]
    assert any("in the open" in c for c in listed)
    assert not any("just us" in c or "only you" in c for c in listed)
    assert any("just us" in c for c in home) and any("only you" in c for c in home)
    a = ann.page
    a.goto(f"/lists/{lid}")
    expect(status_in(a, "in the open")).to_be_visible()
    expect(status_in(a, "just us")).to_have_count(0)


def test_follow_count_add_to_list_and_a_list_that_fills(people):  # noqa: F811
    cat, dan, eve = people(DESKTOP), people(DESKTOP), people(DESKTOP)
    cat.sign_up("cat")
    dan_name = dan.sign_up("dan")
    eve_name = eve.sign_up("eve")
    dan_id = me(dan)["id"]
    dan.api("POST", "/api/v1/statuses", data={"status": "dan's first words"})
    pals = cat.api("POST", "/api/v1/lists", data={"title": "Pals"}).json()["id"]
    later = cat.api("POST", "/api/v1/lists", data={"title": "Later"}).json()["id"]

    c = cat.page
    c.goto(f"/@{dan_name}")
    stats = c.locator(".profile-stats")
    expect(stats).to_contain_text("0 Followers")
    expect(c.get_by_role("button", name="Add to list")).to_be_hidden()
    c.evaluate("window.__sameDocument = true")
    c.get_by_role("button", name="Follow", exact=True).click()
    expect(c.get_by_role("button", name="Unfollow", exact=True)).to_be_visible()
    expect(stats).to_contain_text("1 Follower")
    expect(stats).not_to_contain_text("Followers")

    # Add to list, from the profile of someone followed
    c.get_by_role("button", name="Add to list").click()
    c.get_by_role("group", name="Lists").get_by_label("Pals").check()
    until(
        lambda: (
            [a["id"] for a in cat.api("GET", f"/api/v1/lists/{pals}/accounts").json()] == [dan_id]
        )
    )
    assert c.evaluate("window.__sameDocument") is True
    c.screenshot(path="/tmp/redpoll-profile-add-to-list.png", full_page=True)

    # unfollowing takes the count back, and dan out of Pals (as Mastodon)
    c.get_by_role("button", name="Unfollow", exact=True).click()
    expect(stats).to_contain_text("0 Followers")
    expect(c.get_by_role("button", name="Add to list")).to_be_hidden()
    assert cat.api("GET", f"/api/v1/lists/{pals}/accounts").json() == []
    c.get_by_role("button", name="Follow", exact=True).click()
    expect(stats).to_contain_text("1 Follower")
    c.get_by_role("button", name="Add to list").click()
    expect(c.get_by_role("group", name="Lists").get_by_label("Pals")).not_to_be_checked()
    c.get_by_role("button", name="Add to list").click()

    # an empty list fills as members come, without a reload; only people followed are offered
    c.goto(f"/lists/{later}")
    expect(c.get_by_text("No posts in this list yet.")).to_be_visible()
    c.get_by_text("Members").click()
    c.get_by_label("Username to add").fill(eve_name)
    expect(c.get_by_role("button", name=f"Add @{eve_name} to the list")).to_have_count(0)
    c.get_by_role("button", name="Add to list").click()
    expect(c.get_by_text("a list holds people you follow")).to_be_visible()
    assert cat.api("GET", f"/api/v1/lists/{later}/accounts").json() == []
    c.get_by_label("Username to add").fill("")
    c.get_by_role("button", name=f"Add @{dan_name} to the list").click()
    expect(c.get_by_role("button", name=f"Remove @{dan_name} from the list")).to_be_visible()
    expect(status_in(c, "dan's first words")).to_be_visible()
    expect(c.get_by_text("No posts in this list yet.")).to_be_hidden()


def test_one_state_per_status_on_every_copy(people):  # noqa: F811
    ann, bob = people(DESKTOP), people(PHONE)
    ann.sign_up("ann")
    bob.sign_up("bob")
    a = ann.page
    empty = a.get_by_text("Your home timeline is empty")
    expect(empty).to_be_visible()
    a.get_by_role("textbox", name="Compose").fill("my very first post")
    a.get_by_role("button", name="Post", exact=True).click()
    expect(status_in(a, "my very first post")).to_be_visible()
    expect(empty).to_be_hidden()

    post = until(lambda: ann.api("GET", f"/api/v1/accounts/{me(ann)['id']}/statuses").json())[0]
    assert bob.api("POST", f"/api/v1/statuses/{post['id']}/favourite").status_code == 200
    a.reload()
    original = a.locator("article:not(:has(.boosted-by))", has_text="my very first post")
    expect(original.get_by_role("button", name=counted("Favourite"))).to_have_text("1")

    # ann boosts her own post: the boost comes in above the original with its real counts
    original.get_by_role("button", name=counted("Boost")).click()
    boost = a.locator("article:has(.boosted-by)", has_text="my very first post")
    expect(boost).to_be_visible(timeout=20_000)
    for copy in (boost, original):
        expect(copy.get_by_role("button", name=counted("Favourite"))).to_have_text("1")
        expect(copy.get_by_role("button", name=counted("Boost"))).to_have_attribute(
            "aria-pressed", "true"
        )
        expect(copy.get_by_role("button", name=counted("Boost"))).to_have_text("1")

    # favouriting one copy shows on the other
    boost.get_by_role("button", name=counted("Favourite")).click()
    for copy in (boost, original):
        fav = copy.get_by_role("button", name=counted("Favourite"))
        expect(fav).to_have_attribute("aria-pressed", "true")
        expect(fav).to_have_text("2")
    a.screenshot(path="/tmp/redpoll-home-one-state.png", full_page=True)
    original.get_by_role("button", name="Bookmark", exact=True).click()
    expect(boost.get_by_role("button", name="Bookmark", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    assert ann.api("GET", f"/api/v1/statuses/{post['id']}").json()["favourites_count"] == 2
