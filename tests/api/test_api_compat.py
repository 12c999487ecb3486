"""What any Mastodon client needs to start and post,
through Mastodon.py 2.3.3 and raw HTTP against a real ``redpoll
serve``: every documented status parameter, CORS, the URLs in entities, the
start-up endpoints."""

from __future__ import annotations

import httpx
import pytest
from mastodon import Mastodon
from support.mastodon import api, new_app, register, serve_env  # noqa: F401
from support.names import unique  # noqa: F401

from redpoll.core import limits
from redpoll.stream.filters import Event, Filter


@pytest.fixture
def http(api):
    with httpx.Client(base_url=api.url, timeout=30) as client:
        yield client


def auth(m: Mastodon) -> dict:
    return {"Authorization": f"Bearer {m.access_token}"}


def test_status_parameters_clients_send_are_accepted_and_echoed(api, http):
    alice = register(api, new_app(api), unique("alice"))
    posted = alice.status_post(
        "hello",
        media_ids=[],
        sensitive=True,
        spoiler_text="spoilers",
        language="en",
        visibility="unlisted",
    )
    assert (posted.visibility, posted.sensitive, posted.spoiler_text, posted.language) == (
        "unlisted",
        True,
        "spoilers",
        "en",
    )
    again = alice.status(posted.id)
    assert (again.visibility, again.sensitive, again.spoiler_text, again.language) == (
        "unlisted",
        True,
        "spoilers",
        "en",
    )
    plain = alice.status_post("plain", sensitive=False)  # Mastodon.py sends sensitive=0
    assert (plain.visibility, plain.sensitive, plain.spoiler_text, plain.language) == (
        "public",
        False,
        "",
        None,
    )
    # a content warning alone makes the status sensitive, as on Mastodon
    assert alice.status_post("x", spoiler_text="cw").sensitive is True

    # JSON, as browser clients send it: empty media list, null poll, every key
    r = http.post(
        "/api/v1/statuses",
        headers=auth(alice),
        json={
            "status": "from json",
            "media_ids": [],
            "poll": None,
            "sensitive": False,
            "spoiler_text": "",
            "visibility": "public",
            "language": "de-AT",
            "in_reply_to_id": None,
            "scheduled_at": None,
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["visibility"], body["sensitive"], body["spoiler_text"], body["language"]) == (
        "public",
        False,
        "",
        "de-at",
    )
    # form bodies alike, with the bracketed list key
    r = http.post(
        "/api/v1/statuses",
        headers=auth(alice),
        data={
            "status": "from a form",
            "sensitive": "true",
            "visibility": "unlisted",
            "language": "fr",
        },
    )
    assert r.status_code == 200, r.text
    assert (r.json()["sensitive"], r.json()["visibility"], r.json()["language"]) == (
        True,
        "unlisted",
        "fr",
    )
    assert alice.me().statuses_count == 5


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"visibility": "everyone"}, "visibility"),
        ({"media_ids": ["1"]}, "media_ids"),
        ({"poll": {"options": ["a", "b"], "expires_in": 60}}, "poll"),
        ({"language": "not a language"}, "language"),
        ({"spoiler_text": "w" * (limits.SPOILER_TEXT_MAX_CHARS + 1)}, "spoiler_text"),
        ({"status": "t" * (limits.STATUS_MAX_CHARS - 3), "spoiler_text": "1234"}, "spoiler_text"),
        ({"sensitive": "maybe"}, "sensitive"),
    ],
)
def test_what_redpoll_cannot_do_is_refused_and_writes_nothing(api, http, body, field):
    alice = register(api, new_app(api), unique("alice"))
    r = http.post("/api/v1/statuses", headers=auth(alice), json={"status": "hi", **body})
    assert r.status_code == 422, r.text
    assert field in r.json()["error"]
    assert alice.me().statuses_count == 0
    assert alice.account_statuses(alice.me().id) == []


def test_unlisted_reaches_followers_and_profile_but_not_the_public_timeline(api):
    app = new_app(api)
    alice, bob = register(api, app, unique("alice")), register(api, app, unique("bob"))
    bob.account_follow(alice.me().id)
    quiet = alice.status_post("quietly", visibility="unlisted")
    loud = alice.status_post("loudly")
    public = [s.id for s in bob.timeline_public(limit=40)]
    assert loud.id in public and quiet.id not in public
    assert {quiet.id, loud.id} <= {s.id for s in bob.timeline_home()}
    assert [s.id for s in bob.account_statuses(alice.me().id)] == [loud.id, quiet.id]
    assert bob.status(quiet.id).visibility == "unlisted"


def test_unlisted_events_reach_followers_streams_never_public_ones():
    """Unlisted: on the Mastodon user/list streams of those following the
    author, never on the public places nor the v1.1 streams."""

    def event(visibility: str | None) -> Event:
        status = {
            "id": "7",
            "user_id": "3",
            "login": "alice",
            "text": "#owls by @bob",
            "location": "1,1",
            "created_at": "0",
        }
        if visibility:
            status["visibility"] = visibility
        return Event("1-0", "update", status)

    public = [
        Filter(sample=frozenset(range(100))),
        Filter(tags=frozenset({"owls"})),
        Filter(phrases=(("owls",),)),
        Filter(boxes=((0, 0, 2, 2),)),
        Filter(user_ids=frozenset({3})),
        Filter(logins=frozenset({"bob"})),
    ]
    personal = [
        Filter(authors=frozenset({3}), viewer=5, followed=frozenset({3}), owner=5),
        Filter(authors=frozenset({3}), viewer=5, followed=frozenset({3})),
    ]
    for f in public + personal:
        assert f.matches(event(None)) and f.matches(event("public"))
    for f in public:
        assert not f.matches(event("unlisted")), f
    for f in personal:
        assert f.matches(event("unlisted")), f


def test_cors_preflight_and_headers_on_the_api_only(api, http):
    pre = http.options(
        "/api/v1/statuses",
        headers={
            "Origin": "https://client.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
        },
    )
    assert pre.status_code == 200, pre.text
    assert pre.headers["access-control-allow-origin"] == "*"
    assert "POST" in pre.headers["access-control-allow-methods"]
    allowed = pre.headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed and "idempotency-key" in allowed
    for path in ("/api/v1/instance", "/api/v1/timelines/public", "/api/v1/nothing-here"):
        r = http.get(path, headers={"Origin": "https://client.example"})
        assert r.headers["access-control-allow-origin"] == "*", path
        assert "link" in r.headers["access-control-expose-headers"].lower()
    token = http.options(
        "/oauth/token",
        headers={"Origin": "https://client.example", "Access-Control-Request-Method": "POST"},
    )
    assert token.status_code == 200 and token.headers["access-control-allow-origin"] == "*"
    # the HTML pages are not for other origins
    page = http.get("/oauth/authorize", headers={"Origin": "https://client.example"})
    assert "access-control-allow-origin" not in page.headers


def test_the_urls_in_entities_resolve(api, http):
    app = new_app(api)
    name = unique("carol")
    carol, dave = register(api, app, name), register(api, app, unique("dave"))
    status = carol.status_post("a <b>bold</b> claim")
    account = carol.me()
    page = http.get(account.url)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert f"@{name}" in page.text
    one = http.get(status.url)
    assert one.status_code == 200 and "a &lt;b&gt;bold&lt;/b&gt; claim" in one.text
    assert http.get(f"/@{name.upper()}").status_code == 200  # logins ignore case
    # another account's status under this login, unknown ones, bad ids: not found
    theirs = dave.status_post("mine")
    for path in (
        f"/@{name}/{theirs.id}",
        f"/@{name}/99999999999",
        f"/@{name}/abc",
        "/@nobody_is_called_this",
        "/@bad%20login",
    ):
        r = http.get(path)
        assert r.status_code == 404, path
        assert r.headers["content-type"].startswith("text/html")
    for url in (account.avatar, account.avatar_static, account.header, account.header_static):
        image = http.get(url)
        assert image.status_code == 200 and image.headers["content-type"] == "image/png"
        assert image.content.startswith(b"\x89PNG\r\n\x1a\n")


def test_start_up_endpoints_answer_real_data(api):
    m = register(api, new_app(api), unique("erin"))
    assert m.custom_emojis() == []
    assert m.filters() == []
    assert m.filters_v2() == []
    assert m.announcements() == []
    assert m.follow_requests() == []
    prefs = m.preferences()
    assert prefs["posting:default:visibility"] == "public"
    assert prefs["posting:default:sensitive"] is False
    assert prefs["reading:expand:spoilers"] is False
    config = m.instance_v2().configuration
    assert config.statuses.max_characters == limits.STATUS_MAX_CHARS
    # what posting refuses is advertised as absent; what it takes, as it is
    assert config.statuses.max_media_attachments == limits.MEDIA_PER_STATUS
    assert config.polls.max_options == limits.POLL_OPTIONS_MAX
    assert config.media_attachments.supported_mime_types == [
        "image/jpeg",
        "image/png",
        "image/webp",
        "image/gif",
    ]
    assert config.urls.streaming.startswith("ws://")


def test_start_up_endpoints_want_a_user_token(http):
    for path in (
        "/api/v1/filters",
        "/api/v2/filters",
        "/api/v1/announcements",
        "/api/v1/preferences",
        "/api/v1/follow_requests",
    ):
        r = http.get(path)
        assert r.status_code == 401, path
    assert http.get("/api/v1/custom_emojis").json() == []


def test_a_client_can_start_post_and_read_through_mastodon_py_alone(api):
    """What a client's first screen calls, in order, then its first post."""
    m = register(api, new_app(api), unique("fred"))
    m.instance_v2()
    me = m.account_verify_credentials()
    for call in (
        m.custom_emojis,
        m.filters_v2,
        m.announcements,
        m.preferences,
        m.follow_requests,
        m.lists,
        m.timeline_home,
    ):
        call()
    posted = m.status_post("first!", media_ids=[], visibility="public", language="en")
    assert [s.id for s in m.timeline_home()] == [posted.id]
    assert me.url.endswith(f"/@{me.username}")
