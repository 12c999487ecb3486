"""The Mastodon client API driven by a real client (Mastodon.py) against a
real ``redpoll serve`` process on a free port, on the test session's server."""

from __future__ import annotations

import uuid

import httpx
import pytest
from mastodon import Mastodon, MastodonAPIError, MastodonNotFoundError, MastodonUnauthorizedError
from support.mastodon import api, client, new_app, register  # noqa: F401
from support.names import unique  # noqa: F401

from redpoll import Redpoll, Settings


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def test_instance_says_mastodon_compatible(api):
    m = Mastodon(api_base_url=api.url)
    info = m.instance()
    assert info.version.startswith("4.5.0 (compatible; Redpoll")
    assert m.instance_v2().configuration.statuses.max_characters == 500
    assert m.verify_minimum_version("4.0.0")


def test_register_log_in_post_follow_read_unfollow_delete_revoke(api):
    app = new_app(api)
    a_name, b_name = unique("alice"), unique("bob")
    alice = register(api, app, a_name)
    bob = register(api, app, b_name)
    me = alice.account_verify_credentials()
    assert me.username == a_name and me.statuses_count == 0
    b_id = bob.me().id

    # log in again by password, with the login and with the e-mail
    bob2 = client(api, app)
    bob2.log_in(b_name, "correct horse battery", allow_http=True)
    assert bob2.me().id == b_id
    bob3 = client(api, app)
    bob3.log_in(f"{b_name}@example.com", "correct horse battery", allow_http=True)
    assert bob3.me().id == b_id
    with pytest.raises(Exception):
        client(api, app).log_in(b_name, "wrong password!", allow_http=True)

    rel = alice.account_follow(b_id)
    assert rel.following and not rel.followed_by
    assert bob.me().followers_count == 1
    posted = [bob2.status_post(f"post <{i}> & more") for i in range(5)]
    assert posted[0].content == "<p>post &lt;0&gt; &amp; more</p>"
    assert isinstance(posted[0].id, (int, str))

    home = alice.timeline_home(limit=2)
    assert [s.id for s in home] == [posted[4].id, posted[3].id]
    assert home[0].account.username == b_name
    older = alice.fetch_next(home)
    assert [s.id for s in older] == [posted[2].id, posted[1].id]
    by_max_id = alice.timeline_home(max_id=posted[1].id)
    assert [s.id for s in by_max_id] == [posted[0].id]
    newer = alice.timeline_home(min_id=posted[1].id, limit=2)
    assert [s.id for s in newer] == [posted[3].id, posted[2].id]

    assert [s.id for s in alice.account_statuses(b_id, limit=1)] == [posted[4].id]
    assert alice.status(posted[2].id).content == "<p>post &lt;2&gt; &amp; more</p>"
    assert posted[4].id in [s.id for s in alice.timeline_public(limit=40)]
    assert alice.account_relationships([b_id])[0].following
    assert bob.account_relationships([me.id])[0].followed_by
    assert [a.id for a in bob.account_followers(b_id)] == [me.id]
    assert [a.id for a in alice.account_following(me.id)] == [b_id]
    assert alice.account_lookup(b_name).id == b_id

    deleted = bob.status_delete(posted[4].id)
    assert deleted.id == posted[4].id
    with pytest.raises(MastodonNotFoundError):
        alice.status(posted[4].id)
    assert posted[4].id not in [s.id for s in alice.timeline_home()]
    assert posted[4].id not in [s.id for s in alice.timeline_public(limit=40)]

    rel = alice.account_unfollow(b_id)
    assert not rel.following
    assert alice.timeline_home() == []

    # revoke: the token stops working at once
    bob2_token = bob2.access_token
    bob2.revoke_access_token(allow_http=True)
    with pytest.raises(MastodonUnauthorizedError):
        client(api, app, bob2_token).me()
    assert bob3.me().id == b_id  # other tokens are unaffected


def test_lists_through_the_client(api):
    app = new_app(api)
    alice, bob, carol = (register(api, app, unique(n)) for n in ("alice", "bob", "carol"))
    b_id, c_id = bob.me().id, carol.me().id
    alice.account_follow(b_id)
    alice.account_follow(c_id)
    friends = alice.list_create("friends")
    assert friends.title == "friends"
    alice.list_accounts_add(friends.id, [b_id, c_id])
    assert sorted(a.id for a in alice.list_accounts(friends.id)) == sorted([b_id, c_id])
    from_bob = bob.status_post("for the list")
    carol.status_post("also for the list")
    timeline = alice.timeline_list(friends.id)
    assert len(timeline) == 2 and from_bob.id in [s.id for s in timeline]
    alice.list_accounts_delete(friends.id, [c_id])
    assert [a.id for a in alice.list_accounts(friends.id)] == [b_id]
    assert alice.list_update(friends.id, "close friends").title == "close friends"
    assert [item.title for item in alice.lists()] == ["close friends"]
    # another user cannot see or change it
    with pytest.raises(MastodonNotFoundError):
        bob.list(friends.id)
    alice.list_delete(friends.id)
    with pytest.raises(MastodonNotFoundError):
        alice.list(friends.id)


def test_a_list_holds_only_accounts_one_follows(api):
    """As Mastodon: adding an account one does not follow is refused (422
    naming it; the list unchanged, none of the batch added); a followed one
    is added; unfollowing or blocking takes it out of one's lists, and its
    later posts reach none of them."""
    app = new_app(api)
    alice, bob, carol, dan = (
        register(api, app, unique(n)) for n in ("alice", "bob", "carol", "dan")
    )
    b_id, c_id, d_id = bob.me().id, carol.me().id, dan.me().id
    friends = alice.list_create("friends")
    alice.account_follow(b_id)
    with pytest.raises(MastodonAPIError) as refused:
        alice.list_accounts_add(friends.id, [b_id, c_id])
    assert refused.value.args[1] == 422
    error = refused.value.args[-1]
    assert "follow" in error and f"@{carol.me().acct}" in error and bob.me().acct not in error
    assert alice.list_accounts(friends.id) == []

    alice.account_follow(c_id)
    alice.account_follow(d_id)
    alice.list_accounts_add(friends.id, [b_id, c_id, d_id])
    assert sorted(a.id for a in alice.list_accounts(friends.id)) == sorted([b_id, c_id, d_id])
    assert len(alice.timeline_list(friends.id)) == 0
    before = bob.status_post("bob, listed")
    assert [s.id for s in alice.timeline_list(friends.id)] == [before.id]

    assert not alice.account_unfollow(b_id).following
    assert sorted(a.id for a in alice.list_accounts(friends.id)) == sorted([c_id, d_id])
    assert alice.timeline_list(friends.id) == []
    bob.status_post("bob, after the unfollow")
    carol.status_post("carol, still listed")
    assert [s.account.id for s in alice.timeline_list(friends.id)] == [c_id]

    alice.account_block(c_id)
    assert [a.id for a in alice.list_accounts(friends.id)] == [d_id]
    dan.account_block(alice.me().id)  # blocked by the member: the same
    assert alice.list_accounts(friends.id) == []
    dan.status_post("dan, after the block")
    assert alice.timeline_list(friends.id) == []
    with pytest.raises(MastodonAPIError) as refused:
        alice.list_accounts_add(friends.id, [d_id])
    assert refused.value.args[1] == 422
    assert alice.list_accounts(friends.id) == []


def test_idempotency_key_posts_once(api):
    app = new_app(api)
    alice = register(api, app, unique("alice"))
    first = alice.status_post("only once", idempotency_key="key-1")
    again = alice.status_post("only once", idempotency_key="key-1")
    other = alice.status_post("only once", idempotency_key="key-2")
    assert first.id == again.id != other.id
    assert alice.me().statuses_count == 2


async def test_lat_long_are_stored_as_location(api, server):
    app = new_app(api)
    name = unique("geo")
    alice = register(api, app, name)
    token = alice.access_token
    async with httpx.AsyncClient(base_url=api.url) as http:
        r = await http.post(
            "/api/v1/statuses",
            headers={"Authorization": f"Bearer {token}"},
            data={"status": "here", "lat": "51.5", "long": "-0.1275"},
        )
        assert r.status_code == 200, r.text
        sid = r.json()["id"]
    url, cluster, _ = server
    rp = await Redpoll.open(Settings(redis_url=url, cluster=cluster))
    try:
        status = await rp.statuses.get_status(sid)
        assert status.extra["location"] == "51.5,-0.1275"
        assert status.login == name
    finally:
        await rp.close()


def test_authorization_code_flow_with_the_authorize_page(api):
    app = Mastodon.create_app(
        "code-app",
        api_base_url=api.url,
        scopes=["read", "write"],
        redirect_uris="https://client.example/cb",
    )
    name = unique("dora")
    register(api, app, name, scopes=("read", "write"))  # the account to log in with
    m = client(api, app)
    url = m.auth_request_url(
        redirect_uris="https://client.example/cb",
        scopes=["read", "write"],
        state="xyz",
        allow_http=True,
    )
    with httpx.Client() as http:
        page = http.get(url)
        assert page.status_code == 200 and "<form" in page.text
        assert page.headers["x-frame-options"] == "DENY"
        bad = http.post(
            api.url + "/oauth/authorize",
            data={
                "response_type": "code",
                "client_id": app[0],
                "redirect_uri": "https://client.example/cb",
                "scope": "read write",
                "state": "xyz",
                "username": name,
                "password": "nope nope",
            },
        )
        assert bad.status_code == 401 and "Invalid username or password" in bad.text
        done = http.post(
            api.url + "/oauth/authorize",
            data={
                "response_type": "code",
                "client_id": app[0],
                "redirect_uri": "https://client.example/cb",
                "scope": "read write",
                "state": "xyz",
                "username": name,
                "password": "correct horse battery",
            },
        )
        assert done.status_code == 302
        target = httpx.URL(done.headers["location"])
        assert str(target).startswith("https://client.example/cb?")
        assert target.params["state"] == "xyz"
        code = target.params["code"]
        # an unregistered redirect uri is refused without redirecting
        evil = http.get(
            api.url + "/oauth/authorize",
            params={
                "response_type": "code",
                "client_id": app[0],
                "redirect_uri": "https://evil.example/",
            },
        )
        assert evil.status_code == 400
    m.log_in(
        code=code,
        redirect_uri="https://client.example/cb",
        scopes=["read", "write"],
        allow_http=True,
    )
    assert m.me().username == name
    with pytest.raises(Exception):  # a code works once
        client(api, app).log_in(
            code=code,
            redirect_uri="https://client.example/cb",
            scopes=["read", "write"],
            allow_http=True,
        )


def test_out_of_band_code_is_shown(api):
    app = new_app(api)
    name = unique("oob")
    register(api, app, name)
    with httpx.Client() as http:
        done = http.post(
            api.url + "/oauth/authorize",
            data={
                "response_type": "code",
                "client_id": app[0],
                "redirect_uri": "urn:ietf:wg:oauth:2.0:oob",
                "scope": "read",
                "username": name,
                "password": "correct horse battery",
            },
        )
    assert done.status_code == 200
    code = done.text.split("<code id=code>")[1].split("</code>")[0]
    m = client(api, app)
    m.log_in(code=code, scopes=["read"], allow_http=True)
    assert m.me().username == name


def test_scopes_are_enforced(api):
    app = new_app(api)
    name = unique("ro")
    register(api, app, name)
    reader = client(api, app)
    reader.log_in(name, "correct horse battery", scopes=["read"], allow_http=True)
    assert reader.me().username == name
    with pytest.raises(MastodonAPIError) as err:
        reader.status_post("not allowed")
    assert err.value.args[1] == 403
