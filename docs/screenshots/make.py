"""Screenshots of the web app's main views, desktop and phone width, light
and dark, into this folder. Run from the repository root with the test
extra installed and Debian's chromium present:

    .venv/bin/python docs/screenshots/make.py

It starts its own ``redpoll serve`` on an embedded server in a temporary data
directory, makes a few accounts and posts through the public API, then opens
the app in Chromium (Playwright, /usr/bin/chromium)."""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import expect, sync_playwright

from redpoll.api.process import ServeProcess

HERE = Path(__file__).parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PASSWORD = "correct horse battery"
LOOSE = {"REDPOLL_RATE_TOKEN": "off", "REDPOLL_RATE_IP": "off", "REDPOLL_RATE_SIGNUP": "off",
         "REDPOLL_RATE_LOGIN": "off"}


def account(url: str, app: dict, name: str) -> str:
    app_token = httpx.post(url + "/oauth/token", data={
        "grant_type": "client_credentials", "client_id": app["client_id"],
        "client_secret": app["client_secret"], "scope": "read write follow"}).json()["access_token"]
    made = httpx.post(url + "/api/v1/accounts", headers={"Authorization": "Bearer " + app_token},
                      data={"username": name, "email": f"{name}@example.org", "password": PASSWORD,
                            "agreement": "true"})
    made.raise_for_status()
    return made.json()["access_token"]


def seed(url: str) -> None:
    app = httpx.post(url + "/api/v1/apps", data={
        "client_name": "seed", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
        "scopes": "read write follow"}).json()
    tokens = {n: account(url, app, n) for n in ("ada", "grace", "linus", "margaret")}

    def call(who, method, path, **kw):
        r = httpx.request(method, url + path, headers={"Authorization": "Bearer " + tokens[who]}, **kw)
        r.raise_for_status()
        return r.json()

    ids = {n: call(n, "GET", "/api/v1/accounts/verify_credentials")["id"] for n in tokens}
    for a in tokens:
        for b in tokens:
            if a != b and not (a == "margaret" and b == "linus"):
                call(a, "POST", f"/api/v1/accounts/{ids[b]}/follow")
    posts = [
        ("grace", "Debugging is twice as hard as writing the code in the first place. #programming"),
        ("linus", "Talk is cheap. Show me the code."),
        ("margaret", "Flight software review tonight; @ada, bring the #apollo notes."),
        ("grace", "The most dangerous phrase: \"we have always done it this way\"."),
        ("ada", "The engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves. #math"),
        ("linus", "Release candidate is out, please test it on your odd hardware: https://example.org/rc1"),
        ("margaret", "Good morning! Coffee first, then the #apollo guidance review."),
    ]
    made = {}
    for who, text in posts:
        made[text[:12]] = call(who, "POST", "/api/v1/statuses", data={"status": text})
        time.sleep(0.05)
    engine = made["The engine w"]["id"]
    for who in ("grace", "margaret", "linus"):
        call(who, "POST", f"/api/v1/statuses/{engine}/favourite")
    call("grace", "POST", "/api/v1/statuses", data={
        "status": "@ada it weaves a lot more than flowers these days.", "in_reply_to_id": engine})
    call("ada", "POST", f"/api/v1/statuses/{made['Good morning']['id']}/favourite")
    call("ada", "POST", f"/api/v1/statuses/{made['Release cand']['id']}/bookmark")


def main() -> int:
    data = tempfile.mkdtemp(prefix="redpoll-shots-")
    env = {"REDPOLL_DATA_DIR": data, **LOOSE}
    env.pop("REDIS_URL", None)
    os.environ.pop("REDIS_URL", None)
    with ServeProcess(env) as srv, sync_playwright() as pw:
        url = srv.url.rstrip("/")
        seed(url)
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        views = {"desktop": {"width": 1280, "height": 860}, "phone": {"width": 360, "height": 760}}

        def signed_in(label, scheme):
            ctx = browser.new_context(viewport=views[label], base_url=url, color_scheme=scheme,
                                      device_scale_factor=1 if label == "desktop" else 2)
            page = ctx.new_page()
            page.goto("/")
            if scheme == "light" and label == "desktop":
                page.screenshot(path=HERE / "signed-out-desktop.png")
            page.get_by_role("button", name="Sign in").click()
            expect(page.get_by_label("Username or e-mail")).to_be_visible()  # the form, not the landing
            if scheme == "light":
                page.screenshot(path=HERE / f"sign-in-{label}.png")
            page.get_by_label("Username or e-mail").fill("ada")
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            expect(page.locator("article").nth(5)).to_be_visible()
            return ctx, page

        # home first, while ada's notifications are unread (the badge shows)
        for scheme in ("light", "dark"):
            for label in views:
                ctx, page = signed_in(label, scheme)
                expect(page.locator("#unread")).to_be_visible()
                page.get_by_role("textbox", name="Compose").fill("Drafting a note about #math and @grace")
                page.mouse.move(0, 0)
                page.screenshot(path=HERE / f"home-{label}-{scheme}.png")
                ctx.close()
        for label in views:
            ctx, page = signed_in(label, "light")
            page.locator("article").first.get_by_role("button", name="Reply").click()
            page.screenshot(path=HERE / f"reply-{label}.png")
            page.get_by_role("link", name="Explore", exact=True).click()
            expect(page.locator("article").first).to_be_visible()
            page.screenshot(path=HERE / f"explore-{label}.png")
            page.goto("/@margaret")
            expect(page.get_by_role("button", name="Unfollow")).to_be_visible()
            expect(page.locator("article").first).to_be_visible()
            page.screenshot(path=HERE / f"profile-{label}.png")
            page.goto("/@ada")
            page.locator("article", has_text="Jacquard").locator("a.time").click()
            expect(page.locator("article.focused")).to_be_visible()
            expect(page.locator("article").nth(1)).to_be_visible()
            page.screenshot(path=HERE / f"thread-{label}.png")
            page.get_by_role("link", name="Notifications", exact=True).click()
            expect(page.locator(".notification").first).to_be_visible()
            page.screenshot(path=HERE / f"notifications-{label}.png")
            page.get_by_role("link", name="Search", exact=True).click()
            page.get_by_role("searchbox", name="Search terms").fill("ma")
            page.get_by_role("button", name="Search", exact=True).click()
            page.wait_for_timeout(500)
            page.screenshot(path=HERE / f"search-{label}.png")
            page.get_by_role("link", name="Lists", exact=True).click()
            page.get_by_label("New list title").fill("Apollo " + label)
            page.get_by_role("button", name="Create list").click()
            expect(page.get_by_role("link", name="Apollo " + label)).to_be_visible()
            page.screenshot(path=HERE / f"lists-{label}.png")
            page.goto("/settings")  # on a phone the link is in the menu
            expect(page.get_by_label("Display name")).to_be_visible()
            page.screenshot(path=HERE / f"settings-{label}.png")
            ctx.close()
        browser.close()
    print("screenshots in", HERE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
