"""NodeInfo against a real ``redpoll serve``: found from /.well-known, read
by Mastodon.py (``instance_nodeinfo``), naming redpoll with the Mastodon API
upstream (how megalodon-based apps decide to speak Mastodon), and usage
figures that count real accounts and real activity."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from support.mastodon import accounts  # noqa: F401

pytestmark = [pytest.mark.timeout(120)]


async def test_usage_counts_accounts_posts_and_who_read_their_home(srv, rp):
    alice, bob = await asyncio.to_thread(accounts, srv.base, 2)
    await asyncio.to_thread(alice.status_post, "counted")
    await asyncio.to_thread(alice.timeline_home)  # alice used the server; bob only signed up
    await rp.drain()
    expected_users = (await rp.stats())["users"]
    expected_active = await rp.usage()
    # (the server keeps the figures for limits.INSTANCE_STATS_CACHE_S: this is its first read)
    info = await asyncio.to_thread(bob.instance_nodeinfo)  # Mastodon.py finds it via /.well-known
    usage = info["usage"]
    assert info["software"]["name"] == "redpoll"
    assert usage["users"]["total"] == expected_users >= 2
    assert usage["localPosts"] >= 1
    # alice read her home: she is active this month; the half-year holds the month
    assert 1 <= usage["users"]["activeMonth"] <= usage["users"]["activeHalfyear"] <= expected_users
    assert expected_active["users"]["activeMonth"] == usage["users"]["activeMonth"]


async def test_nodeinfo_is_found_and_names_redpoll_speaking_mastodon(srv, rp):
    with httpx.Client(base_url=srv.base, timeout=30) as http:
        found = http.get("/.well-known/nodeinfo", headers={"Origin": "https://app.example"})
        assert found.status_code == 200
        assert found.headers["access-control-allow-origin"] in ("*", "https://app.example")
        links = {link["rel"].rsplit("/", 1)[1]: link["href"] for link in found.json()["links"]}
        assert links == {"2.0": srv.base + "/nodeinfo/2.0", "2.1": srv.base + "/nodeinfo/2.1"}
        for version, href in links.items():
            doc = http.get(href).json()
            assert doc["version"] == version
            assert doc["software"]["name"] == "redpoll"
            assert doc["metadata"]["upstream"]["name"] == "mastodon"
            assert doc["protocols"] == []  # no REDPOLL_PUBLIC_URL: no federation claimed
            assert doc["openRegistrations"] is True
