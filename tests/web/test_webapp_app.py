"""The web app as a phone or desktop app, end to end in Debian's Chromium
against a real ``redpoll serve`` (the fixtures and checks of test_webapp.py):
a tap on a post opens its thread and a tap on its avatar the profile; the
web manifest, its icons and /favicon.ico; a post written from any screen;
the phone layout (one row of actions, a tidy composer, five items in the
bottom bar); Mastodon's keyboard shortcuts and their help; a notice while
the live updates are cut off."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect
from support.browser import DESKTOP, browser, me, people, status_in, until, web  # noqa: F401  # noqa: F401

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


def test_installable_manifest_icons_theme_colour_and_favicon(people, web):  # noqa: F811
    from io import BytesIO

    import httpx
    from PIL import Image

    ann = people(PHONE)
    ann.sign_up("ann")
    p = ann.page
    href = p.evaluate("document.querySelector('link[rel=manifest]').href")
    touch = p.evaluate("document.querySelector('link[rel=apple-touch-icon]').href")
    colours = p.evaluate(
        "[...document.querySelectorAll('meta[name=theme-color]')].map(m => m.content)"
    )
    assert len(colours) == 2 and all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colours)
    with httpx.Client(base_url=web.url) as http:
        got = http.get(href)
        assert got.status_code == 200
        assert got.headers["content-type"].startswith("application/manifest+json")
        doc = got.json()
        assert doc["name"] == "Redpoll" and doc["short_name"] == "Redpoll"
        assert doc["display"] == "standalone" and doc["start_url"] == "/"
        for key in ("theme_color", "background_color"):
            assert re.fullmatch(r"#[0-9a-f]{6}", doc[key])
        sizes = set()
        for icon in doc["icons"]:
            answer = http.get(icon["src"])
            assert answer.status_code == 200, icon
            assert answer.headers["content-type"] == icon["type"]
            assert icon["type"].startswith("image/")
            if icon["type"] == "image/png":
                img = Image.open(BytesIO(answer.content))
                assert f"{img.width}x{img.height}" == icon["sizes"], icon
                sizes.add((img.width, icon["purpose"]))
        assert {(192, "any"), (512, "any"), (512, "maskable")} <= sizes
        # a revalidation costs nothing
        again = http.get(href, headers={"If-None-Match": got.headers["etag"]})
        assert again.status_code == 304 and not again.content
        apple = http.get(touch)
        assert apple.status_code == 200 and apple.headers["content-type"] == "image/png"
        assert Image.open(BytesIO(apple.content)).size == (180, 180)
        ico = http.get("/favicon.ico")
        assert ico.status_code == 200 and ico.headers["content-type"] == "image/x-icon"
        assert Image.open(BytesIO(ico.content)).format == "ICO"
    # the browser reads the manifest as a manifest (DevTools' own parse)
    cdp = ann.context.new_cdp_session(p)
    parsed = cdp.send("Page.getAppManifest")
    assert parsed["url"] == href and not parsed["errors"], parsed["errors"]


def test_a_post_can_be_written_from_every_screen(people):  # noqa: F811
    for size in (PHONE, WIDE):
        ann = people(size)
        ann.sign_up("ann")
        p = ann.page
        for where in ("/notifications", "/explore", f"/@{ann.name}", "/settings"):
            p.goto(where)
            button = p.get_by_role("button", name="New post")
            expect(button).to_be_visible()
            box = button.bounding_box()
            assert box and box["y"] + box["height"] <= size["height"]  # on screen, no scrolling
            button.click()
            dialog = p.get_by_role("dialog", name="New post")
            expect(dialog).to_be_visible()
            expect(dialog.get_by_role("textbox", name="Compose")).to_be_focused()
            # the dialog's bar: its controls side by side, none over another, inside it
            bar = dialog.locator(".compose-bar").locator("select, button, .counter")
            boxes = [b for i in range(bar.count()) if (b := bar.nth(i).bounding_box())]
            frame = dialog.bounding_box()
            assert frame and len(boxes) >= 5, boxes
            for left, right in zip(boxes, boxes[1:]):
                assert left["x"] + left["width"] <= right["x"] + 0.5, (size, boxes)
            assert boxes[0]["x"] >= frame["x"]
            assert boxes[-1]["x"] + boxes[-1]["width"] <= frame["x"] + frame["width"]
            p.keyboard.type(f"written from {where}")
            dialog.get_by_role("button", name="Post", exact=True).click()
            expect(dialog).to_have_count(0)
        mine = f"/api/v1/accounts/{me(ann)['id']}/statuses"
        texts = until(lambda: len(got := ann.api("GET", mine).json()) == 4 and got)
        assert "written from /settings" in texts[0]["content"]
        # Esc leaves the dialog; on Home the button goes to Home's own box
        p.get_by_role("button", name="New post").click()
        expect(p.get_by_role("dialog", name="New post")).to_be_visible()
        p.keyboard.press("Escape")
        expect(p.get_by_role("dialog", name="New post")).to_have_count(0)
        p.get_by_role("link", name="Home", exact=True).click()
        expect(status_in(p, "written from /explore")).to_be_visible()
        p.get_by_role("button", name="New post").click()
        expect(p.get_by_role("dialog")).to_have_count(0)
        expect(p.locator("main").get_by_role("textbox", name="Compose")).to_be_focused()


def row_of(locators) -> list[float]:
    """The vertical middle of each element (one row: all alike), read again
    until the layout is still: each box is read at its own moment, and a
    composer folding above (a moment after its focus goes) moves the rest."""
    deadline = time.monotonic() + 5
    while True:
        out = []
        for loc in locators:
            box = loc.bounding_box()
            assert box, loc
            out.append(box["y"] + box["height"] / 2)
        if max(out) - min(out) < 3 or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def test_phone_layout_one_row_of_actions_a_tidy_composer_and_five_in_the_bar(people):  # noqa: F811
    ann, bob = people(PHONE), people(PHONE)
    ann.sign_up("ann")
    bob.sign_up("bob")
    assert ann.api("POST", f"/api/v1/accounts/{me(bob)['id']}/follow").status_code == 200
    mine = ann.api("POST", "/api/v1/statuses", data={"status": "my own post on a phone"}).json()
    assert bob.api("POST", "/api/v1/statuses", data={"status": "bob's post"}).status_code == 200
    p = ann.page
    p.goto("/")
    post = status_in(p, "my own post on a phone")
    expect(post).to_be_visible()
    # one's own post: its actions and More (holding Pin, Edit, Delete) on one line
    names = ("Reply", "Boost", "Favourite", "Bookmark", "More actions")
    controls = [post.get_by_role("button", name=n, exact=True) for n in names]
    middles = row_of(controls)
    assert max(middles) - min(middles) < 2, middles
    bar = post.locator("footer.actions").bounding_box()
    assert bar and bar["height"] < 56, bar
    article = post.bounding_box()
    assert article
    more = controls[-1].bounding_box()
    assert more and more["x"] + more["width"] <= article["x"] + article["width"]
    controls[-1].click()
    delete = post.get_by_role("button", name="Delete")
    expect(delete).to_be_visible()
    for name in ("Pin", "Edit"):
        expect(post.get_by_role("button", name=name, exact=True)).to_be_visible()
    box = delete.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    assert box["height"] < 56  # one line, not wrapped
    # Esc closes the menu, a second try deletes (asking first)
    p.keyboard.press("Escape")
    expect(delete).to_be_hidden()
    expect(controls[-1]).to_be_focused()
    controls[-1].click()
    delete.click()
    post.get_by_role("button", name="Confirm delete").click()
    expect(status_in(p, "my own post on a phone")).to_have_count(0)
    assert ann.api("GET", f"/api/v1/statuses/{mine['id']}").status_code == 404
    # someone else's: Report is in the same menu, the bar one row as well
    theirs = status_in(p, "bob's post")
    middles = row_of([theirs.get_by_role("button", name=n, exact=True) for n in names])
    assert max(middles) - min(middles) < 2, middles
    theirs.get_by_role("button", name="More actions").click()
    expect(theirs.get_by_role("button", name="Report")).to_be_visible()
    p.mouse.click(5, 200)  # a tap elsewhere closes it
    expect(theirs.get_by_role("button", name="Report")).to_be_hidden()

    # the composer's controls in one row inside the box, a reply's too
    compose = p.get_by_role("form", name="New post")
    compose.get_by_role("textbox", name="Compose").click()
    tools = [
        compose.get_by_role("combobox", name="Visibility"),
        *(
            compose.get_by_role("button", name=n, exact=True)
            for n in ("Add images", "CW", "Poll", "Schedule", "Post")
        ),
    ]
    middles = row_of(tools)
    assert max(middles) - min(middles) < 3, middles
    form = compose.bounding_box()
    assert form
    for t in tools:
        b = t.bounding_box()
        assert b and b["x"] >= form["x"] and b["x"] + b["width"] <= form["x"] + form["width"]
    # a tap on a post's button while the box has the focus lands on that button
    # (the box folds to one line on a phone only a moment later)
    theirs.get_by_role("button", name="Reply").click()
    reply = p.get_by_role("form", name="Reply")
    expect(reply).to_be_visible()
    middles = row_of(
        [
            reply.get_by_role("combobox", name="Visibility"),
            *(reply.get_by_role("button", name=n, exact=True) for n in ("CW", "Cancel", "Post")),
        ]
    )
    assert max(middles) - min(middles) < 3, middles
    reply.get_by_role("button", name="Cancel").click()
    p.screenshot(path="/tmp/redpoll-phone-layout.png")

    # the bottom bar: five items; Profile and Lists behind More
    nav = p.get_by_role("navigation", name="Main")
    bar = nav.bounding_box()
    assert bar and bar["y"] + bar["height"] == PHONE["height"]
    inside = [
        el
        for el in nav.locator("a:visible, button:visible").all()
        if (b := el.bounding_box())
        and b["y"] >= bar["y"]
        and b["y"] + b["height"] <= PHONE["height"]
    ]
    labels = [el.inner_text().strip() for el in inside]
    assert len(inside) <= 5 and labels[0] == "Home" and labels[-1] == "More", labels
    nav.get_by_role("button", name="More", exact=True).click()
    nav.get_by_role("link", name="Lists", exact=True).click()
    expect(p).to_have_url(re.compile(r"/lists$"))
    nav.get_by_role("button", name="More", exact=True).click()
    nav.get_by_role("link", name="Profile", exact=True).click()
    expect(p.get_by_role("heading", level=1)).to_have_text(ann.name)
    expect(nav.get_by_role("button", name="More", exact=True)).to_have_attribute(
        "aria-expanded", "false"
    )
    # at a desk, the side navigation shows them all
    p.set_viewport_size(WIDE)
    for name in ("Home", "Notifications", "Explore", "Search", "Lists", "Profile", "Settings"):
        expect(nav.get_by_role("link", name=name, exact=True)).to_be_visible()
    expect(nav.get_by_role("button", name="More", exact=True)).to_be_hidden()
    p.set_viewport_size(PHONE)


def test_mastodons_keyboard_shortcuts_and_their_help(people):  # noqa: F811
    ann, bob = people(WIDE), people(WIDE)
    ann_name = ann.sign_up("ann")
    bob_name = bob.sign_up("bob")
    bob_id = me(bob)["id"]
    assert ann.api("POST", f"/api/v1/accounts/{bob_id}/follow").status_code == 200
    first = bob.api("POST", "/api/v1/statuses", data={"status": "bob's older post"}).json()
    warned = bob.api(
        "POST", "/api/v1/statuses", data={"status": "the plot twist", "spoiler_text": "spoilers"}
    ).json()
    p = ann.page
    p.goto("/")
    expect(p.locator("article")).to_have_count(2)
    body = p.locator("body")

    # ? shows the shortcuts; Esc closes them
    body.press("?")
    help_ = p.get_by_role("dialog", name="Keyboard shortcuts")
    expect(help_).to_be_visible()
    for what in ("Favourite", "Boost", "Reply", "Mention the author", "Notifications", "New post"):
        expect(help_.get_by_text(what, exact=True)).to_be_visible()
    p.keyboard.press("Escape")
    expect(help_).to_have_count(0)

    # j focuses the newest post; x opens its warning; f favourites, b boosts it
    body.press("j")
    post = p.locator(f'article[data-key="{warned["id"]}"]')
    expect(post).to_be_focused()
    expect(post).to_contain_text("spoilers")
    expect(post.get_by_text("the plot twist")).to_be_hidden()
    p.keyboard.press("x")
    expect(post.get_by_text("the plot twist")).to_be_visible()
    p.keyboard.press("x")
    expect(post.get_by_text("the plot twist")).to_be_hidden()
    p.keyboard.press("f")
    expect(post.get_by_role("button", name="Favourite")).to_have_attribute("aria-pressed", "true")
    until(lambda: ann.api("GET", f"/api/v1/statuses/{warned['id']}").json()["favourited"])
    p.keyboard.press("b")
    until(lambda: ann.api("GET", f"/api/v1/statuses/{warned['id']}").json()["reblogged"])
    p.keyboard.press("d")
    until(lambda: ann.api("GET", f"/api/v1/statuses/{warned['id']}").json()["bookmarked"])
    # the boost shows on top (Home follows oneself); k and j move; r replies to the focused post
    expect(p.locator("article")).to_have_count(3)
    expect(post).to_be_focused()
    p.keyboard.press("j")
    second = p.locator(f'article[data-key="{first["id"]}"]')
    expect(second).to_be_focused()
    p.keyboard.press("k")
    expect(post).to_be_focused()
    p.keyboard.press("j")
    p.keyboard.press("r")
    reply = p.get_by_role("form", name="Reply")
    expect(reply.get_by_role("textbox", name="Compose")).to_be_focused()
    expect(reply.get_by_role("textbox", name="Compose")).to_have_value(f"@{bob_name} ")
    p.keyboard.type("answered from the keyboard")
    p.keyboard.press("Control+Enter")
    until(lambda: ann.api("GET", f"/api/v1/statuses/{first['id']}/context").json()["descendants"])
    # m mentions the author (Home's box), Esc leaves the box
    expect(second).to_be_focused()
    p.keyboard.press("m")
    box = p.locator("main").get_by_role("textbox", name="Compose")
    expect(box).to_be_focused()
    expect(box).to_have_value(re.compile(f"^@{bob_name} "))
    p.keyboard.press("Escape")
    expect(box).not_to_be_focused()
    box.fill("")
    # Enter and o open the post, p the author, Backspace goes back
    second.focus()
    p.keyboard.press("o")
    expect(p).to_have_url(re.compile(f"/@{bob_name}/{first['id']}$"))
    p.keyboard.press("Backspace")
    expect(p).to_have_url(re.compile(r"/$"))
    second.focus()
    p.keyboard.press("p")
    expect(p).to_have_url(re.compile(f"/@{bob_name}$"))

    # g then a letter goes somewhere
    for keys, url in (
        ("gn", r"/notifications$"),
        ("gl", r"/explore$"),
        ("gf", r"/favourites$"),
        ("gu", f"/@{ann_name}$"),
        ("gh", r"/$"),
    ):
        body.press(keys[0])
        body.press(keys[1])
        expect(p).to_have_url(re.compile(url))
    expect(status_in(p, "answered from the keyboard")).to_be_visible()
    # n writes (a dialog away from Home, Esc leaves it); / searches
    p.goto("/notifications")
    expect(p.get_by_role("heading", name="Notifications")).to_be_visible()
    body.press("n")
    dialog = p.get_by_role("dialog", name="New post")
    expect(dialog.get_by_role("textbox", name="Compose")).to_be_focused()
    p.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    body.press("/")
    expect(p).to_have_url(re.compile(r"/search$"))
    expect(p.get_by_role("searchbox", name="Search terms")).to_be_focused()
    # keys typed in a field are text, not shortcuts
    p.keyboard.type("gn?f")
    expect(p.get_by_role("searchbox", name="Search terms")).to_have_value("gn?f")
    expect(p.get_by_role("dialog")).to_have_count(0)


def test_live_updates_cut_off_say_reconnecting_and_catch_up_when_back(people):  # noqa: F811
    ann, bob = people(PHONE), people(WIDE)
    ann.sign_up("ann")
    bob.sign_up("bob")
    assert ann.api("POST", f"/api/v1/accounts/{me(bob)['id']}/follow").status_code == 200
    p = ann.page
    sockets = []

    def through(ws):  # the page's WebSocket, passed through to the server (and cut at will)
        ws.connect_to_server()
        sockets.append(ws)

    p.route_web_socket(re.compile(r"/api/v1/streaming"), through)
    p.goto("/")
    notice = p.get_by_role("status").filter(has_text="Reconnecting")
    expect(p.get_by_role("textbox", name="Compose")).to_be_visible()
    p.wait_for_timeout(500)  # the stream subscribed (Playwright hands over the socket meanwhile)
    assert bob.api("POST", "/api/v1/statuses", data={"status": "live before"}).status_code == 200
    expect(status_in(p, "live before")).to_be_visible()
    expect(notice).to_have_count(0)
    assert sockets

    # the network goes: the notice says so at once, and goes when it is back
    ann.context.set_offline(True)
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Offline")
    assert bob.api("POST", "/api/v1/statuses", data={"status": "missed offline"}).status_code == 200
    p.screenshot(path="/tmp/redpoll-offline-phone.png")
    ann.context.set_offline(False)
    expect(notice).to_be_hidden()
    # what came meanwhile is there, and live updates flow again
    expect(status_in(p, "missed offline")).to_be_visible()
    assert bob.api("POST", "/api/v1/statuses", data={"status": "live again"}).status_code == 200
    expect(status_in(p, "live again")).to_be_visible()

    # the server closes the stream: Reconnecting… until the app is back on it
    count = len(sockets)
    sockets[-1].close()
    expect(notice).to_be_visible()
    expect(notice).not_to_contain_text("Offline")
    expect(notice).to_be_hidden()
    assert len(sockets) > count
    assert bob.api("POST", "/api/v1/statuses", data={"status": "after the cut"}).status_code == 200
    expect(status_in(p, "after the cut")).to_be_visible()


def test_smaller_things_direct_messages_marked_own_boost_in_place_sign_up_limit_says_when(
    people,  # noqa: F811
    browser,  # noqa: F811
    server,
):
    import httpx
    from support.browser import PASSWORD, Person  # noqa: F401
    from support.mastodon import serve_env  # noqa: F401

    from redpoll.api.process import ServeProcess

    ann, bob = people(PHONE), people(PHONE)
    ann_name = ann.sign_up("ann")
    bob.sign_up("bob")
    assert ann.api("POST", f"/api/v1/accounts/{me(bob)['id']}/follow").status_code == 200
    fillers = [
        bob.api("POST", "/api/v1/statuses", data={"status": f"filler {i}"}).json()["id"]
        for i in range(12)
    ]
    dm = bob.api(
        "POST", "/api/v1/statuses", data={"status": f"@{ann_name} just us", "visibility": "direct"}
    ).json()
    p = ann.page
    p.goto("/")
    # a direct message in Home says so in words
    direct = status_in(p, "just us")
    expect(direct.get_by_text("Direct message")).to_be_visible()
    expect(status_in(p, "filler 11").get_by_text("Direct message")).to_have_count(0)
    # one's own boost, made scrolled down, goes in without a "new post" pill or a jump
    target = p.locator(f'article[data-key="{fillers[3]}"]')
    target.scroll_into_view_if_needed()
    p.evaluate("window.scrollBy(0, 200)")
    before = target.bounding_box()
    assert before and p.evaluate("window.scrollY") > 120
    target.get_by_role("button", name="Boost").click()
    expect(target.get_by_role("button", name="Boost")).to_have_attribute("aria-pressed", "true")
    expect(p.locator("article", has_text="boosted").filter(has_text="filler 3")).to_have_count(1)
    expect(p.locator(".new-posts")).to_be_hidden()
    after = target.bounding_box()
    assert after and abs(after["y"] - before["y"]) < 2, (before, after)
    assert dm["id"]

    # a sign-up refused by its limit says when to try again (windows end on the half hour:
    # "in a few seconds" just before one)
    with ServeProcess(serve_env(server, REDPOLL_RATE_SIGNUP="1/1800")) as tight:
        with httpx.Client(base_url=tight.url) as http:
            app = http.post(
                "/api/v1/apps",
                data={
                    "client_name": "x",
                    "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
                    "scopes": "read write follow push",
                },
            ).json()
            token = http.post(
                "/oauth/token",
                data={
                    "grant_type": "client_credentials",
                    "client_id": app["client_id"],
                    "client_secret": app["client_secret"],
                    "scope": "read write follow push",
                },
            ).json()["access_token"]
            for i in range(2):  # the window's one sign-up used up (by others too, maybe)
                r = http.post(
                    "/api/v1/accounts",
                    headers={"Authorization": f"Bearer {token}"},
                    data={
                        "username": f"lim{i}{ann_name[-6:]}",
                        "email": f"lim{i}{ann_name}@example.com",
                        "password": PASSWORD,
                        "agreement": "true",
                    },
                )
                assert r.status_code in (200, 429), r.text
        cat = Person(browser, tight, PHONE)
        try:
            c = cat.page
            c.goto("/signup")
            c.get_by_label("Username").fill("cat" + ann_name[-6:])
            c.get_by_label("E-mail").fill(f"cat{ann_name}@example.com")
            c.get_by_label("Password").fill(PASSWORD)
            c.get_by_role("checkbox", name=re.compile("I agree")).check()
            c.get_by_role("button", name="Sign up").click()
            expect(c.get_by_role("alert")).to_contain_text(
                re.compile(r"Too many requests: try again (in \d+ minutes?|in a few seconds)\.")
            )
            cat.expected_error(429, "/api/v1/accounts")
            assert not cat.problems, cat.problems
        finally:
            cat.context.close()
