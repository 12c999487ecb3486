"""The web app and another server: a person on one Redpoll finds an account
of another by ``@name@host``, follows it from its profile, and sees its
posts arrive (two real ``redpoll serve`` on loopback, Debian's Chromium)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from support.browser import DESKTOP, Person, browser, status_in  # noqa: F401
from support.federation import Instance, eventually  # noqa: F401
from support.names import unique  # noqa: F401

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("webfed")
    a, b = Instance(tmp, "a"), Instance(tmp, "b")
    with a.proc, b.proc:
        yield a, b


def test_follow_an_account_of_another_server_from_the_web_app(servers, browser):  # noqa: F811
    a, b = servers
    ada_login = unique("ada")
    ada = a.person(ada_login)
    fan = Person(browser, b, DESKTOP)
    try:
        fan.sign_up("fan")
        page = fan.page
        page.goto(f"/search?q=@{ada_login}@{a.host}")
        row = page.locator(".account-row", has_text=f"{ada_login}@{a.host}")
        expect(row).to_be_visible()
        row.get_by_role("link").first.click()
        page.get_by_role("button", name="Follow", exact=True).click()
        expect(page.get_by_role("button", name="Unfollow")).to_be_visible()
        eventually(lambda: ada.me()["followers_count"] == 1, what="the follow reaching A")
        ada.status_post("hello to the browser on the other server")
        page.goto("/")
        expect(status_in(page, "hello to the browser on the other server")).to_be_visible()
        expect(
            status_in(page, "hello to the browser on the other server")
            .get_by_text(f"{ada_login}@{a.host}")
            .first
        ).to_be_visible()
        page.screenshot(path="/tmp/redpoll-federation-home.png")
        assert not fan.problems, fan.problems
    finally:
        fan.context.close()
