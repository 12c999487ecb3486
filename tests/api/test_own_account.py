"""One's own account beyond the profile, against a real ``redpoll serve``:
the apps and devices signed in (``/api/v1/redpoll/sessions``) and revoking
one, changing the password, deleting the account; and the authorize page's
words for another app, its Deny, its sign-up link."""

from __future__ import annotations

import time

import httpx
from mastodon import Mastodon
from support.mastodon import api, client, new_app, register, serve_env  # noqa: F401
from support.names import unique  # noqa: F401

PASSWORD = "correct horse battery"
CB = "https://client.example/cb"


def password_token(api, app, name, password=PASSWORD) -> httpx.Response:
    return httpx.post(
        api.url + "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": app[0],
            "client_secret": app[1],
            "username": name,
            "password": password,
            "scope": "read write",
        },
    )


def bearer(token: str) -> dict:
    return {"Authorization": "Bearer " + token}


def me(api, token: str) -> httpx.Response:
    return httpx.get(api.url + "/api/v1/accounts/verify_credentials", headers=bearer(token))


def test_sessions_are_listed_and_one_is_revoked(api):
    app = new_app(api)
    name = unique("sess")
    m = register(api, app, name)
    other_app = Mastodon.create_app(
        "Other phone app",
        api_base_url=api.url,
        scopes=["read", "write"],
        website="https://phone.example",
    )
    phone = password_token(api, other_app, name).json()["access_token"]
    listed = httpx.get(api.url + "/api/v1/redpoll/sessions", headers=bearer(m.access_token))
    assert listed.status_code == 200 and listed.headers["cache-control"] == "no-store"
    rows = listed.json()
    assert [r["app_name"] for r in rows] == ["Other phone app", "redpoll-test"]
    assert [r["current"] for r in rows] == [False, True]
    assert rows[0]["website"] == "https://phone.example" and rows[0]["scopes"] == ["read", "write"]
    assert all(len(r["id"]) == 16 for r in rows) and rows[0]["created_at"].endswith("Z")
    assert phone not in listed.text  # only an id made from its digest

    # another account cannot revoke it, nor see it
    stranger = register(api, app, unique("stranger"))
    assert (
        httpx.delete(
            api.url + f"/api/v1/redpoll/sessions/{rows[0]['id']}",
            headers=bearer(stranger.access_token),
        ).status_code
        == 404
    )
    theirs = httpx.get(api.url + "/api/v1/redpoll/sessions", headers=bearer(stranger.access_token))
    assert [r["app_name"] for r in theirs.json()] == ["redpoll-test"]

    assert me(api, phone).status_code == 200
    gone = httpx.delete(
        api.url + f"/api/v1/redpoll/sessions/{rows[0]['id']}", headers=bearer(m.access_token)
    )
    assert gone.status_code == 200 and gone.json() == {}
    assert me(api, phone).status_code == 401  # at once
    again = httpx.delete(
        api.url + f"/api/v1/redpoll/sessions/{rows[0]['id']}", headers=bearer(m.access_token)
    )
    assert again.status_code == 404
    left = httpx.get(api.url + "/api/v1/redpoll/sessions", headers=bearer(m.access_token)).json()
    assert [r["current"] for r in left] == [True]
    # a read-only token may list but not revoke
    reader = Mastodon.create_app("reader", api_base_url=api.url, scopes=["read"])
    ro = httpx.post(
        api.url + "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": reader[0],
            "client_secret": reader[1],
            "username": name,
            "password": PASSWORD,
            "scope": "read",
        },
    ).json()["access_token"]
    assert httpx.get(api.url + "/api/v1/redpoll/sessions", headers=bearer(ro)).status_code == 200
    assert (
        httpx.delete(
            api.url + f"/api/v1/redpoll/sessions/{left[0]['id']}", headers=bearer(ro)
        ).status_code
        == 403
    )


def test_change_password_needs_the_current_one_and_signs_out_the_others(api):
    app = new_app(api)
    name = unique("pw")
    m = register(api, app, name)
    other = password_token(api, app, name).json()["access_token"]
    wrong = httpx.post(
        api.url + "/api/v1/redpoll/password",
        headers=bearer(m.access_token),
        data={"current_password": "not it at all", "password": "a new password"},
    )
    assert wrong.status_code == 422 and "current_password" in wrong.json()["details"]
    short = httpx.post(
        api.url + "/api/v1/redpoll/password",
        headers=bearer(m.access_token),
        data={"current_password": PASSWORD, "password": "short"},
    )
    assert short.status_code == 422 and "shorter" in short.json()["error"]
    assert me(api, other).status_code == 200  # nothing changed yet

    done = httpx.post(
        api.url + "/api/v1/redpoll/password",
        headers=bearer(m.access_token),
        json={"current_password": PASSWORD, "password": "a new password"},
    )
    assert done.status_code == 200, done.text
    assert me(api, m.access_token).status_code == 200  # the one asking stays signed in
    assert me(api, other).status_code == 401
    assert password_token(api, app, name).status_code == 400
    assert password_token(api, app, name, "a new password").status_code == 200


def test_delete_account_needs_the_password_then_it_is_gone(api):
    app = new_app(api)
    name = unique("del")
    m = register(api, app, name)
    m.status_post("a post that goes with the account")
    friend = register(api, app, unique("friend"))
    friend.account_follow(m.me().id)
    wrong = httpx.post(
        api.url + "/api/v1/redpoll/delete_account",
        headers=bearer(m.access_token),
        data={"password": "not the password"},
    )
    assert wrong.status_code == 422
    assert me(api, m.access_token).status_code == 200

    done = httpx.post(
        api.url + "/api/v1/redpoll/delete_account",
        headers=bearer(m.access_token),
        data={"password": PASSWORD},
    )
    assert done.status_code == 200, done.text
    assert me(api, m.access_token).status_code == 401  # every token revoked at once
    assert password_token(api, app, name).status_code == 400
    assert friend.me().following_count == 0
    lookup = httpx.get(api.url + "/api/v1/accounts/lookup", params={"acct": name})
    assert lookup.status_code == 404
    # purged once the jobs drain: the login is free again
    deadline = time.monotonic() + 30
    while True:
        again = client(api, app)
        try:
            again.create_account(
                name, PASSWORD, f"{name}@example.com", agreement=True, scopes=["read", "write"]
            )
            break
        except Exception as exc:
            assert time.monotonic() < deadline, (
                f"the deleted account's login never came free: {exc}"
            )
            time.sleep(0.5)
    assert again.me().statuses_count == 0


def test_authorize_page_names_the_app_and_its_scopes_in_words_and_deny(api):
    app = Mastodon.create_app(
        "Elk for phones",
        api_base_url=api.url,
        scopes=["read", "write", "follow", "push"],
        redirect_uris=CB,
        website="https://elk.example",
    )
    query = {
        "response_type": "code",
        "client_id": app[0],
        "redirect_uri": CB,
        "scope": "read write follow push",
        "state": "st8",
    }
    page = httpx.get(api.url + "/oauth/authorize", params=query)
    assert page.status_code == 200
    text = page.text
    assert "Authorize Elk for phones" in text and "https://elk.example" in text
    for words in (
        "Read your posts and notifications",
        "Post and change things for you",
        "Follow and unfollow",
        "Send you push notifications",
    ):
        assert words in text
    assert "read write follow push" not in text.split("<form")[0]  # words, not codes
    assert "<a href=/signup>Create an account</a>" in text
    csp = page.headers["content-security-policy"]
    assert "style-src 'self'" in csp and "unsafe-inline" not in csp and "<style" not in text
    assert "/account.css" in text
    deny = httpx.post(api.url + "/oauth/authorize", data={**query, "decision": "deny"})
    assert deny.status_code == 302
    target = httpx.URL(deny.headers["location"])
    assert str(target).startswith(CB + "?") and target.params["error"] == "access_denied"
    assert target.params["state"] == "st8" and "code" not in target.params


def test_the_web_apps_own_sign_in_is_plain(api):
    own = f"{api.url.rstrip('/')}/oauth/callback"
    app = Mastodon.create_app(
        "Redpoll web",
        api_base_url=api.url,
        scopes=["read", "write", "follow", "push"],
        redirect_uris=own,
    )
    page = httpx.get(
        api.url + "/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": app[0],
            "redirect_uri": own,
            "scope": "read write follow push",
        },
    )
    assert page.status_code == 200
    assert "<h1>Sign in to Redpoll</h1>" in page.text
    assert "permissions" not in page.text and "Authorize" not in page.text
