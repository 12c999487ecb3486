"""``allowed_mentions`` on POST /api/v1/statuses, as Mastodon answers it:
a status that would mention an account not listed is refused with 422,
``error`` and ``unexpected_accounts`` (their Account entities), and nothing
is posted; one that mentions only listed accounts (or none) is posted.
Sent as JSON, as masto.js and megalodon send it, against a real serve."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from support.mastodon import accounts  # noqa: F401

pytestmark = [pytest.mark.timeout(120)]


async def test_a_mention_outside_allowed_mentions_is_refused_with_who_it_is(srv):
    me, ann, bob = await asyncio.to_thread(accounts, srv.base, 3)
    a, b = ann.me(), bob.me()
    auth = {"Authorization": f"Bearer {me.access_token}"}
    url = f"{srv.base}/api/v1/statuses"
    text = f"hi @{a['username']} and @{b['username']}"
    refused = httpx.post(url, json={"status": text, "allowed_mentions": [a["id"]]}, headers=auth)
    assert refused.status_code == 422
    body = refused.json()
    assert body["error"] == "Post would be sent to unexpected accounts"
    assert [x["id"] for x in body["unexpected_accounts"]] == [str(b["id"])]
    assert body["unexpected_accounts"][0]["username"] == b["username"]
    assert me.account_statuses(me.me()["id"]) == []  # nothing posted
    assert bob.notifications() == [] and ann.notifications() == []
    both = {"status": text, "allowed_mentions": [a["id"], b["id"]]}
    posted = httpx.post(url, json=both, headers=auth)
    assert posted.status_code == 200, posted.text
    assert {m["id"] for m in posted.json()["mentions"]} == {str(a["id"]), str(b["id"])}
    none_needed = httpx.post(url, json={"status": "no one", "allowed_mentions": []}, headers=auth)
    assert none_needed.status_code == 200
    with_key = httpx.post(
        url,
        json={"status": f"@{b['username']}", "allowed_mentions": []},
        headers={**auth, "Idempotency-Key": "k1"},
    )
    assert with_key.status_code == 422
    assert [x["id"] for x in with_key.json()["unexpected_accounts"]] == [str(b["id"])]
