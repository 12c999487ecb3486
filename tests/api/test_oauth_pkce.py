"""OAuth 2 authorization code with PKCE (RFC 7636, S256 only) and RFC 6749
section 4.1.3's redirect_uri rule, against a real ``redpoll serve``: the
browser app signs in this way, any other client may too."""

from __future__ import annotations

import base64
import hashlib
import secrets

import httpx
import pytest
from mastodon import Mastodon
from support.mastodon import api, register, serve_env  # noqa: F401
from support.names import unique  # noqa: F401

CB = "https://client.example/cb"
OTHER = "https://client.example/other"
PASSWORD = "correct horse battery"


def challenge(verifier: str) -> str:
    return (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )


@pytest.fixture(scope="module")
def app_user(api):
    app = Mastodon.create_app(
        "pkce-app", api_base_url=api.url, scopes=["read", "write"], redirect_uris=f"{CB}\n{OTHER}"
    )
    name = unique("pkce")
    register(api, app, name, scopes=("read", "write"))
    return app, name


def authorize(api, app, name, **extra) -> httpx.Response:
    data = {
        "response_type": "code",
        "client_id": app[0],
        "scope": "read write",
        "state": "s1",
        "username": name,
        "password": PASSWORD,
        **extra,
    }
    with httpx.Client() as http:
        return http.post(api.url + "/oauth/authorize", data=data)


def code_from(resp: httpx.Response) -> str:
    assert resp.status_code == 302, resp.text
    return httpx.URL(resp.headers["location"]).params["code"]


def token(api, app, code, **extra) -> httpx.Response:
    return httpx.post(
        api.url + "/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": app[0],
            "client_secret": app[1],
            **extra,
        },
    )


def works(api, resp: httpx.Response, name: str) -> None:
    assert resp.status_code == 200, resp.text
    me = httpx.get(
        api.url + "/api/v1/accounts/verify_credentials",
        headers={"Authorization": "Bearer " + resp.json()["access_token"]},
    )
    assert me.json()["username"] == name


def test_metadata_announces_s256(api):
    meta = httpx.get(api.url + "/.well-known/oauth-authorization-server").json()
    assert meta["code_challenge_methods_supported"] == ["S256"]


def test_pkce_code_needs_the_right_verifier(api, app_user):
    app, name = app_user
    verifier = secrets.token_urlsafe(48)
    pkce = {
        "redirect_uri": CB,
        "code_challenge": challenge(verifier),
        "code_challenge_method": "S256",
    }
    # the authorize page carries the challenge into its form
    page = httpx.get(
        api.url + "/oauth/authorize",
        params={"response_type": "code", "client_id": app[0], "scope": "read write", **pkce},
    )
    assert page.status_code == 200
    assert f'name=code_challenge value="{pkce["code_challenge"]}"' in page.text
    assert (
        "<button type=submit name=decision value=allow class=primary>Authorize</button>"
        in page.text
    )

    # no verifier: refused, and the code is spent
    code = code_from(authorize(api, app, name, **pkce))
    refused = token(api, app, code, redirect_uri=CB)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    assert token(api, app, code, redirect_uri=CB, code_verifier=verifier).status_code == 400

    # a wrong verifier (well formed): refused
    code = code_from(authorize(api, app, name, **pkce))
    wrong = token(api, app, code, redirect_uri=CB, code_verifier=secrets.token_urlsafe(48))
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"

    # a verifier too short for RFC 7636 (even if its hash matched): refused
    short = "abc"
    code = code_from(
        authorize(
            api,
            app,
            name,
            redirect_uri=CB,
            code_challenge=challenge(short),
            code_challenge_method="S256",
        )
    )
    assert token(api, app, code, redirect_uri=CB, code_verifier=short).status_code == 400

    # the right verifier: a working token, once
    code = code_from(authorize(api, app, name, **pkce))
    works(api, token(api, app, code, redirect_uri=CB, code_verifier=verifier), name)
    assert token(api, app, code, redirect_uri=CB, code_verifier=verifier).status_code == 400


def test_pkce_refuses_plain_and_malformed_challenges(api, app_user):
    app, name = app_user
    good = challenge(secrets.token_urlsafe(48))
    for extra, message in (
        ({"code_challenge": good, "code_challenge_method": "plain"}, "must be S256"),
        ({"code_challenge": good}, "must be S256"),  # no method means plain
        ({"code_challenge": "short", "code_challenge_method": "S256"}, "43 base64url"),
        ({"code_challenge_method": "S256"}, "without code_challenge"),
    ):
        resp = authorize(api, app, name, redirect_uri=CB, **extra)
        assert resp.status_code == 400 and message in resp.text, extra
        page = httpx.get(
            api.url + "/oauth/authorize",
            params={"response_type": "code", "client_id": app[0], "redirect_uri": CB, **extra},
        )
        assert page.status_code == 400 and "location" not in page.headers


def test_verifier_for_a_code_without_challenge_is_refused(api, app_user):
    app, name = app_user
    code = code_from(authorize(api, app, name, redirect_uri=CB))
    resp = token(api, app, code, redirect_uri=CB, code_verifier=secrets.token_urlsafe(48))
    assert resp.status_code == 400 and resp.json()["error"] == "invalid_grant"


def test_code_issued_with_redirect_uri_needs_the_same_at_the_token_endpoint(api, app_user):
    app, name = app_user
    # named at authorize, missing at the token endpoint: refused
    code = code_from(authorize(api, app, name, redirect_uri=CB))
    missing = token(api, app, code)
    assert missing.status_code == 400 and missing.json()["error"] == "invalid_grant"
    # another registered redirect_uri: refused
    code = code_from(authorize(api, app, name, redirect_uri=CB))
    assert token(api, app, code, redirect_uri=OTHER).status_code == 400
    # the same: accepted
    code = code_from(authorize(api, app, name, redirect_uri=OTHER))
    works(api, token(api, app, code, redirect_uri=OTHER), name)


def test_code_without_redirect_uri_for_an_app_with_one(api):
    app = Mastodon.create_app(
        "one-uri", api_base_url=api.url, scopes=["read", "write"], redirect_uris=CB
    )
    name = unique("one")
    register(api, app, name, scopes=("read", "write"))
    resp = authorize(api, app, name, scope="read")  # no redirect_uri named: the one registered
    assert resp.headers["location"].startswith(CB + "?")
    code = code_from(resp)
    works(api, token(api, app, code), name)  # none named: none needed
    code = code_from(authorize(api, app, name, scope="read"))
    assert token(api, app, code, redirect_uri=OTHER).status_code == 400  # but never another


def test_a_wrong_password_keeps_the_username_typed_never_the_password(api, app_user):
    app, name = app_user
    refused = authorize(
        api,
        app,
        name,
        password="not the password",
        code_challenge=challenge("v" * 43),
        code_challenge_method="S256",
        redirect_uri=CB,
    )
    assert refused.status_code == 401 and "Invalid username or password" in refused.text
    assert f'name=username autocomplete=username required value="{name}"' in refused.text
    assert "not the password" not in refused.text
    # the page still carries the request (the hidden fields), so a second try signs in
    assert f'name=client_id value="{app[0]}"' in refused.text
    assert code_from(
        authorize(
            api,
            app,
            name,
            code_challenge=challenge("v" * 43),
            code_challenge_method="S256",
            redirect_uri=CB,
        )
    )


def test_the_instance_thumbnail_is_an_image(api):
    info = Mastodon(api_base_url=api.url).instance()  # v2 (Mastodon.py 2.x)
    with httpx.Client() as http:
        for url in (
            info["thumbnail"]["url"],
            http.get(api.url + "/api/v1/instance").json()["thumbnail"],
        ):
            got = http.get(url)
            assert got.status_code == 200 and got.headers["content-type"] == "image/png"
            assert got.content.startswith(b"\x89PNG")
