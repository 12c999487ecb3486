"""What accounts and entities give away, against a real ``redpoll serve``
with real clients (Mastodon.py, httpx), in both topologies: suspended
accounts, reply counts, reports of hidden statuses, log-in limits and
timing, the metrics page, and the details of entities (field names,
status content, headers)."""

from __future__ import annotations

import asyncio
import html
import statistics
import time

import httpx
import pytest
from mastodon import Mastodon
from support.cli import admin, ok  # noqa: F401
from support.mastodon import (  # noqa: F401
    Listener,
    accounts,
    serve_env,  # noqa: F401
    wait_for,
)
from support.names import unique  # noqa: F401
from support.rest import PASSWORD, make_app, sign_up  # noqa: F401

from redpoll import Redpoll
from redpoll.api.process import ServeProcess
from redpoll.core import keys

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]


def bearer(m: Mastodon) -> dict:
    return {"Authorization": f"Bearer {m.access_token}"}


# --- suspended accounts -------------------------------------------------------------------
async def test_a_suspended_account_is_blanked_and_left_out_of_search(srv, rp):
    base = srv.base
    alice, bob = await asyncio.to_thread(accounts, base, 2)
    await asyncio.to_thread(
        alice.account_update_credentials,
        display_name="Secret Alicename",
        note="my secret bio",
        fields=[("secret field", "secret value")],
    )
    me = await asyncio.to_thread(alice.me)
    login, uid = me["username"], me["id"]
    await asyncio.to_thread(bob.account_follow, uid)
    assert [a["id"] for a in await asyncio.to_thread(bob.account_search, "Secret Alicename")] == [
        uid
    ]
    ok(admin(srv, "suspend", login))

    with httpx.Client(base_url=base, timeout=30) as http:
        shown = [
            http.get(f"/api/v1/accounts/{uid}").json(),
            http.get(f"/api/v1/accounts/{uid}", headers=bearer(bob)).json(),
            http.get("/api/v1/accounts/lookup", params={"acct": login}).json(),
        ]
        for account in shown:
            assert account["suspended"] is True, account
            assert (account["display_name"], account["note"], account["fields"]) == ("", "", [])
            assert (
                account["followers_count"],
                account["following_count"],
                account["statuses_count"],
            ) == (0, 0, 0), account
            assert account["avatar"] == f"{base}/avatars/original/missing.png"
            assert account["header"] == f"{base}/headers/original/missing.png"
            assert account["username"] == login
        page = http.get(f"/@{login}")
        assert page.status_code == 200
        assert "Secret Alicename" not in page.text and "my secret bio" not in page.text
        assert "secret" not in page.text.lower(), page.text

        for q in (login, "Secret Alicename", f"@{login}", f"{base}/@{login}"):
            found = await asyncio.to_thread(bob.search_v2, q)
            assert found["accounts"] == [], (q, found["accounts"])
            found = await asyncio.to_thread(bob.account_search, q)
            assert found == [], (q, found)
    ok(admin(srv, "unsuspend", login))
    back = await asyncio.to_thread(bob.account, uid)
    assert back["display_name"] == "Secret Alicename" and not back.get("suspended")
    assert [a["id"] for a in await asyncio.to_thread(bob.account_search, login)] == [uid]


# --- replies_count ------------------------------------------------------------------------
async def test_replies_count_counts_only_public_and_unlisted_replies(srv, rp):
    base = srv.base
    alice, bob, carol = await asyncio.to_thread(accounts, base, 3)
    alice_id = (await asyncio.to_thread(alice.me))["id"]
    await asyncio.to_thread(bob.account_follow, alice_id)
    post = await asyncio.to_thread(alice.status_post, "a question")
    replies = {}
    for vis in ("public", "unlisted", "private", "direct"):
        replies[vis] = await asyncio.to_thread(
            bob.status_post, f"a {vis} answer", in_reply_to_id=post["id"], visibility=vis
        )
    await rp.drain()

    async def counts() -> set[int]:
        with httpx.Client(base_url=base, timeout=30) as http:
            seen = {
                http.get(f"/api/v1/statuses/{post['id']}").json()["replies_count"],
                http.get(f"/api/v1/statuses/{post['id']}", headers=bearer(carol)).json()[
                    "replies_count"
                ],
            }
            page = http.get(f"/api/v1/accounts/{alice_id}/statuses").json()
            seen |= {s["replies_count"] for s in page if s["id"] == str(post["id"])}
            public = http.get("/api/v1/timelines/public", params={"limit": 40}).json()
            seen |= {s["replies_count"] for s in public if s["id"] == str(post["id"])}
        return seen

    assert await counts() == {2}
    await asyncio.to_thread(bob.status_delete, replies["private"]["id"])
    await rp.drain()
    assert await counts() == {2}
    await asyncio.to_thread(bob.status_delete, replies["unlisted"]["id"])
    await rp.drain()
    assert await counts() == {1}

    # counts written under the old rule (every reply) are recounted once per
    # database, when an engine opens it (migration 2)
    again = await asyncio.to_thread(
        bob.status_post, "again, hidden", in_reply_to_id=post["id"], visibility="private"
    )
    await rp.drain()
    await rp.store.hset(keys.status_counts(post["id"]), "p", 7)
    await rp.store.delete(keys.REPLY_COUNTS_DONE, keys.replies_counted(post["id"]), keys.LAYOUT)
    opened = await Redpoll.open(rp.settings)
    try:
        assert await counts() == {1}
    finally:
        await opened.close()
    assert (await asyncio.to_thread(bob.status, again["id"]))["in_reply_to_id"] == str(post["id"])


# --- reports ------------------------------------------------------------------------------
async def test_a_report_cannot_tell_a_hidden_status_from_a_missing_one(srv, rp):
    base = srv.base
    alice, bob, carol = await asyncio.to_thread(accounts, base, 3)
    alice_id = (await asyncio.to_thread(alice.me))["id"]
    carol_login = (await asyncio.to_thread(carol.me))["username"]
    await asyncio.to_thread(bob.account_follow, alice_id)
    private = await asyncio.to_thread(alice.status_post, "followers only", visibility="private")
    direct = await asyncio.to_thread(
        alice.status_post, f"@{carol_login} just you", visibility="direct"
    )
    missing = int(direct["id"]) + 10_000_000
    with httpx.Client(base_url=base, timeout=30) as http:

        def report(who: Mastodon, sid) -> httpx.Response:
            return http.post(
                "/api/v1/reports",
                headers=bearer(who),
                json={"account_id": alice_id, "status_ids": [str(sid)]},
            )

        gone, hidden = report(carol, missing), report(carol, private["id"])
        assert gone.status_code == 422, gone.text
        assert (hidden.status_code, hidden.json()) == (gone.status_code, gone.json()), hidden.text
        # what the reporter can see is reported as before
        assert report(bob, private["id"]).status_code == 200
        assert report(carol, direct["id"]).status_code == 200
        assert report(bob, direct["id"]).json() == report(bob, missing).json()


# --- log-in: a per-account limit, and the same time for unknown accounts --------------------
def password_grant(http: httpx.Client, app: dict, username: str, password: str) -> httpx.Response:
    return http.post(
        "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "username": username,
            "password": password,
            "scope": "read",
        },
    )


def test_log_in_attempts_are_limited_per_account(settings, server):
    env = serve_env(server, REDPOLL_RATE_LOGIN_ACCOUNT="3/3600")
    with ServeProcess(env) as srv, httpx.Client(base_url=srv.url, timeout=60) as http:
        app = make_app(http)
        victim = unique("victim")
        other = unique("other")
        for name in (victim, other):
            sign_up(http, app, name)
        # the login and the e-mail name one account: one count
        for username in (victim, f"{victim.upper()}@Example.com", victim):
            assert password_grant(http, app, username, "wrong password!").status_code == 400
        refused = password_grant(http, app, victim, PASSWORD)
        assert refused.status_code == 429, refused.text
        assert refused.headers["X-RateLimit-Limit"] == "3"
        page = http.post(
            "/oauth/authorize",
            data={
                "response_type": "code",
                "client_id": app["client_id"],
                "redirect_uri": "urn:ietf:wg:oauth:2.0:oob",
                "scope": "read",
                "username": f"{victim}@example.com",
                "password": PASSWORD,
            },
        )
        assert page.status_code == 429, page.text
        # another account from the same address is not limited by it
        assert password_grant(http, app, other, PASSWORD).status_code == 200
        # an unknown account answers the same way
        nobody = unique("nobody")
        for _ in range(3):
            assert password_grant(http, app, nobody, PASSWORD).status_code == 400
        assert password_grant(http, app, nobody, PASSWORD).status_code == 429


def test_an_unknown_account_takes_as_long_to_refuse_as_a_known_one(settings, server):
    with ServeProcess(serve_env(server)) as srv, httpx.Client(base_url=srv.url, timeout=60) as http:
        app = make_app(http)
        known = unique("known")
        sign_up(http, app, known)
        kinds = {
            "known login": known,
            "known e-mail": f"{known}@example.com",
            "unknown login": unique("nobody"),
            "unknown e-mail": unique("nobody") + "@example.com",
        }
        took: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(7):  # interleaved, so that load on the machine hits every kind alike
            for kind, username in kinds.items():
                start = time.perf_counter()
                assert password_grant(http, app, username, "wrong password!").status_code == 400
                took[kind].append(time.perf_counter() - start)
        median = {k: statistics.median(v) for k, v in took.items()}
        slowest_known = max(median["known login"], median["known e-mail"])
        # a password hash check is tens of milliseconds at least; a refusal
        # without one is a few: a generous ratio tells the two apart
        for kind in ("unknown login", "unknown e-mail"):
            assert median[kind] > slowest_known / 4, median


# --- /metrics -----------------------------------------------------------------------------
def test_metrics_need_the_operators_token(settings, server):
    with ServeProcess(serve_env(server)) as srv, httpx.Client(base_url=srv.url, timeout=30) as http:
        assert http.get("/metrics").status_code == 404
        assert http.get("/metrics", headers={"Authorization": "Bearer x"}).status_code == 404
    secret = unique("metrics-secret-")
    with (
        ServeProcess(serve_env(server, REDPOLL_METRICS_TOKEN=secret)) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as http,
    ):
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": secret}):
            r = http.get("/metrics", headers=headers)
            assert r.status_code == 401 and "redpoll_" not in r.text, r.text
            assert r.headers["WWW-Authenticate"].startswith("Bearer")
        r = http.get("/metrics", headers={"Authorization": f"Bearer {secret}"})
        assert r.status_code == 200 and "redpoll_http_requests_total" in r.text


# --- entity details -----------------------------------------------------------------------
async def test_field_names_plain_content_linked_and_json_not_sniffed(srv, rp):
    base = srv.base
    alice, bob = await asyncio.to_thread(accounts, base, 2)
    alice_login = (await asyncio.to_thread(alice.me))["username"]
    bob_login = (await asyncio.to_thread(bob.me))["username"]
    name, value = '<b>Pronouns</b> & "so"', "<i>they</i> & them"
    await asyncio.to_thread(alice.account_update_credentials, fields=[(name, value)])
    me = await asyncio.to_thread(alice.account_verify_credentials)
    assert me["fields"][0]["name"] == name
    assert me["fields"][0]["value"] == html.escape(value)
    assert me["source"]["fields"][0]["name"] == name
    assert me["source"]["fields"][0]["value"] == value
    assert (await asyncio.to_thread(bob.account, me["id"]))["fields"][0]["name"] == name

    url = "https://example.com/a/rather/long/path/to/a/page?x=1&y=2"
    text = (
        f"hi @{alice_login.upper()}, see {url}. #Redpoll and #2024 and @nobody_here_x "
        f"<script>alert(1)</script>\n\nbye\nnow https://ex.org"
    )
    prefix, rest = "https://", url[len("https://") :]
    url_html = (
        f'<a href="{html.escape(url)}" target="_blank" rel="nofollow noopener noreferrer">'
        f'<span class="invisible">{prefix}</span>'
        f'<span class="ellipsis">{html.escape(rest[:30])}</span>'
        f'<span class="invisible">{html.escape(rest[30:])}</span></a>'
    )
    expected = (
        f'<p>hi <span class="h-card"><a href="{base}/@{alice_login}" class="u-url mention">'
        f"@<span>{alice_login}</span></a></span>, see {url_html}. "
        f'<a href="{base}/tags/Redpoll" class="mention hashtag" rel="tag">#<span>Redpoll</span></a>'
        f" and #2024 and @nobody_here_x &lt;script&gt;alert(1)&lt;/script&gt;</p>"
        f'<p>bye<br />now <a href="https://ex.org" target="_blank" rel="nofollow noopener noreferrer">'
        f'<span class="invisible">https://</span><span class="">ex.org</span>'
        f'<span class="invisible"></span></a></p>'
    )

    listener = Listener()
    before = (await srv.astats())["subscribers"]
    # (bob: this module suspends an account of the same id earlier, on a database flushed since)
    handle = await asyncio.to_thread(bob.stream_public, listener, run_async=True)
    try:
        await wait_for(lambda: handle.is_receiving(), "the public stream")
        await srv.wait_subscribers(before + 1)
        posted = await asyncio.to_thread(bob.status_post, text)
        assert posted["content"] == expected
        await rp.drain()
        await wait_for(
            lambda: any(s["id"] == posted["id"] for s in listener.updates),
            "the post on the public stream",
        )
        streamed = [s for s in listener.updates if s["id"] == posted["id"]][0]
        assert streamed["content"] == expected
    finally:
        handle.close()
    for _ in range(2):  # made once, then from the kept rendering
        assert (await asyncio.to_thread(alice.status, posted["id"]))["content"] == expected
    sneaky = await asyncio.to_thread(
        bob.status_post, 'https://e.com/"><img src=x onerror=alert(1)> @x"><b>y</b> #a"b'
    )
    assert "<img" not in sneaky["content"] and "<b>" not in sneaky["content"]
    assert sneaky["content"].startswith('<p><a href="https://e.com/" target="_blank"')
    page = await asyncio.to_thread(alice.account_statuses, posted["account"]["id"])
    assert [s["content"] for s in page if s["id"] == posted["id"]] == [expected]
    assert f"@{bob_login}" == "@" + posted["account"]["username"]

    with httpx.Client(base_url=base, timeout=30) as http:
        answers = [
            http.get("/api/v1/instance"),
            http.get(f"/api/v1/statuses/{posted['id']}"),
            http.get("/api/v1/statuses/1234567890123"),
            http.get("/api/v1/nothing/here"),
            http.post("/api/v1/statuses", data={"status": "x"}),
            http.get("/api/v1/accounts/verify_credentials", headers=bearer(alice)),
        ]
        for r in answers:
            assert r.headers["content-type"].startswith("application/json"), (r.url, r.text)
            assert r.headers.get("x-content-type-options") == "nosniff", (r.url, r.headers)
