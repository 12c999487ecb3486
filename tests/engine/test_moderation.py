"""Reports and the moderation command line: ``redpoll admin``
run as a real subprocess on the database a real ``redpoll serve`` uses,
with Mastodon.py 2.3.3 and SSE streams as the users; both modes."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from mastodon import (
    Mastodon,
    MastodonAPIError,
    MastodonIllegalArgumentError,
    MastodonNotFoundError,
    MastodonUnauthorizedError,
)
from support.cli import admin, ok  # noqa: F401
from support.mastodon import Listener, accounts  # noqa: F401

from redpoll.storage import topology

pytestmark = pytest.mark.timeout(240)


def sign_in(base: str, app, login: str, password: str) -> Mastodon:
    m = Mastodon(client_id=app[0], client_secret=app[1], api_base_url=base)
    m.log_in(login, password, scopes=["read", "write", "follow"], allow_http=True)
    return m


async def test_reports_suspension_and_accounts(srv, rp):
    base = srv.base
    alice, bob, carol = await asyncio.to_thread(accounts, base, 3)
    me = {
        k: await asyncio.to_thread(m.me)
        for k, m in (("alice", alice), ("bob", bob), ("carol", carol))
    }
    alice_id = me["alice"]["id"]
    await asyncio.to_thread(bob.account_follow, alice_id)
    status = await asyncio.to_thread(alice.status_post, "something reportable")
    other = await asyncio.to_thread(bob.status_post, "bob's own")

    # a report, and what is refused without writing
    r = await asyncio.to_thread(
        carol.report, alice_id, [status["id"]], "spam from alice", category="spam"
    )
    assert (r["category"], r["comment"], r["action_taken"]) == ("spam", "spam from alice", False)
    assert r["target_account"]["id"] == alice_id and r["status_ids"] == [str(status["id"])]
    raw = httpx.post(
        base + "/api/v1/reports",
        json={"account_id": alice_id, "category": "rude"},
        headers={"Authorization": f"Bearer {carol.access_token}"},
    )
    assert raw.status_code == 422 and "category" in raw.json()["error"], raw.text
    for bad in ({"status_ids": [other["id"]]}, {"comment": "x" * 1001}):
        args = {"status_ids": None, "comment": None, "category": None} | bad
        with pytest.raises(MastodonAPIError) as refused:
            await asyncio.to_thread(carol.report, alice_id, **args)
        assert refused.value.args[1] == 422
    listed = [json.loads(line) for line in ok(admin(srv, "reports", "--json")).splitlines()]
    mine = [x for x in listed if x["id"] == int(r["id"])]
    assert len(mine) == 1 and mine[0]["account"] == me["alice"]["username"]
    assert mine[0]["reporter"] == me["carol"]["username"]
    assert f"#{r['id']}" in ok(admin(srv, "reports", "--unresolved"))
    assert "resolved" in ok(admin(srv, "resolve", str(r["id"])))
    assert f"#{r['id']} " not in ok(admin(srv, "reports", "--unresolved"))
    assert [x["id"] for x in listed] == [int(r["id"])]  # the refused ones made none
    assert ok(admin(srv, "reports", "--unresolved")).strip() == "no open reports"
    failed = admin(srv, "resolve", "99999999")
    assert failed.returncode != 0 and "99999999" in failed.stderr

    # suspension: open streams close, tokens stop, the statuses vanish
    own = Listener()
    handle = await asyncio.to_thread(alice.stream_user, own, run_async=True)
    try:
        await srv.wait_subscribers(1)
        assert "suspended" in ok(admin(srv, "suspend", me["alice"]["username"]))
        deadline = time.monotonic() + 5
        while handle.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await srv.wait_subscribers(0)  # the server closed it
    finally:
        handle.close()
    with pytest.raises(MastodonUnauthorizedError):
        await asyncio.to_thread(alice.me)
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(bob.status, status["id"])
    assert status["id"] not in {s["id"] for s in await asyncio.to_thread(bob.timeline_home)}
    assert await asyncio.to_thread(bob.account_statuses, alice_id) == []
    assert (await asyncio.to_thread(bob.account, alice_id))["suspended"] is True
    app = Mastodon.create_app(
        "moderation-test", api_base_url=base, scopes=["read", "write", "follow"]
    )
    with pytest.raises(MastodonIllegalArgumentError):
        sign_in(base, app, me["alice"]["username"], "correct horse battery")
    ok(admin(srv, "unsuspend", me["alice"]["username"]))
    assert (await asyncio.to_thread(bob.status, status["id"]))["id"] == status["id"]
    alice = sign_in(base, app, me["alice"]["username"], "correct horse battery")
    assert alice.me()["id"] == alice_id

    # roles, passwords, new accounts; unknown logins fail in one line
    ok(admin(srv, "grant-admin", me["carol"]["username"]))
    assert carol.me()["role"]["name"] == "Admin"
    ok(admin(srv, "reset-password", me["carol"]["username"], "--password", "a new secret 1"))
    with pytest.raises(MastodonUnauthorizedError):
        carol.me()
    assert (
        sign_in(base, app, me["carol"]["username"], "a new secret 1").me()["id"]
        == me["carol"]["id"]
    )
    login = "dave" + me["carol"]["username"][-8:]
    out = ok(admin(srv, "create-user", login, f"{login}@example.com", stdin="dave's secret\n"))
    assert login in out
    assert sign_in(base, app, login, "dave's secret").me()["username"] == login
    out = ok(admin(srv, "delete-account", login, "--yes"))
    assert "deleted" in out
    with pytest.raises(MastodonIllegalArgumentError):
        sign_in(base, app, login, "dave's secret")
    for args in (
        ("suspend", "nobody_here"),
        ("delete-account", login, "--yes"),
        ("create-user", me["carol"]["username"], "x@example.com", "--password", "long enough 1"),
    ):
        failed = admin(srv, *args)
        # one line saying why (after the line naming the database), no traceback
        assert failed.returncode != 0, failed
        assert failed.stderr.strip().splitlines()[-1].startswith("Error: "), failed.stderr
        assert "Traceback" not in failed.stderr


async def test_delete_account_leaves_nothing_and_others_counts_exact(rp):
    from redpoll.core import keys
    from redpoll.core.errors import UserNotFound
    from redpoll.moderation import moderation

    gone, friend, fan = [
        await rp.accounts.sign_up(f"del{i}x{time.time_ns() % 10**6}") for i in range(3)
    ]
    users_before = (await rp.stats())["users"]
    await rp.relations.follow(gone.id, friend.id)
    await rp.relations.follow(fan.id, gone.id)
    own = [await rp.statuses.post(gone.id, f"mine {i}") for i in range(3)]
    theirs = await rp.statuses.post(friend.id, "friend's")
    await rp.statuses.favourite(gone.id, theirs.id)
    await rp.statuses.boost(gone.id, theirs.id)
    await rp.statuses.bookmark(gone.id, theirs.id)
    await rp.statuses.favourite(fan.id, own[0].id)
    lst = await rp.lists.create(fan.id, "watch")
    await rp.lists.add(fan.id, lst.id, gone.id)
    await rp.relations.mute(fan.id, friend.id)
    blocked, blocker = [
        await rp.accounts.sign_up(f"delb{i}x{time.time_ns() % 10**6}") for i in range(2)
    ]
    await rp.relations.block(gone.id, blocked.id)
    await rp.relations.block(blocker.id, gone.id)
    muter = await rp.accounts.sign_up(f"delm{time.time_ns() % 10**6}")
    await rp.relations.mute(muter.id, gone.id)
    await rp.drain()
    assert own[0].id in {s.id for s in await rp.timelines.home(fan.id)}

    # cut short after its steps: a second run finishes it
    await moderation.delete_account(rp.store, rp.queue, gone.login)
    await rp.drain()
    uid = await moderation.delete_account(rp.store, rp.queue, gone.login)
    await rp.drain()
    found = await topology.of(rp.store).keys_matching(f"*:{{{uid}}}*")
    assert {keys.user(uid), keys.deleted_by(uid), keys.blocking(uid)} <= set(found)
    # the scan reaches every master: users' records live in many slots
    records = set(await topology.of(rp.store).keys_matching("u:{*"))
    assert {keys.user(u.id) for u in (gone, friend, fan, blocked, blocker)} <= records
    assert await moderation.purge_account(rp.store, rp.queue, uid, gone.login) > 0
    # idempotent, and the account leaves the user count once (its journal's claim)
    assert await moderation.purge_account(rp.store, rp.queue, uid, gone.login) == 0

    with pytest.raises(UserNotFound):
        await rp.accounts.lookup(gone.login)
    mine = keys.user_key_prefixes()
    left = [
        k
        for k in await topology.of(rp.store).keys_matching(f"*:{{{uid}}}*")
        if k.split("{", 1)[0] in mine
    ]
    assert left == []
    for s in own:
        raw = await rp.store.client.hgetall(keys.status(s.id))
        assert not raw or b"deleted" in raw
    state = (await rp.statuses.states(friend.id, [theirs.id]))[0]
    assert (state.favourites, state.reblogs) == (0, 0)
    assert (await rp.accounts.get_user(friend.id)).followers == 0
    assert (await rp.accounts.get_user(fan.id)).following == 0
    assert not {s.id for s in await rp.timelines.home(fan.id)} & {s.id for s in own}
    assert await rp.lists.member_ids(fan.id, lst.id) == frozenset()
    assert (await rp.stats())["users"] == users_before + 3 - 1
    assert await rp.relations.hidden_ids(blocked.id) == frozenset()
    assert await rp.relations.hidden_ids(blocker.id) == frozenset()
    # nobody's mutes name it any more
    assert await rp.store.client.zscore(keys.muting(muter.id), uid) is None
    assert await rp.store.client.hget(keys.mute_terms(muter.id), uid) is None
