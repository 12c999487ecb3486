"""The web app started without a network (Debian's Chromium, a real
``redpoll serve``), at a phone's size and a desk's: its service worker
keeps the shell (the document and the versioned files it names), so a
reload while offline still opens the app, which says it is offline, and
starts again by itself once the network is back; the service worker
answers no API request."""

from __future__ import annotations

from playwright.sync_api import expect
from support.browser import DESKTOP, PHONE, browser, page_until, people, shot, status_in, web  # noqa: F401


def test_offline_the_app_still_opens_from_its_shell_and_says_so(people):  # noqa: F811
    for size in (PHONE, DESKTOP):
        ann = people(size)
        ann.sign_up("ann")
        ann.api("POST", "/api/v1/statuses", data={"status": "posted before the tunnel"})
        p = ann.page
        p.goto("/")
        expect(status_in(p, "posted before the tunnel")).to_be_visible()
        # the worker is in charge of the page and has kept the shell and its files
        page_until(p, "!!navigator.serviceWorker.controller")
        page_until(
            p,
            "(window.__kept = window.__kept || caches.open('redpoll-shell').then(async (c) =>"
            " window.__keys = (await c.keys()).map((r) => new URL(r.url).pathname))) && !!window.__keys"
            " && window.__keys.includes('/__shell') && window.__keys.some((k) => k.endsWith('/app.js'))"
            " && window.__keys.some((k) => k.endsWith('/style.css'))",
        )
        keys = p.evaluate("window.__keys")
        assert not [k for k in keys if k.startswith("/api/")], keys  # no API answer kept

        ann.context.set_offline(True)
        p.reload()
        # the app's shell opens: its navigation, and a notice that it is offline
        expect(p.get_by_role("navigation", name="Main")).to_be_visible()
        expect(p.get_by_role("link", name="Home", exact=True)).to_be_visible()
        notice = p.get_by_role("status").filter(has_text="Offline")
        expect(notice).to_be_visible()
        assert p.evaluate("getComputedStyle(document.body).fontFamily")  # the style sheet came too
        expect(p.locator(".layout")).to_be_visible()
        shot(ann, "offline-start")
        # another page of the app opens offline too (the same shell)
        p.goto("/notifications")
        expect(p.get_by_role("heading", name="Notifications")).to_be_visible()
        expect(notice).to_be_visible()

        # the network is back: the app starts again by itself, the notice goes
        ann.context.set_offline(False)
        expect(
            status_in(p, "posted before the tunnel").or_(p.locator(".notes-body"))
        ).to_be_visible()
        expect(notice).to_be_hidden()
        p.goto("/")
        expect(status_in(p, "posted before the tunnel")).to_be_visible()
        expect(notice).to_have_count(0)
        # what failed while offline was the browser saying the network was gone
        ann.problems[:] = [
            x
            for x in ann.problems
            if "ERR_INTERNET_DISCONNECTED" not in x and "Failed to fetch" not in x
        ]
