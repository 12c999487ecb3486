"""Other servers' media kept here (redpoll.media.remote): a signed loopback
peer (a real HTTP server) sends a note with an image to a real ``redpoll
serve`` on the session's database (one server, or the cluster with
REDPOLL_TEST_CLUSTER=1); the jobs run in this process (``rp.drain``), the
API and the files are read over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from support.federation import Peer
from support.media import jpeg, png
from support.remote_media import media_dir, peer, receive, rp, serve, shown  # noqa: F401

from redpoll import Redpoll
from redpoll.core import limits
from redpoll.core.models import now_ms
from redpoll.engine import check
from redpoll.federation import documents, inbox, remote
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import InboxJob
from redpoll.media import remote as kept
from redpoll.media.storage import open_storage

pytestmark = [pytest.mark.timeout(240), pytest.mark.topology]


def image_note(peer: Peer, actor: str, paths: list[str], kinds=None) -> tuple[str, dict]:
    note_id = f"{actor}/statuses/{uuid.uuid4().hex}"
    note = {
        "id": note_id,
        "type": "Note",
        "attributedTo": actor,
        "content": "<p>look</p>",
        "to": [documents.PUBLIC],
        "cc": [],
        "attachment": [
            {
                "type": "Document",
                "mediaType": "image/jpeg",
                "url": peer.base + path,
                "name": f"picture {path}",
            }
            for path in paths
        ],
    }
    return note_id, {"id": f"{note_id}/activity", "type": "Create", "actor": actor, "object": note}


def fetched(peer: Peer, path: str) -> int:
    return peer.gets.count(path)


async def test_a_remote_image_is_kept_and_served_here_and_outlives_its_server(
    rp, serve, peer, media_dir
):
    eve = peer.actor("eve")
    peer.docs["/users/eve"]["icon"] = {"type": "Image", "url": f"{peer.base}/a/eve.png"}
    peer.docs["/users/eve"]["image"] = {"type": "Image", "url": f"{peer.base}/a/eve-header.png"}
    peer.files["/a/eve.png"] = (png((600, 600)), "image/png")
    peer.files["/a/eve-header.png"] = (png((1800, 600)), "image/png")
    peer.files["/m/cat.jpg"] = (jpeg((1200, 900)), "image/jpeg")
    _, create = image_note(peer, eve, ["/m/cat.jpg"])
    sid = await receive(rp, serve, peer, create)

    status = shown(serve, sid)
    [media] = status["media_attachments"]
    assert media["remote_url"] == f"{peer.base}/m/cat.jpg"
    assert media["url"].startswith(f"{serve.base}/system/media/")
    assert media["preview_url"].startswith(f"{serve.base}/system/media/")
    assert media["preview_url"] != media["url"]
    # made here: its sizes (the original bounded, the preview), its blurhash
    assert media["meta"]["original"]["width"] == 1200
    assert media["meta"]["small"]["width"] == 400
    assert media["blurhash"] and media["type"] == "image"
    assert media["description"] == "picture /m/cat.jpg"
    account = status["account"]
    for field in ("avatar", "avatar_static", "header", "header_static"):
        assert account[field].startswith(f"{serve.base}/system/media/"), (field, account)
    assert fetched(peer, "/m/cat.jpg") == 1 and fetched(peer, "/a/eve.png") == 1

    # redpoll check --repair takes the kept files as named (even once old)
    for path in media_dir.rglob("*.*"):
        os.utime(path, (time.time() - 7200, time.time() - 7200))
    found = await check.check(rp.store, rp.queue, rp.media_storage, repair=True)
    assert [f for f in found.findings if f.invariant.startswith("media")] == []

    peer.close()  # its server is down: everything is still served from here
    for url in (media["url"], media["preview_url"], account["avatar"], account["header"]):
        answer = httpx.get(url)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("image/")
    assert shown(serve, sid)["media_attachments"][0]["url"] == media["url"]
    count, size = await rp.media.cache_stats()
    assert count == 3 and size > 0  # the attachment, the avatar, the header

    # the status deleted by its server: its kept copy goes with it
    delete = {
        "id": f"{create['object']['id']}#delete",
        "type": "Delete",
        "actor": eve,
        "object": {"id": create["object"]["id"], "type": "Tombstone"},
    }
    assert await asyncio.to_thread(peer.post, f"{serve.base}/inbox", delete) == 202
    await rp.drain()
    assert httpx.get(media["url"]).status_code == 404
    assert (await rp.media.cache_stats())[0] == 2


async def test_a_domain_whose_media_are_rejected_is_not_fetched_from(rp, serve, peer):
    await rp.federation.domain_block("127.0.0.1", "noop", reject_media=True)
    try:
        eve = peer.actor("eve")
        peer.docs["/users/eve"]["icon"] = {"type": "Image", "url": f"{peer.base}/a/eve.png"}
        peer.files["/a/eve.png"] = (png((100, 100)), "image/png")
        peer.files["/m/cat.jpg"] = (jpeg(), "image/jpeg")
        _, create = image_note(peer, eve, ["/m/cat.jpg"])
        sid = await receive(rp, serve, peer, create)

        [media] = shown(serve, sid)["media_attachments"]
        # as Mastodon shows a file it has not got: unknown, no preview, its origin named
        assert media["type"] == "unknown"
        assert media["remote_url"] == f"{peer.base}/m/cat.jpg"
        assert media["preview_url"] is None and media["blurhash"] is None
        assert media["url"].startswith(f"{serve.base}/media_proxy/")
        # the proxy does not send anyone there either
        assert httpx.get(media["url"]).status_code == 404
        account = shown(serve, sid)["account"]
        assert account["avatar"] == f"{serve.base}/avatars/original/missing.png"
        await rp.drain()
        assert fetched(peer, "/m/cat.jpg") == 0 and fetched(peer, "/a/eve.png") == 0
        assert await rp.media.cache_stats() == (0, 0)
    finally:  # (the database outlives this module: the modules after it see no block)
        await rp.federation.domain_unblock("127.0.0.1")


async def test_the_cache_holds_its_bounds_and_fetches_dropped_copies_again(
    rp, serve, peer, media_dir
):
    eve = peer.actor("eve")
    for name in ("one", "two"):
        peer.files[f"/m/{name}.jpg"] = (jpeg((800, 600), (30, 200, 30)), "image/jpeg")
    _, first = image_note(peer, eve, ["/m/one.jpg"])
    one = await receive(rp, serve, peer, first)
    size = (await rp.media.cache_stats())[1]
    assert size > 0
    # room for one copy: the next one fetched drops the oldest
    rp.settings = rp.settings.with_(remote_media_max_bytes=size + size // 2)
    before = shown(serve, one)["media_attachments"][0]
    assert before["url"].startswith(f"{serve.base}/system/media/")

    _, second = image_note(peer, eve, ["/m/two.jpg"])
    two = await receive(rp, serve, peer, second)
    assert (await rp.media.cache_stats())[0] == 1
    assert shown(serve, two)["media_attachments"][0]["url"].startswith(
        f"{serve.base}/system/media/"
    )
    dropped = shown(serve, one)["media_attachments"][0]
    assert dropped["url"].startswith(f"{serve.base}/media_proxy/")
    assert dropped["preview_url"].startswith(f"{serve.base}/media_proxy/")
    assert dropped["remote_url"] == f"{peer.base}/m/one.jpg"
    assert httpx.get(before["url"]).status_code == 404  # its files deleted

    # asked for again: the client is sent to its server meanwhile, a job is queued
    answer = httpx.get(dropped["url"])
    assert answer.status_code == 302 and answer.headers["location"] == f"{peer.base}/m/one.jpg"
    assert httpx.get(dropped["url"]).status_code == 302  # (asked twice: queued once)
    assert await rp.queue.depth() == 1
    await rp.drain()
    again = shown(serve, one)["media_attachments"][0]
    assert again["url"].startswith(f"{serve.base}/system/media/")
    assert httpx.get(again["url"]).status_code == 200
    assert fetched(peer, "/m/one.jpg") == 2
    # ... and the oldest (now the second's) was dropped for it
    assert (await rp.media.cache_stats())[0] == 1
    assert shown(serve, two)["media_attachments"][0]["url"].startswith(f"{serve.base}/media_proxy/")
    # a kept copy's proxy URL sends the client to the copy
    answer = httpx.get(dropped["url"])
    assert answer.status_code == 302 and answer.headers["location"] == again["url"]

    # the age bound: nothing is old yet; a week and a day later everything is
    storage = open_storage(rp.settings)
    bounds = kept.Bounds(max_age_s=7 * 86_400, max_bytes=10**12)
    assert await kept.evict(rp.store, storage, bounds) == 0
    assert await kept.evict(rp.store, storage, bounds, now=now_ms() + 8 * 86_400_000) == 1
    assert await rp.media.cache_stats() == (0, 0)
    assert shown(serve, one)["media_attachments"][0]["url"].startswith(f"{serve.base}/media_proxy/")
    assert not [p for p in media_dir.rglob("*.jpg")]


async def test_media_cache_clear_from_the_command_line(rp, serve, peer, settings, media_dir):
    eve = peer.actor("eve")
    peer.files["/m/one.jpg"] = (jpeg(), "image/jpeg")
    _, create = image_note(peer, eve, ["/m/one.jpg"])
    sid = await receive(rp, serve, peer, create)
    assert (await rp.media.cache_stats())[0] == 1
    env = {
        **os.environ,
        "REDIS_URL": settings.redis_url,
        "REDPOLL_CLUSTER": "1" if settings.cluster else "0",
        "REDPOLL_MEDIA_DIR": str(media_dir),
    }
    cli = [str(Path(sys.executable).with_name("redpoll")), "admin", "media-cache"]

    def run(*args):
        return subprocess.run(
            cli + list(args), env=env, capture_output=True, text=True, check=True
        ).stdout

    assert "dropped 0 kept copies; 1 kept" in run("clear", "--older-than", "1")
    assert "1 kept copies" in run("stats")
    assert "dropped 1 kept copies; 0 kept (0 bytes)" in run("clear")
    media = shown(serve, sid)["media_attachments"][0]
    assert media["url"].startswith(f"{serve.base}/media_proxy/")
    assert not [p for p in media_dir.rglob("*.jpg")]


async def test_a_private_address_is_refused(settings, serve, peer, media_dir):
    """With the loopback switch off (as in production), an attachment at a
    loopback or private address is never fetched: the note is kept, its
    images' job runs and fetches nothing."""
    rp = await Redpoll.open(
        settings.with_(public_url=serve.base, federation_loopback=False, media_dir=str(media_dir))
    )
    try:
        eve = peer.actor("eve")
        who = await remote.keep(rp.store, remote.parse_actor(peer.docs["/users/eve"]))
        await rp.store.hset(fed_keys.actor(who.id), "fetched", now_ms() + 10**9)
        peer.files["/m/one.jpg"] = (jpeg(), "image/jpeg")
        note_id, create = image_note(peer, eve, ["/m/one.jpg"])
        create["object"]["attachment"].append(
            {"type": "Image", "mediaType": "image/png", "url": "https://10.0.0.1/m/two.png"}
        )
        await inbox.process(
            rp.store, rp.queue, rp.settings, InboxJob(uid=who.id, activity=json.dumps(create))
        )
        assert await rp.queue.depth() == 1  # its images' job
        await rp.drain()
        sid = int(await rp.store.get(fed_keys.note(note_id)))
        assert fetched(peer, "/m/one.jpg") == 0
        assert await rp.media.cache_stats() == (0, 0)
        media = shown(serve, sid)["media_attachments"]
        assert [m["url"].startswith(f"{serve.base}/media_proxy/") for m in media] == [True, True]
        # refused, each: a plain-http URL, then a private address
        storage = open_storage(rp.settings)
        failed = await kept.keep_attachments(rp.store, storage, sid, loopback=False)
        assert failed == [f"{peer.base}/m/one.jpg", "https://10.0.0.1/m/two.png"]
        assert fetched(peer, "/m/one.jpg") == 0
    finally:
        await rp.close()


async def test_what_is_not_an_image_or_too_large_is_not_kept(rp, serve, peer, monkeypatch):
    """The fetch guard's Content-Type check and size bound: a page served
    for an image, and an image over the bound, are given up (no retry),
    nothing stored; a damaged image too (it is processed as an upload)."""
    eve = peer.actor("eve")
    who = await remote.keep(rp.store, remote.parse_actor(peer.docs["/users/eve"]))
    await rp.store.hset(fed_keys.actor(who.id), "fetched", now_ms() + 10**9)
    peer.files["/m/page.jpg"] = (b"<html>not an image</html>", "text/html")
    peer.files["/m/big.jpg"] = (jpeg((1600, 1200)), "image/jpeg")
    peer.files["/m/cut.jpg"] = (jpeg((640, 480))[:600], "image/jpeg")
    peer.files["/m/fine.jpg"] = (jpeg((64, 48)), "image/jpeg")
    paths = ["/m/page.jpg", "/m/big.jpg", "/m/cut.jpg", "/m/fine.jpg"]
    note_id, create = image_note(peer, eve, paths)
    await inbox.process(
        rp.store, rp.queue, rp.settings, InboxJob(uid=who.id, activity=json.dumps(create))
    )
    sid = int(await rp.store.get(fed_keys.note(note_id)))
    monkeypatch.setattr(
        limits, "REMOTE_MEDIA_FETCH_MAX_BYTES", len(peer.files["/m/big.jpg"][0]) - 1
    )
    failed = await kept.keep_attachments(rp.store, open_storage(rp.settings), sid, loopback=True)
    assert failed == [peer.base + p for p in paths[:3]]
    assert all(fetched(peer, p) == 1 for p in paths)
    urls = [m["url"] for m in shown(serve, sid)["media_attachments"]]
    assert [u.startswith(f"{serve.base}/media_proxy/") for u in urls] == [True] * 3 + [False]
    assert (await rp.media.cache_stats())[0] == 1


async def test_a_dropped_avatar_is_shown_through_the_proxy_and_fetched_again(rp, serve, peer):
    eve = peer.actor("eve")
    peer.docs["/users/eve"]["icon"] = {"type": "Image", "url": f"{peer.base}/a/eve.png"}
    peer.files["/a/eve.png"] = (png((120, 120)), "image/png")
    _, create = image_note(peer, eve, [])
    sid = await receive(rp, serve, peer, create)
    account = shown(serve, sid)["account"]
    assert account["avatar"].startswith(f"{serve.base}/system/media/")
    assert account["header"] == f"{serve.base}/headers/original/missing.png"  # it has none

    assert await rp.media.cache_clear() == 1
    proxy = f"{serve.base}/media_proxy/accounts/{account['id']}/avatar"
    dropped = shown(serve, sid)["account"]
    assert dropped["avatar"] == dropped["avatar_static"] == proxy
    assert httpx.get(account["avatar"]).status_code == 404
    answer = httpx.get(proxy)
    assert answer.status_code == 302 and answer.headers["location"] == f"{peer.base}/a/eve.png"
    assert httpx.get(f"{serve.base}/media_proxy/accounts/{account['id']}/header").status_code == 404
    await rp.drain()
    again = shown(serve, sid)["account"]["avatar"]
    assert again.startswith(f"{serve.base}/system/media/") and again != account["avatar"]
    assert httpx.get(again).status_code == 200
    assert fetched(peer, "/a/eve.png") == 2
    answer = httpx.get(proxy)
    assert answer.status_code == 302 and answer.headers["location"] == again

    # its server names another avatar (an Update of the actor): that one is fetched
    peer.files["/a/eve2.png"] = (png((90, 90), (200, 10, 10, 255)), "image/png")
    actor = {**peer.docs["/users/eve"], "icon": {"type": "Image", "url": f"{peer.base}/a/eve2.png"}}
    update = {
        "id": f"{eve}#update-{uuid.uuid4().hex}",
        "type": "Update",
        "actor": eve,
        "object": actor,
    }
    assert await asyncio.to_thread(peer.post, f"{serve.base}/inbox", update) == 202
    await rp.drain()
    newer = shown(serve, sid)["account"]["avatar"]
    assert newer.startswith(f"{serve.base}/system/media/") and newer != again
    assert httpx.get(again).status_code == 404  # the copy of the old one went
    assert fetched(peer, "/a/eve2.png") == 1
    assert (await rp.media.cache_stats())[0] == 1


MP4 = b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41" + b"\x00" * 4000
MP3 = b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" * 1000


def av_note(peer: Peer, actor: str, items: list[tuple[str, str, str | None]]) -> dict:
    """A Create of a note with videos and sounds: (media type, path, its
    preview's path or None)."""
    _, create = image_note(peer, actor, [])
    create["object"]["attachment"] = [
        {
            "type": "Document",
            "mediaType": media_type,
            "url": f"{peer.base}{path}",
            "width": 640,
            "height": 360,
        }
        | ({"icon": {"type": "Image", "url": f"{peer.base}{preview}"}} if preview else {})
        for media_type, path, preview in items
    ]
    return create


async def test_a_remote_video_and_sound_are_kept_here_and_outlive_their_server(rp, serve, peer):
    eve = peer.actor("eve")
    peer.files["/m/clip.jpg"] = (jpeg((640, 360)), "image/jpeg")
    peer.files["/m/clip.mp4"] = (MP4, "video/mp4")
    peer.files["/m/song.mp3"] = (MP3, "audio/mpeg")
    create = av_note(
        peer,
        eve,
        [("video/mp4", "/m/clip.mp4", "/m/clip.jpg"), ("audio/mpeg", "/m/song.mp3", None)],
    )
    sid = await receive(rp, serve, peer, create)
    video, sound = shown(serve, sid)["media_attachments"]
    assert video["type"] == "video" and sound["type"] == "audio"
    assert video["remote_url"] == f"{peer.base}/m/clip.mp4"
    assert video["url"].startswith(f"{serve.base}/system/media/") and video["url"].endswith(".mp4")
    assert video["preview_url"].startswith(f"{serve.base}/system/media/")
    assert video["preview_remote_url"] == f"{peer.base}/m/clip.jpg"
    assert video["meta"]["original"]["width"] == 640 and video["blurhash"]
    assert sound["url"].startswith(f"{serve.base}/system/media/") and sound["url"].endswith(".mp3")
    assert sound["remote_url"] == f"{peer.base}/m/song.mp3"
    assert fetched(peer, "/m/clip.mp4") == 1 and fetched(peer, "/m/song.mp3") == 1
    count, size = await rp.media.cache_stats()
    assert count == 2 and size >= len(MP4) + len(MP3)  # (each weighs what its files do)
    peer.close()  # its server gone: they are still shown from here
    for url, kind in ((video["url"], "video/mp4"), (sound["url"], "audio/mpeg")):
        answer = httpx.get(url)
        assert answer.status_code == 200 and answer.headers["content-type"] == kind
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert httpx.get(video["url"]).content == MP4


async def test_a_remote_video_not_kept_is_shown_through_the_proxy_and_fetched_again(
    rp, serve, peer
):
    eve = peer.actor("eve")
    peer.files["/m/clip.jpg"] = (jpeg((640, 360)), "image/jpeg")
    peer.files["/m/clip.mp4"] = (MP4, "video/mp4")
    sid = await receive(
        rp, serve, peer, av_note(peer, eve, [("video/mp4", "/m/clip.mp4", "/m/clip.jpg")])
    )
    [video] = shown(serve, sid)["media_attachments"]
    kept_url = video["url"]
    assert kept_url.startswith(f"{serve.base}/system/media/")
    # dropped: the video and its preview through the proxy, which sends to the
    # origin meanwhile (as an image's) and queues the fetch
    assert await rp.media.cache_clear() == 1
    [video] = shown(serve, sid)["media_attachments"]
    assert video["url"].startswith(f"{serve.base}/media_proxy/{sid}/")
    assert httpx.get(kept_url).status_code == 404
    answer = httpx.get(video["url"])
    assert answer.status_code == 302 and answer.headers["location"] == f"{peer.base}/m/clip.mp4"
    await rp.drain()
    [video] = shown(serve, sid)["media_attachments"]
    assert video["url"].startswith(f"{serve.base}/system/media/") and video["url"].endswith(".mp4")
    assert httpx.get(video["url"]).status_code == 200
    assert fetched(peer, "/m/clip.mp4") == 2


@pytest.mark.parametrize("what", ["too large", "not a video", "missing"])
async def test_a_remote_video_that_cannot_be_kept_stays_on_its_server_its_preview_kept(
    rp, serve, peer, what
):
    eve = peer.actor("eve")
    peer.files["/m/clip.jpg"] = (jpeg((640, 360)), "image/jpeg")
    if what == "too large":
        peer.files["/m/clip.mp4"] = (MP4 + b"\x00" * limits.REMOTE_MEDIA_AV_MAX_BYTES, "video/mp4")
    elif what == "not a video":  # (what its server says it is counts for nothing)
        peer.files["/m/clip.mp4"] = (b"<html><script>alert(1)</script></html>", "video/mp4")
    sid = await receive(
        rp, serve, peer, av_note(peer, eve, [("video/mp4", "/m/clip.mp4", "/m/clip.jpg")])
    )
    [video] = shown(serve, sid)["media_attachments"]
    assert video["type"] == "video"
    assert video["url"] == video["remote_url"] == f"{peer.base}/m/clip.mp4"
    assert video["preview_url"].startswith(f"{serve.base}/system/media/")
    assert httpx.get(video["preview_url"]).headers["content-type"] == "image/jpeg"
    assert fetched(peer, "/m/clip.jpg") == 1
    count, size = await rp.media.cache_stats()
    assert count == 1 and size < 1024 * 1024  # the preview only
