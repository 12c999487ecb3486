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

import httpx
import pytest
from mastodon import Mastodon, MastodonNotFoundError
from support.mastodon import accounts

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
