"""Threads, who engaged and profile tabs in the web app (Debian's Chromium,
a real ``redpoll serve``), at a phone's size and a desk's: a thread's
replies as branches (each under its parent, indented by its depth, a line
down its left), the focused post's "boosts" and "favourites" opening the
lists of who did, a profile's Posts / Posts and replies / Media tabs, and
a short profile that ends without a "Load more"."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from support.browser import DESKTOP, PHONE, browser, fresh_serve, people, shot, status_in  # noqa: F401
from support.media import png


@pytest.fixture(scope="module")
def web(server, tmp_path_factory):
    """``redpoll serve`` keeping media files in a folder of this module's own."""
    with fresh_serve(server, {"REDPOLL_MEDIA_DIR": str(tmp_path_factory.mktemp("media"))}) as srv:
        yield srv


def post(person, text: str, reply_to: str | None = None, **extra) -> dict:
    data = {"status": text, **extra}
    if reply_to:
        data["in_reply_to_id"] = reply_to
    got = person.api("POST", "/api/v1/statuses", json=data)
    assert got.status_code == 200, got.text
    return got.json()


def left(locator) -> float:
    box = locator.bounding_box()
    assert box, locator
    return box["x"]


def test_a_thread_shows_its_replies_as_branches_under_their_parents(people):  # noqa: F811
    for size in (PHONE, DESKTOP):
        ann, bob = people(size), people(DESKTOP)
        ann_name = ann.sign_up("ann")
        bob.sign_up("bob")
        root = post(ann, "the root of it all")
        first = post(bob, f"@{ann_name} first branch", root["id"])
        second = post(bob, f"@{ann_name} second branch", root["id"])
        deep = post(ann, "deep in the first branch", first["id"])
        deeper = post(bob, f"@{ann_name} deeper still", deep["id"])
        p = ann.page
        p.goto(f"/@{ann_name}/{root['id']}")
        focused = p.locator("article.focused")
        expect(focused).to_contain_text("the root of it all")
        thread = p.locator(".thread > article")
        expect(thread).to_have_count(5)
        # each reply right under its parent, depth first: the second branch after the first's replies
        keys = [thread.nth(i).get_attribute("data-status-id") for i in range(5)]
        assert keys == [root["id"], first["id"], deep["id"], deeper["id"], second["id"]], keys

        def at(s):
            return p.locator(f'.thread > article[data-status-id="{s["id"]}"]')

        rows = {s["id"]: left(at(s)) for s in (root, first, second, deep, deeper)}
        # siblings side by side, each deeper reply further in
        assert rows[first["id"]] == rows[second["id"]]
        assert rows[root["id"]] < rows[first["id"]] < rows[deep["id"]] < rows[deeper["id"]], rows
        # a line down the left of a branch
        line = at(first).evaluate("(el) => getComputedStyle(el).borderLeftWidth")
        assert float(line.rstrip("px")) >= 2, line
        for s in (root, first, second, deep, deeper):
            box = at(s).bounding_box()
            assert box and box["x"] + box["width"] <= size["width"], (size, box)  # fits the screen
        shot(ann, "thread-branches")
        # a reply written here goes in under its parent, after the parent's own branch
        at(first).get_by_role("button", name="Reply").click()
        form = p.get_by_role("form", name="Reply")
        form.get_by_role("textbox", name="Compose").fill(f"@{bob.name} a third twig")
        form.get_by_role("button", name="Post", exact=True).click()
        expect(thread).to_have_count(6)
        twig = status_in(p, "a third twig")
        assert twig.get_attribute("data-depth") == "2"
        assert thread.nth(4).get_attribute("data-status-id") == twig.get_attribute("data-status-id")
        assert left(twig) == left(at(deep))
        # a tap on a reply opens its own thread: its parents above it, flat
        words = at(deeper).locator(".content")
        wide = words.bounding_box()
        assert wide
        words.click(position={"x": wide["width"] - 4, "y": 4})  # past the mention, not on it
        expect(p).to_have_url(re.compile(f"/{deeper['id']}$"))
        expect(p.locator("article.focused")).to_contain_text("deeper still")
        expect(p.locator(".thread > article")).to_have_count(4)


def test_the_focused_post_lists_who_boosted_and_favourited_it(people):  # noqa: F811
    for size in (PHONE, DESKTOP):
        ann, bob, cat = people(size), people(DESKTOP), people(DESKTOP)
        ann_name = ann.sign_up("ann")
        bob_name = bob.sign_up("bob")
        cat_name = cat.sign_up("cat")
        target = post(ann, "a post people like")
        for fan in (bob, cat):
            assert fan.api("POST", f"/api/v1/statuses/{target['id']}/favourite").status_code == 200
        assert bob.api("POST", f"/api/v1/statuses/{target['id']}/reblog").status_code == 200
        p = ann.page
        p.goto(f"/@{ann_name}/{target['id']}")
        focused = p.locator("article.focused")
        expect(focused.get_by_role("link", name="1 boost", exact=True)).to_be_visible()
        favs = focused.get_by_role("link", name="2 favourites", exact=True)
        expect(favs).to_be_visible()
        favs.click()
        expect(p).to_have_url(re.compile(f"/@{ann_name}/{target['id']}/favourites$"))
        expect(p.get_by_role("heading", name="Favourited by")).to_be_visible()
        rows = p.locator(".feed .account-row")
        expect(rows).to_have_count(2)
        expect(p.locator(".feed")).to_contain_text(bob_name)
        expect(p.locator(".feed")).to_contain_text(cat_name)
        shot(ann, "favourited-by")
        p.get_by_role("button", name="Back").click()
        expect(p).to_have_url(re.compile(f"/{target['id']}$"))
        focused.get_by_role("link", name="1 boost", exact=True).click()
        expect(p.get_by_role("heading", name="Boosted by")).to_be_visible()
        expect(rows).to_have_count(1)
        expect(rows).to_contain_text(bob_name)
        # a name opens that profile
        rows.first.get_by_role("link").first.click()
        expect(p).to_have_url(re.compile(f"/@{bob_name}$"))
        # one's own favourite on the focused post shows in its count at once
        p.goto(f"/@{ann_name}/{target['id']}")
        focused.get_by_role("button", name=re.compile("^Favourite")).click()
        expect(focused.get_by_role("link", name="3 favourites", exact=True)).to_be_visible()


def test_profile_tabs_posts_with_replies_and_media_and_no_load_more_when_short(people):  # noqa: F811
    for size in (PHONE, DESKTOP):
        ann, bob = people(size), people(DESKTOP)
        ann.sign_up("ann")
        bob_name = bob.sign_up("bob")
        theirs = post(ann, "ann's own post")
        post(bob, "bob's plain post")
        post(bob, f"@{ann.name} bob's reply to ann", theirs["id"])
        media = bob.api(
            "POST", "/api/v1/media", files={"file": ("dot.png", png((40, 30)), "image/png")}
        )
        assert media.status_code == 200, media.text
        post(bob, "bob's picture", media_ids=[media.json()["id"]])
        p = ann.page
        p.goto(f"/@{bob_name}")
        tabs = p.get_by_role("navigation", name="Profile posts")
        expect(tabs.get_by_role("link", name="Posts", exact=True)).to_have_attribute(
            "aria-current", "page"
        )
        feed = p.get_by_role("feed")
        expect(feed.locator("article")).to_have_count(2)
        expect(feed).to_contain_text("bob's plain post")
        expect(feed).not_to_contain_text("bob's reply to ann")
        # a short profile ends: no "Load more" to tap
        expect(p.get_by_text("You have reached the end.")).to_be_visible()
        expect(p.get_by_role("button", name="Load more")).to_be_hidden()
        tabs.get_by_role("link", name="Posts and replies").click()
        expect(p).to_have_url(re.compile(f"/@{bob_name}/with_replies$"))
        expect(feed.locator("article")).to_have_count(3)
        expect(feed).to_contain_text("bob's reply to ann")
        expect(tabs.get_by_role("link", name="Posts and replies")).to_have_attribute(
            "aria-current", "page"
        )
        tabs.get_by_role("link", name="Media").click()
        expect(p).to_have_url(re.compile(f"/@{bob_name}/media$"))
        expect(feed.locator("article")).to_have_count(1)
        expect(feed).to_contain_text("bob's picture")
        expect(p.get_by_role("button", name="Load more")).to_be_hidden()
        shot(ann, "profile-media-tab")
        # the tabs sit in one row inside the screen
        links = tabs.get_by_role("link")
        boxes = [links.nth(i).bounding_box() for i in range(3)]
        assert all(b and b["x"] + b["width"] <= size["width"] for b in boxes), boxes
        middles = {round(b["y"] + b["height"] / 2) for b in boxes if b}
        assert max(middles) - min(middles) < 3, boxes
        # Back keeps the tab
        p.go_back()
        expect(p).to_have_url(re.compile(f"/@{bob_name}/with_replies$"))
        expect(feed.locator("article")).to_have_count(3)


def test_keyboard_h_uncovers_sensitive_media_and_e_opens_it(people):  # noqa: F811
    for size in (PHONE, DESKTOP):
        ann = people(size)
        ann.sign_up("ann")
        media = ann.api(
            "POST",
            "/api/v1/media",
            files={"file": ("dot.png", png((80, 60)), "image/png")},
            data={"description": "A blue rectangle"},
        )
        assert media.status_code == 200, media.text
        post(ann, "a picture behind a cover", media_ids=[media.json()["id"]], sensitive=True)
        p = ann.page
        p.goto("/")
        article = status_in(p, "a picture behind a cover")
        expect(article).to_be_visible()
        p.locator("body").press("j")
        expect(article).to_be_focused()
        cover = article.locator(".media-cover")
        expect(cover).to_be_visible()
        p.keyboard.press("h")
        expect(cover).to_be_hidden()
        p.keyboard.press("e")
        viewer = p.get_by_role("dialog", name="Image 1 of 1")
        expect(viewer).to_be_visible()
        expect(viewer.get_by_role("img", name="A blue rectangle")).to_be_visible()
        p.keyboard.press("Escape")
        expect(viewer).to_be_hidden()
        # Esc gives the focus back to the image's post (its keys work again)
        p.keyboard.press("h")
        expect(cover).to_be_visible()
