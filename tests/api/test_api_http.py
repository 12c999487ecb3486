"""The API over plain HTTP (httpx) against a real ``redpoll serve`` process:
error answers, bad input, body limits, Link headers, rate limits, shutdown."""

from __future__ import annotations

import uuid

import httpx
from support.mastodon import serve_env  # noqa: F401
from support.names import unique  # noqa: F401
from support.rest import PASSWORD, api, app_token, assert_error, bearer, http, make_app, sign_up  # noqa: F401

from redpoll.api.process import ServeProcess


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def test_auth_errors(http):
    assert_error(http.get("/api/v1/timelines/home"), 401)
    assert_error(http.get("/api/v1/timelines/home", headers=bearer("not-a-token")), 401)
    assert_error(http.get("/api/v1/timelines/home", headers={"Authorization": "Basic eDp5"}), 401)
    app = make_app(http)
    token = app_token(http, app)
    # an app token is not a user
    assert_error(http.get("/api/v1/accounts/verify_credentials", headers=bearer(token)), 422)
    assert_error(http.post("/api/v1/accounts", data={"username": "x"}), 401)
    # OAuth errors have OAuth's shape
    r = http.post(
        "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": app["client_id"],
            "client_secret": "wrong",
        },
    )
    assert r.status_code == 401 and r.json()["error"] == "invalid_client"
    r = http.post("/oauth/token", data={"grant_type": "implicit"})
    assert r.status_code == 400 and r.json()["error"] == "unsupported_grant_type"
    r = http.post(
        "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "scope": "admin:read",
        },
    )
    assert r.status_code == 400 and r.json()["error"] == "invalid_scope"
    narrow = make_app(http, scopes="read")
    r = http.post(
        "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": narrow["client_id"],
            "client_secret": narrow["client_secret"],
            "scope": "write",
        },
    )
    assert r.status_code == 400 and r.json()["error"] == "invalid_scope"
    r = http.post(
        "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "username": "nobody",
            "password": "whatever1",
        },
    )
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    assert_error(http.post("/api/v1/apps", data={"client_name": "x"}), 422)
    assert_error(
        http.post(
            "/api/v1/apps", data={"client_name": "x", "redirect_uris": "javascript:alert(1)"}
        ),
        422,
    )


def test_registration_errors(http):
    app = make_app(http)
    headers = bearer(app_token(http, app))
    name = unique("reg")
    good = {
        "username": name,
        "email": f"{name}@example.com",
        "password": PASSWORD,
        "agreement": "true",
    }
    assert http.post("/api/v1/accounts", headers=headers, data=good).status_code == 200
    taken = assert_error(
        http.post(
            "/api/v1/accounts",
            headers=headers,
            data=good | {"email": f"other{name}@example.com", "username": name.upper()},
        ),
        422,
    )
    assert taken["details"]["username"][0]["error"] == "ERR_TAKEN"
    email = assert_error(
        http.post("/api/v1/accounts", headers=headers, data=good | {"username": unique("r")}), 422
    )
    assert email["details"]["email"][0]["error"] == "ERR_TAKEN"
    for bad in (
        {"password": "short"},
        {"agreement": "false"},
        {"email": "nope"},
        {"username": "bad name!"},
        {"username": "x" * 31},
    ):
        r = http.post(
            "/api/v1/accounts",
            headers=headers,
            data=good | {"username": unique("r"), "email": f"{unique('e')}@example.com"} | bad,
        )
        assert_error(r, 422)
    # the failed attempts did not take the e-mail of the good ones
    r = http.post(
        "/api/v1/accounts",
        headers=headers,
        data={
            "username": unique("r"),
            "email": f"{unique('e')}@example.com",
            "password": PASSWORD,
            "agreement": True,
        },
    )
    assert r.status_code == 200
    # a user token without write:accounts may not register anyone
    reader = http.post(
        "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "username": name,
            "password": PASSWORD,
            "scope": "read",
        },
    ).json()["access_token"]
    assert_error(http.post("/api/v1/accounts", headers=bearer(reader), data=good), 403)


def test_bad_input_gets_4xx_never_5xx(http):
    app = make_app(http)
    token, uid = sign_up(http, app)
    other, other_id = sign_up(http, app)
    h = bearer(token)
    assert_error(http.post("/api/v1/statuses", headers=h, data={}), 422)
    assert_error(http.post("/api/v1/statuses", headers=h, data={"status": "x" * 501}), 422)
    assert_error(http.post("/api/v1/statuses", headers=h, data={"status": "   "}), 422)
    assert_error(http.post("/api/v1/statuses", headers=h, json={"status": 123}), 422)
    assert_error(http.post("/api/v1/statuses", headers=h, json={"status": ["a"]}), 422)
    assert_error(http.post("/api/v1/statuses", headers=h, json=["status"]), 422)
    assert_error(
        http.post(
            "/api/v1/statuses", headers=h | {"Content-Type": "application/json"}, content=b"{nope"
        ),
        400,
    )
    assert_error(
        http.post(
            "/api/v1/statuses", headers=h | {"Content-Type": "text/plain"}, content=b"status=hi"
        ),
        415,
    )
    assert_error(
        http.post("/api/v1/statuses", headers=h, data={"status": "hi", "visibility": "secret"}), 422
    )
    assert_error(
        http.post("/api/v1/statuses", headers=h, data={"status": "hi", "lat": "91", "long": "0"}),
        422,
    )
    assert_error(http.post("/api/v1/statuses", headers=h, data={"status": "hi", "lat": "10"}), 422)
    assert_error(
        http.post("/api/v1/statuses", headers=h, data={"status": "hi", "lat": "nan", "long": "1"}),
        422,
    )
    assert_error(
        http.post(
            "/api/v1/statuses", headers=h | {"Idempotency-Key": "k" * 300}, data={"status": "hi"}
        ),
        422,
    )
    too_big = {"status": "x" * (70 * 1024)}
    assert_error(http.post("/api/v1/statuses", headers=h, data=too_big), 413)
    assert_error(http.post("/api/v1/statuses", headers=h, json=too_big), 413)

    for path in (
        "/api/v1/statuses/abc",
        "/api/v1/statuses/99999999999",
        "/api/v1/statuses/0",
        "/api/v1/accounts/0",
        "/api/v1/accounts/abc",
        "/api/v1/accounts/99999999999/statuses",
        "/api/v1/accounts/99999999999/followers",
        "/api/v1/lists/12345678",
        "/api/v1/timelines/list/12345678",
        "/api/v1/nothing-here",
    ):
        assert_error(http.get(path, headers=h), 404)
    assert_error(http.get("/api/v1/accounts/lookup", params={"acct": "nobody_here_at_all"}), 404)
    assert_error(http.get("/api/v1/accounts/lookup"), 422)
    for params in (
        {"limit": "abc"},
        {"limit": "0"},
        {"max_id": "-1"},
        {"since_id": "x"},
        {"min_id": "1" * 30},
    ):
        assert_error(http.get("/api/v1/timelines/home", headers=h, params=params), 422)
    assert_error(http.put("/api/v1/timelines/home", headers=h), 405)

    # other users' things
    mine = http.post("/api/v1/statuses", headers=h, data={"status": "mine"}).json()
    assert_error(http.delete(f"/api/v1/statuses/{mine['id']}", headers=bearer(other)), 404)
    assert http.get(f"/api/v1/statuses/{mine['id']}").status_code == 200
    lst = http.post("/api/v1/lists", headers=h, data={"title": "mine"}).json()
    assert_error(http.get(f"/api/v1/lists/{lst['id']}", headers=bearer(other)), 404)
    assert_error(http.delete(f"/api/v1/lists/{lst['id']}", headers=bearer(other)), 404)
    assert_error(
        http.post(
            f"/api/v1/lists/{lst['id']}/accounts",
            headers=h,
            data={"account_ids[]": ["99999999999"]},
        ),
        404,
    )
    assert_error(http.post(f"/api/v1/lists/{lst['id']}/accounts", headers=h, data={}), 422)
    assert_error(http.post("/api/v1/lists", headers=h, data={"title": ""}), 422)
    assert_error(
        http.post("/api/v1/lists", headers=h, data={"title": "x", "replies_policy": "all"}), 422
    )

    # follows
    assert_error(http.post("/api/v1/accounts/99999999999/follow", headers=h), 404)
    assert_error(http.post(f"/api/v1/accounts/{uid}/follow", headers=h), 422)
    assert_error(
        http.get(
            "/api/v1/accounts/relationships",
            headers=h,
            params={"id[]": [str(i) for i in range(1, 50)]},
        ),
        422,
    )


def test_pagination_link_headers_and_relationships(http):
    app = make_app(http)
    token, uid = sign_up(http, app)
    author, author_id = sign_up(http, app)
    h = bearer(token)
    assert http.post(f"/api/v1/accounts/{author_id}/follow", headers=h).json()["following"] is True
    ids = [
        http.post("/api/v1/statuses", headers=bearer(author), data={"status": f"n{i}"}).json()["id"]
        for i in range(5)
    ]
    r = http.get("/api/v1/timelines/home", headers=h, params={"limit": 2})
    assert [s["id"] for s in r.json()] == [ids[4], ids[3]]
    links = r.links
    assert (
        links["next"]["url"].endswith(f"max_id={ids[3]}")
        or f"max_id={ids[3]}" in links["next"]["url"]
    )
    assert f"min_id={ids[4]}" in links["prev"]["url"]
    older = http.get(links["next"]["url"], headers=h)
    assert [s["id"] for s in older.json()] == [ids[2], ids[1]]
    newest = http.get("/api/v1/timelines/home", headers=h, params={"since_id": ids[1]})
    assert [s["id"] for s in newest.json()] == [ids[4], ids[3], ids[2]]
    status = r.json()[0]
    assert status["content"] == "<p>n4</p>" and status["visibility"] == "public"
    assert status["account"]["id"] == author_id and isinstance(status["id"], str)
    assert status["created_at"].endswith("Z") and "T" in status["created_at"]

    rels = http.get(
        "/api/v1/accounts/relationships",
        headers=h,
        params={"id[]": [author_id, uid, "99999999999"]},
    ).json()
    assert [(r["id"], r["following"]) for r in rels] == [(author_id, True), (uid, False)]

    # followers paging with Link next
    fans = [sign_up(http, app) for _ in range(3)]
    for fan_token, _ in fans:
        http.post(f"/api/v1/accounts/{author_id}/follow", headers=bearer(fan_token))
    page = http.get(f"/api/v1/accounts/{author_id}/followers", params={"limit": 2})
    assert len(page.json()) == 2
    rest = http.get(page.links["next"]["url"])
    seen = [a["id"] for a in page.json() + rest.json()]
    assert sorted(seen) == sorted([uid] + [f[1] for f in fans])
    assert http.get(f"/api/v1/accounts/{author_id}").json()["followers_count"] == 4

    # unfollow returns the relationship; idempotent
    for _ in range(2):
        r = http.post(f"/api/v1/accounts/{author_id}/unfollow", headers=h)
        assert r.status_code == 200 and r.json()["following"] is False


def test_timeline_pages_show_the_author_as_it_is_now(http):
    """Rendered statuses are kept per process; the account embedded in them
    must still follow the author's record (here, counts) at once."""
    app = make_app(http)
    token, uid = sign_up(http, app)
    other, other_id = sign_up(http, app)
    h = bearer(token)
    sid = http.post("/api/v1/statuses", headers=h, data={"status": "mine"}).json()["id"]
    for expected in (0, 1):
        page = http.get("/api/v1/timelines/home", headers=h).json()
        assert [s["id"] for s in page] == [sid]
        assert page[0]["account"]["following_count"] == expected
        assert http.post(f"/api/v1/accounts/{other_id}/follow", headers=h).status_code == 200
    assert http.delete(f"/api/v1/statuses/{sid}", headers=h).status_code == 200
    assert http.get("/api/v1/timelines/home", headers=h).json() == []


def test_json_bodies_and_lists_over_http(http):
    app = make_app(http)
    token, uid = sign_up(http, app)
    member_token, member = sign_up(http, app)
    h = bearer(token)
    lst = http.post("/api/v1/lists", headers=h, json={"title": "json list"}).json()
    r = http.post(f"/api/v1/lists/{lst['id']}/accounts", headers=h, json={"account_ids": [member]})
    assert r.status_code == 422 and r.json()["error"].startswith(
        "Validation failed: You can only add accounts you follow to a list"
    )
    assert http.post(f"/api/v1/accounts/{member}/follow", headers=h).status_code == 200
    r = http.post(f"/api/v1/lists/{lst['id']}/accounts", headers=h, json={"account_ids": [member]})
    assert r.status_code == 200 and r.json() == {}
    assert [a["id"] for a in http.get(f"/api/v1/lists/{lst['id']}/accounts", headers=h).json()] == [
        member
    ]
    posted = http.post(
        "/api/v1/statuses", headers=bearer(member_token), json={"status": "to the list"}
    ).json()
    tl = http.get(f"/api/v1/timelines/list/{lst['id']}", headers=h).json()
    assert [s["id"] for s in tl] == [posted["id"]]
    r = http.request(
        "DELETE", f"/api/v1/lists/{lst['id']}/accounts", headers=h, params={"account_ids[]": member}
    )
    assert r.status_code == 200
    assert http.get(f"/api/v1/lists/{lst['id']}/accounts", headers=h).json() == []
    r = http.put(f"/api/v1/lists/{lst['id']}", headers=h, json={"title": "renamed"})
    assert r.json()["title"] == "renamed"
    assert http.delete(f"/api/v1/lists/{lst['id']}", headers=h).json() == {}
    deleted = http.delete(f"/api/v1/statuses/{posted['id']}", headers=bearer(member_token))
    assert deleted.status_code == 200 and deleted.json()["text"] == "to the list"
    assert_error(http.delete(f"/api/v1/statuses/{posted['id']}", headers=bearer(member_token)), 404)


def test_openapi_document_is_served(http):
    doc = http.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.")


# --- rate limits --------------------------------------------------------------------------
def test_rate_limits_per_token_per_ip_and_on_sign_up(server):
    env = serve_env(
        server,
        REDPOLL_RATE_TOKEN="6/900",
        REDPOLL_RATE_IP="40/900",
        REDPOLL_RATE_SIGNUP="2/900",
        REDPOLL_RATE_LOGIN="3/900",
    )
    with ServeProcess(env) as srv, httpx.Client(base_url=srv.url, timeout=30) as http:
        app = make_app(http)
        token = app_token(http, app)
        for _ in range(2):
            name = unique("rl")
            r = http.post(
                "/api/v1/accounts",
                headers=bearer(token),
                data={
                    "username": name,
                    "email": f"{name}@example.com",
                    "password": PASSWORD,
                    "agreement": "1",
                },
            )
            assert r.status_code == 200, r.text
        user_token = r.json()["access_token"]
        r = http.post(
            "/api/v1/accounts",
            headers=bearer(token),
            data={
                "username": unique("rl"),
                "email": f"{unique('e')}@example.com",
                "password": PASSWORD,
                "agreement": "1",
            },
        )
        assert_error(r, 429)
        assert r.headers["X-RateLimit-Limit"] == "2" and r.headers["X-RateLimit-Remaining"] == "0"
        assert "X-RateLimit-Reset" in r.headers

        # the per-token limit: 6 requests per window
        codes = [
            http.get("/api/v1/timelines/home", headers=bearer(user_token)).status_code
            for _ in range(7)
        ]
        assert codes[:6] == [200] * 6 and codes[6] == 429
        ok = http.get("/api/v1/timelines/public", headers=bearer(app_token(http, app)))
        assert ok.status_code == 200 and ok.headers["X-RateLimit-Limit"] == "6"

        # log-in attempts per IP
        codes = [
            http.post(
                "/oauth/token",
                data={
                    "grant_type": "password",
                    "client_id": app["client_id"],
                    "client_secret": app["client_secret"],
                    "username": "nobody",
                    "password": "wrong password",
                },
            ).status_code
            for _ in range(4)
        ]
        assert codes == [400, 400, 400, 429]

        # unauthenticated requests per IP, bad tokens count there too
        codes = [http.get("/api/v1/instance").status_code for _ in range(45)]
        assert 429 in codes and codes[0] == 200
        assert_error(http.get("/api/v1/instance"), 429)
