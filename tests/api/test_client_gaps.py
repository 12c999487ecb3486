"""Routes of Mastodon's config/routes/api.rb that today's clients call and
Redpoll lacked, driven by Mastodon.py 2.3.3 and httpx against a real
``redpoll serve``: several accounts by id (GET /api/v1/accounts, Mastodon
4.3: the web app's grouped notifications, Mastodon.py ``accounts``), the
terms of service (GET /api/v1/instance/terms_of_service, Mastodon 4.4: the
official apps' sign-up; none published here: Mastodon's 404). The domain
block preview is tested with the member domain blocks
(tests/federation/test_member_domain_blocks.py)."""

from __future__ import annotations

import asyncio
import hashlib
import uuid

import httpx
import pytest
from mastodon import Mastodon, MastodonNotFoundError
from support.mastodon import accounts

from redpoll.core.errors import ValidationError
from redpoll.federation import domains
from redpoll.instance import instance

pytestmark = pytest.mark.timeout(180)

NOT_FOUND = {"error": "Record not found"}


def run(fn, *args, **kwargs):
    return asyncio.to_thread(fn, *args, **kwargs)


async def test_several_accounts_by_id_in_the_order_asked(srv):
    ann, bob = await run(accounts, srv.base, 2)
    a, b = (await run(ann.me))["id"], (await run(bob.me))["id"]
    found = await run(ann.accounts, [b, a, b])
    assert [x["id"] for x in found] == [b, a]  # each once, in order
    assert found[0]["username"] == (await run(bob.me))["username"]
    with httpx.Client(base_url=srv.base, timeout=30) as anon:  # public, as Mastodon's
        got = anon.get("/api/v1/accounts", params=[("id[]", str(a)), ("id[]", "999999999")])
        assert got.status_code == 200 and [x["id"] for x in got.json()] == [str(a)]
        assert anon.get("/api/v1/accounts").json() == []
        too_many = [("id[]", str(n + 1)) for n in range(41)]
        assert anon.get("/api/v1/accounts", params=too_many).status_code == 422
        assert anon.get("/api/v1/accounts", params={"id[]": "x"}).status_code == 422


async def test_no_terms_of_service_are_published(srv):
    m = Mastodon(api_base_url=srv.base)
    m.version_check_mode = "none"
    with pytest.raises(MastodonNotFoundError):
        await run(m.instance_terms_of_service)
    with httpx.Client(base_url=srv.base, timeout=30) as anon:
        for path in (
            "/api/v1/instance/terms_of_service",
            "/api/v1/instance/terms_of_service/2026-01-01",
        ):
            answer = anon.get(path)
            assert (answer.status_code, answer.json()) == (404, NOT_FOUND)


async def test_the_servers_domain_blocks_as_its_settings_show_them(srv, rp):
    """GET /api/v1/instance/domain_blocks: 404 while show_domain_blocks is
    Mastodon's default (disabled); signed-in readers under ``users``,
    everyone under ``all``; silenced before suspended, an obfuscated domain
    starred, its digest the sha256 of the real one, the public comment only
    when show_domain_blocks_rationale allows."""
    tag = uuid.uuid4().hex[:8]
    loud, hidden = f"loud{tag}.example", f"secretive{tag}.example"
    (member,) = await run(accounts, srv.base, 1)
    await domains.create(rp.store, loud, "silence", public_comment="spam")
    await domains.create(rp.store, hidden, "suspend", obfuscate=True, public_comment="abuse")
    signed = {"Authorization": f"Bearer {member.access_token}"}
    try:
        with httpx.Client(base_url=srv.base, timeout=30) as c:
            assert c.get("/api/v1/instance/domain_blocks").status_code == 404  # the default
            await instance.set_settings(rp.store, show_domain_blocks="users")
            assert c.get("/api/v1/instance/domain_blocks").status_code == 404  # anonymous
            listed = c.get("/api/v1/instance/domain_blocks", headers=signed).json()
            assert [b["domain"] for b in listed if b["domain"] == loud] == [loud]
            assert all("comment" not in b for b in listed)
            await instance.set_settings(
                rp.store, show_domain_blocks="all", show_domain_blocks_rationale="all"
            )
            listed = c.get("/api/v1/instance/domain_blocks").json()
            by_digest = {b["digest"]: b for b in listed}
            shown_loud = by_digest[hashlib.sha256(loud.encode()).hexdigest()]
            shown_hidden = by_digest[hashlib.sha256(hidden.encode()).hexdigest()]
            assert shown_loud == {
                "domain": loud,
                "digest": hashlib.sha256(loud.encode()).hexdigest(),
                "severity": "silence",
                "comment": "spam",
            }
            assert shown_hidden["severity"] == "suspend" and shown_hidden["comment"] == "abuse"
            assert shown_hidden["domain"] != hidden and "*" in shown_hidden["domain"]
            assert len(shown_hidden["domain"]) == len(hidden)
            assert shown_hidden["domain"].startswith(hidden[:2]) and "." in shown_hidden["domain"]
            assert listed.index(shown_loud) < listed.index(shown_hidden)  # silence first
            assert await run_refused(instance.set_settings(rp.store, show_domain_blocks="some"))
    finally:
        await instance.set_settings(
            rp.store, show_domain_blocks="", show_domain_blocks_rationale=""
        )
        await domains.unblock(rp.store, loud)
        await domains.unblock(rp.store, hidden)


async def run_refused(call) -> bool:
    try:
        await call
    except ValidationError:
        return True
    return False


async def test_translation_and_announcements_answer_as_mastodon_without_them(srv):
    """No translation service (translation.enabled false) and no
    announcements: POST /api/v1/statuses/:id/translate and the
    announcement actions answer Mastodon's 404 then."""
    ann, bob = await run(accounts, srv.base, 2)
    for m in (ann, bob):
        m.version_check_mode = "none"
    public = await run(ann.status_post, "bonjour")
    assert (await run(bob.instance_v2))["configuration"]["translation"]["enabled"] is False
    with pytest.raises(MastodonNotFoundError):
        await run(bob.status_translate, public["id"], lang="en")
    with pytest.raises(MastodonNotFoundError):
        await run(bob.announcement_dismiss, "1")
    with httpx.Client(base_url=srv.base, timeout=30) as c:
        headers = {"Authorization": f"Bearer {bob.access_token}"}
        for method, path in (
            ("POST", f"/api/v1/statuses/{public['id']}/translate"),
            ("POST", "/api/v1/statuses/999999999/translate"),
            ("POST", "/api/v1/announcements/1/dismiss"),
            ("PUT", "/api/v1/announcements/1/reactions/%F0%9F%91%8D"),
            ("DELETE", "/api/v1/announcements/1/reactions/x"),
        ):
            answer = c.request(method, path, headers=headers)
            assert (answer.status_code, answer.json()) == (404, NOT_FOUND), path
        assert c.post(f"/api/v1/statuses/{public['id']}/translate").status_code == 401


async def test_v2_notifications_clear(srv):
    """POST /api/v2/notifications/clear (Mastodon's route beside v1's): every
    notification dismissed, grouped ones too."""
    ann, bob = await run(accounts, srv.base, 2)
    toot = await run(ann.status_post, "clear me")
    await run(bob.status_favourite, toot["id"])
    assert len((await run(ann.grouped_notifications))["notification_groups"]) == 1
    with httpx.Client(base_url=srv.base, timeout=30) as c:
        headers = {"Authorization": f"Bearer {ann.access_token}"}
        answer = c.post("/api/v2/notifications/clear", headers=headers)
        assert (answer.status_code, answer.json()) == (200, {})
        assert c.post("/api/v2/notifications/clear").status_code == 401
    assert (await run(ann.grouped_notifications))["notification_groups"] == []
    assert await run(ann.notifications) == []
