"""Pins (Mastodon's featured statuses), driven by Mastodon.py against a real
``redpoll serve``, in both topologies: pin and unpin, the profile's pinned
statuses, the ``pinned`` flag, Mastodon's refusals (another's status, a
boost, a direct status, a sixth pin), and the visibility decision applied
when the pins are shown, not when they were pinned."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mastodon import Mastodon, MastodonAPIError, MastodonNotFoundError
from support.mastodon import accounts  # noqa: F401

from redpoll.core import limits

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]


def pinned_ids(m: Mastodon, uid) -> list:
    return [s["id"] for s in m.account_statuses(uid, pinned=True)]


async def test_pin_shows_first_on_the_profile_with_the_flag_and_unpin_takes_it_off(srv, rp):
    alice, bob = await asyncio.to_thread(accounts, srv.base, 2)
    me = await asyncio.to_thread(alice.me)
    first = await asyncio.to_thread(alice.status_post, "pin me")
    second = await asyncio.to_thread(alice.status_post, "and me")
    await asyncio.to_thread(alice.status_post, "not me")

    shown = await asyncio.to_thread(alice.status_pin, first["id"])
    assert shown["id"] == first["id"] and shown["pinned"] is True
    assert (await asyncio.to_thread(alice.status_pin, first["id"]))[
        "pinned"
    ] is True  # again: a no-op
    await asyncio.to_thread(alice.status_pin, second["id"])
    # the last pinned first; anyone (signed in or not) sees the public pins
    assert await asyncio.to_thread(pinned_ids, alice, me["id"]) == [second["id"], first["id"]]
    assert await asyncio.to_thread(pinned_ids, bob, me["id"]) == [second["id"], first["id"]]
    with httpx.Client(base_url=srv.base, timeout=30) as http:
        anon = http.get(f"/api/v1/accounts/{me['id']}/statuses", params={"pinned": "true"}).json()
    assert [s["id"] for s in anon] == [second["id"], first["id"]]
    # the author sees the flag; another viewer sees it unset
    assert (await asyncio.to_thread(alice.status, first["id"]))["pinned"] is True
    assert (await asyncio.to_thread(bob.status, first["id"]))["pinned"] is False

    shown = await asyncio.to_thread(alice.status_unpin, first["id"])
    assert shown["pinned"] is False
    assert await asyncio.to_thread(pinned_ids, alice, me["id"]) == [second["id"]]
    await asyncio.to_thread(alice.status_unpin, first["id"])  # not pinned: a no-op


async def test_what_mastodon_refuses_to_pin_is_refused_and_nothing_is_pinned(srv, rp):
    alice, bob = await asyncio.to_thread(accounts, srv.base, 2)
    me = await asyncio.to_thread(alice.me)
    bobs = await asyncio.to_thread(bob.status_post, "bob's own")
    mine = await asyncio.to_thread(alice.status_post, "mine")
    boost = await asyncio.to_thread(alice.status_reblog, bobs["id"])
    direct = await asyncio.to_thread(alice.status_post, "@someone hush", visibility="direct")
    for sid in (bobs["id"], boost["id"], direct["id"]):
        with pytest.raises(MastodonAPIError) as refused:
            await asyncio.to_thread(alice.status_pin, sid)
        assert refused.value.args[1] == 422, (sid, refused.value.args)
    with pytest.raises(MastodonNotFoundError):  # an unknown status
        await asyncio.to_thread(alice.status_pin, 999_999_999_999)
    assert await asyncio.to_thread(pinned_ids, alice, me["id"]) == []

    posts = [await asyncio.to_thread(alice.status_post, f"p{i}") for i in range(limits.PINS_MAX)]
    for post in posts:
        await asyncio.to_thread(alice.status_pin, post["id"])
    with pytest.raises(MastodonAPIError) as full:
        await asyncio.to_thread(alice.status_pin, mine["id"])
    assert full.value.args[1] == 422 and "at most" in str(full.value.args[-1])
    assert len(await asyncio.to_thread(pinned_ids, alice, me["id"])) == limits.PINS_MAX

    # a deleted pinned status leaves the pins, and its place is free again
    await asyncio.to_thread(alice.status_delete, posts[0]["id"])
    await rp.drain()
    assert posts[0]["id"] not in await asyncio.to_thread(pinned_ids, alice, me["id"])
    assert (await asyncio.to_thread(alice.status_pin, mine["id"]))["pinned"] is True


async def test_a_pinned_private_status_shows_only_to_those_who_may_see_it_now(srv, rp):
    alice, bob, carol = await asyncio.to_thread(accounts, srv.base, 3)
    me = await asyncio.to_thread(alice.me)
    await asyncio.to_thread(bob.account_follow, me["id"])
    private = await asyncio.to_thread(alice.status_post, "followers only", visibility="private")
    public = await asyncio.to_thread(alice.status_post, "everyone")
    await asyncio.to_thread(alice.status_pin, private["id"])  # Mastodon pins private ones too
    await asyncio.to_thread(alice.status_pin, public["id"])
    assert await asyncio.to_thread(pinned_ids, bob, me["id"]) == [public["id"], private["id"]]
    assert await asyncio.to_thread(pinned_ids, carol, me["id"]) == [public["id"]]
    # the decision is taken when the pins are shown: an unfollow hides it at once
    await asyncio.to_thread(bob.account_unfollow, me["id"])
    assert await asyncio.to_thread(pinned_ids, bob, me["id"]) == [public["id"]]
    # nor can one pin what one cannot see (someone else's, hidden: 404, not 422)
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(carol.status_pin, private["id"])
