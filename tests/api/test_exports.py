"""A member's CSV exports (Mastodon's files: follows with their options,
lists, blocks, mutes, blocked domains, bookmarks) through a real ``redpoll
serve``, each made from what Mastodon.py did, on one server and on the
cluster; who may ask for them."""

from __future__ import annotations

import asyncio
import csv
import io
from urllib.parse import urlsplit

import httpx
import pytest
from support.mastodon import accounts  # noqa: F401

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]


def exported(base: str, token: str | None, kind: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(f"{base}/api/v1/redpoll/exports/{kind}.csv", headers=headers, timeout=30)


def rows(response: httpx.Response) -> list[list[str]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.text)))


async def test_each_export_holds_what_the_member_did(srv, rp):
    me, bob, carol, dave, eve, frank = await asyncio.to_thread(accounts, srv.base, 6)
    host = urlsplit(srv.base).netloc
    who = {m: m.me() for m in (bob, carol, dave, eve, frank)}
    at = {m: f"{who[m]['username']}@{host}" for m in who}

    def act() -> None:
        me.account_follow(who[bob]["id"], reblogs=False)
        me.account_follow(who[carol]["id"], notify=True)
        me.account_block(who[dave]["id"])
        me.account_mute(who[eve]["id"], notifications=True)
        me.account_mute(who[frank]["id"], notifications=False)
        me.domain_block("spam.example")
        me.domain_block("Loud.Example")
        kept = bob.status_post("worth keeping")
        gone = carol.status_post("soon gone")
        me.status_bookmark(kept["id"])
        me.status_bookmark(gone["id"])
        carol.status_delete(gone["id"])
        friends = me.list_create("Friends, close")
        me.list_accounts_add(friends["id"], [who[bob]["id"], who[carol]["id"]])
        me.list_create("Empty")
        act.kept = kept  # type: ignore[attr-defined]

    await asyncio.to_thread(act)
    kept = act.kept  # type: ignore[attr-defined]
    base = srv.base
    follows = rows(await asyncio.to_thread(exported, base, me.access_token, "follows"))
    assert follows[0] == ["Account address", "Show boosts", "Notify on new posts", "Languages"]
    assert follows[1:] == [[at[carol], "true", "true", ""], [at[bob], "false", "false", ""]]
    assert rows(await asyncio.to_thread(exported, base, me.access_token, "blocks")) == [[at[dave]]]
    mutes = rows(await asyncio.to_thread(exported, base, me.access_token, "mutes"))
    assert mutes == [
        ["Account address", "Hide notifications"],
        [at[frank], "false"],
        [at[eve], "true"],
    ]
    domains = rows(await asyncio.to_thread(exported, base, me.access_token, "domain_blocks"))
    assert domains == [["loud.example"], ["spam.example"]]
    marks = rows(await asyncio.to_thread(exported, base, me.access_token, "bookmarks"))
    # the deleted one is left out; a local status by its ActivityPub id
    assert marks == [[f"{base}/users/{who[bob]['username']}/statuses/{kept['id']}"]]
    listed = rows(await asyncio.to_thread(exported, base, me.access_token, "lists"))
    assert sorted(listed) == sorted([["Friends, close", at[bob]], ["Friends, close", at[carol]]])
    # a file name as Mastodon's, not kept by caches
    r = await asyncio.to_thread(exported, base, me.access_token, "follows")
    assert r.headers["content-disposition"] == 'attachment; filename="following_accounts.csv"'
    assert "no-store" in r.headers["cache-control"]
    # another member's exports hold their own, not these
    theirs = rows(await asyncio.to_thread(exported, base, bob.access_token, "follows"))
    assert theirs == [follows[0]]
    assert rows(await asyncio.to_thread(exported, base, bob.access_token, "blocks")) == []


async def test_exports_need_the_members_own_token(srv, rp):
    [me] = await asyncio.to_thread(accounts, srv.base, 1)
    r = await asyncio.to_thread(exported, srv.base, None, "follows")
    assert r.status_code == 401
    r = await asyncio.to_thread(exported, srv.base, "not-a-token", "blocks")
    assert r.status_code == 401
    # an app's own token has no member to export
    app = httpx.post(
        f"{srv.base}/api/v1/apps",
        data={"client_name": "x", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob", "scopes": "read"},
    ).json()
    token = httpx.post(
        f"{srv.base}/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "scope": "read",
        },
    ).json()["access_token"]
    r = await asyncio.to_thread(exported, srv.base, token, "mutes")
    assert r.status_code == 422
    assert (
        await asyncio.to_thread(exported, srv.base, me.access_token, "nothing")
    ).status_code == 404


async def test_an_export_needs_its_read_scope(srv, rp):
    [me] = await asyncio.to_thread(accounts, srv.base, 1)
    name = me.me()["username"]
    app = httpx.post(
        f"{srv.base}/api/v1/apps",
        data={
            "client_name": "narrow",
            "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
            "scopes": "read:statuses read:blocks",
        },
    ).json()
    token = httpx.post(
        f"{srv.base}/oauth/token",
        data={
            "grant_type": "password",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "username": f"{name}@example.com",
            "password": "correct horse battery",
            "scope": "read:statuses read:blocks",
        },
    ).json()["access_token"]
    refused = await asyncio.to_thread(exported, srv.base, token, "follows")
    assert refused.status_code == 403
    assert refused.json() == {"error": "This action is outside the authorized scopes"}
    assert (await asyncio.to_thread(exported, srv.base, token, "blocks")).status_code == 200
    assert (await asyncio.to_thread(exported, srv.base, token, "domain_blocks")).status_code == 200
