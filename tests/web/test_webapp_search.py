"""The web app's search view, end to end in Debian's Chromium against a real
``redpoll serve`` (the fixtures of test_webapp.py): the hint says what is
searched and lists the operators; a stranger's public post is found, and an
operator narrows the posts shown."""

from __future__ import annotations

import time
import urllib.parse

from playwright.sync_api import expect
from support.browser import DESKTOP, browser, people, status_in, web  # noqa: F401


def test_search_finds_public_posts_and_understands_operators(people):  # noqa: F811
    ann, bob = people(DESKTOP), people(DESKTOP)
    ann.sign_up("ann")
    bob.sign_up("bob")
    word = f"mango{int(time.time() * 1000) % 10**9}"
    bob.api("POST", "/api/v1/statuses", data={"status": f"{word} with a question"}).json()
    bob.api(
        "POST",
        "/api/v1/statuses",
        data={
            "status": f"{word} a poll",
            "poll[options][]": ["yes", "no"],
            "poll[expires_in]": 3600,
        },
    )
    deadline = time.monotonic() + 15
    while (
        len(
            ann.api("GET", "/api/v2/search", params={"q": word, "type": "statuses"}).json()[
                "statuses"
            ]
        )
        < 2
    ):
        assert time.monotonic() < deadline, "never indexed"
        time.sleep(0.1)
    p = ann.page
    p.goto("/search")
    hint = p.locator("details.search-hint")
    expect(hint).to_contain_text("the public posts of accounts that allow it")
    hint.locator("summary").click()
    expect(hint.get_by_text("has:media, has:poll, has:link")).to_be_visible()
    p.get_by_role("searchbox", name="Search terms").fill(word)
    p.get_by_role("button", name="Search").click()
    expect(status_in(p, "with a question")).to_be_visible()
    expect(status_in(p, "a poll")).to_be_visible()
    p.goto("/search?q=" + urllib.parse.quote(f"{word} has:poll"))
    expect(status_in(p, "a poll")).to_be_visible()
    expect(status_in(p, "with a question")).to_have_count(0)
    p.screenshot(path="/tmp/redpoll-search-operators.png", full_page=True)
