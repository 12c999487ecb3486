"""The web app at ``/`` end to end: a real ``redpoll serve`` on the test
session's server, driven by Playwright in Debian's Chromium (never a
downloaded browser). Every page a test opens must log no console error, raise
no page error and talk to no other origin (checked when the test ends)."""

from __future__ import annotations

import re
import uuid
from urllib.parse import parse_qs, urlsplit

import httpx
from playwright.sync_api import expect
from support.browser import DESKTOP, PASSWORD, PHONE, browser, counted, people, status_in, web  # noqa: F401
from support.mastodon import serve_env  # noqa: F401

from redpoll.core import limits

# a loaded 2-core machine runs CI: give each expectation room (it returns as soon as it holds)
expect.set_options(timeout=15_000)


# --- serving ------------------------------------------------------------------------------
def test_shell_is_same_origin_cached_and_small(web):
    with httpx.Client(base_url=web.url) as http:
        shell = http.get("/")
        assert shell.status_code == 200 and shell.headers["content-type"].startswith("text/html")
        assert shell.headers["cache-control"] == "no-cache"
        csp = shell.headers["content-security-policy"]
        for directive in (
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "connect-src 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
        ):
            assert directive in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "http" not in csp
        # every app path is the same shell; unknown paths are not
        for path in (
            "/notifications",
            "/notifications/mentions",
            "/conversations",
            "/scheduled",
            "/tags/x",
            "/settings",
            "/@someone/followers",
        ):
            assert http.get(path).content == shell.content
        # account and status pages are the shell with a summary (compat's test has the rest)
        nobody = http.get("/@nobody_is_called_this")
        assert nobody.status_code == 404 and "/app.js'" in nobody.text
        assert nobody.headers["content-security-policy"] == csp
        assert http.get("/nope/nope").status_code == 404
        urls = re.findall(r"(?:src|href)='([^']+)'", shell.text)
        assert urls and all(
            u.startswith("/assets/") or u in ("#main", "/manifest.webmanifest") for u in urls
        )
        version = urls[0].split("/")[2]
        total = len(shell.content)
        from redpoll.web import FILES

        for name in FILES:
            asset = http.get(f"/assets/{version}/{name}")
            assert asset.status_code == 200
            assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"
            total += len(asset.content)
        assert total < 512 * 1024 and total <= limits.WEB_ASSETS_MAX_BYTES + len(shell.content)
        stale = http.get("/assets/0000000000000000/app.js")
        assert stale.status_code == 404 and stale.headers["cache-control"] == "no-store"


# --- accounts -----------------------------------------------------------------------------
def test_sign_up_sign_out_revokes_sign_in_with_pkce(people, web):
    ann = people()
    name = ann.sign_up("ann")
    page = ann.page
    expect(page.get_by_role("link", name="Profile")).to_be_visible()
    token = ann.token()
    assert ann.api("GET", "/api/v1/accounts/verify_credentials").json()["username"] == name

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    gone = httpx.get(
        web.url + "/api/v1/accounts/verify_credentials",
        headers={"Authorization": "Bearer " + token},
    )
    assert gone.status_code == 401  # revoked, not just forgotten
    assert page.evaluate("localStorage.getItem('redpoll.session')") is None

    # sign in: the app sends the browser to the authorize page with a PKCE challenge
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/oauth/authorize\?"))
    query = parse_qs(urlsplit(page.url).query)
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) == 43
    page.get_by_label("Username or e-mail").fill(name)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("Invalid username or password")
    ann.expected_error(401, "/oauth/authorize")  # the form page answers a wrong password with 401
    page.get_by_label("Username or e-mail").fill(f"{name}@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("textbox", name="Compose")).to_be_visible()
    expect(page).to_have_url(web.url.rstrip("/") + "/")
    exchange = [
        body
        for method, url, body in ann.requests
        if method == "POST"
        and url.endswith("/oauth/token")
        and "authorization_code" in (body or "")
    ]
    assert len(exchange) == 1 and "code_verifier=" in exchange[0]
    assert ann.token() != token
    assert ann.api("GET", "/api/v1/accounts/verify_credentials").json()["username"] == name


def test_sign_up_refusal_is_shown_and_nothing_is_created(people, web):
    ann = people()
    taken = ann.sign_up("taken")
    bob = people(PHONE)
    page = bob.page
    page.goto("/signup")
    page.get_by_label("Username").fill(taken)
    page.get_by_label("E-mail").fill(f"other{uuid.uuid4().hex[:6]}@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("checkbox", name=re.compile("I agree")).check()
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("alert")).to_contain_text("taken")
    assert page.evaluate("localStorage.getItem('redpoll.session')") is None
    bob.expected_error(422, "/api/v1/accounts")
    # signed out, the public timeline can still be read
    page.get_by_role("main").get_by_role("link", name="Sign in").click()
    page.get_by_role("link", name="See what people post here").click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    expect(page.get_by_role("textbox", name="Compose")).to_have_count(0)


# --- following, posting, live updates -------------------------------------------------------
def test_follow_from_profile_post_and_see_it_arrive_live(people, web):
    alice = people(DESKTOP)
    bob = people(PHONE)
    alice_name = alice.sign_up("alice")
    bob_name = bob.sign_up("bob")

    a = alice.page
    a.goto(f"/@{bob_name}")
    expect(a.get_by_role("heading", level=1)).to_have_text(bob_name)
    a.get_by_role("button", name="Follow", exact=True).click()
    expect(a.get_by_role("button", name="Unfollow", exact=True)).to_be_visible()
    rel = alice.api(
        "GET",
        "/api/v1/accounts/relationships",
        params={"id[]": bob.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]},
    )
    assert rel.json()[0]["following"] is True

    # alice reads her home timeline; bob posts from his phone with the compose box
    a.get_by_role("link", name="Home", exact=True).click()
    expect(a.get_by_role("textbox", name="Compose")).to_be_visible()
    a.evaluate("window.__sameDocument = true")
    b = bob.page
    compose = b.get_by_role("textbox", name="Compose")
    compose.fill("hello from bob's phone")
    expect(b.locator(".counter")).to_have_text(str(500 - len("hello from bob's phone")))
    b.get_by_role("button", name="Post", exact=True).click()
    expect(status_in(b, "hello from bob's phone")).to_be_visible()
    expect(compose).to_have_value("")
    # ...and it arrives on alice's page without a reload
    arrived = status_in(a, "hello from bob's phone")
    expect(arrived).to_be_visible()
    assert a.evaluate("window.__sameDocument") is True
    expect(arrived.get_by_role("link", name=re.compile(bob_name)).first).to_be_visible()
    for name in ("Reply", "Boost", "Favourite", "Bookmark"):
        expect(arrived.get_by_role("button", name=name, exact=True)).to_be_visible()
    for name in ("Boost", "Favourite", "Bookmark"):
        expect(arrived.get_by_role("button", name=name, exact=True)).to_have_attribute(
            "aria-pressed", "false"
        )

    # scrolled down, a new post waits behind the "new posts" indicator
    for i in range(12):
        assert (
            bob.api("POST", "/api/v1/statuses", data={"status": f"filler {i}"}).status_code == 200
        )
    a.reload()
    expect(status_in(a, "filler 11")).to_be_visible()
    expect(a.locator("article")).to_have_count(13)
    a.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    a.wait_for_function("window.scrollY > 300")
    assert (
        bob.api("POST", "/api/v1/statuses", data={"status": "while you were reading"}).status_code
        == 200
    )
    indicator = a.get_by_role("button", name="1 new post")
    expect(indicator).to_be_visible()
    expect(status_in(a, "while you were reading")).to_have_count(0)
    indicator.click()
    expect(a.locator("article").first).to_contain_text("while you were reading")
    a.wait_for_function("window.scrollY < 50")

    # alice's own post appears at the top of her home timeline; the counter follows her typing
    compose = a.get_by_role("textbox", name="Compose")
    compose.fill("x" * 510)
    expect(a.locator(".counter")).to_have_text("-10")
    expect(a.get_by_role("button", name="Post", exact=True)).to_be_disabled()
    compose.fill(f"hi @{bob_name}, from alice #redpoll")
    a.get_by_role("button", name="Post", exact=True).click()
    mine = a.locator("article").first
    expect(mine).to_contain_text("from alice")
    expect(mine.get_by_role("link", name=f"@{bob_name}")).to_have_attribute("href", f"/@{bob_name}")
    expect(mine.get_by_role("link", name="#redpoll")).to_have_attribute("href", "/tags/redpoll")
    assert alice_name in mine.inner_text()


def test_keyboard_only_posting_at_phone_width(people):
    kim = people(PHONE)
    kim.sign_up("kim")
    page = kim.page
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"page is {width}px wide at a 360px screen"
    for name in ("Home", "Notifications", "Explore", "Search"):
        expect(page.get_by_role("link", name=name, exact=True)).to_be_visible()
    page.get_by_role("button", name="More", exact=True).click()
    for name in ("Lists", "Profile"):
        expect(page.get_by_role("link", name=name, exact=True)).to_be_visible()
    page.reload()
    expect(compose_box := page.get_by_role("textbox", name="Compose")).to_be_visible()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    compose = compose_box
    for _ in range(10):
        page.keyboard.press("Tab")
        if compose.evaluate("el => el === document.activeElement"):
            break
    expect(compose).to_be_focused()
    page.keyboard.type("typed, never clicked")
    page.keyboard.press("Control+Enter")
    expect(status_in(page, "typed, never clicked")).to_be_visible()
    # j / k walk the posts, Enter opens one, n goes back to writing
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    expect(page.locator("article").first).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/@kim\w+/\d+$"))
    expect(page.locator("article.focused")).to_contain_text("typed, never clicked")
    page.go_back()
    page.keyboard.press("n")
    expect(page.get_by_role("textbox", name="Compose")).to_be_focused()
    # every post went out with an Idempotency-Key of its own
    assert len(kim.idempotency_keys) == 1 and re.fullmatch(r"[0-9a-f]{32}", kim.idempotency_keys[0])
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_lists_explore_thread_scroll_and_delete(people, web):
    cat, dan = people(DESKTOP), people(PHONE)
    cat.sign_up("cat")
    dan_name = dan.sign_up("dan")
    dan_id = dan.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]
    assert cat.api("POST", f"/api/v1/accounts/{dan_id}/follow").status_code == 200
    for i in range(25):
        assert (
            dan.api("POST", "/api/v1/statuses", data={"status": f"older post {i}"}).status_code
            == 200
        )

    # a profile pages by the Link header's cursor as the reader scrolls
    c = cat.page
    c.goto(f"/@{dan_name}")
    expect(c.locator("article")).to_have_count(20)
    c.locator("article").last.scroll_into_view_if_needed()
    expect(c.locator("article")).to_have_count(25)
    expect(status_in(c, "older post 0")).to_be_visible()
    c.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    expect(c.get_by_text("You have reached the end.")).to_be_visible()
    expect(c.locator("article")).to_have_count(25)
    c.get_by_role("link", name=re.compile(r"Followers?$")).click()
    expect(c).to_have_url(re.compile(f"/@{dan_name}/followers$"))
    expect(c.locator(".account-row")).to_have_count(1)

    # a list: create, add a member, the member's new post arrives live
    c.get_by_role("link", name="Lists", exact=True).click()
    c.get_by_label("New list title").fill("Friends")
    c.get_by_role("button", name="Create list").click()
    c.get_by_role("link", name="Friends").click()
    expect(c.get_by_role("heading", level=1)).to_have_text("Friends")
    c.get_by_text("Members").click()
    c.get_by_label("Username to add").fill(dan_name)
    c.get_by_role("button", name="Add to list").click()
    expect(c.get_by_role("button", name=f"Remove @{dan_name} from the list")).to_be_visible()
    assert (
        dan.api("POST", "/api/v1/statuses", data={"status": "news for my list"}).status_code == 200
    )
    expect(status_in(c, "news for my list")).to_be_visible()

    # explore shows it too; its time link opens the thread view
    c.get_by_role("link", name="Explore", exact=True).click()
    post = status_in(c, "news for my list")
    expect(post).to_be_visible()
    post.locator("a.time").click()
    expect(c).to_have_url(re.compile(f"/@{dan_name}/\\d+$"))
    expect(c.locator("article.focused")).to_contain_text("news for my list")
    expect(
        c.locator("article.focused").get_by_role("button", name=re.compile("Delete"))
    ).to_have_count(0)

    # delete one's own post: asks once more, then it is gone here and from the API
    d = dan.page
    d.get_by_role("link", name="Home", exact=True).click()
    mine = status_in(d, "news for my list")
    mine.get_by_role("button", name="More actions").click()
    mine.get_by_role("button", name="Delete").click()
    mine.get_by_role("button", name="Confirm delete").click()
    expect(status_in(d, "news for my list")).to_have_count(0)
    sid = c.url.rsplit("/", 1)[1]
    assert cat.api("GET", f"/api/v1/statuses/{sid}").status_code == 404


def test_sha256_fallback_matches_webcrypto(people):
    """PKCE's challenge where crypto.subtle is missing (not a secure context)
    comes from sha256.js: it must agree with WebCrypto, padding edges included."""
    page = people().page
    page.goto("/signin")
    same = page.evaluate("""async () => {
        const src = document.querySelector('script[type=module][src$="/app.js"]').src.replace('app.js', 'sha256.js');
        const { sha256 } = await import(src);
        const out = [];
        for (const n of [0, 1, 3, 55, 56, 63, 64, 65, 119, 120, 1000]) {
            const data = new Uint8Array(n).map((_, i) => (i * 31 + n) & 255);
            const mine = Array.from(sha256(data)).join(',');
            const web = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', data))).join(',');
            out.push(mine === web);
        }
        return out; }""")
    assert same == [True] * 11


def test_favourite_bookmark_and_notifications_badge(people):
    eve, fay = people(DESKTOP), people(PHONE)
    eve_name = eve.sign_up("eve")
    fay.sign_up("fay")
    assert (
        eve.api("POST", "/api/v1/statuses", data={"status": "a post worth a star"}).status_code
        == 200
    )

    # fay follows eve, favourites and bookmarks her post from the profile page
    f = fay.page
    f.goto(f"/@{eve_name}")
    f.get_by_role("button", name="Follow", exact=True).click()
    expect(f.get_by_role("button", name="Unfollow", exact=True)).to_be_visible()
    post = status_in(f, "a post worth a star")
    fav = post.get_by_role("button", name=counted("Favourite"))
    mark = post.get_by_role("button", name="Bookmark", exact=True)
    expect(fav).to_have_attribute("aria-pressed", "false")
    fav.click()
    expect(fav).to_have_attribute("aria-pressed", "true")
    expect(fav).to_have_text("1")
    mark.click()
    expect(mark).to_have_attribute("aria-pressed", "true")
    f.reload()  # the server kept both
    post = status_in(f, "a post worth a star")
    expect(post.get_by_role("button", name=counted("Favourite"))).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(post.get_by_role("button", name="Bookmark", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    f.goto("/bookmarks")
    expect(status_in(f, "a post worth a star")).to_be_visible()

    # eve sees two unread notifications on the badge, reads them, and the badge goes
    e = eve.page
    e.goto("/")
    badge = e.locator("#unread")
    expect(badge).to_have_text("2")
    e.get_by_role("link", name=counted("Notifications")).click()
    expect(e.locator(".notification", has_text="favourited your post")).to_contain_text(
        "a post worth a star"
    )
    expect(e.locator(".notification", has_text="followed you")).to_be_visible()
    expect(badge).to_be_hidden()
    e.wait_for_function("""async () => {
        const t = JSON.parse(localStorage.getItem('redpoll.session')).token;
        const r = await fetch('/api/v1/notifications/unread_count', {headers: {Authorization: 'Bearer ' + t}});
        return (await r.json()).count === 0; }""")
    e.get_by_role("link", name="Home", exact=True).click()
    e.reload()
    expect(e.get_by_role("textbox", name="Compose")).to_be_visible()
    e.wait_for_timeout(500)
    expect(badge).to_be_hidden()

    # un-favouriting takes the star and the count back
    f.goto(f"/@{eve_name}")
    fav = status_in(f, "a post worth a star").get_by_role("button", name=counted("Favourite"))
    fav.click()
    expect(fav).to_have_attribute("aria-pressed", "false")
    expect(fav).to_have_text("")

    # a notification arrives on an open notifications page without a reload
    second = eve.api("POST", "/api/v1/statuses", data={"status": "second star please"}).json()
    e.get_by_role("link", name=counted("Notifications")).click()
    expect(e.locator(".notification").first).to_be_visible()
    e.evaluate("window.__sameDocument = true")
    assert fay.api("POST", f"/api/v1/statuses/{second['id']}/favourite").status_code == 200
    expect(e.locator(".notification").first).to_contain_text("second star please", timeout=15_000)
    assert e.evaluate("window.__sameDocument") is True


def test_reply_thread_hashtag_and_mention(people):
    jo, ki = people(DESKTOP), people(PHONE)
    jo_name = jo.sign_up("jo")
    ki.sign_up("ki")
    ki_id = ki.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]
    assert jo.api("POST", f"/api/v1/accounts/{ki_id}/follow").status_code == 200
    jo_id = jo.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]
    assert ki.api("POST", f"/api/v1/accounts/{jo_id}/follow").status_code == 200
    asked = jo.api("POST", "/api/v1/statuses", data={"status": "who knows #webapps well?"}).json()

    # ki replies from the home timeline: the mention is prefilled, the reply is linked
    k = ki.page
    k.reload()
    question = status_in(k, "who knows #webapps well?")
    question.get_by_role("button", name=counted("Reply")).click()
    box = k.get_by_role("form", name="Reply").get_by_role("textbox", name="Compose")
    expect(box).to_be_focused()
    expect(box).to_have_value(f"@{jo_name} ")
    box.press_sequentially("I do, ask away")
    k.get_by_role("form", name="Reply").get_by_role("button", name="Post", exact=True).click()
    reply = status_in(k, "I do, ask away")
    expect(reply).to_be_visible()
    expect(reply).to_contain_text(f"Replying to @{jo_name}")
    context = ki.api("GET", f"/api/v1/statuses/{asked['id']}/context").json()
    assert [s["content"] for s in context["descendants"]] and "ask away" in context["descendants"][
        0
    ]["content"]

    # the thread view: the question focused, the reply under it; the reply count shows
    j = jo.page
    j.goto(f"/@{jo_name}/{asked['id']}")
    expect(j.locator("article.focused")).to_contain_text("who knows")
    expect(j.locator("article").nth(1)).to_contain_text("I do, ask away")
    expect(j.locator("article.focused").get_by_role("button", name=counted("Reply"))).to_have_text(
        "1"
    )

    # jo is notified of the mention; the hashtag link opens the tag's timeline
    j.get_by_role("link", name=counted("Notifications")).click()
    expect(j.locator(".notification").first).to_contain_text("I do, ask away")
    j.goto(f"/@{jo_name}/{asked['id']}")
    j.locator("article.focused").get_by_role("link", name="#webapps").click()
    expect(j).to_have_url(re.compile("/tags/webapps$"))
    expect(j.get_by_role("heading", level=1)).to_have_text("#webapps")
    expect(status_in(j, "who knows")).to_be_visible()
    follow_tag = j.get_by_role("button", name="Follow hashtag")
    follow_tag.click()
    expect(j.get_by_role("button", name="Unfollow hashtag")).to_have_attribute(
        "aria-pressed", "true"
    )


def test_search_autocomplete_and_settings(people):
    gil, hal = people(DESKTOP), people(PHONE)
    gil_name = gil.sign_up("gil")
    hal.sign_up("hal")
    assert (
        gil.api("POST", "/api/v1/statuses", data={"status": "findable words here"}).status_code
        == 200
    )

    # hal finds gil on the search page and opens the profile
    h = hal.page
    h.get_by_role("link", name="Search", exact=True).click()
    h.get_by_role("searchbox", name="Search terms").fill(gil_name)
    h.get_by_role("button", name="Search", exact=True).click()
    expect(h).to_have_url(re.compile(r"/search\?q="))
    h.locator(".account-row").get_by_role("link", name=re.compile(gil_name)).click()
    expect(h.get_by_role("heading", level=1)).to_have_text(gil_name)

    # @ completion in the compose box, from the search API, by keyboard
    h.get_by_role("link", name="Home", exact=True).click()
    compose = h.get_by_role("textbox", name="Compose")
    compose.click()
    compose.press_sequentially("hi @" + gil_name[:5])
    option = h.get_by_role("option", name=re.compile(f"@{gil_name}"))
    expect(option).to_be_visible()
    expect(option).to_have_attribute("aria-selected", "true")
    compose.press("Enter")
    expect(compose).to_have_value(f"hi @{gil_name} ")

    # settings: a new display name and bio, shown on the profile
    g = gil.page
    g.get_by_role("link", name="Settings", exact=True).click()
    g.get_by_label("Display name").fill("Gil the Great")
    g.get_by_label("Bio").fill("Tinkerer. #redpoll")
    g.get_by_role("button", name="Save").click()
    expect(g.get_by_role("status").filter(has_text="Settings saved")).to_be_visible()
    g.goto(f"/@{gil_name}")
    expect(g.get_by_role("heading", level=1)).to_have_text("Gil the Great")
    expect(g.locator(".profile-card")).to_contain_text("Tinkerer.")
    me = gil.api("GET", "/api/v1/accounts/verify_credentials").json()
    assert me["display_name"] == "Gil the Great" and me["source"]["note"] == "Tinkerer. #redpoll"


def test_boost_shows_to_followers_and_notifies_live(people):
    lu, mo, no = people(DESKTOP), people(PHONE), people(DESKTOP)
    lu_name = lu.sign_up("lu")
    mo_name = mo.sign_up("mo")
    no.sign_up("no")
    mo_id = mo.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]
    assert no.api("POST", f"/api/v1/accounts/{mo_id}/follow").status_code == 200
    assert (
        lu.api("POST", "/api/v1/statuses", data={"status": "boost me, please"}).status_code == 200
    )

    # lu waits on the home page; the badge counts live notifications
    lu.page.get_by_role("link", name="Home", exact=True).click()
    badge = lu.page.locator("#unread")
    expect(badge).to_be_hidden()

    m = mo.page
    m.goto(f"/@{lu_name}")
    boost = status_in(m, "boost me, please").get_by_role("button", name=counted("Boost"))
    expect(boost).to_have_attribute("aria-pressed", "false")
    boost.click()
    expect(boost).to_have_attribute("aria-pressed", "true")
    expect(boost).to_have_text("1")

    # no follows mo: the boost is in no's home, marked as a boost by mo
    n = no.page
    n.reload()
    boosted = status_in(n, "boost me, please")
    expect(boosted).to_contain_text(f"{mo_name} boosted")
    expect(boosted.get_by_role("link", name=re.compile(lu_name)).first).to_be_visible()

    # lu: the badge went up without a reload, the notification says who boosted
    expect(badge).to_have_text("1")
    lu.page.get_by_role("link", name=counted("Notifications")).click()
    expect(lu.page.locator(".notification").first).to_contain_text("boosted your post")

    # un-boost
    boost.click()
    expect(boost).to_have_attribute("aria-pressed", "false")
    expect(boost).to_have_text("")


def test_compose_and_settings_offer_what_the_server_takes(people, web):
    """The compose box offers the visibilities POST /api/v1/statuses takes,
    and settings show `locked` and the default visibility only where
    update_credentials takes them, as the server's /openapi.json says."""
    doc = httpx.get(web.url + "/openapi.json").json()

    def body(path, method):
        return doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"][
            "properties"
        ]

    offered = body("/api/v1/statuses", "post")["visibility"]["enum"]
    creds = body("/api/v1/accounts/update_credentials", "patch")
    lockable = creds.get("locked", {}).get("const", True) is not False and "locked" in creds
    privacy = creds.get("source[privacy]") or creds.get("source", {}).get("properties", {}).get(
        "privacy"
    )
    labels = {
        "public": "Public",
        "unlisted": "Unlisted",
        "private": "Followers only",
        "direct": "Mentioned people only",
    }

    ivy = people(DESKTOP)
    ivy.sign_up("ivy")
    page = ivy.page
    select = page.get_by_role("combobox", name="Visibility")
    expect(select.locator("option")).to_have_text([labels[v] for v in labels if v in offered])
    expect(select).to_have_value("public")
    # a post with each visibility offered is posted with it
    for value in offered:
        select.select_option(value)
        page.get_by_role("textbox", name="Compose").fill(f"posted {value} from the web")
        page.get_by_role("button", name="Post", exact=True).click()
        expect(page.get_by_role("textbox", name="Compose")).to_have_value("")
    mine = ivy.api(
        "GET",
        "/api/v1/accounts/"
        + ivy.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]
        + "/statuses",
    ).json()
    assert {s["content"].split("posted ")[1].split(" ")[0]: s["visibility"] for s in mine} == {
        v: v for v in offered
    }

    page.get_by_role("link", name="Settings", exact=True).click()
    expect(page.get_by_label("Display name")).to_be_visible()
    assert "null" not in page.locator("main").inner_text()  # what is left out leaves no trace
    expect(page.get_by_label("Locked account (approve each follower)")).to_have_count(
        1 if lockable else 0
    )
    expect(page.get_by_label("Default visibility")).to_have_count(1 if privacy else 0)


def test_locked_account_requests_mute_and_block_from_the_profile(people):
    kim, lee = people(DESKTOP), people(PHONE)
    kim_name = kim.sign_up("kim")
    lee.sign_up("lee")
    k, l_ = kim.page, lee.page

    # kim locks her account in the settings
    k.get_by_role("link", name="Settings", exact=True).click()
    k.get_by_label("Locked account (approve each follower)").check()
    k.get_by_role("button", name="Save").click()
    expect(k.get_by_role("status").filter(has_text="Settings saved")).to_be_visible()
    assert kim.api("GET", "/api/v1/accounts/verify_credentials").json()["locked"] is True

    # lee asks to follow; kim accepts from her notifications
    l_.goto(f"/@{kim_name}")
    expect(l_.get_by_role("heading", level=1)).to_have_text(kim_name)
    l_.get_by_role("button", name="Follow", exact=True).click()
    expect(l_.get_by_role("button", name="Requested", exact=True)).to_be_visible()
    k.get_by_role("link", name=counted("Notifications")).click()
    request = k.locator(".notification.follow_request").first
    expect(request).to_contain_text("asked to follow you")
    request.get_by_role("button", name="Accept").click()
    expect(request).to_contain_text("Accepted")
    l_.reload()
    expect(l_.get_by_role("button", name="Unfollow", exact=True)).to_be_visible()

    # lee mutes, then blocks kim: the follow ends and the Follow button goes
    l_.get_by_role("button", name="Mute", exact=True).click()
    expect(l_.get_by_role("button", name="Unmute", exact=True)).to_be_visible()
    l_.get_by_role("button", name="Block", exact=True).click()
    expect(l_.get_by_role("button", name="Unblock", exact=True)).to_be_visible()
    expect(l_.get_by_role("button", name="Unfollow", exact=True)).to_have_count(0)
    kim_id = kim.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]
    rel = lee.api("GET", "/api/v1/accounts/relationships", params={"id[]": kim_id}).json()[0]
    assert (rel["blocking"], rel["muting"], rel["following"]) == (True, True, False)


def test_content_warning_hides_the_text_and_pins_show_first_on_the_profile(people):
    gus, hal = people(DESKTOP), people(PHONE)
    gus_name = gus.sign_up("gus")
    hal.sign_up("hal")
    g = gus.page
    # a post behind a content warning, written with the composer's CW field
    g.get_by_role("button", name="CW").click()
    g.get_by_label("Content warning").fill("spoilers for the finale")
    g.get_by_role("textbox", name="Compose").fill("the butler did it")
    g.get_by_role("button", name="Post", exact=True).click()
    post = status_in(g, "spoilers for the finale")
    expect(post).to_be_visible()
    sent = [
        data
        for method, url, data in gus.requests
        if method == "POST" and url.endswith("/api/v1/statuses")
    ]
    assert sent and "spoiler_text=spoilers" in sent[-1]

    # another reader sees the warning, not the text, until they ask for it
    older = gus.api("POST", "/api/v1/statuses", data={"status": "an older plain post"}).json()
    h_ = hal.page
    h_.goto(f"/@{gus_name}")
    cw = status_in(h_, "spoilers for the finale")
    expect(cw.get_by_text("the butler did it")).to_be_hidden()
    more = cw.get_by_role("button", name="Show more")
    expect(more).to_have_attribute("aria-expanded", "false")
    more.click()
    expect(cw.get_by_text("the butler did it")).to_be_visible()
    expect(cw.get_by_role("button", name="Show less")).to_have_attribute("aria-expanded", "true")

    # gus pins the older post from his profile; it shows first, marked, for everyone
    g.goto(f"/@{gus_name}")
    plain = status_in(g, "an older plain post").first
    pin = plain.get_by_role("button", name="Pin", exact=True, include_hidden=True)
    expect(pin).to_have_attribute("aria-pressed", "false")
    plain.get_by_role("button", name="More actions").click()
    pin.click()
    expect(pin).to_have_attribute("aria-pressed", "true")
    assert gus.api("GET", f"/api/v1/statuses/{older['id']}").json()["pinned"] is True
    h_.goto(f"/@{gus_name}")
    pinned = h_.get_by_role("region", name="Pinned posts")
    expect(pinned).to_contain_text("an older plain post")
    expect(pinned).to_contain_text("Pinned")
    h_.screenshot(path="/tmp/redpoll-pinned-phone.png", full_page=True)
    # nobody else gets a Pin button for gus's posts
    expect(
        status_in(h_, "an older plain post").first.get_by_role("button", name="Pin", exact=True)
    ).to_have_count(0)


def test_visibility_resets_after_a_post_and_counts_read_as_words(people):
    ivy = people(DESKTOP)
    ivy_name = ivy.sign_up("ivy")
    i = ivy.page
    # a one-off followers-only post: the selector returns to the default after it
    i.get_by_role("combobox", name="Visibility").select_option("private")
    i.get_by_role("textbox", name="Compose").fill("just for my followers")
    i.get_by_role("button", name="Post", exact=True).click()
    expect(status_in(i, "just for my followers")).to_be_visible()
    expect(i.get_by_role("combobox", name="Visibility")).to_have_value("public")
    sent = [
        data
        for method, url, data in ivy.requests
        if method == "POST" and url.endswith("/api/v1/statuses")
    ]
    assert "visibility=private" in sent[-1]
    # one post, one follower: singular words
    other = people(DESKTOP)
    other.sign_up("jay")
    me = ivy.api("GET", "/api/v1/accounts/verify_credentials").json()
    assert other.api("POST", f"/api/v1/accounts/{me['id']}/follow").status_code == 200
    i.goto(f"/@{ivy_name}")
    stats = i.locator(".profile-stats")
    expect(stats).to_contain_text("1 Post")
    expect(stats).not_to_contain_text("1 Posts")
    expect(stats).to_contain_text("1 Follower")
    expect(stats).not_to_contain_text("1 Followers")


def test_a_draft_survives_a_reload_and_goes_once_posted(people):
    kim = people(PHONE)
    kim.sign_up("kim")
    k = kim.page
    box = k.get_by_role("textbox", name="Compose")
    box.fill("half a thought")
    k.get_by_role("button", name="CW").click()
    k.get_by_label("Content warning").fill("musings")
    k.wait_for_timeout(600)  # the draft is kept a moment after the last key
    k.reload()
    box = k.get_by_role("textbox", name="Compose")
    expect(box).to_have_value("half a thought")
    expect(k.get_by_label("Content warning")).to_have_value("musings")
    k.get_by_role("link", name="Explore").click()  # another view and back
    k.get_by_role("link", name="Home", exact=True).click()
    expect(k.get_by_role("textbox", name="Compose")).to_have_value("half a thought")
    k.get_by_role("textbox", name="Compose").fill("a whole thought")
    k.get_by_role("button", name="Post", exact=True).click()
    expect(status_in(k, "musings")).to_be_visible()
    # the stream may show the post before the server's answer: the draft goes with the answer
    expect(k.get_by_role("textbox", name="Compose")).to_have_value("")
    k.reload()
    expect(k.get_by_role("textbox", name="Compose")).to_have_value("")
    expect(k.get_by_label("Content warning")).to_be_hidden()


def test_edit_a_post_in_place_and_read_its_history(people):
    ivy, jon = people(DESKTOP), people(PHONE)
    ivy_name = ivy.sign_up("ivy")
    jon.sign_up("jon")
    ivy.api("POST", "/api/v1/statuses", data={"status": "a first draft"})
    i = ivy.page
    i.goto(f"/@{ivy_name}")
    post = status_in(i, "a first draft").first
    post.get_by_role("button", name="More actions").click()
    post.get_by_role("button", name="Edit", exact=True).click()
    form = i.get_by_role("form", name="Edit post")
    expect(form.get_by_role("textbox", name="Edit post")).to_have_value("a first draft")
    form.get_by_role("textbox", name="Edit post").fill("a better second draft")
    form.get_by_label("Content warning").fill("drafts")
    form.get_by_role("button", name="Save").click()
    edited = status_in(i, "drafts").first
    expect(edited.get_by_role("button", name="Edited")).to_be_visible()
    sent = [data for method, url, data in ivy.requests if method == "PUT"]
    assert sent and "a better second draft" in sent[-1]
    i.screenshot(path="/tmp/redpoll-edited-desktop.png", full_page=True)

    # another reader sees the edit and its history; no Edit button on another's post
    j = jon.page
    j.goto(f"/@{ivy_name}")
    theirs = status_in(j, "drafts").first
    expect(theirs.get_by_role("button", name="Edit", exact=True)).to_have_count(0)
    label = theirs.get_by_role("button", name="Edited")
    label.click()
    expect(label).to_have_attribute("aria-expanded", "true")
    history = theirs.get_by_role("list", name="Edit history")
    expect(history).to_contain_text("a first draft")
    expect(history).to_contain_text("a better second draft")
    j.screenshot(path="/tmp/redpoll-history-phone.png", full_page=True)


def test_filters_in_settings_warn_behind_a_note_and_hide(people):
    kim, lou = people(DESKTOP), people(PHONE)
    kim.sign_up("kim")
    lou.sign_up("lou")
    lou_id = lou.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]
    assert kim.api("POST", f"/api/v1/accounts/{lou_id}/follow").status_code == 200
    k = kim.page
    k.goto("/settings")
    filters = k.get_by_role("list", name="Your filters")
    expect(filters).to_contain_text("No filters yet.")
    # a warning filter, then a hiding one that expires
    k.get_by_label("Keyword").fill("broccoli")
    k.get_by_role("button", name="Add filter").click()
    expect(filters).to_contain_text("broccoli")
    k.get_by_label("Keyword").fill("kale")
    k.get_by_label("Action").select_option("hide")
    k.get_by_label("Expires").select_option("86400")
    k.get_by_role("checkbox", name="Notifications").check()
    k.get_by_role("button", name="Add filter").click()
    expect(filters.get_by_role("listitem")).to_have_count(2)
    expect(filters).to_contain_text("Hide")
    made = {f["title"]: f for f in kim.api("GET", "/api/v2/filters").json()}
    assert made["broccoli"]["filter_action"] == "warn"
    assert made["broccoli"]["context"] == ["home", "public"]
    assert made["kale"]["filter_action"] == "hide" and made["kale"]["expires_at"]
    assert made["kale"]["context"] == ["home", "notifications", "public"]
    k.screenshot(path="/tmp/redpoll-filters-settings.png", full_page=True)

    for text in ("broccoli soup tonight", "kale salad", "plain toast"):
        lou.api("POST", "/api/v1/statuses", data={"status": text})
    k.goto("/")
    expect(status_in(k, "plain toast")).to_be_visible()
    warned = k.locator("article", has=k.get_by_text("Filtered:"))
    expect(warned).to_have_count(1)
    expect(warned).to_contain_text("Filtered: broccoli")
    expect(warned.get_by_text("broccoli soup tonight")).to_be_hidden()
    expect(k.get_by_text("kale salad")).to_have_count(0)  # hidden by the server
    k.screenshot(path="/tmp/redpoll-filters-home.png", full_page=True)
    warned.get_by_role("button", name="Show anyway").click()
    expect(
        status_in(k, "broccoli soup tonight").get_by_text("broccoli soup tonight")
    ).to_be_visible()
    expect(status_in(k, "broccoli soup tonight").get_by_text("Filtered:")).to_have_count(0)

    # a new post by lou arrives live: filtered alike
    lou.api("POST", "/api/v1/statuses", data={"status": "more broccoli, live"})
    lou.api("POST", "/api/v1/statuses", data={"status": "kale again, live"})
    lou.api("POST", "/api/v1/statuses", data={"status": "live marker"})
    expect(status_in(k, "live marker")).to_be_visible()
    expect(status_in(k, "more broccoli, live")).to_contain_text("Filtered: broccoli")
    expect(k.get_by_text("kale again, live")).to_have_count(0)

    # deleting the hiding filter brings the statuses back
    k.goto("/settings")
    k.get_by_role("button", name="Delete filter kale").click()
    expect(filters.get_by_role("listitem")).to_have_count(1)
    assert [f["title"] for f in kim.api("GET", "/api/v2/filters").json()] == ["broccoli"]
    k.goto("/")
    expect(status_in(k, "kale salad")).to_be_visible()
