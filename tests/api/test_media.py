"""Media attachments, avatars and headers, driven by real clients
(Mastodon.py 2.3.3; toot, a second independent client library; httpx
for what only the wire shows) against a real ``redpoll serve`` on the
session's database, in both topologies (records live in their owner's
slot, the sweep's index in one of its own)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import time
from pathlib import Path

import httpx
import pytest
from mastodon import MastodonAPIError, MastodonNotFoundError
from PIL import Image
from support.mastodon import LOOSE, Listener, accounts, wait_for  # noqa: F401
from support.media import bearer, jpeg, png, ready  # noqa: F401
from support.streams import StreamProc  # noqa: F401

from redpoll import Redpoll
from redpoll.core import limits
from redpoll.media import keys as media_keys
from redpoll.media.jobs import MediaSweepJob

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def media_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
def msrv(server, tmp_path_factory, media_dir):
    """``redpoll serve`` (no job worker: the tests drain with ``mrp``) keeping
    media files in ``media_dir``."""
    url, cluster, _ = server
    proc = StreamProc(
        url, cluster, tmp_path_factory.mktemp("mserve"), REDPOLL_MEDIA_DIR=str(media_dir), **LOOSE
    ).start()
    yield proc
    proc.stop()


@pytest.fixture
async def mrp(settings, media_dir):
    """The engine on the same database and media directory (its worker
    runs the jobs: file deletions, the sweep)."""
    engine = await Redpoll.open(settings.with_(media_dir=str(media_dir)))
    yield engine
    await engine.close()


def stored_files(media_dir: Path) -> set[str]:
    return {
        str(p.relative_to(media_dir))
        for p in media_dir.rglob("*")
        if p.is_file() and ".partial" not in p.parts
    }


def file_of(url: str, media_dir: Path) -> Path:
    return media_dir / url.split("/system/media/", 1)[1]


# --- the upload flows --------------------------------------------------------------------
async def test_v2_upload_processes_then_posts_with_its_attachment(msrv, mrp, media_dir):
    alice, bob = await asyncio.to_thread(accounts, msrv.base, 2)
    with httpx.Client(base_url=msrv.base, timeout=30) as http:
        r = http.post(
            "/api/v2/media",
            headers=bearer(alice),
            files={"file": ("a.jpg", jpeg(), "image/jpeg")},
            data={"description": "a red square", "focus": "0.5,-0.25"},
        )
        assert r.status_code == 202, r.text
        first = r.json()
        assert first["url"] is None and first["type"] == "image"
        assert first["description"] == "a red square"
        # 206 until ready, then 200 with every URL
        codes = set()
        for _ in range(600):
            got = http.get(f"/api/v1/media/{first['id']}", headers=bearer(alice))
            codes.add(got.status_code)
            if got.status_code == 200:
                break
            await asyncio.sleep(0.02)
        assert got.status_code == 200 and codes <= {200, 206}, codes
    media = got.json()
    assert media["url"].startswith(msrv.base + "/system/media/")
    assert media["preview_url"].startswith(msrv.base + "/system/media/")
    assert media["remote_url"] is None and media["blurhash"]
    assert media["meta"]["original"] == {
        "width": 640,
        "height": 480,
        "size": "640x480",
        "aspect": round(640 / 480, 6),
    }
    assert (
        max(media["meta"]["small"]["width"], media["meta"]["small"]["height"])
        == limits.MEDIA_SMALL_MAX_SIDE
    )
    assert media["meta"]["focus"] == {"x": 0.5, "y": -0.25}

    posted = await asyncio.to_thread(alice.status_post, "look", media_ids=[media["id"]])
    [att] = posted["media_attachments"]
    assert {k: att[k] for k in ("id", "type", "url", "preview_url", "description", "blurhash")} == {
        k: media[k] for k in ("id", "type", "url", "preview_url", "description", "blurhash")
    }
    seen = await asyncio.to_thread(bob.status, posted["id"])
    assert seen["media_attachments"][0]["url"] == media["url"]
    # an attached upload is no longer the media API's (as Mastodon)
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(alice.media, media["id"])
    # nor anyone else's, ever
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(bob.media, media["id"])


async def test_mastodon_py_synchronous_upload_update_and_v1(msrv, mrp, tmp_path):
    (alice,) = await asyncio.to_thread(accounts, msrv.base, 1)
    path = tmp_path / "pic.png"
    path.write_bytes(png())
    media = await asyncio.to_thread(alice.media_post, str(path), synchronous=True)
    assert media["url"].endswith(".png") and media["preview_url"].endswith(".png")
    changed = await asyncio.to_thread(
        alice.media_update, media["id"], description="blue", focus=(-1.0, 1.0)
    )
    assert changed["description"] == "blue" and changed["meta"]["focus"] == {"x": -1.0, "y": 1.0}
    assert changed["url"] == media["url"]
    # v1: synchronous, 200
    with httpx.Client(base_url=msrv.base, timeout=30) as http:
        r = http.post(
            "/api/v1/media",
            headers=bearer(alice),
            files={"file": ("x", jpeg((50, 40)), "application/octet-stream")},
        )
        assert r.status_code == 200, r.text
        assert r.json()["url"].endswith(".jpg") and r.json()["meta"]["original"]["width"] == 50
        # (the type is read from the bytes, not from what the client says)
    status = await asyncio.to_thread(alice.status_post, "", media_ids=[media["id"], r.json()["id"]])
    assert status["content"] == ""  # attachments only: no text
    assert [a["id"] for a in status["media_attachments"]] == [media["id"], r.json()["id"]]
    assert status["media_attachments"][0]["description"] == "blue"
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(alice.media_update, media["id"], description="too late")


async def test_gif_and_webp_stay_images(msrv, mrp):
    (alice,) = await asyncio.to_thread(accounts, msrv.base, 1)
    frames = [Image.new("RGB", (120, 80), (i * 60, 40, 200 - i * 40)) for i in range(4)]
    gif = io.BytesIO()
    frames[0].save(gif, "GIF", save_all=True, append_images=frames[1:], duration=90, loop=0)
    webp = io.BytesIO()
    Image.new("RGB", (90, 60), (1, 2, 3)).save(webp, "WEBP")
    with httpx.Client(base_url=msrv.base, timeout=30) as http:
        for data, ext in ((gif.getvalue(), "gif"), (webp.getvalue(), "webp")):
            r = http.post("/api/v1/media", headers=bearer(alice), files={"file": ("f", data)})
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["type"] == "image" and body["url"].endswith("." + ext)
            served = http.get(body["url"])
            assert served.headers["content-type"] == f"image/{ext}"
            if ext == "gif":
                assert Image.open(io.BytesIO(served.content)).n_frames == 4


# --- what is refused ---------------------------------------------------------------------
async def test_what_is_not_an_acceptable_image_is_refused_clearly(msrv, mrp, tmp_path):
    alice, bob = await asyncio.to_thread(accounts, msrv.base, 2)
    text = tmp_path / "notes.txt"
    text.write_text("not an image at all")
    with pytest.raises(MastodonAPIError) as err:
        await asyncio.to_thread(alice.media_post, str(text), mime_type="image/png")
    assert err.value.args[1] == 422
    assert "JPEG, PNG, WebP and GIF" in err.value.args[3] and "image/webp" in err.value.args[3]

    # a decompression bomb: a small PNG whose header says 10,000 x 10,000
    bomb = io.BytesIO()
    Image.new("1", (10_000, 10_000)).save(bomb, "PNG")
    assert len(bomb.getvalue()) < 100_000
    with pytest.raises(MastodonAPIError) as err:
        await asyncio.to_thread(alice.media_post, bomb.getvalue(), mime_type="image/png")
    assert err.value.args[1] == 422 and "too large" in err.value.args[3]
    assert "100,000,000 pixels" in err.value.args[3]

    # too many bytes: 413 before the body is read whole
    big = b"\xff\xd8\xff" + os.urandom(limits.MEDIA_IMAGE_MAX_BYTES + 10)
    with pytest.raises(MastodonAPIError) as err:
        await asyncio.to_thread(alice.media_post, big, mime_type="image/jpeg")
    assert err.value.args[1] == 413 and "16 MB" in err.value.args[3]

    # a truncated JPEG: the header reads, the pixels do not
    broken = jpeg((800, 600))[:3000]
    with httpx.Client(base_url=msrv.base, timeout=30) as http:
        r = http.post("/api/v1/media", headers=bearer(alice), files={"file": ("b.jpg", broken)})
        assert r.status_code == 422, r.text
        r = http.post("/api/v1/media", headers=bearer(alice), data={"description": "no file"})
        assert r.status_code == 422 and "file" in r.json()["error"]

    uploads = [
        await asyncio.to_thread(alice.media_post, jpeg((20 + i, 20)), "image/jpeg")
        for i in range(5)
    ]
    for u in uploads:
        await asyncio.to_thread(ready, alice, u)
    with pytest.raises(MastodonAPIError) as err:
        await asyncio.to_thread(alice.status_post, "five", media_ids=[u["id"] for u in uploads])
    assert err.value.args[1] == 422 and "at most 4" in err.value.args[3]
    # someone else's upload
    with pytest.raises(MastodonAPIError) as err:
        await asyncio.to_thread(bob.status_post, "theirs", media_ids=[uploads[0]["id"]])
    assert err.value.args[1] == 422 and "media_ids" in err.value.args[3]
    # one already attached to another status
    await asyncio.to_thread(alice.status_post, "first", media_ids=[uploads[0]["id"]])
    with pytest.raises(MastodonAPIError) as err:
        await asyncio.to_thread(alice.status_post, "again", media_ids=[uploads[0]["id"]])
    assert err.value.args[1] == 422
    assert (await asyncio.to_thread(alice.me))["statuses_count"] == 1
    # a focus out of range, an over-long description
    with pytest.raises(MastodonAPIError) as err:
        await asyncio.to_thread(alice.media_update, uploads[1]["id"], focus=(2.0, 0.0))
    assert err.value.args[1] == 422 and "focus" in err.value.args[3]
    with pytest.raises(MastodonAPIError) as err:
        await asyncio.to_thread(
            alice.media_update,
            uploads[1]["id"],
            description="d" * (limits.MEDIA_DESCRIPTION_MAX_CHARS + 1),
        )
    assert err.value.args[1] == 422 and "description" in err.value.args[3]


async def test_exif_orientation_is_applied_and_exif_gps_removed(msrv, mrp, media_dir):
    (alice,) = await asyncio.to_thread(accounts, msrv.base, 1)
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: the camera was turned; shown rotated 90° clockwise
    exif[0x010F] = "SecretCam"  # make
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 24.0), 3: "E", 4: (2.0, 21.0, 3.0)}  # GPS
    data = jpeg((400, 200), exif=exif.tobytes())
    with Image.open(io.BytesIO(data)) as original:  # what the test made carries it all
        assert original.getexif().get(0x0112) == 6 and original.getexif().get_ifd(0x8825)
    media = await asyncio.to_thread(alice.media_post, data, "image/jpeg")
    media = await asyncio.to_thread(ready, alice, media)
    assert media["meta"]["original"]["width"] == 200 and media["meta"]["original"]["height"] == 400
    for url in (media["url"], media["preview_url"]):
        raw = file_of(url, media_dir).read_bytes()
        assert b"SecretCam" not in raw and b"Exif" not in raw
        with Image.open(io.BytesIO(raw)) as stored:
            assert stored.width < stored.height  # turned upright
            assert dict(stored.getexif()) == {} and not stored.getexif().get_ifd(0x8825)
            assert "exif" not in stored.info and "xmp" not in stored.info


async def test_a_large_original_is_bounded(msrv, mrp, media_dir):
    (alice,) = await asyncio.to_thread(accounts, msrv.base, 1)
    media = await asyncio.to_thread(alice.media_post, jpeg((3000, 1500)), "image/jpeg")
    media = await asyncio.to_thread(ready, alice, media)
    assert media["meta"]["original"]["width"] == limits.MEDIA_ORIGINAL_MAX_SIDE
    with Image.open(file_of(media["url"], media_dir)) as stored:
        assert stored.size == (limits.MEDIA_ORIGINAL_MAX_SIDE, limits.MEDIA_ORIGINAL_MAX_SIDE // 2)


# --- files: served, removed ----------------------------------------------------------------
async def test_files_are_served_cached_and_unsniffable(msrv, mrp):
    (alice,) = await asyncio.to_thread(accounts, msrv.base, 1)
    media = await asyncio.to_thread(
        ready, alice, await asyncio.to_thread(alice.media_post, jpeg(), "image/jpeg")
    )
    with httpx.Client(timeout=30) as http:
        r = http.get(media["url"])
        assert r.status_code == 200 and r.content.startswith(b"\xff\xd8\xff")
        assert r.headers["content-type"] == "image/jpeg"
        assert r.headers["x-content-type-options"] == "nosniff"
        assert "max-age=31536000" in r.headers["cache-control"]
        assert "immutable" in r.headers["cache-control"]
        assert http.head(media["url"]).status_code == 200
        name = media["url"].rsplit("/", 1)[1]
        for bad in (
            "/system/media/00/00/" + "0" * 32 + ".jpg",
            "/system/media/../server.pass",
            "/system/media/ab/cd/..%2f..%2fserver.pass",
            "/system/media/" + name,
        ):
            assert http.get(msrv.base + bad).status_code == 404, bad


async def test_deleting_a_status_removes_its_records_and_files(msrv, mrp, media_dir):
    (alice,) = await asyncio.to_thread(accounts, msrv.base, 1)
    kept = await asyncio.to_thread(
        ready, alice, await asyncio.to_thread(alice.media_post, png(), "image/png")
    )
    shown = [
        await asyncio.to_thread(
            ready,
            alice,
            await asyncio.to_thread(alice.media_post, jpeg((30 + i, 30)), "image/jpeg"),
        )
        for i in range(2)
    ]
    status = await asyncio.to_thread(alice.status_post, "two", media_ids=[m["id"] for m in shown])
    await mrp.drain()
    paths = [file_of(m[k], media_dir) for m in shown for k in ("url", "preview_url")]
    assert all(p.is_file() for p in paths)
    await asyncio.to_thread(alice.status_delete, status["id"])
    await mrp.drain()
    assert not any(p.exists() for p in paths)
    uid = int((await asyncio.to_thread(alice.me))["id"])
    for m in shown:
        record = await mrp.store.hgetall(media_keys.record(uid, int(m["id"])))
        assert record.get(b"state") == b"gone"  # a tombstone, expiring
    # the other upload is untouched
    assert file_of(kept["url"], media_dir).is_file()
    assert (await asyncio.to_thread(alice.media, kept["id"]))["url"] == kept["url"]


async def test_an_edit_changes_the_attachments_and_history_keeps_the_old_ones(msrv, mrp, media_dir):
    alice, bob = await asyncio.to_thread(accounts, msrv.base, 2)
    up = [
        await asyncio.to_thread(
            ready,
            alice,
            await asyncio.to_thread(alice.media_post, jpeg((40 + i, 30)), "image/jpeg"),
        )
        for i in range(3)
    ]
    status = await asyncio.to_thread(
        alice.status_post, "pictures", media_ids=[up[0]["id"], up[1]["id"]]
    )
    # drop the first, keep the second, add the third, in a new order
    edited = await asyncio.to_thread(
        alice.status_update, status["id"], "pictures, changed", media_ids=[up[2]["id"], up[1]["id"]]
    )
    assert [m["id"] for m in edited["media_attachments"]] == [up[2]["id"], up[1]["id"]]
    await mrp.drain()
    shown = await asyncio.to_thread(bob.status, status["id"])
    assert [m["id"] for m in shown["media_attachments"]] == [up[2]["id"], up[1]["id"]]
    history = await asyncio.to_thread(alice.status_history, status["id"])
    assert [[m["id"] for m in v["media_attachments"]] for v in history] == [
        [up[0]["id"], up[1]["id"]],
        [up[2]["id"], up[1]["id"]],
    ]
    uid = int((await asyncio.to_thread(alice.me))["id"])
    record = await mrp.store.hgetall(media_keys.record(uid, int(up[2]["id"])))
    assert record.get(b"sid") == status["id"].encode()  # attached: out of the sweep's reach
    # another's upload, one attached elsewhere, or five: refused, nothing changed
    bobs = await asyncio.to_thread(
        ready, bob, await asyncio.to_thread(bob.media_post, png(), "image/png")
    )
    for ids in ([bobs["id"]], [up[1]["id"]] * 2):
        with pytest.raises(MastodonAPIError):
            await asyncio.to_thread(alice.status_update, status["id"], "nope", media_ids=ids)
    # deleting the status removes every file it ever had, the dropped one too
    paths = [file_of(m[k], media_dir) for m in up for k in ("url", "preview_url")]
    assert all(p.is_file() for p in paths)
    await asyncio.to_thread(alice.status_delete, status["id"])
    await mrp.drain()
    assert not any(p.exists() for p in paths)


async def test_the_sweep_job_removes_uploads_never_attached_after_a_day(msrv, mrp, media_dir):
    (alice,) = await asyncio.to_thread(accounts, msrv.base, 1)
    old = await asyncio.to_thread(
        ready, alice, await asyncio.to_thread(alice.media_post, jpeg(), "image/jpeg")
    )
    used = await asyncio.to_thread(
        ready, alice, await asyncio.to_thread(alice.media_post, png(), "image/png")
    )
    await asyncio.to_thread(alice.status_post, "kept", media_ids=[used["id"]])
    await mrp.drain()
    now = int(time.time() * 1000)
    # an hour on: nothing goes
    await mrp.queue.enqueue(MediaSweepJob(now=now + 3600_000))
    await mrp.drain()
    assert file_of(old["url"], media_dir).is_file()
    assert (await asyncio.to_thread(alice.media, old["id"]))["id"] == old["id"]
    # a day and a minute on: the unattached upload goes, the attached one stays
    await mrp.queue.enqueue(MediaSweepJob(now=now + (limits.MEDIA_UNATTACHED_TTL_S + 60) * 1000))
    await mrp.drain()
    assert not file_of(old["url"], media_dir).exists()
    assert not file_of(old["preview_url"], media_dir).exists()
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(alice.media, old["id"])
    assert file_of(used["url"], media_dir).is_file()
    assert await mrp.store.zcard(media_keys.PENDING) == 0


async def test_an_upload_cut_short_leaves_no_file_and_no_record(msrv, mrp, media_dir):
    (alice,) = await asyncio.to_thread(accounts, msrv.base, 1)
    before = stored_files(media_dir)
    seq = await mrp.store.get(media_keys.MEDIA_SEQ)
    data = jpeg((1200, 900))
    boundary = "cutshort"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n'
    ).encode()
    host, port = msrv.base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        body_len = len(head) + len(data) + len(f"\r\n--{boundary}--\r\n")
        sock.sendall(
            (
                f"POST /api/v2/media HTTP/1.1\r\nHost: {host}:{port}\r\n"
                f"Authorization: Bearer {alice.access_token}\r\n"
                f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                f"Content-Length: {body_len}\r\n\r\n"
            ).encode()
            + head
            + data[: len(data) // 2]
        )
        await asyncio.sleep(0.3)
    await asyncio.sleep(0.5)
    await mrp.drain()
    assert await mrp.store.get(media_keys.MEDIA_SEQ) == seq  # no upload was begun
    assert await mrp.store.zcard(media_keys.PENDING) == 0
    assert stored_files(media_dir) == before
    # and the server took the next one as usual
    media = await asyncio.to_thread(alice.media_post, data, "image/jpeg")
    assert (await asyncio.to_thread(ready, alice, media))["url"]


# --- avatars and headers ------------------------------------------------------------------
async def test_avatar_and_header_from_update_credentials(msrv, mrp, media_dir, tmp_path):
    alice, bob = await asyncio.to_thread(accounts, msrv.base, 2)
    avatar, header = tmp_path / "a.png", tmp_path / "h.jpg"
    avatar.write_bytes(png((800, 600)))
    header.write_bytes(jpeg((3000, 1000)))
    me = await asyncio.to_thread(
        alice.account_update_credentials,
        display_name="Pictured",
        avatar=str(avatar),
        header=str(header),
    )
    assert me["display_name"] == "Pictured"
    assert me["avatar"].startswith(msrv.base + "/system/media/") and me["avatar"].endswith(".png")
    assert me["avatar_static"] == me["avatar"]
    assert me["header"].endswith(".jpg") and me["header_static"] == me["header"]
    with (
        Image.open(file_of(me["avatar"], media_dir)) as a,
        Image.open(file_of(me["header"], media_dir)) as h,
    ):
        assert a.size == limits.AVATAR_SIZE and h.size == limits.HEADER_SIZE
    seen = await asyncio.to_thread(bob.account, me["id"])
    assert (seen["avatar"], seen["header"]) == (me["avatar"], me["header"])
    # statuses show the author's new avatar
    status = await asyncio.to_thread(alice.status_post, "with a face")
    assert status["account"]["avatar"] == me["avatar"]
    # an animated avatar gets a still
    frames = [Image.new("RGB", (64, 64), (i * 80, 0, 0)) for i in range(3)]
    gif = io.BytesIO()
    frames[0].save(gif, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    again = await asyncio.to_thread(
        alice.account_update_credentials, avatar=gif.getvalue(), avatar_mime_type="image/gif"
    )
    assert again["avatar"].endswith(".gif") and again["avatar_static"].endswith(".png")
    assert again["header"] == me["header"]
    await mrp.drain()  # the replaced avatar's file goes
    assert not file_of(me["avatar"], media_dir).exists()
    assert file_of(again["avatar_static"], media_dir).is_file()
    # a bad image is refused and changes nothing
    with pytest.raises(MastodonAPIError) as err:
        await asyncio.to_thread(
            alice.account_update_credentials,
            display_name="Changed",
            header=b"GIF89a" + b"\0" * 30,
            header_mime_type="image/gif",
        )
    assert err.value.args[1] == 422 and "header" in err.value.args[3]
    after = await asyncio.to_thread(alice.me)
    assert after["display_name"] == "Pictured" and after["header"] == me["header"]
    # the avatar removed: the default shown again, its files deleted by a job
    gone = await asyncio.to_thread(alice.account_delete_avatar)
    assert gone["avatar"].endswith("/avatars/original/missing.png")
    assert gone["header"] == me["header"]
    assert (await asyncio.to_thread(bob.account, me["id"]))["avatar"] == gone["avatar"]
    await mrp.drain()
    assert not file_of(again["avatar"], media_dir).exists()
    assert not file_of(again["avatar_static"], media_dir).exists()
    assert file_of(me["header"], media_dir).is_file()
    plain = await asyncio.to_thread(alice.account_delete_header)
    assert plain["header"].endswith("/headers/original/missing.png")
    again_gone = await asyncio.to_thread(alice.account_delete_avatar)  # nothing to remove: fine
    assert again_gone["avatar"] == gone["avatar"]
    await mrp.drain()
    assert not file_of(me["header"], media_dir).exists()


# --- streams, visibility, instance ----------------------------------------------------------
async def test_stream_events_carry_the_attachments(msrv, mrp):
    alice, bob = await asyncio.to_thread(accounts, msrv.base, 2)
    alice_id = (await asyncio.to_thread(alice.me))["id"]
    await asyncio.to_thread(bob.account_follow, alice_id)
    media = await asyncio.to_thread(
        ready,
        alice,
        await asyncio.to_thread(
            alice.media_post, jpeg(), "image/jpeg", description="for the stream"
        ),
    )
    listener = Listener()
    handle = await asyncio.to_thread(bob.stream_user, listener, run_async=True)
    v1_lines: list[dict] = []

    def read_v1() -> None:
        with httpx.stream(
            "POST",
            msrv.base + "/1.1/statuses/filter.json",
            data={"identifier": "media-test", "follow": str(alice_id)},
            timeout=30,
        ) as r:
            for line in r.iter_lines():
                if line.strip():
                    v1_lines.append(json.loads(line))
                    return

    reader = asyncio.create_task(asyncio.to_thread(read_v1))
    try:
        await msrv.wait_subscribers(2)
        posted = await asyncio.to_thread(alice.status_post, "streamed", media_ids=[media["id"]])
        await wait_for(lambda: listener.updates, "the update event")
        await asyncio.wait_for(reader, 30)
    finally:
        handle.close()
    [event] = listener.updates
    assert str(event["id"]) == str(posted["id"])
    [att] = event["media_attachments"]
    assert (att["url"], att["description"], att["blurhash"]) == (
        media["url"],
        "for the stream",
        media["blurhash"],
    )
    [tweet] = v1_lines
    assert tweet["id_str"] == str(posted["id"])
    [photo] = tweet["extended_entities"]["media"]
    assert tweet["entities"]["media"] == [photo]
    assert photo["type"] == "photo" and photo["media_url_https"] == media["url"]
    assert photo["ext_alt_text"] == "for the stream" and "media" not in tweet.get(
        "redpoll_extra", {}
    )


async def test_private_attachments_show_only_where_the_status_shows(msrv, mrp):
    alice, follower, stranger = await asyncio.to_thread(accounts, msrv.base, 3)
    alice_id = (await asyncio.to_thread(alice.me))["id"]
    await asyncio.to_thread(follower.account_follow, alice_id)
    media = await asyncio.to_thread(
        ready, alice, await asyncio.to_thread(alice.media_post, jpeg(), "image/jpeg")
    )
    with pytest.raises(MastodonNotFoundError):  # the media API is the owner's alone
        await asyncio.to_thread(stranger.media, media["id"])
    with httpx.Client(base_url=msrv.base, timeout=30) as http:
        r = http.put(
            f"/api/v1/media/{media['id']}",
            headers=bearer(stranger),
            data={"description": "mine now"},
        )
        assert r.status_code == 404
    private = await asyncio.to_thread(
        alice.status_post, "friends only", media_ids=[media["id"]], visibility="private"
    )
    assert (await asyncio.to_thread(follower.status, private["id"]))["media_attachments"]
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(stranger.status, private["id"])
    shown = await asyncio.to_thread(stranger.account_statuses, alice_id)
    assert shown == []
    with httpx.Client(base_url=msrv.base, timeout=30) as http:
        public = http.get("/api/v1/timelines/public", params={"limit": 40}).json()
        assert media["url"] not in json.dumps(public)
        assert http.get(f"/api/v1/statuses/{private['id']}").status_code == 404
    # the profile's media tab (only_media) shows it to whoever may see it
    assert [
        s["id"]
        for s in await asyncio.to_thread(follower.account_statuses, alice_id, only_media=True)
    ] == [private["id"]]
    assert await asyncio.to_thread(stranger.account_statuses, alice_id, only_media=True) == []


async def test_only_media_on_the_public_and_hashtag_timelines_pages_full(msrv, mrp):
    """``only_media`` answers the statuses with attachments, a page full even
    where most statuses have none, local, remote or both, paging on by
    max_id and by the Link header without repeating or skipping one."""
    from redpoll.media import entity as media_entity
    from redpoll.posting import idempotency, posting

    (alice,) = await asyncio.to_thread(accounts, msrv.base, 1)
    uid = int((await asyncio.to_thread(alice.me))["id"])
    local_media, remote_media, plain = [], [], []
    for i in range(120):
        if i % 5 == 0:  # one in five has an attachment
            upload = await mrp.media.upload(uid, jpeg((16, 16)))
            local_media.append(
                (await mrp.statuses.post(uid, f"pic {i} #pics", media=[upload.id])).id
            )
        else:
            plain.append((await mrp.statuses.post(uid, f"words {i} #pics")).id)
        if i % 20 in (7, 13):  # another server's, with an attachment or not
            with_media = i % 20 == 7
            att = (
                media_entity.remote_items(
                    [
                        {
                            "type": "Image",
                            "mediaType": "image/jpeg",
                            "url": f"https://elsewhere.example/{i}.jpg",
                        }
                    ],
                    4,
                )
                if with_media
                else ""
            )
            status = await idempotency.post_once(
                mrp.store,
                mrp.queue,
                mrp.settings,
                uid,
                f"note-{i}",
                f"far {i} #pics",
                {"uri": f"https://elsewhere.example/notes/{i}"},
                remote=posting.Remote(500, frozenset(), att),
            )
            (remote_media if with_media else plain).append(status.id)
    newest = lambda ids: sorted(ids, reverse=True)  # noqa: E731
    every = newest(local_media + remote_media)
    assert len(every) == 30 and len(plain) == 102

    def ids(page):
        assert all(s["media_attachments"] for s in page)
        return [int(s["id"]) for s in page]

    def pages_of(read):
        """The first page, the one after it by max_id, the one its Link gives."""
        first = read()
        by_max_id = read(max_id=first[-1]["id"])
        by_link = alice.fetch_next(first)
        return ids(first), ids(by_max_id), ids(by_link)

    def public(**kw):
        return alice.timeline_public(only_media=True, **kw)

    def tag(**kw):
        return alice.timeline_hashtag("pics", only_media=True, **kw)

    for read in (public, tag):
        first, second, linked = await asyncio.to_thread(pages_of, read)
        assert first == every[:20] and second == linked == every[20:]
        first, second, linked = await asyncio.to_thread(
            pages_of, lambda **kw: read(local=True, **kw)
        )
        assert first == newest(local_media)[:20] and second == linked == newest(local_media)[20:]
        assert ids(await asyncio.to_thread(read, remote=True)) == newest(remote_media)
        above = await asyncio.to_thread(read, min_id=every[10])
        assert ids(above) and set(ids(above)) <= set(every[:10])
    # without only_media the statuses without attachments are there too
    shown = await asyncio.to_thread(alice.timeline_public, limit=40)
    assert {int(s["id"]) for s in shown} & set(plain)
    # a scan that ends short of a full page pages on from the last status it read
    with httpx.Client(base_url=msrv.base, timeout=30) as http:
        seen, url = [], "/api/v1/timelines/public?only_media=true&remote=true&limit=2"
        for _ in range(40):
            r = http.get(url)
            assert r.status_code == 200, r.text
            page = r.json()
            assert len(page) <= 2
            seen += ids(page)
            if "next" not in r.links or (not page and len(seen) == len(remote_media)):
                break
            url = r.links["next"]["url"]
        assert seen == newest(remote_media)


async def test_instance_says_what_uploads_it_takes(msrv):
    with httpx.Client(base_url=msrv.base, timeout=30) as http:
        for path in ("/api/v1/instance", "/api/v2/instance"):
            config = http.get(path).json()["configuration"]
            assert config["statuses"]["max_media_attachments"] == 4
            media = config["media_attachments"]
            assert media["supported_mime_types"] == [
                "image/jpeg",
                "image/png",
                "image/webp",
                "image/gif",
            ]
            assert media["image_size_limit"] == limits.MEDIA_IMAGE_MAX_BYTES
            assert media["image_matrix_limit"] == limits.MEDIA_IMAGE_MATRIX_MAX
            assert media["video_size_limit"] == 0


# --- a second client library: toot ----------------------------------------------------------
async def test_toot_uploads_posts_and_sets_an_avatar(msrv, mrp, tmp_path):
    from toot import App, User
    from toot import api as toot_api

    base = msrv.base
    made = await asyncio.to_thread(toot_api.create_app, base)
    app = App(base, base, made["client_id"], made["client_secret"])
    name = "toot" + os.urandom(4).hex()
    registered = await asyncio.to_thread(
        toot_api.register_account, app, name, f"{name}@example.com", "correct horse battery"
    )
    user = User(base, name, registered["access_token"])
    image = tmp_path / "t.jpg"
    image.write_bytes(jpeg((500, 300)))
    with open(image, "rb") as f:
        uploaded = (
            await asyncio.to_thread(toot_api.upload_media, app, user, f, description="from toot")
        ).json()
    deadline = time.monotonic() + 30
    while not uploaded["url"]:  # as toot's own CLI waits
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
        uploaded = await asyncio.to_thread(toot_api.get_media, app, user, uploaded["id"])
    status = (
        await asyncio.to_thread(
            toot_api.post_status, app, user, "tooted", media_ids=[uploaded["id"]]
        )
    ).json()
    assert status["media_attachments"][0]["description"] == "from toot"
    assert status["media_attachments"][0]["url"] == uploaded["url"]
    # its JSON body, with an Idempotency-Key: the same post again is the same status
    with open(image, "rb") as f:
        account = (await asyncio.to_thread(toot_api.update_account, app, user, avatar=f)).json()
    assert account["avatar"].startswith(base + "/system/media/")
    assert httpx.get(account["avatar"]).headers["content-type"] == "image/jpeg"
