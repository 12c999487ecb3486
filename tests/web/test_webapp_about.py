"""What a server says about itself, notifications at a glance and the
composer's count, in the web app (Debian's Chromium, a real ``redpoll
serve``), at a phone's size and a desk's: the About page (the server's
extended description and rules, set with ``redpoll admin describe`` and
``rules-add``), reached signed out from the welcome page and signed in
from the navigation; notifications with an icon for each kind and "Follow
back" on a follow; a link counted as 23 characters, as Mastodon counts
it, by the composer and by the server."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from support.browser import DESKTOP, PHONE, browser, me, people, shot, status_in, until, web  # noqa: F401
from support.cli import admin_ok as admin


@pytest.fixture
def about(server, tmp_path):
    """Two rules and an extended description (taken away after the test)."""
    made = [
        admin(server, "rules-add", text, "--hint", hint).split("#")[1].strip()
        for text, hint in (("Be kind to each other", "No insults"), ("No spam", ""))
    ]
    told = tmp_path / "about.md"
    told.write_text(
        "We are a small server for bird watchers in Lisbon.\n\nBe patient with newcomers.\n"
    )
    admin(server, "describe", str(told))
    try:
        yield made
    finally:
        for rid in made:
            admin(server, "rules-remove", rid)
        empty = tmp_path / "empty.md"
        empty.write_text("")
        admin(server, "describe", str(empty))


def test_the_about_page_shows_the_description_and_the_rules(people, about):  # noqa: F811
    for size in (PHONE, DESKTOP):
        visitor = people(size)
        p = visitor.page
        p.goto("/")
        p.get_by_role("link", name="About this server").click()
        expect(p).to_have_url(re.compile(r"/about$"))
        expect(p.get_by_role("heading", name="About", level=1)).to_be_visible()
        expect(p.locator(".about-extended")).to_contain_text("bird watchers in Lisbon")
        rules = p.get_by_role("region", name="Server rules").locator("li")
        expect(rules).to_have_count(2)
        expect(rules.first).to_contain_text("Be kind to each other")
        expect(rules.first).to_contain_text("No insults")
        expect(rules.nth(1)).to_have_text("No spam")
        shot(visitor, "about-signed-out")
        # signed in: from the navigation (on a phone behind More)
        member = people(size)
        member.sign_up("ann")
        m = member.page
        nav = m.get_by_role("navigation", name="Main")
        if size is PHONE:
            nav.get_by_role("button", name="More", exact=True).click()
        nav.get_by_role("link", name="About", exact=True).click()
        expect(m).to_have_url(re.compile(r"/about$"))
        expect(m.get_by_role("region", name="Server rules").locator("li")).to_have_count(2)
        expect(m.locator(".about-extended p")).to_have_count(2)
        expect(m.locator(".about-extended p").nth(1)).to_have_text("Be patient with newcomers.")


def test_notifications_show_their_kind_and_offer_follow_back(people):  # noqa: F811
    for size in (PHONE, DESKTOP):
        ann, bob, cat = people(size), people(DESKTOP), people(DESKTOP)
        ann_name = ann.sign_up("ann")
        bob_name = bob.sign_up("bob")
        cat.sign_up("cat")
        ann_id = me(ann)["id"]
        mine = ann.api("POST", "/api/v1/statuses", data={"status": "a post of ann's"}).json()
        assert bob.api("POST", f"/api/v1/statuses/{mine['id']}/favourite").status_code == 200
        assert bob.api("POST", f"/api/v1/statuses/{mine['id']}/reblog").status_code == 200
        assert (
            bob.api("POST", "/api/v1/statuses", data={"status": f"@{ann_name} a word"}).status_code
            == 200
        )
        assert ann.api("POST", f"/api/v1/accounts/{me(cat)['id']}/follow").status_code == 200
        assert cat.api("POST", f"/api/v1/accounts/{ann_id}/follow").status_code == 200
        assert bob.api("POST", f"/api/v1/accounts/{ann_id}/follow").status_code == 200
        p = ann.page
        p.goto("/notifications")
        for kind in ("favourite", "reblog"):
            note = p.locator(f".notification.{kind}")
            expect(note).to_have_count(1)
            expect(note.locator(".note-head .note-icon svg")).to_have_count(1)
        follows = p.locator(".notification.follow")
        expect(follows).to_have_count(1)  # grouped: bob and 1 other followed you
        expect(follows.locator(".note-head")).to_contain_text(
            f"{bob_name} and 1 other followed you"
        )
        expect(follows.locator(".note-head .note-icon svg")).to_have_count(1)
        # the favourite's icon and the boost's differ, so they read apart at a glance
        fav_icon = p.locator(".notification.favourite .note-icon").inner_html()
        boost_icon = p.locator(".notification.reblog .note-icon").inner_html()
        assert fav_icon != boost_icon
        # the post a favourite is about: small, without actions, and a tap opens it
        liked = p.locator(".notification.favourite article")
        expect(liked).to_contain_text("a post of ann's")
        expect(liked.get_by_role("button")).to_have_count(0)
        expect(
            p.locator(".notification.mention article").get_by_role("button", name="Reply")
        ).to_be_visible()
        # bob, the newest, is not followed back yet: one tap does it
        back = follows.get_by_role("button", name="Follow back")
        expect(back).to_be_visible()
        shot(ann, "notifications-follow-back")
        back.click()
        expect(follows.get_by_text("Following", exact=True)).to_be_visible()
        until(
            lambda: ann.api(
                "GET", "/api/v1/accounts/relationships", params={"id[]": me(bob)["id"]}
            ).json()[0]["following"]
        )
        # followed now: no button on the next visit
        p.reload()
        expect(follows.locator(".note-head")).to_be_visible()
        p.wait_for_timeout(300)  # the relationship asked for and answered
        expect(back).to_be_hidden()
        liked.locator(".content").click(position={"x": 5, "y": 5})
        expect(p).to_have_url(re.compile(f"/{mine['id']}$"))


def test_a_link_counts_23_characters_in_the_composer_and_on_the_server(people):  # noqa: F811
    for size in (PHONE, DESKTOP):
        ann = people(size)
        ann.sign_up("ann")
        p = ann.page
        box = p.get_by_role("textbox", name="Compose")
        counter = p.get_by_role("form", name="New post").locator(".counter")
        link = "https://example.com/" + "a-long-path/" * 10 + "page.html"  # 149 characters
        assert len(link) > 100
        box.fill(f"Read {link}")
        expect(counter).to_have_text(str(500 - len("Read ") - 23))
        # a short link counts 23 too (as Mastodon's)
        box.fill("see https://x.io")
        expect(counter).to_have_text(str(500 - len("see ") - 23))
        # long text with long links: within 500 as counted, so the post goes
        text = "w" * 440 + " " + link + " " + link
        assert len(text) > 500
        box.fill(text)
        expect(counter).to_have_text(str(500 - 440 - 2 - 23 - 23))
        post = p.get_by_role("button", name="Post", exact=True)
        expect(post).to_be_enabled()
        post.click()
        expect(status_in(p, "wwww")).to_be_visible()
        got = ann.api("GET", f"/api/v1/accounts/{me(ann)['id']}/statuses").json()
        assert got and link in got[0]["content"]
        # and what counts more than 500 is refused before it is sent
        box.fill("w" * 480 + " " + link)
        expect(counter).to_have_text("-4")
        expect(post).to_be_disabled()
        shot(ann, "url-counted")
        # the server counts alike: 478 + a link is taken, 478 + two links is not
        ok = ann.api("POST", "/api/v1/statuses", data={"status": "v" * 476 + " " + link})
        assert ok.status_code == 200, ok.text
        over = ann.api("POST", "/api/v1/statuses", data={"status": "v" * 476 + f" {link} {link}"})
        assert over.status_code == 422, over.text
