"""The browser tests' modules share one database per worker: each module's
``redpoll serve`` (``support.browser.fresh_serve``, what every ``web``
fixture is) starts on a clean one, so what one module left (closed
registrations, an account, a block) does not reach the next."""

from __future__ import annotations

import httpx
from support.browser import fresh_serve
from support.cli import admin_ok
from support.mastodon import new_app, register


def test_a_module_after_another_starts_from_a_clean_database(server):
    with fresh_serve(server) as before:  # a module before this one
        app = new_app(before)
        ann = register(before, app, "ann")
        ann.account_block(register(before, app, "bob").me()["id"])
        admin_ok(server, "registrations", "closed", "--message", "Full for now")
        assert httpx.get(before.url + "/api/v1/accounts/lookup?acct=ann").status_code == 200
    with fresh_serve(server) as after:
        assert httpx.get(after.url + "/api/v1/accounts/lookup?acct=ann").status_code == 404
        instance = httpx.get(after.url + "/api/v2/instance").json()
        assert instance["registrations"]["enabled"] is True
        assert instance["usage"]["users"]["active_month"] == 0
        register(after, new_app(after), "ann")  # the name is free, sign-up open
