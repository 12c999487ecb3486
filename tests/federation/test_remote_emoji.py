"""Other servers' custom emoji kept here (redpoll.federation.emoji): a
signed loopback peer (a real HTTP server) sends a note using an emoji, its
actor's name another, to a real ``redpoll serve`` on the session's database
(one server, or the cluster with REDPOLL_TEST_CLUSTER=1); the jobs run in
this process (``rp.drain``), the API and the images are read over HTTP."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from support.federation import Peer
from support.media import png
from support.remote_media import media_dir, peer, receive, rp, serve, shown  # noqa: F401
from support.streams import StreamProc

from redpoll.federation import documents

pytestmark = [pytest.mark.timeout(240), pytest.mark.topology]


def emoji_tag(peer: Peer, code: str, path: str) -> dict:
    return {
        "id": f"{peer.base}/emojis/{code}",
        "type": "Emoji",
        "name": f":{code}:",
        "updated": "2026-12-01T00:00:00Z",
        "icon": {"type": "Image", "mediaType": "image/png", "url": peer.base + path},
    }


def emoji_note(peer: Peer, actor: str) -> tuple[str, dict]:
    """A note as Mastodon sends one with a custom emoji; its tags also name
    an emoji its text does not use and one whose icon is no http(s) URL."""
    note_id = f"{actor}/statuses/{uuid.uuid4().hex}"
    note = {
        "id": note_id,
        "type": "Note",
        "attributedTo": actor,
        "content": "<p>hello :blobcat: and :evil:</p>",
        "to": [documents.PUBLIC],
        "cc": [],
        "tag": [
            emoji_tag(peer, "blobcat", "/e/blobcat.png"),
            emoji_tag(peer, "unused", "/e/unused.png"),
            emoji_tag(peer, "evil", "/e/evil.png")
            | {"icon": {"type": "Image", "url": "javascript:alert(1)"}},
            {"type": "Hashtag", "name": "#cats", "href": f"{peer.base}/tags/cats"},
        ],
    }
    return note_id, {"id": f"{note_id}/activity", "type": "Create", "actor": actor, "object": note}


def with_emoji_name(peer: Peer, name: str) -> str:
    actor = peer.actor(name)
    peer.docs[f"/users/{name}"] |= {
        "name": "Eve :wave:",
        "tag": [emoji_tag(peer, "wave", "/e/wave.png")],
    }
    peer.files["/e/blobcat.png"] = (png((64, 64)), "image/png")
    peer.files["/e/unused.png"] = (png((64, 64)), "image/png")
    peer.files["/e/wave.png"] = (png((32, 32), (10, 200, 10, 255)), "image/png")
    return actor


def is_kept_image(serve: StreamProc, url: str) -> None:
    answer = httpx.get(url)
    assert answer.status_code == 302, (url, answer.status_code)
    assert answer.headers["location"].startswith(f"{serve.base}/system/media/")
    image = httpx.get(url, follow_redirects=True)
    assert image.status_code == 200 and image.headers["content-type"].startswith("image/")


async def test_a_remote_notes_and_actors_emoji_are_kept_and_served_here(rp, serve, peer):
    eve = with_emoji_name(peer, "eve")
    _, create = emoji_note(peer, eve)
    sid = await receive(rp, serve, peer, create)
    status = shown(serve, sid)
    # only what its text uses, with an http(s) icon; Mastodon's CustomEmoji
    assert [e["shortcode"] for e in status["emojis"]] == ["blobcat"]
    (blobcat,) = status["emojis"]
    assert blobcat["url"] == blobcat["static_url"]
    assert blobcat["url"].startswith(f"{serve.base}/media_proxy/emoji/")
    assert blobcat["visible_in_picker"] is False
    account = status["account"]
    assert [e["shortcode"] for e in account["emojis"]] == ["wave"]
    assert account["emojis"][0]["url"].startswith(f"{serve.base}/media_proxy/emoji/")
    assert account["emojis"][0]["visible_in_picker"] is False
    # fetched once each, by the job; the unused one and the bad one never
    assert peer.gets.count("/e/blobcat.png") == 1 and peer.gets.count("/e/wave.png") == 1
    assert "/e/unused.png" not in peer.gets and "/e/evil.png" not in peer.gets
    # served from here, also once its server is gone
    peer.close()
    is_kept_image(serve, blobcat["url"])
    is_kept_image(serve, account["emojis"][0]["url"])
    # the account's entity on its own says the same
    alone = httpx.get(f"{serve.base}/api/v1/accounts/{account['id']}").json()
    assert alone["emojis"] == account["emojis"]
    # an emoji never named here: 404
    missing = blobcat["url"].rsplit("/", 1)[0] + "/nosuch"
    assert httpx.get(missing).status_code == 404


async def test_an_emoji_dropped_from_the_cache_is_fetched_again_never_from_its_server(
    rp, serve, peer
):
    eve = with_emoji_name(peer, "eve")
    _, create = emoji_note(peer, eve)
    sid = await receive(rp, serve, peer, create)
    url = shown(serve, sid)["emojis"][0]["url"]
    is_kept_image(serve, url)
    assert await rp.media.cache_clear() >= 2  # the two emoji (and nothing else here)
    gone = httpx.get(url)
    assert gone.status_code == 404 and "location" not in gone.headers
    assert shown(serve, sid)["emojis"][0]["url"] == url
    await rp.drain()
    is_kept_image(serve, url)
    assert peer.gets.count("/e/blobcat.png") == 2


async def test_a_server_whose_media_are_rejected_gets_no_emoji(rp, serve, peer):
    await rp.federation.domain_block("127.0.0.1", "noop", reject_media=True)
    try:
        eve = with_emoji_name(peer, "eve")
        _, create = emoji_note(peer, eve)
        sid = await receive(rp, serve, peer, create)
        status = shown(serve, sid)
    finally:  # (the database outlives this module: the modules after it see no block)
        await rp.federation.domain_unblock("127.0.0.1")
    assert status["emojis"] == [] and status["account"]["emojis"] == []
    assert not [p for p in peer.gets if p.startswith("/e/")]
    assert await rp.media.cache_stats() == (0, 0)


async def test_an_edit_names_its_emoji_anew(rp, serve, peer):
    eve = with_emoji_name(peer, "eve")
    note_id, create = emoji_note(peer, eve)
    sid = await receive(rp, serve, peer, create)
    assert [e["shortcode"] for e in shown(serve, sid)["emojis"]] == ["blobcat"]
    edited = create["object"] | {
        "content": "<p>now :unused: only</p>",
        "updated": "2026-12-02T10:00:00Z",
    }
    update = {"id": f"{note_id}#update", "type": "Update", "actor": eve, "object": edited}
    assert await asyncio.to_thread(peer.post, f"{serve.base}/inbox", update) == 202
    await rp.drain()
    status = shown(serve, sid)
    assert "only" in status["content"]
    assert [e["shortcode"] for e in status["emojis"]] == ["unused"]
    is_kept_image(serve, status["emojis"][0]["url"])
    assert peer.gets.count("/e/unused.png") == 1


async def test_an_emoji_that_cannot_be_had_is_not_fetched_for_every_note(rp, serve, peer):
    """Its image answers 404: the first note's job asks once; the next notes
    naming it queue no fetch (at most one per limits.REMOTE_MEDIA_REQUEUE_S),
    and the status still names it (its URL here answers 404)."""
    eve = with_emoji_name(peer, "eve")
    del peer.files["/e/blobcat.png"]
    sids = []
    for _ in range(3):
        _, create = emoji_note(peer, eve)
        sids.append(await receive(rp, serve, peer, create))
    assert peer.gets.count("/e/blobcat.png") == 1
    url = shown(serve, sids[-1])["emojis"][0]["url"]
    assert httpx.get(url).status_code == 404
