"""Locked accounts and follow requests: Mastodon.py 2.3.3 against
a real ``redpoll serve``, and the concurrent-authorization race at engine
level; both modes."""

from __future__ import annotations

import asyncio

import pytest
from support.mastodon import accounts  # noqa: F401

from redpoll.core import keys
from redpoll.relations import follow_requests, follows

pytestmark = pytest.mark.timeout(240)


async def test_locked_account_requests_authorize_reject_withdraw(srv, rp):
    lou, fan, foe, late = await asyncio.to_thread(accounts, srv.base, 4)
    me = {
        k: await asyncio.to_thread(m.me)
        for k, m in (("lou", lou), ("fan", fan), ("foe", foe), ("late", late))
    }
    lou_id = me["lou"]["id"]
    secret = lou.status_post("followers only", visibility="private")
    assert lou.account_update_credentials(locked=True)["locked"] is True
    assert fan.account(lou_id)["locked"] is True

    rel = fan.account_follow(lou_id)
    assert rel["requested"] is True and rel["following"] is False
    assert foe.account_follow(lou_id)["requested"] is True
    assert late.account_follow(lou_id)["requested"] is True
    assert [a["id"] for a in lou.follow_requests()] == [
        me["late"]["id"],
        me["foe"]["id"],
        me["fan"]["id"],
    ]
    assert lou.me()["source"]["follow_requests_count"] == 3
    assert {n["account"]["id"] for n in lou.notifications(types=["follow_request"])} == {
        me["fan"]["id"],
        me["foe"]["id"],
        me["late"]["id"],
    }
    assert lou.account_relationships(me["fan"]["id"])[0]["requested_by"] is True
    assert lou.me()["followers_count"] == 0
    # nothing private leaks to a requester
    assert secret["id"] not in {s["id"] for s in fan.account_statuses(lou_id)}

    rel = lou.follow_request_authorize(me["fan"]["id"])
    assert rel["followed_by"] is True and rel["requested_by"] is False
    assert fan.account_relationships(lou_id)[0]["following"] is True
    assert lou.me()["followers_count"] == 1
    # the follow's backfill brings the private status, and it is seen
    assert secret["id"] in {s["id"] for s in fan.timeline_home()}
    assert fan.status(secret["id"])["id"] == secret["id"]
    assert lou.notifications(types=["follow_request"]) and me["fan"]["id"] not in {
        n["account"]["id"] for n in lou.notifications(types=["follow_request"])
    }

    lou.follow_request_reject(me["foe"]["id"])
    assert foe.account_relationships(lou_id)[0]["requested"] is False
    assert foe.account_relationships(lou_id)[0]["following"] is False
    late.account_unfollow(lou_id)  # withdrawing a pending request
    assert lou.follow_requests() == []
    assert lou.me()["source"]["follow_requests_count"] == 0

    # remove_from_followers
    rel = lou.account_remove_from_followers(me["fan"]["id"])
    assert rel["followed_by"] is False
    assert lou.me()["followers_count"] == 0
    # unlocking: a follow is a follow again
    lou.account_update_credentials(locked=False)
    assert foe.account_follow(lou_id)["following"] is True


async def test_a_request_authorized_twice_at_once_makes_one_follow(rp):
    owner = await rp.accounts.sign_up("lockd0")
    await rp.accounts.update_profile(owner.id, locked=True)
    asker = await rp.accounts.sign_up("lockd1")
    assert not await rp.relations.follow(asker.id, owner.id)  # a request, not a follow
    assert await rp.store.client.zscore(keys.follow_requests(owner.id), asker.id) is not None
    done = await asyncio.gather(
        *(follows.authorize_request(rp.store, rp.queue, owner.id, asker.id) for _ in range(2))
    )
    assert any(done)
    assert (await rp.accounts.get_user(owner.id)).followers == 1
    assert (await rp.accounts.get_user(asker.id)).following == 1
    assert await rp.relations.is_following(asker.id, owner.id)
    assert await follow_requests.state(rp.store, asker.id, owner.id) == (False, False)
    assert await follows.authorize_request(rp.store, rp.queue, owner.id, asker.id) is False
    # a block takes pending requests away too
    other = await rp.accounts.sign_up("lockd2")
    await rp.relations.follow(other.id, owner.id)
    await rp.relations.block(owner.id, other.id)
    assert await follow_requests.count(rp.store, owner.id) == 0
    assert await follow_requests.state(rp.store, other.id, owner.id) == (False, False)
