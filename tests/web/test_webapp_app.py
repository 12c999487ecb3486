"""The web app as a phone or desktop app, end to end in Debian's Chromium
against a real ``redpoll serve`` (the fixtures and checks of test_webapp.py):
a tap on a post opens its thread and a tap on its avatar the profile; the
web manifest, its icons and /favicon.ico; a post written from any screen;
the phone layout (one row of actions, a tidy composer, five items in the
bottom bar); Mastodon's keyboard shortcuts and their help; a notice while
the live updates are cut off."""

from __future__ import annotations

import re

from playwright.sync_api import expect
from test_webapp import DESKTOP, browser, people, status_in, web  # noqa: F401 (fixtures)
from test_webapp_daily import me

PHONE = {"width": 390, "height": 844}
WIDE = {"width": 1440, "height": 900}


def test_a_tap_on_a_post_opens_its_thread_and_on_its_avatar_the_profile(people):  # noqa: F811
    ann, bob = people(PHONE), people(WIDE)
    ann_name = ann.sign_up("ann")
    bob_name = bob.sign_up("bob")
    assert bob.api("POST", f"/api/v1/accounts/{me(ann)['id']}/follow").status_code == 200
    post = ann.api(
        "POST", "/api/v1/statuses", data={"status": "tap me anywhere https://example.com/x"}
    ).json()

    for person in (bob, ann):
        p = person.page
        p.goto("/")
        article = status_in(p, "tap me anywhere")
        expect(article).to_be_visible()
        # the text opens the thread
        article.locator(".content p").click(position={"x": 5, "y": 5})
        expect(p).to_have_url(re.compile(f"/@{ann_name}/{post['id']}$"))
        expect(p.locator("article.focused")).to_contain_text("tap me anywhere")
        p.go_back()
        # a gap of the action bar too (right of the buttons)
        bar = status_in(p, "tap me anywhere").locator("footer.actions")
        box = bar.bounding_box()
        assert box
        p.mouse.click(box["x"] + box["width"] * 0.62, box["y"] + box["height"] / 2)
        expect(p).to_have_url(re.compile(f"/@{ann_name}/{post['id']}$"))
        p.go_back()
        # a button does what it says and opens nothing
        status_in(p, "tap me anywhere").get_by_role("button", name="Bookmark").click()
        expect(
            status_in(p, "tap me anywhere").get_by_role("button", name="Bookmark")
        ).to_have_attribute("aria-pressed", "true")
        expect(p).to_have_url(re.compile(r"/$"))
        # selecting some of the text (a drag) is not a tap
        words = status_in(p, "tap me anywhere").locator(".content p").bounding_box()
        assert words
        p.mouse.move(words["x"] + 2, words["y"] + words["height"] / 2)
        p.mouse.down()
        p.mouse.move(words["x"] + 60, words["y"] + words["height"] / 2, steps=5)
        p.mouse.up()
        assert p.evaluate("String(getSelection())").strip()
        expect(p).to_have_url(re.compile(r"/$"))
        p.evaluate("getSelection().removeAllRanges()")
        # the avatar opens the author's profile
        status_in(p, "tap me anywhere").locator(".avatar-link").click()
        expect(p).to_have_url(re.compile(f"/@{ann_name}$"))
        expect(p.get_by_role("heading", level=1)).to_have_text(ann_name)
        # a post on a profile opens too; the focused one in a thread stays put
        status_in(p, "tap me anywhere").locator(".content").click(position={"x": 5, "y": 5})
        expect(p).to_have_url(re.compile(f"/{post['id']}$"))
        p.locator("article.focused .content").click(position={"x": 5, "y": 5})
        expect(p).to_have_url(re.compile(f"/{post['id']}$"))
        # Enter on a focused post opens it too
        p.goto("/")
        expect(status_in(p, "tap me anywhere")).to_be_visible()
        p.locator("body").press("j")
        expect(p.locator("article").first).to_be_focused()
        p.keyboard.press("Enter")
        expect(p).to_have_url(re.compile(f"/{post['id']}$"))
    assert bob_name
