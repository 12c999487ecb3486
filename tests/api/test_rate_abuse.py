"""Cheap abuse of apps and tokens, against a real serve.

Before: app tokens were free to create and each had its own rate bucket, so
one IP got hundreds of times the per-token limit; and a user's token with
write:accounts could register new accounts.
"""

from __future__ import annotations

import httpx
from support.mastodon import serve_env  # noqa: F401
from support.names import unique  # noqa: F401
from support.rest import PASSWORD, app_token, assert_error, bearer, make_app, sign_up  # noqa: F401

from redpoll.api.process import ServeProcess


def test_apps_and_tokens_are_limited_per_ip(settings, server):  # settings: a flushed database
    env = serve_env(server, REDPOLL_RATE_APPS="4/900")
    with ServeProcess(env) as srv, httpx.Client(base_url=srv.url, timeout=30) as http:
        app = make_app(http)  # 1
        make_app(http)  # 2
        app_token(http, app)  # 3: token issuance counts too
        app_token(http, app)  # 4
        r = http.post(
            "/api/v1/apps", data={"client_name": "t", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob"}
        )
        assert_error(r, 429)
        assert r.headers["X-RateLimit-Limit"] == "4" and r.headers["X-RateLimit-Remaining"] == "0"
        r = http.post(
            "/oauth/token",
            data={
                "grant_type": "client_credentials",
                "client_id": app["client_id"],
                "client_secret": app["client_secret"],
            },
        )
        assert_error(r, 429)


def test_an_ips_requests_are_counted_across_its_tokens(settings, server):
    env = serve_env(server, REDPOLL_RATE_IP_TOKENS="12/900")
    with ServeProcess(env) as srv, httpx.Client(base_url=srv.url, timeout=30) as http:
        app = make_app(http)
        tokens = [app_token(http, app) for _ in range(4)]  # each with its own token bucket
        codes = [
            http.get("/api/v1/timelines/public", headers=bearer(t)).status_code
            for _ in range(3)
            for t in tokens
        ]
        assert codes == [200] * 12, codes
        fresh = app_token(http, app)  # a new token does not bring a new allowance
        r = http.get("/api/v1/timelines/public", headers=bearer(fresh))
        assert_error(r, 429)
        assert r.headers["X-RateLimit-Limit"] == "12"


def test_a_user_token_cannot_register_accounts(settings, server):
    with ServeProcess(serve_env(server)) as srv, httpx.Client(base_url=srv.url, timeout=30) as http:
        app = make_app(http)
        user_token, _ = sign_up(http, app)
        me = http.get("/api/v1/apps/verify_credentials", headers=bearer(user_token))
        assert me.status_code == 200
        name = unique("sock")
        r = http.post(
            "/api/v1/accounts",
            headers=bearer(user_token),
            data={
                "username": name,
                "email": f"{name}@example.com",
                "password": PASSWORD,
                "agreement": "true",
            },
        )
        body = assert_error(r, 403)
        assert body["error"] == "This method requires an client credentials authentication"
        assert http.get("/api/v1/accounts/lookup", params={"acct": name}).status_code == 404
        # the app's own token still may
        r = http.post(
            "/api/v1/accounts",
            headers=bearer(app_token(http, app)),
            data={
                "username": name,
                "email": f"{name}@example.com",
                "password": PASSWORD,
                "agreement": "true",
            },
        )
        assert r.status_code == 200, r.text
