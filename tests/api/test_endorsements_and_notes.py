"""Endorsements (featured profiles), private notes, one's lists that hold
an account, familiar followers and identity proofs, through Mastodon.py
against a real ``redpoll serve``, on one server and on the cluster."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mastodon import MastodonAPIError
from support.mastodon import accounts  # noqa: F401

from redpoll.core import limits
from redpoll.moderation import moderation

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]


def ids(items) -> list[str]:
    return [str(x["id"]) for x in items]


async def test_an_endorsement_needs_a_follow_and_goes_with_it(srv, rp):
    me, bob, carol, dave = await asyncio.to_thread(accounts, srv.base, 4)
    bob_id, carol_id = bob.me()["id"], carol.me()["id"]
    with pytest.raises(MastodonAPIError) as refused:  # not followed: 422, nothing kept
        me.account_endorse(bob_id)
    assert refused.value.args[1] == 422
    assert "already following" in str(refused.value)
    assert me.endorsements() == []
    me.account_follow(bob_id)
    me.account_follow(carol_id)
    assert me.account_endorse(bob_id)["endorsed"] is True
    assert me.account_pin(carol_id)["endorsed"] is True  # the older name of the same
    assert ids(me.endorsements()) == [str(carol_id), str(bob_id)]  # newest first
    assert me.account_relationships([bob_id])[0]["endorsed"] is True
    assert bob.account_relationships([me.me()["id"]])[0]["endorsed"] is False
    # anyone sees them on the profile, anonymous too
    shown = httpx.get(f"{srv.base}/api/v1/accounts/{me.me()['id']}/endorsements").json()
    assert ids(shown) == [str(carol_id), str(bob_id)]
    # paging: one a page, the Link header leading to the next
    first = httpx.get(
        f"{srv.base}/api/v1/accounts/{me.me()['id']}/endorsements", params={"limit": 1}
    )
    assert ids(first.json()) == [str(carol_id)]
    assert ids(httpx.get(first.links["next"]["url"]).json()) == [str(bob_id)]
    # one who blocks carol, or is blocked by her, is not shown her there
    dave.account_block(carol_id)
    raw = httpx.get(
        f"{srv.base}/api/v1/accounts/{me.me()['id']}/endorsements",
        headers={"Authorization": f"Bearer {dave.access_token}"},
    ).json()
    assert ids(raw) == [str(bob_id)]
    # a suspended account is shown to no one
    carol_name = carol.me()["username"]
    await moderation.suspend(rp.store, carol_name)  # (her tokens revoked with it)
    assert ids(me.endorsements()) == [str(bob_id)]
    await moderation.unsuspend(rp.store, carol_name)
    assert ids(me.endorsements()) == [str(carol_id), str(bob_id)]
    # unendorse, and an unfollow takes the endorsement with it
    assert me.account_unpin(carol_id)["endorsed"] is False
    me.account_endorse(carol_id)
    me.account_unfollow(bob_id)
    assert ids(me.endorsements()) == [str(carol_id)]
    me.account_follow(bob_id)  # following again does not endorse again
    assert me.account_relationships([bob_id])[0]["endorsed"] is False
    # a block by the endorsed account ends the follow, and the endorsement
    await rp.relations.block(int(carol_id), int(me.me()["id"]))
    assert me.endorsements() == []
    assert me.account_unendorse(carol_id)["endorsed"] is False  # nothing to undo: fine
    with pytest.raises(MastodonAPIError) as yourself:
        me.account_endorse(me.me()["id"])
    assert yourself.value.args[1] == 422


async def test_a_private_note_is_its_writer_s_alone(srv, rp):
    me, bob, other = await asyncio.to_thread(accounts, srv.base, 3)
    bob_id = bob.me()["id"]
    rel = me.account_note_set(bob_id, "  met at the conference  ")
    assert rel["note"] == "met at the conference"
    assert me.account_relationships([bob_id])[0]["note"] == "met at the conference"
    assert other.account_relationships([bob_id])[0]["note"] == ""
    assert bob.account_relationships([me.me()["id"]])[0]["note"] == ""
    with pytest.raises(MastodonAPIError) as long:  # too long: 422, the old note kept
        me.account_note_set(bob_id, "x" * (limits.ACCOUNT_NOTE_MAX_CHARS + 1))
    assert long.value.args[1] == 422
    assert me.account_relationships([bob_id])[0]["note"] == "met at the conference"
    assert me.account_note_set(bob_id, "")["note"] == ""
    assert me.account_relationships([bob_id])[0]["note"] == ""
    with pytest.raises(MastodonAPIError) as missing:
        me.account_note_set(987654321, "nobody")
    assert missing.value.args[1] == 404


async def test_the_lists_that_hold_an_account(srv, rp):
    me, bob, carol = await asyncio.to_thread(accounts, srv.base, 3)
    bob_id = bob.me()["id"]
    me.account_follow(bob_id)
    friends, work, empty = (me.list_create(t) for t in ("friends", "work", "empty"))
    me.list_accounts_add(friends["id"], [bob_id])
    me.list_accounts_add(work["id"], [bob_id])
    assert sorted(ids(me.account_lists(bob_id))) == sorted([str(friends["id"]), str(work["id"])])
    assert carol.account_lists(bob_id) == []  # one's own lists only
    me.list_accounts_delete(work["id"], [bob_id])
    assert ids(me.account_lists(bob_id)) == [str(friends["id"])]


async def test_familiar_followers_and_identity_proofs(srv, rp):
    me, a, b, c, target, lonely = await asyncio.to_thread(accounts, srv.base, 6)
    tid, lid = target.me()["id"], lonely.me()["id"]
    for who in (a, b, c):
        who.account_follow(tid)
    me.account_follow(a.me()["id"])
    me.account_follow(b.me()["id"])  # not c: c follows the target, but me not c
    found = me.account_familiar_followers([tid, lid])
    assert [str(x["id"]) for x in found] == [str(tid), str(lid)]
    assert ids(found[0]["accounts"]) == [str(b.me()["id"]), str(a.me()["id"])]
    assert found[1]["accounts"] == []
    # the literal route is not taken for an account id
    raw = httpx.get(
        f"{srv.base}/api/v1/accounts/familiar_followers",
        params={"id[]": [tid]},
        headers={"Authorization": f"Bearer {me.access_token}"},
    )
    assert raw.status_code == 200 and ids(raw.json()[0]["accounts"]) == ids(found[0]["accounts"])
    assert httpx.get(f"{srv.base}/api/v1/accounts/familiar_followers").status_code == 401
    assert httpx.get(f"{srv.base}/api/v1/accounts/{tid}/identity_proofs").json() == []
    assert httpx.get(f"{srv.base}/api/v1/accounts/987654321/identity_proofs").status_code == 404
