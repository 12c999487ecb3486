"""Browser notifications in the web app, in Debian's Chromium: the Settings
toggle asks permission, registers the service worker at /sw.js and sends
the browser's push subscription to the server; the service worker shows
what is pushed to it; off, the subscription is gone on both sides.

Headless Chromium has no push service offline (PushManager.subscribe fails
with "Registration failed"), so the page's PushManager is replaced by one
that hands out a subscription made here as a browser would (a P-256 key and
an auth secret); the push itself is delivered to the real service worker
through the DevTools protocol (ServiceWorker.deliverPushMessage), as the
browser delivers what it decrypted."""

from __future__ import annotations

import base64
import json
import time

import httpx
from mastodon import Mastodon
from playwright.sync_api import expect
from support.browser import DESKTOP, browser, people, web  # noqa: F401

ENDPOINT = "https://push.invalid/redpoll-web-test"


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def fake_push_manager(p256dh: str, auth: str) -> str:
    return """(() => {
  const json = { endpoint: %s, expirationTime: null, keys: { p256dh: %s, auth: %s } };
  const sub = { endpoint: json.endpoint, toJSON: () => json,
    unsubscribe: async () => { sessionStorage.removeItem('fakePush'); return true; } };
  PushManager.prototype.subscribe = async function (options) {
    const key = new Uint8Array(options.applicationServerKey);
    window.__pushKey = btoa(String.fromCharCode(...key)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
    sessionStorage.setItem('fakePush', '1');
    return sub;
  };
  PushManager.prototype.getSubscription = async function () { return sessionStorage.getItem('fakePush') ? sub : null; };
})();""" % (json.dumps(ENDPOINT), json.dumps(p256dh), json.dumps(auth))  # noqa: UP031


def test_the_toggle_registers_the_worker_and_sends_the_subscription(people, web):  # noqa: F811
    ann = people(DESKTOP)
    ann.sign_up("ann")
    _, public = Mastodon.push_subscription_generate_keys(Mastodon)
    ann.context.add_init_script(fake_push_manager(b64url(public["pubkey"]), b64url(public["auth"])))
    ann.context.grant_permissions(["notifications"], origin=web.url.rstrip("/"))
    page = ann.page
    page.goto("/settings")
    toggle = page.get_by_label("Alert me in this browser")
    expect(toggle).to_be_enabled()
    expect(toggle).not_to_be_checked()
    assert ann.api("GET", "/api/v1/push/subscription").status_code == 404

    toggle.check()
    expect(page.get_by_text("Browser notifications on")).to_be_visible()
    expect(toggle).to_be_checked()
    script = page.evaluate(
        "async () => (await navigator.serviceWorker.getRegistration('/'))?.active?.scriptURL"
    )
    assert script == web.url.rstrip("/") + "/sw.js"
    held = ann.api("GET", "/api/v1/push/subscription").json()
    assert held["endpoint"] == ENDPOINT and held["standard"] is True
    assert all(held["alerts"].values()) and held["policy"] == "all"
    # subscribed with the server's key
    assert page.evaluate("window.__pushKey") == held["server_key"]
    sent = [
        data
        for method, url, data in ann.requests
        if method == "POST" and url.endswith("/api/v1/push/subscription")
    ]
    assert sent and json.loads(sent[-1])["subscription"]["keys"]["auth"] == b64url(public["auth"])

    # what the browser decrypted reaches the service worker, which shows it
    cdp = ann.context.new_cdp_session(page)
    registrations = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda e: registrations.extend(e["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    deadline = time.monotonic() + 10
    while not registrations and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    [reg] = [r for r in registrations if r["scopeURL"] == web.url.rstrip("/") + "/"]
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {
            "origin": web.url.rstrip("/"),
            "registrationId": reg["registrationId"],
            "data": json.dumps(
                {
                    "notification_id": "7",
                    "notification_type": "mention",
                    "title": "You were mentioned by Ben",
                    "body": "hello ann",
                    "icon": web.url.rstrip("/") + "/avatars/original/missing.png",
                    "access_token": "x",
                    "preferred_locale": "en",
                }
            ),
        },
    )
    shown = []
    deadline = time.monotonic() + 10
    while not shown and time.monotonic() < deadline:
        shown = page.evaluate(
            "async () => (await (await navigator.serviceWorker.ready)"
            ".getNotifications()).map((n) => [n.title, n.body, n.tag])"
        )
        page.wait_for_timeout(50)
    assert shown == [["You were mentioned by Ben", "hello ann", "redpoll-7"]]

    # a reload shows it on (this browser's subscription is the server's)
    page.reload()
    expect(page.get_by_label("Alert me in this browser")).to_be_checked()
    page.get_by_label("Alert me in this browser").uncheck()
    expect(page.get_by_text("Browser notifications off")).to_be_visible()
    assert ann.api("GET", "/api/v1/push/subscription").status_code == 404


def test_the_service_worker_is_served_at_the_root(web):  # noqa: F811
    answer = httpx.get(web.url.rstrip("/") + "/sw.js")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/javascript")
    assert answer.headers["cache-control"] == "no-cache"
    assert "showNotification" in answer.text
