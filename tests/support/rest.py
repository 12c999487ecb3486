"""Plain HTTP (httpx) against a real ``redpoll serve``: apps, tokens, sign-up
and Mastodon's error shape."""

from __future__ import annotations

import httpx
import pytest

from support.mastodon import api  # noqa: F401  (the one serve fixture, re-exported)
from support.names import unique

PASSWORD = "correct horse battery"


@pytest.fixture
def http(api):
    with httpx.Client(base_url=api.url, timeout=30) as client:
        yield client


def make_app(http, scopes="read write follow push") -> dict:
    r = http.post(
        "/api/v1/apps",
        data={"client_name": "t", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob", "scopes": scopes},
    )
    assert r.status_code == 200, r.text
    return r.json()


def app_token(http, app, scope="read write follow push") -> str:
    r = http.post(
        "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "scope": scope,
        },
    )
    assert r.status_code == 200, r.text
    return r.json()["access_token"]


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def sign_up(http, app, name=None) -> tuple[str, str]:
    """(token, account id) of a new user."""
    name = name or unique("u")
    r = http.post(
        "/api/v1/accounts",
        headers=bearer(app_token(http, app)),
        data={
            "username": name,
            "email": f"{name}@example.com",
            "password": PASSWORD,
            "agreement": "true",
            "locale": "en",
        },
    )
    assert r.status_code == 200, r.text
    token = r.json()["access_token"]
    me = http.get("/api/v1/accounts/verify_credentials", headers=bearer(token)).json()
    return token, me["id"]


def assert_error(r: httpx.Response, status: int) -> dict:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert isinstance(body.get("error"), str) and body["error"], body
    return body
