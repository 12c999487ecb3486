"""Notification filtering (Mastodon 4.3): the policy (v2 and v1), filtered
notifications kept out of lists, counts and streams, notification requests
(list, one, accept, dismiss, bulk, merged) and what a request shows when it
is read. Mastodon.py against a real ``redpoll serve``; both topologies."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mastodon import MastodonAPIError, MastodonNotFoundError
from support.mastodon import NoteListener, accounts

pytestmark = [pytest.mark.topology, pytest.mark.timeout(300)]


def call(fn, *args, **kwargs):
    return asyncio.to_thread(fn, *args, **kwargs)


def _ids(items) -> list:
    return [i["id"] for i in items]


async def _me(api) -> str:
    return (await call(api.me))["id"]


def _raw(api, method: str, path: str, **kwargs) -> httpx.Response:
    """A plain HTTP request with ``api``'s token (what Mastodon.py has no call for)."""
    return httpx.request(
        method,
        api.api_base_url + path,
        headers={"Authorization": f"Bearer {api.access_token}"},
        timeout=20,
        **kwargs,
    )


async def test_the_policy_defaults_and_changes_v2_and_v1(srv, rp):
    (ann,) = await call(accounts, srv.base, 1)
    policy = (await call(_raw, ann, "GET", "/api/v2/notifications/policy")).json()
    assert {k: policy[k] for k in policy if k != "summary"} == {
        "for_not_following": "accept",
        "for_not_followers": "accept",
        "for_new_accounts": "accept",
        "for_private_mentions": "filter",
        "for_limited_accounts": "filter",
    }
    assert policy["summary"] == {"pending_requests_count": 0, "pending_notifications_count": 0}
    changed = await call(
        ann.update_notifications_policy, for_not_following="filter", for_limited_accounts="drop"
    )
    assert changed["for_not_following"] == "filter"
    assert changed["for_limited_accounts"] == "drop"
    assert changed["for_private_mentions"] == "filter"  # untouched
    assert (await call(ann.notifications_policy))["for_not_following"] == "filter"
    with pytest.raises(MastodonAPIError) as refused:
        await call(ann.update_notifications_policy, for_new_accounts="maybe")
    assert refused.value.args[1] == 422
    # v1: booleans, true where v2 is not accept
    v1 = (await call(_raw, ann, "GET", "/api/v1/notifications/policy")).json()
    assert v1 == {
        "filter_not_following": True,
        "filter_not_followers": False,
        "filter_new_accounts": False,
        "filter_private_mentions": True,
        "summary": {"pending_requests_count": 0, "pending_notifications_count": 0},
    }
    r = await call(
        _raw,
        ann,
        "PUT",
        "/api/v1/notifications/policy",
        json={"filter_not_following": False, "filter_new_accounts": True},
    )
    assert r.status_code == 200 and r.json()["filter_new_accounts"] is True
    policy = await call(ann.notifications_policy)
    assert policy["for_not_following"] == "accept" and policy["for_new_accounts"] == "filter"


async def test_a_strangers_private_mention_is_filtered_into_a_request_and_accepted(srv, rp):
    ann, eve = await call(accounts, srv.base, 2)
    ann_id, eve_id = await _me(ann), await _me(eve)
    listener = NoteListener()
    handle = await call(ann.stream_user, listener, run_async=True)
    try:
        await srv.wait_subscribers(1)
        dm = await call(
            eve.status_post, f"@{(await call(ann.me))['acct']} psst", visibility="direct"
        )
        await rp.drain()
        # a public mention from the same stranger is not a private one: shown
        hello = await call(eve.status_post, f"@{(await call(ann.me))['acct']} hello")
        await rp.drain()
        await asyncio.sleep(0.5)
        with listener.lock:
            streamed = [n["status"]["id"] for n in listener.notifications if n.get("status")]
        assert dm["id"] not in streamed and hello["id"] in streamed
    finally:
        handle.close()
    # not in the list, nor grouped, nor counted
    assert [n["status"]["id"] for n in await call(ann.notifications)] == [hello["id"]]
    grouped = await call(ann.grouped_notifications)
    assert [g["status_id"] for g in grouped["notification_groups"]] == [hello["id"]]
    assert (await call(ann.notifications_unread_count))["count"] == 1
    # with include_filtered, it is there, marked
    r = await call(_raw, ann, "GET", "/api/v1/notifications", params={"include_filtered": "true"})
    both = r.json()
    assert [n["status"]["id"] for n in both] == [hello["id"], dm["id"]]
    assert both[1]["filtered"] is True and "filtered" not in both[0]
    # one request for eve, holding it
    found = await call(ann.notification_requests)
    assert len(found) == 1
    req = found[0]
    assert req["account"]["id"] == eve_id
    assert req["notifications_count"] == "1"
    assert req["last_status"]["id"] == dm["id"]
    assert set(req) >= {"id", "created_at", "updated_at", "account", "last_status"}
    assert (await call(ann.notification_request, req["id"]))["id"] == req["id"]
    summary = (await call(ann.notifications_policy))["summary"]
    assert summary == {"pending_requests_count": 1, "pending_notifications_count": 1}
    # a second one from eve goes to the same request
    dm2 = await call(eve.status_post, f"@{(await call(ann.me))['acct']} again", visibility="direct")
    await rp.drain()
    again = await call(ann.notification_request, req["id"])
    assert again["notifications_count"] == "2" and again["last_status"]["id"] == dm2["id"]
    # accepted: both join the list, the request goes, eve is accepted from now on
    await call(ann.accept_notification_request, req["id"])
    assert await call(ann.notifications_merged) is True
    assert [n["status"]["id"] for n in await call(ann.notifications)] == [
        dm2["id"],
        hello["id"],
        dm["id"],
    ]
    assert await call(ann.notification_requests) == []
    with pytest.raises(MastodonNotFoundError):
        await call(ann.notification_request, req["id"])
    dm3 = await call(eve.status_post, f"@{(await call(ann.me))['acct']} later", visibility="direct")
    await rp.drain()
    assert (await call(ann.notifications))[0]["status"]["id"] == dm3["id"]
    assert await call(ann.notification_requests) == []
    assert ann_id != eve_id


async def test_a_reply_to_ones_own_private_mention_and_a_followed_sender_are_not_filtered(srv, rp):
    ann, bob, cat = await call(accounts, srv.base, 3)
    bob_acct = (await call(bob.me))["acct"]
    ann_acct = (await call(ann.me))["acct"]
    cat_id = await _me(cat)
    # ann wrote to bob privately first: bob's private answer is no stranger's
    first = await call(ann.status_post, f"@{bob_acct} hi bob", visibility="direct")
    await rp.drain()
    answer = await call(
        bob.status_post, f"@{ann_acct} hi ann", visibility="direct", in_reply_to_id=first["id"]
    )
    await rp.drain()
    assert [n["status"]["id"] for n in await call(ann.notifications)] == [answer["id"]]
    # someone ann follows is never filtered
    await call(ann.account_follow, cat_id)
    await rp.drain()
    from_cat = await call(cat.status_post, f"@{ann_acct} from cat", visibility="direct")
    await rp.drain()
    assert (await call(ann.notifications))[0]["status"]["id"] == from_cat["id"]
    assert await call(ann.notification_requests) == []


async def test_filter_and_drop_by_policy_for_other_kinds(srv, rp):
    ann, bob, cat = await call(accounts, srv.base, 3)
    ann_id = await _me(ann)
    await call(ann.update_notifications_policy, for_not_following="filter")
    toot = await call(ann.status_post, "favourite me")
    await call(bob.status_favourite, toot["id"])
    await rp.drain()
    # filtered: not listed, no request (only mentions make one), shown with include_filtered
    assert await call(ann.notifications) == []
    assert await call(ann.notification_requests) == []
    r = await call(_raw, ann, "GET", "/api/v1/notifications", params={"include_filtered": "true"})
    assert [(n["type"], n["filtered"]) for n in r.json()] == [("favourite", True)]
    r = await call(_raw, ann, "GET", "/api/v2/notifications", params={"include_filtered": "true"})
    assert [g["type"] for g in r.json()["notification_groups"]] == ["favourite"]
    assert (await call(ann.grouped_notifications))["notification_groups"] == []
    # dropped: nothing at all
    await call(ann.update_notifications_policy, for_not_following="drop")
    await call(cat.status_favourite, toot["id"])
    await call(cat.account_follow, ann_id)
    await rp.drain()
    r = await call(_raw, ann, "GET", "/api/v1/notifications", params={"include_filtered": "true"})
    assert [n["account"]["id"] for n in r.json()] == [(await call(bob.me))["id"]]
    # accept again: the next one comes through (the dropped one left nothing behind)
    await call(ann.update_notifications_policy, for_not_following="accept")
    await call(cat.status_unfavourite, toot["id"])
    await call(cat.status_favourite, toot["id"])
    await rp.drain()
    assert [n["type"] for n in await call(ann.notifications)] == ["favourite"]


async def test_a_limited_sender_is_filtered_and_a_new_account_when_asked(srv, rp):
    ann, lim = await call(accounts, srv.base, 2)
    ann_acct = (await call(ann.me))["acct"]
    lim_id = await _me(lim)
    await rp.admin.act(None, int(lim_id), "silence")
    post = await call(lim.status_post, f"@{ann_acct} from a limited account")
    await rp.drain()
    assert await call(ann.notifications) == []
    [req] = await call(ann.notification_requests)
    assert req["account"]["id"] == lim_id and req["last_status"]["id"] == post["id"]
    # new accounts (every account here is new): filtered only when asked
    (new,) = await call(accounts, srv.base, 1)
    await call(new.status_post, f"@{ann_acct} I am new")
    await rp.drain()
    assert len(await call(ann.notifications)) == 1
    await call(ann.update_notifications_policy, for_new_accounts="filter")
    await call(new.status_post, f"@{ann_acct} still new")
    await rp.drain()
    assert len(await call(ann.notifications)) == 1
    assert len(await call(ann.notification_requests)) == 2


async def test_dismiss_bulk_and_paging(srv, rp):
    ann, *strangers = await call(accounts, srv.base, 4)
    ann_acct = (await call(ann.me))["acct"]
    for s in strangers:
        await call(s.status_post, f"@{ann_acct} hi", visibility="direct")
        await rp.drain()
    found = await call(ann.notification_requests)
    assert [r["account"]["id"] for r in found] == [await _me(s) for s in reversed(strangers)]
    # paged by request id, newest first, with Link headers
    page = await call(ann.notification_requests, limit=2)
    assert _ids(page) == _ids(found)[:2]
    rest = await call(ann.fetch_next, page)
    assert _ids(rest) == _ids(found)[2:]
    r = await call(_raw, ann, "GET", "/api/v1/notifications/requests", params={"limit": 2})
    assert 'rel="next"' in r.headers["link"] and f"max_id={found[1]['id']}" in r.headers["link"]
    # dismissed: its notifications go, even with include_filtered; a new one makes a new request
    await call(ann.dismiss_notification_request, found[0]["id"])
    r = await call(_raw, ann, "GET", "/api/v1/notifications", params={"include_filtered": "true"})
    assert await _me(strangers[-1]) not in [n["account"]["id"] for n in r.json()]
    assert len(r.json()) == 2
    await call(strangers[-1].status_post, f"@{ann_acct} me again", visibility="direct")
    await rp.drain()
    renewed = await call(ann.notification_requests)
    assert len(renewed) == 3 and renewed[0]["id"] != found[0]["id"]
    assert renewed[0]["notifications_count"] == "1"
    # bulk: id[] (unknown ids passed over)
    await call(ann.accept_multiple_notification_requests, [found[1]["id"], "999999999"])
    await call(ann.dismiss_multiple_notification_requests, [found[2]["id"]])
    assert _ids(await call(ann.notification_requests)) == [renewed[0]["id"]]
    assert [n["account"]["id"] for n in await call(ann.notifications)] == [await _me(strangers[1])]
    with pytest.raises(MastodonNotFoundError):
        await call(ann.accept_notification_request, found[2]["id"])
    # clear takes filtered ones and their requests too
    await call(ann.notifications_clear)
    assert await call(ann.notification_requests) == []


async def test_what_a_request_shows_is_decided_when_read(srv, rp):
    """Leaks: a request whose last status was since deleted, or whose last
    status the viewer may no longer see (its mention edited away from a
    followers-only post), shows ``last_status: null``; a request whose
    sender was since blocked disappears (list, one, summary, accept)."""
    ann, eve, mal = await call(accounts, srv.base, 3)
    ann_acct = (await call(ann.me))["acct"]
    first = await call(eve.status_post, f"@{ann_acct} one", visibility="direct")
    await rp.drain()
    secret = await call(eve.status_post, f"@{ann_acct} for my followers", visibility="private")
    await rp.drain()
    await call(ann.update_notifications_policy, for_not_following="filter")
    second = await call(eve.status_post, f"@{ann_acct} two", visibility="private")
    await rp.drain()
    [req] = await call(ann.notification_requests)
    assert req["last_status"]["id"] == second["id"] and req["notifications_count"] == "2"
    # the last status edited to mention ann no longer: ann may not see it (followers only)
    await call(eve.status_update, second["id"], "two, for my followers only")
    await rp.drain()
    with pytest.raises(MastodonNotFoundError):
        await call(ann.status, second["id"])
    [req] = await call(ann.notification_requests)
    assert req["last_status"] is None and req["notifications_count"] == "1"
    assert (await call(ann.notification_request, req["id"]))["last_status"] is None
    body = (await call(_raw, ann, "GET", "/api/v1/notifications/requests")).text
    assert "followers only" not in body and "two" not in body
    # a deleted last status: null as well
    third = await call(eve.status_post, f"@{ann_acct} three", visibility="direct")
    await rp.drain()
    assert (await call(ann.notification_requests))[0]["last_status"]["id"] == third["id"]
    await call(eve.status_delete, third["id"])
    await rp.drain()
    [req] = await call(ann.notification_requests)
    assert req["last_status"] is None
    assert first["id"] and secret["id"]
    # mal's request disappears once ann blocks mal
    await call(mal.status_post, f"@{ann_acct} hey", visibility="direct")
    await rp.drain()
    found = await call(ann.notification_requests)
    mal_req = [r for r in found if r["account"]["id"] == await _me(mal)][0]
    assert (await call(ann.notifications_policy))["summary"]["pending_requests_count"] == 2
    await call(ann.account_block, await _me(mal))
    await rp.drain()
    assert mal_req["id"] not in _ids(await call(ann.notification_requests))
    with pytest.raises(MastodonNotFoundError):
        await call(ann.notification_request, mal_req["id"])
    with pytest.raises(MastodonNotFoundError):
        await call(ann.accept_notification_request, mal_req["id"])
    assert (await call(ann.notifications_policy))["summary"]["pending_requests_count"] == 1
    # and another user's request is nobody else's
    with pytest.raises(MastodonNotFoundError):
        await call(eve.notification_request, req["id"])
