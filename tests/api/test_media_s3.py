"""Media kept in an S3-compatible bucket (redpoll.media.storage.S3Storage),
against a real S3 server: s3rver (tests/s3rver, installed by ./test.sh with
npm), keeping its objects in a temporary directory. A real ``redpoll
serve`` configured with REDPOLL_S3_* takes uploads and avatars from
Mastodon.py; the files are fetched back from the bucket's public address;
status deletions and the sweep (jobs, run here by the engine's worker)
remove the objects; a bucket that refuses the write gives the client a
clear error and keeps nothing.

s3rver knows only the key pair these tests give it (tests/s3rver/serve.js):
a request with another key id is refused by s3rver, one signed with a wrong
secret by the SigV4 check the wrapper adds (s3rver alone checks only the key
id of the SigV4 requests boto3 sends)."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import socket
import subprocess
import time
import zipfile
from pathlib import Path

import boto3
import httpx
import pytest
from botocore.config import Config
from mastodon import MastodonAPIError, MastodonNotFoundError
from PIL import Image
from support.federation import Peer
from support.mastodon import LOOSE, accounts  # noqa: F401
from support.media import bearer, jpeg, png, ready  # noqa: F401
from support.streams import StreamProc  # noqa: F401

from redpoll import Redpoll
from redpoll.core import keys as base_keys
from redpoll.core import limits
from redpoll.core.errors import ConfigError, MediaStorageError
from redpoll.core.settings import Settings
from redpoll.federation import documents
from redpoll.federation import keys as fed_keys
from redpoll.media import keys as media_keys
from redpoll.media.jobs import MediaSweepJob
from redpoll.media.storage import NAME, S3Storage, open_storage
from redpoll.storage.server import die_with_parent

pytestmark = pytest.mark.timeout(240)

S3RVER = Path(__file__).resolve().parent.parent / "s3rver"
BUCKET = "redpoll-media"
KEY, SECRET = "redpoll-test-key", "redpoll-test-secret"
CACHE = f"public, max-age={limits.MEDIA_CACHE_MAX_AGE_S}, immutable"


class S3rver:
    """s3rver as our child on a free loopback port (it picks one and says
    which); it dies with this process (PR_SET_PDEATHSIG, and its stdin
    closing)."""

    def __init__(self, directory: Path):
        node = shutil.which("node")
        if node is None or not (S3RVER / "node_modules" / "s3rver").is_dir():
            pytest.fail(
                "s3rver is not installed: ./test.sh installs it "
                "(npm ci --prefix tests/s3rver; needs node and npm)"
            )
        directory.mkdir(parents=True, exist_ok=True)
        self.log = open(directory.parent / "s3rver.log", "wb")
        self.process = subprocess.Popen(
            [node, str(S3RVER / "serve.js"), str(directory), KEY, SECRET],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            preexec_fn=die_with_parent,
        )
        line = self.process.stdout.readline()
        if not line:
            self.stop()
            pytest.fail(
                "s3rver did not start: " + (directory.parent / "s3rver.log").read_text()[-2000:]
            )
        self.endpoint = f"http://127.0.0.1:{json.loads(line)['port']}"
        self.public = f"{self.endpoint}/{BUCKET}"
        self.client = boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=KEY,
            aws_secret_access_key=SECRET,
            region_name="us-east-1",
            config=Config(s3={"addressing_style": "path"}),
        )

    def keys(self) -> set[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET)
        return {o["Key"] for page in pages for o in page.get("Contents", [])}

    def env(self, **changes: str) -> dict[str, str]:
        env = {
            "REDPOLL_S3_BUCKET": BUCKET,
            "REDPOLL_S3_ENDPOINT": self.endpoint,
            "REDPOLL_S3_ACCESS_KEY": KEY,
            "REDPOLL_S3_SECRET_KEY": SECRET,
            "REDPOLL_S3_PUBLIC_URL": self.public,
        }
        env.update(changes)
        return env

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    server = S3rver(tmp_path_factory.mktemp("s3") / "data")
    server.client.create_bucket(Bucket=BUCKET)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def local_dir(tmp_path_factory) -> Path:
    """The local media directory the serve would use: stays empty."""
    return tmp_path_factory.mktemp("local-media")


@pytest.fixture(scope="module")
def ssrv(server, tmp_path_factory, s3, local_dir):
    """``redpoll serve`` (no job worker: the tests drain with ``srp``)
    keeping media in the bucket."""
    url, cluster, _ = server
    proc = StreamProc(
        url,
        cluster,
        tmp_path_factory.mktemp("s3serve"),
        REDPOLL_MEDIA_DIR=str(local_dir),
        **s3.env(),
        **LOOSE,
    ).start()
    yield proc
    proc.stop()


def s3_settings(settings: Settings, s3: S3rver, **env: str) -> Settings:
    return Settings.from_env(
        {
            "REDIS_URL": settings.redis_url,
            "REDPOLL_CLUSTER": "1" if settings.cluster else "0",
            "REDPOLL_JOB_CLAIM_MS": str(settings.job_claim_ms),
            **s3.env(**env),
        }
    )


@pytest.fixture
async def srp(settings, s3):
    """The engine on the same database and bucket (its worker runs the
    jobs: object deletions, the sweep)."""
    engine = await Redpoll.open(s3_settings(settings, s3))
    yield engine
    await engine.close()


def name_of(url: str, s3: S3rver) -> str:
    assert url.startswith(s3.public + "/"), url
    name = url[len(s3.public) + 1 :]
    assert NAME.fullmatch(name), name
    return name


def fetch(url: str) -> httpx.Response:
    """What a client fetching the URL gets (anonymously, as a browser)."""
    r = httpx.get(url, timeout=10)
    assert r.status_code == 200, (url, r.status_code, r.text[:300])
    return r


# --- configuration -------------------------------------------------------------------------
def test_the_bucket_chooses_the_backend_and_its_settings_are_checked():
    env = {
        "REDPOLL_S3_BUCKET": "media",
        "REDPOLL_S3_PUBLIC_URL": "https://cdn.example/m/",
        "REDPOLL_S3_ENDPOINT": "http://127.0.0.1:9000",
        "REDPOLL_S3_ACCESS_KEY": "k",
        "REDPOLL_S3_SECRET_KEY": "s3cr3t-value",
    }
    settings = Settings.from_env(env)
    storage = open_storage(settings)
    assert isinstance(storage, S3Storage) and open_storage(settings) is storage
    assert (
        storage.url("ab/cd/" + "0" * 32 + ".png")
        == "https://cdn.example/m/ab/cd/" + "0" * 32 + ".png"
    )
    assert settings.s3_region == "us-east-1"
    assert "s3cr3t-value" not in repr(settings)  # (settings may be logged)
    assert not isinstance(open_storage(Settings.from_env({})), S3Storage)
    for changes, says in [
        ({"REDPOLL_S3_BUCKET": ""}, "REDPOLL_S3_BUCKET is not"),
        ({"REDPOLL_S3_PUBLIC_URL": ""}, "REDPOLL_S3_PUBLIC_URL must be set"),
        ({"REDPOLL_S3_PUBLIC_URL": "cdn.example"}, "REDPOLL_S3_PUBLIC_URL="),
        ({"REDPOLL_S3_ENDPOINT": "ftp://x"}, "REDPOLL_S3_ENDPOINT="),
        ({"REDPOLL_S3_BUCKET": "No_Such Bucket"}, "not a bucket name"),
        ({"REDPOLL_S3_SECRET_KEY": ""}, "go together"),
        ({"REDPOLL_S3_REGION": "US East"}, "REDPOLL_S3_REGION="),
    ]:
        with pytest.raises(ConfigError, match=says):
            Settings.from_env({**env, **changes})


async def test_a_name_that_is_not_a_stored_name_is_refused(settings, s3):
    storage = open_storage(s3_settings(settings, s3))
    before = await asyncio.to_thread(s3.keys)
    for bad in ("../x.jpg", "ab/cd/" + "0" * 32 + ".exe", "x"):
        with pytest.raises(ValueError):
            await storage.put(bad, b"data")
        await storage.delete(bad)  # nothing of ours: nothing done
    assert await asyncio.to_thread(s3.keys) == before
    assert await storage.tidy(0) == 0  # (a PutObject leaves nothing partial)


async def test_a_bucket_that_cannot_be_reached_fails_clearly_and_says_no_address(settings, s3):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    storage = open_storage(s3_settings(settings, s3, REDPOLL_S3_ENDPOINT=endpoint))
    name = "ab/cd/" + "1" * 32 + ".jpg"
    for call in (storage.put(name, b"data"), storage.delete(name)):
        with pytest.raises(MediaStorageError, match="EndpointConnectionError") as err:
            await call
        assert str(port) not in err.value.message  # (the log has the address, not the client)


# --- uploads ---------------------------------------------------------------------------------
async def test_uploads_land_in_the_bucket_and_are_fetched_from_its_public_address(
    ssrv, srp, s3, local_dir
):
    (alice,) = await asyncio.to_thread(accounts, ssrv.base, 1)
    before = await asyncio.to_thread(s3.keys)
    # Mastodon.py (POST /api/v2/media, then polling until ready)
    media = await asyncio.to_thread(
        ready,
        alice,
        await asyncio.to_thread(
            alice.media_post, jpeg((2400, 1200)), "image/jpeg", description="wide"
        ),
    )
    original, preview = name_of(media["url"], s3), name_of(media["preview_url"], s3)
    got = await asyncio.to_thread(fetch, media["url"])
    assert got.headers["content-type"] == "image/jpeg"
    assert got.headers["cache-control"] == CACHE
    with Image.open(io.BytesIO(got.content)) as img:  # the processed file, not the upload
        assert img.format == "JPEG" and img.size == (limits.MEDIA_ORIGINAL_MAX_SIDE, 960)
    small = await asyncio.to_thread(fetch, media["preview_url"])
    with Image.open(io.BytesIO(small.content)) as img:
        assert max(img.size) == limits.MEDIA_SMALL_MAX_SIDE
    # v1 (processed before the answer), a PNG
    with httpx.Client(base_url=ssrv.base, timeout=30) as http:
        r = http.post(
            "/api/v1/media", headers=bearer(alice), files={"file": ("p.png", png(), "image/png")}
        )
    assert r.status_code == 200, r.text
    v1 = r.json()
    assert (await asyncio.to_thread(fetch, v1["url"])).headers["content-type"] == "image/png"
    assert await asyncio.to_thread(s3.keys) - before == {
        original,
        preview,
        name_of(v1["url"], s3),
        name_of(v1["preview_url"], s3),
    }
    # posted: the status shows the bucket's URLs
    status = await asyncio.to_thread(alice.status_post, "wide", media_ids=[media["id"]])
    assert status["media_attachments"][0]["url"] == media["url"]
    # nothing is kept or served locally
    assert not any(p.is_file() for p in local_dir.rglob("*"))
    assert httpx.get(f"{ssrv.base}/system/media/{original}").status_code == 404


async def test_avatar_and_header_land_in_the_bucket(ssrv, srp, s3, tmp_path):
    (alice,) = await asyncio.to_thread(accounts, ssrv.base, 1)
    avatar = tmp_path / "a.png"
    avatar.write_bytes(png((800, 600)))
    me = await asyncio.to_thread(
        alice.account_update_credentials,
        display_name="Pictured",
        avatar=str(avatar),
        header=jpeg((3000, 1000)),
        header_mime_type="image/jpeg",
    )
    got = await asyncio.to_thread(fetch, me["avatar"])
    assert got.headers["content-type"] == "image/png"
    with Image.open(io.BytesIO(got.content)) as img:
        assert img.size == limits.AVATAR_SIZE
    header = await asyncio.to_thread(fetch, me["header"])
    assert header.headers["content-type"] == "image/jpeg"
    with Image.open(io.BytesIO(header.content)) as img:
        assert img.size == limits.HEADER_SIZE
    first = name_of(me["avatar"], s3)
    # a new avatar: the old one's object goes (a job)
    again = await asyncio.to_thread(
        alice.account_update_credentials, avatar=jpeg((500, 500)), avatar_mime_type="image/jpeg"
    )
    await srp.drain()
    keys = await asyncio.to_thread(s3.keys)
    assert first not in keys and name_of(again["avatar"], s3) in keys
    assert name_of(again["header"], s3) in keys


async def test_an_archive_holds_the_media_read_from_the_bucket(ssrv, settings, s3, tmp_path):
    """A member's archive (redpoll.portability.archive) made by the worker
    reads the attachments, avatar and header from the bucket: the same bytes
    as a client fetches, at the paths its JSON names."""
    (alice,) = await asyncio.to_thread(accounts, ssrv.base, 1)
    me = await asyncio.to_thread(
        alice.account_update_credentials,
        avatar=png((300, 300)),
        avatar_mime_type="image/png",
        header=jpeg((1500, 500)),
        header_mime_type="image/jpeg",
    )
    with httpx.Client(base_url=ssrv.base, timeout=30) as http:
        r = http.post(
            "/api/v1/media", headers=bearer(alice), files={"file": ("p.png", png(), "image/png")}
        )
        assert r.status_code == 200, r.text
        media = r.json()
        await asyncio.to_thread(alice.status_post, "in the bucket", media_ids=[media["id"]])
        asked = http.post("/api/v1/redpoll/archives", headers=bearer(alice))
        assert asked.status_code == 202, asked.text
    engine = await Redpoll.open(s3_settings(settings, s3).with_(data_dir=str(tmp_path)))
    try:
        missing = "00/00/" + "0" * 32 + ".jpg"
        assert await engine.media_storage.read(missing) is None  # (GetObject of no key)
        await engine.drain()
        found, path = await engine.archives.ready_file(int(me["id"]), int(asked.json()["id"]))
    finally:
        await engine.close()
    zf = zipfile.ZipFile(path)
    (item,) = json.loads(zf.read("outbox.json"))["orderedItems"]
    (attachment,) = item["object"]["attachment"]
    assert attachment["url"] == "media_attachments/files/" + name_of(media["url"], s3)
    assert zf.read(attachment["url"]) == (await asyncio.to_thread(fetch, media["url"])).content
    assert zf.read("avatar.png") == (await asyncio.to_thread(fetch, me["avatar"])).content
    assert zf.read("header.jpg") == (await asyncio.to_thread(fetch, me["header"])).content
    assert json.loads(zf.read("actor.json"))["icon"]["url"] == "avatar.png"


# --- removal ---------------------------------------------------------------------------------
async def test_deleting_a_status_removes_its_objects(ssrv, srp, s3):
    (alice,) = await asyncio.to_thread(accounts, ssrv.base, 1)
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
    await srp.drain()
    names = {name_of(m[k], s3) for m in shown for k in ("url", "preview_url")}
    assert names <= await asyncio.to_thread(s3.keys)
    await asyncio.to_thread(alice.status_delete, status["id"])
    await srp.drain()
    keys = await asyncio.to_thread(s3.keys)
    assert not names & keys
    assert {name_of(kept["url"], s3), name_of(kept["preview_url"], s3)} <= keys
    r = httpx.get(shown[0]["url"], timeout=10)
    assert r.status_code == 404


async def test_the_sweep_removes_uploads_never_attached_from_the_bucket(ssrv, srp, s3):
    (alice,) = await asyncio.to_thread(accounts, ssrv.base, 1)
    old = await asyncio.to_thread(
        ready, alice, await asyncio.to_thread(alice.media_post, jpeg(), "image/jpeg")
    )
    used = await asyncio.to_thread(
        ready, alice, await asyncio.to_thread(alice.media_post, png(), "image/png")
    )
    await asyncio.to_thread(alice.status_post, "kept", media_ids=[used["id"]])
    await srp.drain()
    gone = {name_of(old["url"], s3), name_of(old["preview_url"], s3)}
    assert gone <= await asyncio.to_thread(s3.keys)
    now = int(time.time() * 1000)
    await srp.queue.enqueue(MediaSweepJob(now=now + (limits.MEDIA_UNATTACHED_TTL_S + 60) * 1000))
    await srp.drain()
    keys = await asyncio.to_thread(s3.keys)
    assert not gone & keys and name_of(used["url"], s3) in keys
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(alice.media, old["id"])
    assert await srp.store.zcard(media_keys.PENDING) == 0


# --- a bucket that refuses the write ---------------------------------------------------------
@pytest.mark.parametrize(
    "fault, code",
    [
        ({"REDPOLL_S3_BUCKET": "no-such-bucket"}, "NoSuchBucket"),
        ({"REDPOLL_S3_ACCESS_KEY": "not-a-known-key"}, "InvalidAccessKeyId"),
        ({"REDPOLL_S3_SECRET_KEY": "not-the-secret"}, "SignatureDoesNotMatch"),
    ],
)
async def test_a_refused_write_gives_a_clear_error_and_keeps_nothing(
    server, settings, tmp_path, s3, fault, code
):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path, **s3.env(**fault), **LOOSE).start()
    engine = await Redpoll.open(settings)  # (the database only: its counters, its jobs)
    try:
        (alice,) = await asyncio.to_thread(accounts, proc.base, 1)
        uid = int((await asyncio.to_thread(alice.me))["id"])
        before = await asyncio.to_thread(s3.keys)
        with httpx.Client(base_url=proc.base, timeout=30) as http:
            # v1: the answer says what failed
            r = http.post(
                "/api/v1/media",
                headers=bearer(alice),
                files={"file": ("a.jpg", jpeg(), "image/jpeg")},
            )
            assert r.status_code == 503, r.text
            assert code in r.json()["error"] and "could not store" in r.json()["error"]
            v1 = int(await engine.store.get(media_keys.MEDIA_SEQ))
            # v2: 202, then the upload reads as failed, saying why
            r = http.post(
                "/api/v2/media",
                headers=bearer(alice),
                files={"file": ("b.png", png(), "image/png")},
            )
            assert r.status_code == 202, r.text
            v2 = r.json()["id"]
            deadline = time.monotonic() + 30
            while (
                got := http.get(f"/api/v1/media/{v2}", headers=bearer(alice))
            ).status_code == 206:
                assert time.monotonic() < deadline, "the upload never ended"
                await asyncio.sleep(0.05)
            assert got.status_code == 422 and code in got.json()["error"], got.text
            # neither can be attached
            r = http.post(
                "/api/v1/statuses",
                headers=bearer(alice),
                json={"status": "x", "media_ids": [str(v1), v2]},
            )
            assert r.status_code == 422, r.text
        # no record: tombstones (which expire); no pending entry, no held journal
        for mid in (v1, int(v2)):
            record = await engine.store.hgetall(media_keys.record(uid, mid))
            assert record[b"state"] == b"gone" and code.encode() in record[b"err"]
        assert await engine.store.zcard(media_keys.PENDING) == 0
        held = [await engine.store.xlen(k) for k in base_keys.all_held_job_streams()]
        assert sum(held) == 0  # each journal released (the files' deletion queued)
        # an avatar: refused, the profile as it was (its fields too)
        with pytest.raises(MastodonAPIError) as err:
            await asyncio.to_thread(
                alice.account_update_credentials,
                display_name="Changed",
                avatar=png((200, 200)),
                avatar_mime_type="image/png",
            )
        assert err.value.args[1] == 503 and code in err.value.args[3]
        me = await asyncio.to_thread(alice.me)
        assert (
            me["display_name"] != "Changed"
            and "/system/media/" not in me["avatar"]
            and s3.public not in me["avatar"]
        )
        assert await asyncio.to_thread(s3.keys) == before  # nothing reached the bucket
    finally:
        await engine.close()
        proc.stop()


# --- other servers' media kept in the bucket (redpoll.media.remote) -----------------------------
async def test_another_server_s_image_is_kept_in_the_bucket(settings, s3, tmp_path):
    """A remote note's image, fetched from a loopback peer by its job, is
    stored in the bucket and the API names it there; dropped from the
    cache, its objects go."""
    proc = StreamProc(
        settings.redis_url,
        settings.cluster,
        tmp_path,
        REDPOLL_FEDERATION_LOOPBACK="1",
        **s3.env(),
        **LOOSE,
    )
    proc.env["REDPOLL_PUBLIC_URL"] = proc.base
    proc.start()
    engine = await Redpoll.open(
        s3_settings(settings, s3).with_(public_url=proc.base, federation_loopback=True)
    )
    peer = Peer()
    try:
        before = await asyncio.to_thread(s3.keys)
        eve = peer.actor("eve")
        peer.files["/m/cat.jpg"] = (jpeg((800, 600)), "image/jpeg")
        note_id = f"{eve}/statuses/1"
        create = {
            "id": f"{note_id}/activity",
            "type": "Create",
            "actor": eve,
            "object": {
                "id": note_id,
                "type": "Note",
                "attributedTo": eve,
                "content": "<p>a cat</p>",
                "to": [documents.PUBLIC],
                "attachment": [
                    {"type": "Document", "mediaType": "image/jpeg", "url": f"{peer.base}/m/cat.jpg"}
                ],
            },
        }
        assert await asyncio.to_thread(peer.post, f"{proc.base}/inbox", create) == 202
        await engine.drain()
        sid = int(await engine.store.get(fed_keys.note(note_id)))
        [media] = httpx.get(f"{proc.base}/api/v1/statuses/{sid}").json()["media_attachments"]
        assert media["remote_url"] == f"{peer.base}/m/cat.jpg"
        names = {name_of(media["url"], s3), name_of(media["preview_url"], s3)}
        assert fetch(media["url"]).headers["content-type"] == "image/jpeg"
        assert await asyncio.to_thread(s3.keys) == before | names
        assert await engine.media.cache_clear() == 1
        assert await asyncio.to_thread(s3.keys) == before
    finally:
        peer.close()
        await engine.close()
        proc.stop()
