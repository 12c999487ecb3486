"""The Mastodon API version /api/v2/instance claims (``api_versions.mastodon``,
redpoll.render.entities.MASTODON_API_VERSION) and what each version from 3
to 7 added, driven by Mastodon.py 2.3.3 and httpx against a real ``redpoll
serve``: attribution domains (3), delete_media and DELETE /api/v1/media/:id
(4), the ``blur`` filter action (5), featured accounts (6), the default quote
policy and quote policies on edit (7; the rest of quote posts:
test_quotes.py)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mastodon import Mastodon
from support.mastodon import accounts
from support.media import small_png

from redpoll.render.entities import MASTODON_API_VERSION

pytestmark = pytest.mark.timeout(240)

IN_USE = {"error": "Media attachment is currently used by a status"}


def run(fn, *args, **kwargs):
    return asyncio.to_thread(fn, *args, **kwargs)


async def people(srv, n: int) -> list[Mastodon]:
    return await run(accounts, srv.base, n)


def http(srv, m: Mastodon | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {m.access_token}"} if m is not None else {}
    return httpx.Client(base_url=srv.base, timeout=30, headers=headers)


async def test_the_instance_claims_api_version_7_of_mastodon_4_5(srv):
    with http(srv) as anon:
        body = anon.get("/api/v2/instance").json()
    assert body["api_versions"] == {"mastodon": 7} and MASTODON_API_VERSION == 7
    assert body["version"].startswith("4.5.0 (compatible; Redpoll")
    m = Mastodon(api_base_url=srv.base)  # Mastodon.py reads both
    await run(m.retrieve_mastodon_version)
    assert m.mastodon_api_version == 7 and m.verify_minimum_version("4.5.0")


async def test_attribution_domains_are_kept_normalized_and_bounded(srv):
    (alice,) = await people(srv, 1)
    me = await run(
        alice.account_update_credentials,
        attribution_domains=["Example.org", "*.blog.example.net", "example.org", " "],
    )
    assert me["source"]["attribution_domains"] == ["example.org", "blog.example.net"]
    assert (await run(alice.account_verify_credentials))["source"]["attribution_domains"] == [
        "example.org",
        "blog.example.net",
    ]
    with http(srv, alice) as c:
        too_many = [f"site{i}.example.org" for i in range(11)]
        answer = c.patch(
            "/api/v1/accounts/update_credentials", json={"attribution_domains": too_many}
        )
        assert answer.status_code == 422 and "attribution_domains" in answer.json()["error"]
        bad = c.patch(
            "/api/v1/accounts/update_credentials", json={"attribution_domains": ["not a domain"]}
        )
        assert bad.status_code == 422
        # nothing written by the refusals; an empty list clears them
        kept = c.get("/api/v1/accounts/verify_credentials").json()
        assert kept["source"]["attribution_domains"] == ["example.org", "blog.example.net"]
        cleared = c.patch("/api/v1/accounts/update_credentials", json={"attribution_domains": []})
        assert cleared.json()["source"]["attribution_domains"] == []


async def test_deleting_an_unattached_upload_and_delete_media(srv):
    alice, bob = await people(srv, 2)
    loose = await run(alice.media_post, small_png(), mime_type="image/png", synchronous=True)
    used = await run(alice.media_post, small_png(), mime_type="image/png", synchronous=True)
    status = await run(alice.status_post, "with a picture", media_ids=[used["id"]])
    with http(srv, alice) as c, http(srv, bob) as other:
        assert other.delete(f"/api/v1/media/{loose['id']}").status_code == 404  # not bob's
        attached = c.delete(f"/api/v1/media/{used['id']}")
        assert (attached.status_code, attached.json()) == (422, IN_USE)
        gone = c.delete(f"/api/v1/media/{loose['id']}")
        assert (gone.status_code, gone.json()) == (200, {})
        assert c.get(f"/api/v1/media/{loose['id']}").status_code == 404
        assert c.delete(f"/api/v1/media/{loose['id']}").status_code == 404  # once
        assert c.get(f"/api/v1/statuses/{status['id']}").json()["media_attachments"]
        refused = c.delete(f"/api/v1/statuses/{status['id']}", params={"delete_media": "maybe"})
        assert refused.status_code == 422
    deleted = await run(alice.status_delete, status["id"], delete_media=True)
    assert deleted["id"] == status["id"] and deleted["text"] == "with a picture"
    with http(srv, alice) as c:
        assert c.get(f"/api/v1/statuses/{status['id']}").status_code == 404


async def test_a_blur_filter_marks_the_status_and_hides_nothing(srv):
    alice, bob = await people(srv, 2)
    await run(bob.account_follow, (await run(alice.me))["id"])
    await run(
        bob.create_filter_v2,
        "soft",
        ["home"],
        "blur",
        keywords_attributes=[{"keyword": "gory", "whole_word": True}],
    )
    toot = await run(alice.status_post, "a gory picture")
    home = await run(bob.timeline_home)
    (shown,) = [s for s in home if s["id"] == toot["id"]]
    assert [f["filter"]["filter_action"] for f in shown["filtered"]] == ["blur"]
    assert shown["filtered"][0]["keyword_matches"] == ["gory"]
    with http(srv, bob) as c:
        wrong = c.post(
            "/api/v2/filters",
            json={"title": "x", "context": ["home"], "filter_action": "smudge"},
        )
        assert wrong.status_code == 422


async def test_featured_accounts_are_answered(srv):
    alice, bob = await people(srv, 2)
    bob_id = (await run(bob.me))["id"]
    await run(alice.account_follow, bob_id)
    assert (await run(alice.account_endorse, bob_id))["endorsed"] is True
    assert [a["id"] for a in await run(alice.endorsements)] == [bob_id]
    alice_id = (await run(alice.me))["id"]
    with http(srv) as anon:  # anyone may see whom one features (Mastodon 4.4)
        listed = anon.get(f"/api/v1/accounts/{alice_id}/endorsements").json()
    assert [a["id"] for a in listed] == [bob_id]


async def test_the_default_quote_policy_and_a_policy_changed_by_an_edit(srv):
    alice, bob = await people(srv, 2)
    me = await run(alice.account_update_credentials, default_quote_policy="followers")
    assert me["source"]["quote_policy"] == "followers"
    assert (await run(alice.preferences))["posting:default:quote_policy"] == "followers"
    plain = await run(alice.status_post, "who may quote this?")
    assert plain["quote_approval"]["automatic"] == ["followers"]
    assert (await run(bob.status, plain["id"]))["quote_approval"]["current_user"] == "denied"
    named = await run(alice.status_post, "anyone", quote_approval_policy="public")
    assert named["quote_approval"]["automatic"] == ["public"]
    edited = await run(
        alice.status_update, named["id"], "no one now", quote_approval_policy="nobody"
    )
    assert edited["quote_approval"]["automatic"] == []
    assert "no one now" in edited["content"]
    with http(srv, alice) as c:
        bad = c.put(
            f"/api/v1/statuses/{named['id']}",
            json={"status": "never written", "quote_approval_policy": "sometimes"},
        )
        assert bad.status_code == 422
        source = c.get(f"/api/v1/statuses/{named['id']}/source").json()
        assert source["text"] == "no one now"  # the refused edit wrote nothing
        wrong = c.patch(
            "/api/v1/accounts/update_credentials", data={"source[quote_policy]": "friends"}
        )
        assert wrong.status_code == 422
