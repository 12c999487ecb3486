"""The smaller things of the web app (Debian's Chromium, a real ``redpoll
serve``), at a phone's size and a desk's: one's own reply, written inline
in Home while scrolled down, goes in without a "new post" pill or a jump;
a "Popular on this server" suggestion, with a long name, fits its card; a
mention arriving live shows its post's reply count, which one's answer
from there raises at once (and a reload agrees)."""

from __future__ import annotations

import re

from playwright.sync_api import expect
from support.browser import DESKTOP, PHONE, browser, me, people, shot, status_in, until, web  # noqa: F401


def test_ones_own_inline_reply_raises_no_new_post_pill(people):  # noqa: F811
    for size in (PHONE, DESKTOP):
        ann, bob = people(size), people(DESKTOP)
        ann.sign_up("ann")
        bob_name = bob.sign_up("bob")
        assert ann.api("POST", f"/api/v1/accounts/{me(bob)['id']}/follow").status_code == 200
        posts = [
            bob.api("POST", "/api/v1/statuses", data={"status": f"bob says {i}"}).json()["id"]
            for i in range(12)
        ]
        p = ann.page
        p.goto("/")
        target = p.locator(f'article[data-key="{posts[4]}"]')
        target.scroll_into_view_if_needed()
        p.evaluate("window.scrollBy(0, 200)")
        assert p.evaluate("window.scrollY") > 120
        before = target.bounding_box()
        target.get_by_role("button", name="Reply").click()
        form = p.get_by_role("form", name="Reply")
        form.get_by_role("textbox", name="Compose").fill(f"@{bob_name} my own answer")
        form.get_by_role("button", name="Post", exact=True).click()
        expect(form).to_have_count(0)
        until(lambda: bob.api("GET", f"/api/v1/statuses/{posts[4]}").json()["replies_count"] == 1)
        expect(target.get_by_role("button", name="Reply 1")).to_be_visible()
        # the stream brings the reply back a moment later: still no pill
        p.wait_for_timeout(1500)
        expect(p.locator(".new-posts")).to_be_hidden()
        after = target.bounding_box()
        assert before and after and abs(after["y"] - before["y"]) < 2, (before, after)
        # a post of someone else's, meanwhile, does raise it
        bob.api("POST", "/api/v1/statuses", data={"status": "bob again, while ann reads"})
        expect(p.locator(".new-posts")).to_have_text("1 new post")
        p.locator(".new-posts").click()
        expect(status_in(p, "bob again, while ann reads")).to_be_visible()
        # ann's reply shows once at the top (not twice)
        expect(status_in(p, "my own answer")).to_have_count(1)


def test_a_popular_suggestion_fits_its_card(people):  # noqa: F811
    star = people(DESKTOP)
    star.sign_up("star")
    star.api(
        "PATCH",
        "/api/v1/accounts/update_credentials",
        data={"display_name": "A display name long enough to need two lines on a phone"},
    )
    for _ in range(2):
        fan = people(DESKTOP)
        fan.sign_up("fan")
        assert fan.api("POST", f"/api/v1/accounts/{me(star)['id']}/follow").status_code == 200
    for size in (PHONE, DESKTOP):
        new = people(size)
        new.sign_up("new")
        until(
            lambda: any(
                s["account"]["id"] == me(star)["id"]
                for s in new.api("GET", "/api/v2/suggestions").json()
            )
        )
        p = new.page
        p.goto("/explore/people")
        row = (
            p.get_by_role("list", name="Who to follow")
            .get_by_role("listitem")
            .filter(has_text=star.name)
        )
        expect(row).to_contain_text("Popular on this server")
        card = row.bounding_box()
        assert card and card["x"] + card["width"] <= size["width"]
        for part in (
            row.get_by_text("Popular on this server"),
            row.get_by_role("button", name=f"Follow {star.name}"),
            row.get_by_role("button", name=f"Dismiss {star.name}"),
            row.get_by_text("A display name long enough"),
        ):
            box = part.bounding_box()
            assert box, part
            assert (
                box["x"] >= card["x"] - 0.5
                and box["x"] + box["width"] <= card["x"] + card["width"] + 0.5
            )
            assert (
                box["y"] >= card["y"] - 0.5
                and box["y"] + box["height"] <= card["y"] + card["height"] + 0.5
            )
        # and nothing inside overflows it
        assert row.evaluate("(el) => el.scrollWidth <= el.clientWidth + 1")
        shot(new, "popular-suggestion")


def test_a_live_notification_keeps_the_reply_count_of_its_post(people):  # noqa: F811
    for size in (PHONE, DESKTOP):
        ann, bob, cat = people(size), people(DESKTOP), people(DESKTOP)
        ann_name = ann.sign_up("ann")
        bob.sign_up("bob")
        cat.sign_up("cat")
        p = ann.page
        p.goto("/notifications")
        expect(p.get_by_text("No notifications yet.")).to_be_visible()
        # a post of bob's that has a reply already mentions ann: its notification arrives live
        asked = bob.api("POST", "/api/v1/statuses", data={"status": "who counts birds?"}).json()
        cat.api("POST", "/api/v1/statuses", data={"status": "me!", "in_reply_to_id": asked["id"]})
        until(lambda: bob.api("GET", f"/api/v1/statuses/{asked['id']}").json()["replies_count"])
        bob.api(
            "POST",
            "/api/v1/statuses",
            data={"status": f"@{ann_name} and you?", "in_reply_to_id": asked["id"]},
        )
        mention = p.locator(".notification.mention article")
        expect(mention).to_contain_text("and you?", timeout=15_000)
        reply = mention.get_by_role("button", name=re.compile(r"^Reply"))
        expect(reply).to_have_accessible_name("Reply")  # nobody answered this one yet
        # ann answers from the notification: the count goes up there at once
        reply.click()
        form = p.get_by_role("form", name="Reply")
        form.get_by_role("textbox", name="Compose").press_sequentially("I do")
        form.get_by_role("button", name="Post", exact=True).click()
        expect(mention.get_by_role("button", name="Reply 1")).to_be_visible()
        # and the same after a reload
        p.reload()
        expect(
            p.locator(".notification.mention article").first.get_by_role("button", name="Reply 1")
        ).to_be_visible()
