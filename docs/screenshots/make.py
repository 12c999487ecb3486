"""Screenshots of the web app's main views, desktop and phone width, light
and dark, into this folder. Run from the repository root with the test
extra installed and Debian's chromium present:

    .venv/bin/python docs/screenshots/make.py

It starts its own ``redpoll serve`` on an embedded server in a temporary data
directory, makes a few accounts and posts through the public API, then opens
the app in Chromium (Playwright, /usr/bin/chromium)."""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
from PIL import Image, ImageDraw
from playwright.sync_api import expect, sync_playwright

from redpoll.api.process import ServeProcess

HERE = Path(__file__).parent
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "correct horse battery"
LOOSE = {
    "REDPOLL_RATE_TOKEN": "off",
    "REDPOLL_RATE_IP": "off",
    "REDPOLL_RATE_SIGNUP": "off",
    "REDPOLL_RATE_LOGIN": "off",
}


def account(url: str, app: dict, name: str) -> str:
    app_token = httpx.post(
        url + "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "scope": "read write follow",
        },
    ).json()["access_token"]
    made = httpx.post(
        url + "/api/v1/accounts",
        headers={"Authorization": "Bearer " + app_token},
        data={
            "username": name,
            "email": f"{name}@example.org",
            "password": PASSWORD,
            "agreement": "true",
        },
    )
    made.raise_for_status()
    return made.json()["access_token"]


def until(page, js: str, timeout: float = 15.0) -> None:
    """Wait until ``js`` (an expression) is true in the page: polled with
    evaluate, as the app's CSP refuses the string evaluation
    ``wait_for_function`` falls back on."""
    end = time.monotonic() + timeout
    while not page.evaluate(js):
        if time.monotonic() > end:
            raise AssertionError(f"still false after {timeout} s: {js}")
        time.sleep(0.05)


def picture(sky: tuple, ground: tuple, sun: tuple, size=(960, 640), face=False) -> bytes:
    """A small made-up picture (a landscape, or a face for an avatar) as PNG."""
    w, h = size
    img = Image.new("RGB", size, sky)
    draw = ImageDraw.Draw(img)
    if face:
        draw.ellipse((w * 0.2, h * 0.15, w * 0.8, h * 0.85), fill=sun)
        for x in (0.38, 0.62):
            draw.ellipse((w * x - w * 0.05, h * 0.4, w * x + w * 0.05, h * 0.5), fill=ground)
        draw.arc(
            (w * 0.35, h * 0.45, w * 0.65, h * 0.7), 20, 160, fill=ground, width=max(2, w // 40)
        )
    else:
        draw.ellipse((w * 0.62, h * 0.12, w * 0.8, h * 0.12 + w * 0.18), fill=sun)
        draw.polygon(
            [
                (0, h * 0.7),
                (w * 0.3, h * 0.45),
                (w * 0.55, h * 0.65),
                (w * 0.8, h * 0.4),
                (w, h * 0.6),
                (w, h),
                (0, h),
            ],
            fill=ground,
        )
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def seed(url: str) -> None:
    app = httpx.post(
        url + "/api/v1/apps",
        data={
            "client_name": "seed",
            "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
            "scopes": "read write follow",
        },
    ).json()
    tokens = {n: account(url, app, n) for n in ("ada", "grace", "linus", "margaret")}

    def call(who, method, path, **kw):
        r = httpx.request(
            method, url + path, headers={"Authorization": "Bearer " + tokens[who]}, **kw
        )
        r.raise_for_status()
        return r.json()

    ids = {n: call(n, "GET", "/api/v1/accounts/verify_credentials")["id"] for n in tokens}
    for a in tokens:
        for b in tokens:
            if a != b and not (a == "margaret" and b == "linus"):
                call(a, "POST", f"/api/v1/accounts/{ids[b]}/follow")
    posts = [
        (
            "grace",
            "Debugging is twice as hard as writing the code in the first place. #programming",
        ),
        ("linus", "Talk is cheap. Show me the code."),
        ("margaret", "Flight software review tonight; @ada, bring the #apollo notes."),
        ("grace", 'The most dangerous phrase: "we have always done it this way".'),
        (
            "ada",
            "The engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves. #math",
        ),
        (
            "linus",
            "Release candidate is out, please test it on your odd hardware: https://example.org/rc1",
        ),
        ("margaret", "Good morning! Coffee first, then the #apollo guidance review."),
    ]
    made = {}
    for who, text in posts:
        made[text[:12]] = call(who, "POST", "/api/v1/statuses", data={"status": text})
        time.sleep(0.05)
    engine = made["The engine w"]["id"]
    for who in ("grace", "margaret", "linus"):
        call(who, "POST", f"/api/v1/statuses/{engine}/favourite")
    call(
        "grace",
        "POST",
        "/api/v1/statuses",
        data={
            "status": "@ada it weaves a lot more than flowers these days.",
            "in_reply_to_id": engine,
        },
    )
    call("ada", "POST", f"/api/v1/statuses/{made['Good morning']['id']}/favourite")
    call("ada", "POST", f"/api/v1/statuses/{made['Release cand']['id']}/bookmark")

    # pictures: avatars, a post with two images (alt text), a sensitive one
    def media(who, data, description):
        return call(
            who,
            "POST",
            "/api/v1/media",
            files={"file": ("p.png", data, "image/png")},
            data={"description": description},
        )["id"]

    for who, colours in {
        "grace": ((70, 110, 190), (40, 40, 60), (240, 200, 160)),
        "margaret": ((200, 120, 60), (60, 30, 20), (250, 220, 180)),
    }.items():
        call(
            who,
            "PATCH",
            "/api/v1/accounts/update_credentials",
            files={"avatar": ("a.png", picture(*colours, size=(400, 400), face=True), "image/png")},
        )
    call(
        "ada",
        "PATCH",
        "/api/v1/accounts/update_credentials",
        files={
            "header": (
                "h.png",
                picture((150, 190, 230), (60, 120, 80), (255, 210, 90), size=(1500, 500)),
                "image/png",
            )
        },
    )
    call(
        "linus",
        "POST",
        "/api/v1/statuses",
        json={
            "status": "Spoiler: the ending of the film",
            "sensitive": True,
            "media_ids": [
                media(
                    "linus", picture((30, 30, 50), (120, 30, 60), (230, 230, 255)), "A dark stage"
                )
            ],
        },
    )
    call(
        "margaret",
        "POST",
        "/api/v1/statuses",
        json={
            "status": "Two views from the launch site #apollo",
            "media_ids": [
                media(
                    "margaret",
                    picture((140, 190, 240), (190, 160, 110), (255, 220, 120)),
                    "A sandy launch site under a pale blue sky",
                ),
                media(
                    "margaret",
                    picture((250, 170, 120), (70, 90, 60), (255, 120, 80)),
                    "The same site at sunset, hills in dark green",
                ),
            ],
        },
    )


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
            ctx = browser.new_context(
                viewport=views[label],
                base_url=url,
                color_scheme=scheme,
                device_scale_factor=1 if label == "desktop" else 2,
            )
            page = ctx.new_page()
            page.goto("/")
            if scheme == "light" and label == "desktop":
                page.screenshot(path=HERE / "signed-out-desktop.png")
            page.get_by_role("button", name="Sign in").click()
            expect(
                page.get_by_label("Username or e-mail")
            ).to_be_visible()  # the form, not the landing
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
                page.get_by_role("textbox", name="Compose").fill(
                    "Drafting a note about #math and @grace"
                )
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
            page.goto("/")
            gallery = page.get_by_role("group", name="2 images").first
            expect(gallery).to_be_visible()
            until(page, "[...document.querySelectorAll('.media-item img')].every(i => i.complete)")
            gallery.scroll_into_view_if_needed()
            page.screenshot(path=HERE / f"media-{label}.png")
            gallery.locator(".media-item").first.click()
            expect(page.get_by_role("dialog")).to_be_visible()
            until(page, "document.querySelector('.viewer-image').complete")
            page.screenshot(path=HERE / f"viewer-{label}.png")
            page.keyboard.press("Escape")
            page.goto("/@linus")
            expect(page.get_by_role("button", name="Sensitive content — show")).to_be_visible()
            page.get_by_role("button", name="Sensitive content — show").scroll_into_view_if_needed()
            page.screenshot(path=HERE / f"sensitive-{label}.png")
            page.goto("/")
            page.get_by_role("textbox", name="Compose").click()
            with page.expect_file_chooser() as chooser:
                page.get_by_role("button", name="Add images").click()
            chooser.value.set_files(
                {
                    "name": "meadow.png",
                    "mimeType": "image/png",
                    "buffer": picture((160, 200, 240), (90, 160, 70), (255, 230, 120)),
                }
            )
            page.get_by_label("Alt text for image 1").fill("A meadow under a yellow sun")
            page.get_by_role("textbox", name="Compose").fill("Lunch break view")
            until(
                page, "[...document.querySelectorAll('.compose-media img')].some(i => i.complete)"
            )
            page.screenshot(path=HERE / f"compose-images-{label}.png")
            page.goto("/settings")  # on a phone the link is in the menu
            expect(page.get_by_label("Display name")).to_be_visible()
            page.screenshot(path=HERE / f"settings-{label}.png")
            ctx.close()
        browser.close()
    print("screenshots in", HERE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
