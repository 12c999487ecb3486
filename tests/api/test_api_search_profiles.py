"""Finding people and editing profiles through Mastodon.py 2.3.3 (and raw
HTTP where it has no method) against a real ``redpoll serve``."""

from __future__ import annotations

import time

import httpx
import pytest
from mastodon import MastodonAPIError, MastodonUnauthorizedError
from support.mastodon import api, client, new_app, register, serve_env  # noqa: F401
from support.names import unique  # noqa: F401

from redpoll.core import limits


@pytest.fixture
def http(api):
    with httpx.Client(base_url=api.url, timeout=10) as c:
        yield c


def auth(m) -> dict:
    return {"Authorization": f"Bearer {m.access_token}"}


def test_follow_at_login_through_v2_search_resolve(api):
    """What a client's "follow @x" does: search accounts with resolve=true."""
    app = new_app(api)
    name = unique("bob")
    alice, bob = register(api, app, unique("alice")), register(api, app, name)
    host = httpx.URL(api.url).host
    for q in (f"@{name}", name, f"{name}@{host}", f"@{name}@{host}", name.upper()):
        found = alice.search_v2(q, resolve=True, result_type="accounts")
        assert [a.username for a in found.accounts] == [name], q
    target = alice.search_v2(f"@{name}", resolve=True, result_type="accounts").accounts[0]
    assert alice.account_follow(target.id).following
    assert bob.me().followers_count == 1
    # remote accounts: nothing, at once (redpoll never contacts another host)
    assert alice.search_v2(f"@{name}@unknown-host.invalid", resolve=True).accounts == []
    assert alice.search_v2("https://unknown-host.invalid/@x", resolve=True).accounts == []


def test_accounts_by_prefix_v1_and_v2_with_paging(api):
    app = new_app(api)
    stem = unique("zz")
    me = register(api, app, unique("me"))
    made = [register(api, app, f"{stem}{i}") for i in range(3)]
    named = register(api, app, unique("q"))
    named.account_update_credentials(display_name=f"{stem.upper()} Fan Club")
    expected = [f"{stem}{i}" for i in range(3)]
    v1 = me.account_search(stem, limit=40)
    assert sorted(a.username for a in v1) == sorted(expected + [named.me().username])
    v2 = me.search_v2(stem, result_type="accounts")
    assert [a.username for a in v2.accounts] == [a.username for a in v1]
    page = me.search_v2(stem, result_type="accounts", limit=2, offset=1).accounts
    assert [a.username for a in page] == [a.username for a in v1][1:3]
    me.account_follow(made[1].me().id)
    followed = me.account_search(stem, following=True)
    assert [a.username for a in followed] == [f"{stem}1"]
    assert (
        me.search_v2("fan club", result_type="accounts").accounts[0].display_name
        == f"{stem.upper()} Fan Club"
    )


def _until_found(m, q: str, ids: list) -> dict:
    """The search's answer once its statuses are ``ids`` (the full-text
    index is written by a job)."""
    deadline = time.monotonic() + 20
    while True:
        found = m.search_v2(q, result_type="statuses")
        if [s.id for s in found.statuses] == ids or time.monotonic() > deadline:
            assert [s.id for s in found.statuses] == ids
            return found
        time.sleep(0.05)


def test_statuses_search_finds_the_viewers_own(api):
    app = new_app(api)
    me, other = register(api, app, unique("me")), register(api, app, unique("other"))
    word = unique("w")
    mine = me.status_post(f"about {word} and more")
    theirs = other.status_post(f"also about {word}")
    # the library: one's own (the public posts of others are found too)
    found = _until_found(me, f"{word} in:library", [mine.id])
    assert [s.id for s in _until_found(me, word, [theirs.id, mine.id]).statuses] == [
        theirs.id,
        mine.id,
    ]
    assert found.hashtags == []
    assert me.search_v2(word, result_type="accounts").statuses == []
    # a status URL on this server names that status
    assert [s.id for s in me.search_v2(mine.url, resolve=True).statuses] == [mine.id]
    assert [a.id for a in me.search_v2(me.me().url, resolve=True).accounts] == [me.me().id]


def test_search_input_errors_and_anonymous_limits(api, http):
    m = register(api, new_app(api), unique("s"))
    h = auth(m)
    assert http.get("/api/v2/search", headers=h).status_code == 422  # q missing
    for params in (
        {"type": "people"},
        {"limit": "0"},
        {"limit": "x"},
        {"offset": "-1"},
        {"resolve": "perhaps"},
        {"account_id": "abc"},
        {"q": "x" * (limits.SEARCH_QUERY_MAX_CHARS + 1)},
    ):
        r = http.get("/api/v2/search", headers=h, params={"q": "a", **params})
        assert r.status_code == 422, (params, r.text)
    empty = http.get("/api/v2/search", headers=h, params={"q": ""}).json()
    assert empty == {"accounts": [], "statuses": [], "hashtags": []}
    # without a token: accounts yes, resolve/offset no, accounts/search no
    assert http.get("/api/v2/search", params={"q": m.me().username}).json()["accounts"]
    for params in ({"resolve": "true"}, {"offset": "1"}):
        assert http.get("/api/v2/search", params={"q": "a", **params}).status_code == 401
    assert http.get("/api/v1/accounts/search", params={"q": "a"}).status_code == 401
    with pytest.raises(MastodonUnauthorizedError):
        client(api, new_app(api)).account_search("a")


def test_update_credentials_shows_everywhere(api):
    app = new_app(api)
    name = unique("prof")
    m, viewer = register(api, app, name), register(api, app, unique("v"))
    fields = [("Web", "https://owl.example"), ("Pronouns", "they/them")]
    updated = m.account_update_credentials(
        display_name="Prof <Owl>",
        note="line one\nline <two>",
        bot=True,
        discoverable=False,
        fields=fields,
    )
    assert updated.display_name == "Prof <Owl>"
    assert updated.note == "<p>line one<br />line &lt;two&gt;</p>"
    assert updated.bot is True and updated.discoverable is False and updated.locked is False
    assert [(f.name, f.value) for f in updated.fields] == fields
    assert updated.source.note == "line one\nline <two>"
    assert [(f.name, f.value) for f in updated.source.fields] == fields
    assert updated.source.privacy == "public"
    me = m.account_verify_credentials()
    assert (me.display_name, me.bot, me.source.note) == ("Prof <Owl>", True, "line one\nline <two>")
    seen = viewer.account(me.id)
    assert (seen.display_name, seen.bot, seen.discoverable) == ("Prof <Owl>", True, False)
    assert [(f.name, f.value) for f in seen.fields] == fields
    # fields can be cleared, names changed back; what is not sent stays
    again = m.account_update_credentials(display_name="", fields=[("", "")])
    assert again.display_name == "" and again.fields == [] and again.bot is True
    assert again.source.note == "line one\nline <two>"


def test_update_credentials_json_body(api, http):
    m = register(api, new_app(api), unique("j"))
    r = http.patch(
        "/api/v1/accounts/update_credentials",
        headers=auth(m),
        json={
            "display_name": "Jay",
            "fields_attributes": [{"name": "a", "value": "b"}],
            "locked": False,
            "source": None,
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["display_name"] == "Jay" and r.json()["fields"][0]["name"] == "a"
    r = http.patch(
        "/api/v1/accounts/update_credentials",
        headers=auth(m),
        json={
            "fields_attributes": {
                "0": {"name": "x", "value": "y"},
                "1": {"name": "z", "value": "w"},
            }
        },
    )
    assert [(f["name"], f["value"]) for f in r.json()["fields"]] == [("x", "y"), ("z", "w")]


@pytest.mark.parametrize(
    "change",
    [
        {"locked": "sometimes"},
        {"display_name": "d" * (limits.DISPLAY_NAME_MAX_CHARS + 1)},
        {"note": "n" * (limits.BIO_MAX_CHARS + 1)},
        {"bot": "sometimes"},
        {"hide_collections": "true"},
        {"source[privacy]": "friends"},
        {
            "fields_attributes[0][name]": "n" * (limits.PROFILE_FIELD_MAX_CHARS + 1),
            "fields_attributes[0][value]": "v",
        },
        {f"fields_attributes[{i}][name]": f"n{i}" for i in range(limits.PROFILE_FIELDS_MAX + 1)},
    ],
)
def test_refused_profile_changes_write_nothing(api, http, change):
    m = register(api, new_app(api), unique("r"))
    before = m.account_verify_credentials()
    r = http.patch(
        "/api/v1/accounts/update_credentials",
        headers=auth(m),
        data={"display_name": "Changed?", **change},
    )
    assert r.status_code == 422, r.text
    after = m.account_verify_credentials()
    assert after.display_name == before.display_name and after.fields == before.fields


def test_avatar_upload_is_a_clear_422(api, tmp_path):
    m = register(api, new_app(api), unique("pic"))
    image = tmp_path / "me.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    with pytest.raises(MastodonAPIError) as err:
        m.account_update_credentials(
            display_name="With picture", avatar=str(image), avatar_mime_type="image/png"
        )
    assert err.value.args[1] == 422
    assert m.me().display_name != "With picture"


def test_counts_stay_exact(api):
    app = new_app(api)
    a, b, c = (register(api, app, unique(n)) for n in ("ca", "cb", "cc"))
    a_id, b_id = a.me().id, b.me().id
    b.account_follow(a_id)
    c.account_follow(a_id)
    c.account_follow(a_id)  # twice is once
    a.account_follow(b_id)
    posts = [a.status_post(f"p{i}") for i in range(3)]
    a.status_delete(posts[0].id)
    seen = c.account(a_id)
    assert (seen.statuses_count, seen.followers_count, seen.following_count) == (2, 2, 1)
    c.account_unfollow(a_id)
    c.account_unfollow(a_id)
    me = a.account_verify_credentials()
    assert (me.statuses_count, me.followers_count, me.following_count) == (2, 1, 1)
    assert b.me().following_count == 1 and b.me().followers_count == 1


def test_statuses_search_finds_favourited_and_bookmarked(api):
    app = new_app(api)
    me, other = register(api, app, unique("me")), register(api, app, unique("other"))
    word = unique("w")
    faved, marked = other.status_post(f"{word} one"), other.status_post(f"{word} two")
    other.status_post(f"{word} three")
    me.status_favourite(faved.id)
    me.status_bookmark(marked.id)
    found = _until_found(me, f"{word} in:library", [marked.id, faved.id]).statuses
    assert found[0].bookmarked and found[1].favourited


def test_hashtags_in_search(api):
    m = register(api, new_app(api), unique("t"))
    tag = unique("tag")
    m.status_post(f"hello #{tag} and #{tag}Two")
    found = m.search_v2(f"#{tag}", result_type="hashtags").hashtags
    assert [t.name for t in found] == [tag, f"{tag}two"]
    assert found[0].url.endswith(f"/tags/{tag}") and found[0].following is False
    m.tag_follow(tag)
    assert m.search_v2(tag).hashtags[0].following is True
