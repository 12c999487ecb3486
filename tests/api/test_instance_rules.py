"""The server's rules, extended description and languages, set with
``redpoll admin`` and read by Mastodon.py against a real ``redpoll serve``."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mastodon import Mastodon
from support.cli import admin, ok  # noqa: F401

from redpoll.core import limits
from redpoll.federation import domains, remote, signing

pytestmark = [pytest.mark.timeout(120)]

PAIR = signing.KeyPair.generate()


async def test_rules_set_by_the_operator_show_in_the_api_and_the_instance(srv, rp):
    assert ok(admin(srv, "rules")).strip() == "no rules"
    assert "#1" in ok(admin(srv, "rules-add", "Be kind", "--hint", "No harassment"))
    assert "#2" in ok(admin(srv, "rules-add", "No spam"))
    refused = admin(srv, "rules-add", "   ")
    assert refused.returncode != 0 and "empty" in refused.stderr
    m = Mastodon(api_base_url=srv.base)
    rules = await asyncio.to_thread(m.instance_rules)
    assert [(r["id"], r["text"], r["hint"]) for r in rules] == [
        ("1", "Be kind", "No harassment"),
        ("2", "No spam", ""),
    ]
    # the instance entity (its first read in this server) carries them, and the pin bound
    with httpx.Client(base_url=srv.base, timeout=30) as http:
        v2 = http.get("/api/v2/instance").json()
    assert [r["text"] for r in v2["rules"]] == ["Be kind", "No spam"]
    assert v2["configuration"]["accounts"]["max_pinned_statuses"] == limits.PINS_MAX

    assert "removed" in ok(admin(srv, "rules-remove", "1"))
    assert [r["text"] for r in await asyncio.to_thread(m.instance_rules)] == ["No spam"]
    gone = admin(srv, "rules-remove", "1")
    assert gone.returncode != 0 and "1" in gone.stderr
    assert "#3" in ok(admin(srv, "rules-add", "Be kind again"))  # ids are never reused


async def test_extended_description_is_set_from_a_file_and_escaped(srv, rp):
    m = Mastodon(api_base_url=srv.base)
    before = await asyncio.to_thread(m.instance_extended_description)
    assert before["content"] == "" and before["updated_at"] is None
    ok(admin(srv, "describe", "-", stdin="Welcome!\n<script>alert(1)</script>"))
    after = await asyncio.to_thread(m.instance_extended_description)
    assert "Welcome!" in after["content"] and "<script>" not in after["content"]
    assert after["updated_at"] is not None


async def test_languages_are_iso_codes_with_names(srv, rp):
    langs = await asyncio.to_thread(Mastodon(api_base_url=srv.base).instance_languages)
    codes = [lang["code"] for lang in langs]
    assert "en" in codes and all(len(c) == 2 for c in codes) and len(set(codes)) == len(codes)


async def test_peers_are_the_known_servers_less_suspended_ones(srv, rp):
    for host, name in (("b.example", "x"), ("a.example", "y"), ("a.example", "z")):
        uri = f"https://{host}/users/{name}"
        document = {
            "id": uri,
            "type": "Person",
            "preferredUsername": name,
            "inbox": f"{uri}/inbox",
            "publicKey": {"id": f"{uri}#main-key", "publicKeyPem": PAIR.public_pem},
        }
        await remote.keep(rp.store, remote.parse_actor(document))
    m = Mastodon(api_base_url=srv.base)
    peers = await asyncio.to_thread(m.instance_peers)
    assert {"a.example", "b.example"} <= set(peers) and peers == sorted(peers)
    assert peers.count("a.example") == 1
    await domains.block(rp.store, "b.example", "suspend")
    assert "b.example" not in await asyncio.to_thread(m.instance_peers)
    await domains.unblock(rp.store, "b.example")
    assert "b.example" in await asyncio.to_thread(m.instance_peers)


async def test_no_translation_languages_without_a_translation_service(srv):
    reply = httpx.get(f"{srv.base}/api/v1/instance/translation_languages")
    assert reply.status_code == 200 and reply.json() == {}
