"""The web app's Explore tabs and "Who to follow", end to end in Debian's
Chromium against a real ``redpoll serve`` (the fixtures and checks of
test_webapp.py): trending posts, hashtags and links from real posts,
favourites and boosts; a suggestion followed with its Follow button, another
dismissed."""

from __future__ import annotations

import time

from playwright.sync_api import expect
from support.browser import DESKTOP, PHONE, browser, people, status_in, web  # noqa: F401


def me(person) -> dict:
    return person.api("GET", "/api/v1/accounts/verify_credentials").json()


def until(check, seconds: float = 15.0):
    """Poll ``check`` (the worker's jobs land moments later) until it holds."""
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, "never held"
        time.sleep(0.2)
    return found


def test_explore_shows_trends_and_who_to_follow_with_follow_buttons(people):  # noqa: F811
    ann, bob, cat = people(DESKTOP), people(DESKTOP), people(PHONE)
    ann.sign_up("ann")
    bob.sign_up("bob")
    cat.sign_up("cat")
    a, b, _ = me(ann), me(bob), me(cat)
    tag = "webtrend" + a["id"]
    post = bob.api(
        "POST",
        "/api/v1/statuses",
        data={"status": f"read this #{tag} https://example.org/web/news"},
    ).json()
    ann.api(
        "POST", "/api/v1/statuses", data={"status": f"me too #{tag} https://example.org/web/news"}
    )
    ann.api("POST", f"/api/v1/statuses/{post['id']}/favourite")
    cat.api("POST", f"/api/v1/statuses/{post['id']}/reblog")
    cat.api("POST", f"/api/v1/accounts/{a['id']}/follow")
    ann.api("POST", f"/api/v1/accounts/{b['id']}/follow")

    p = ann.page
    p.get_by_role("link", name="Explore").click()
    p.get_by_role("link", name="Posts", exact=True).click()
    expect(p).to_have_url(ann.web.url.rstrip("/") + "/explore/posts")
    expect(status_in(p, "read this")).to_be_visible()
    p.get_by_role("link", name="Hashtags").click()
    trend = (
        p.get_by_role("list", name="Trending hashtags")
        .get_by_role("listitem")
        .filter(has_text="#" + tag)
    )
    expect(trend).to_contain_text("2 people in the last 2 days")
    p.get_by_role("link", name="Links").click()
    link = p.get_by_role("list", name="Trending links").get_by_role(
        "link", name="example.org/web/news"
    )
    expect(link).to_have_attribute("href", "https://example.org/web/news")
    p.screenshot(path="/tmp/redpoll-explore-links.png", full_page=True)
    p.get_by_role("link", name="Hashtags").click()
    p.get_by_role("link", name="#" + tag).click()
    expect(p.get_by_role("heading", name="#" + tag)).to_be_visible()

    # cat follows ann, who follows bob: bob is suggested to cat, Follow follows
    until(
        lambda: any(
            s["account"]["id"] == b["id"] for s in cat.api("GET", "/api/v2/suggestions").json()
        )
    )
    q = cat.page
    q.goto("/explore/people")
    who = q.get_by_role("list", name="Who to follow")
    row = who.get_by_role("listitem").filter(has_text=bob.name)
    expect(row).to_contain_text("Followed by people you follow")
    q.screenshot(path="/tmp/redpoll-who-to-follow-phone.png", full_page=True)
    row.get_by_role("button", name=f"Follow {bob.name}").click()
    expect(row.get_by_role("button", name=f"Follow {bob.name}")).to_have_text("Following")
    rel = cat.api("GET", "/api/v1/accounts/relationships", params={"id[]": b["id"]}).json()
    assert rel[0]["following"] is True
    # a dismissed suggestion goes, and stays gone
    q.reload()
    expect(who.get_by_role("listitem").filter(has_text=bob.name)).to_have_count(0)
    others = who.get_by_role("listitem")
    if others.count():
        first = others.first
        name = first.get_by_role("button", name="Dismiss").get_attribute("aria-label")
        first.get_by_role("button", name="Dismiss").click()
        expect(q.get_by_role("button", name=name)).to_have_count(0)
        gone = name.removeprefix("Dismiss ")
        assert gone not in [
            s["account"]["acct"] for s in cat.api("GET", "/api/v2/suggestions").json()
        ]
    ann.page.goto("/explore/people")
    expect(ann.page.get_by_role("link", name="People")).to_have_attribute("aria-current", "page")
    expect(ann.page.get_by_role("heading", name="Who to follow")).to_be_visible()
    ann.page.screenshot(path="/tmp/redpoll-who-to-follow.png", full_page=True)
    p.goto("/explore/tags")
    expect(p.get_by_role("link", name="#" + tag)).to_be_visible()
    p.screenshot(path="/tmp/redpoll-explore-tags.png", full_page=True)
