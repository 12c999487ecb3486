"""A member's archive of their posts and media (Mastodon's "Request your
archive") through a real ``redpoll serve``: statuses with media posted with
Mastodon.py, the ZIP's documents matched with what the server publishes,
its media files where its JSON names them, the owner alone downloading it,
one per interval, and a job cut short at every await finished whole; on
one server and on the cluster."""

from __future__ import annotations

import asyncio
import io
import json
import zipfile
from pathlib import Path

import httpx
import pytest
from support.cutshort import drive
from support.mastodon import LOOSE, accounts
from support.media import jpeg, png
from support.streams import StreamProc

from redpoll import Redpoll
from redpoll.bus.queue import JobQueue
from redpoll.core import keys, limits
from redpoll.core.models import now_ms
from redpoll.engine.worker import archive_renderer
from redpoll.federation import documents
from redpoll.media.storage import open_storage
from redpoll.portability import archive
from redpoll.portability.jobs import ArchiveExpireJob, ArchiveJob

pytestmark = [pytest.mark.topology, pytest.mark.timeout(300)]

ACTIVITY = {"Accept": "application/activity+json"}


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> tuple[Path, Path]:
    """(the data folder, the media folder) the server and the engine share."""
    return tmp_path_factory.mktemp("data"), tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
def asrv(server, tmp_path_factory, dirs):
    """``redpoll serve`` with federation on (its own URL public), keeping
    archives and media in ``dirs``; no job worker (the tests drain)."""
    url, cluster, _ = server
    proc = StreamProc(
        url,
        cluster,
        tmp_path_factory.mktemp("aserve"),
        REDPOLL_DATA_DIR=str(dirs[0]),
        REDPOLL_MEDIA_DIR=str(dirs[1]),
        **LOOSE,
    )
    proc.env["REDPOLL_PUBLIC_URL"] = proc.base
    yield proc.start()
    proc.stop()


@pytest.fixture
async def arp(settings, asrv, dirs):
    engine = await Redpoll.open(
        settings.with_(data_dir=str(dirs[0]), media_dir=str(dirs[1]), public_url=asrv.base)
    )
    yield engine
    await engine.close()


def data_dir(dirs) -> str:
    return str(dirs[0])


def auth(m) -> dict:
    return {"Authorization": f"Bearer {m.access_token}"}


def ask(base: str, m) -> httpx.Response:
    return httpx.post(f"{base}/api/v1/redpoll/archives", headers=auth(m), timeout=30)


def listed(base: str, m) -> list[dict]:
    r = httpx.get(f"{base}/api/v1/redpoll/archives", headers=auth(m), timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def without_context(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "@context"}


async def post_everything(arp, base: str, tmp_path: Path):
    """One member with an avatar, a header and statuses of every visibility
    (two of them with images), a favourite and a bookmark; (member, other,
    the statuses posted, the media entities)."""
    me, other = await asyncio.to_thread(accounts, base, 2)
    avatar, header = tmp_path / "a.png", tmp_path / "h.jpg"
    avatar.write_bytes(png((400, 400)))
    header.write_bytes(jpeg((1500, 500)))
    await asyncio.to_thread(me.account_update_credentials, avatar=str(avatar), header=str(header))
    uploads = [
        await asyncio.to_thread(
            me.media_post, jpeg((320 + 40 * i, 240)), mime_type="image/jpeg", description=f"pic {i}"
        )
        for i in range(3)
    ]
    await arp.drain()
    uploads = [await asyncio.to_thread(me.media, u["id"]) for u in uploads]
    assert all(u["url"] for u in uploads)
    them = (await asyncio.to_thread(other.me))["acct"]

    def act() -> dict[str, dict]:
        posted = {
            "public": me.status_post("in the open", media_ids=[uploads[0]["id"]]),
            "unlisted": me.status_post("quietly", visibility="unlisted"),
            "private": me.status_post(
                "friends only", visibility="private", media_ids=[u["id"] for u in uploads[1:]]
            ),
            "direct": me.status_post(f"@{them} just you", visibility="direct"),
        }
        theirs = other.status_post("worth a like")
        me.status_favourite(theirs["id"])
        me.status_bookmark(theirs["id"])
        me.status_reblog(theirs["id"])  # (a boost: not in the outbox)
        posted["theirs"] = theirs
        return posted

    posted = await asyncio.to_thread(act)
    await arp.drain()
    return me, other, posted, uploads


def opened(body: bytes) -> zipfile.ZipFile:
    zf = zipfile.ZipFile(io.BytesIO(body))
    assert zf.testzip() is None
    return zf


async def test_the_archive_holds_what_the_server_publishes_and_the_media(asrv, arp, dirs, tmp_path):
    base = asrv.base
    me, other, posted, uploads = await post_everything(arp, base, tmp_path)
    r = await asyncio.to_thread(ask, base, me)
    assert r.status_code == 202, r.text
    made = r.json()
    assert made["state"] == "processing" and made["url"] is None
    assert [a["id"] for a in await asyncio.to_thread(listed, base, me)] == [made["id"]]
    await arp.drain()
    (ready,) = await asyncio.to_thread(listed, base, me)
    assert ready["state"] == "ready" and ready["size"] > 0
    assert ready["url"] == f"{base}/api/v1/redpoll/archives/{made['id']}/file"

    got = httpx.get(ready["url"], headers=auth(me), timeout=30)
    assert got.status_code == 200
    assert got.headers["content-type"] == "application/zip"
    assert got.headers["content-disposition"].startswith("attachment; filename=")
    assert "archive-" in got.headers["content-disposition"]
    assert len(got.content) == ready["size"]
    zf = opened(got.content)
    names = set(zf.namelist())
    assert {"actor.json", "outbox.json", "likes.json", "bookmarks.json"} <= names

    login = (await asyncio.to_thread(me.me))["username"]
    # the actor: the one the server publishes, with Mastodon's archive's links
    published = httpx.get(f"{base}/users/{login}", headers=ACTIVITY, timeout=30).json()
    actor = json.loads(zf.read("actor.json"))
    assert actor["icon"]["url"] == "avatar.png" and actor["image"]["url"] == "header.jpg"
    assert (actor["outbox"], actor["likes"], actor["bookmarks"]) == (
        "outbox.json",
        "likes.json",
        "bookmarks.json",
    )
    for field in ("icon", "image", "outbox"):
        actor.pop(field)
        published.pop(field)
    actor.pop("likes")
    actor.pop("bookmarks")
    assert actor == published
    me_now = await asyncio.to_thread(me.me)
    for shown, url in (("avatar.png", me_now["avatar"]), ("header.jpg", me_now["header"])):
        assert zf.read(shown) == httpx.get(url, timeout=30).content

    # the outbox: a Create of each of one's own statuses, every visibility, no boost
    outbox = json.loads(zf.read("outbox.json"))
    assert outbox["type"] == "OrderedCollection" and outbox["id"] == "outbox.json"
    items = outbox["orderedItems"]
    assert outbox["totalItems"] == len(items) == 4
    assert all(i["type"] == "Create" and "@context" not in i for i in items)
    media_paths = [a["url"] for i in items for a in i["object"]["attachment"]]
    by_sid = {i["object"]["id"].rsplit("/", 1)[1]: i["object"] for i in items}
    notes = {v: by_sid[posted[v]["id"]] for v in ("public", "unlisted", "private", "direct")}
    for visibility in ("public", "unlisted"):
        note = notes[visibility]
        doc = httpx.get(note["id"], headers=ACTIVITY, timeout=30).json()
        doc = without_context(doc)
        doc.pop("replies")
        shown_urls = [a["url"] for a in doc["attachment"]]
        for a in doc["attachment"]:
            a.pop("url")
        archived = [a.pop("url") for a in note["attachment"]]
        assert note == doc, visibility
        # the same files: the archive's path names the stored file the URL does
        assert [p.rsplit("/", 1)[1] for p in archived] == [u.rsplit("/", 1)[1] for u in shown_urls]
    # private and direct: as the federation addresses them, never published
    followers = f"{documents.actor_id(base, login)}/followers"
    assert notes["private"]["to"] == [followers]
    assert documents.PUBLIC not in notes["private"]["to"] + notes["private"]["cc"]
    other_actor = documents.actor_id(base, (await asyncio.to_thread(other.me))["username"])
    assert notes["direct"]["to"] == [other_actor] and notes["direct"]["cc"] == []
    for visibility in ("private", "direct"):
        assert httpx.get(notes[visibility]["id"], headers=ACTIVITY, timeout=30).status_code == 404

    # the media: every attachment at the path its note names, the same bytes
    assert len(media_paths) == 3
    assert all(p.startswith("media_attachments/files/") for p in media_paths)
    served = {u["url"].split("/system/media/", 1)[1]: u["url"] for u in uploads}
    for path in media_paths:
        name = path.removeprefix("media_attachments/files/")
        assert path in names
        assert zf.read(path) == httpx.get(served[name], timeout=30).content

    # likes and bookmarks: the ids of the statuses, as Mastodon's
    theirs_uri = httpx.get(
        f"{base}/api/v1/statuses/{posted['theirs']['id']}", headers=auth(me), timeout=30
    ).json()["uri"]
    for kind in ("likes", "bookmarks"):
        doc = json.loads(zf.read(f"{kind}.json"))
        assert doc["type"] == "OrderedCollection" and doc["id"] == f"{kind}.json"
        assert doc["orderedItems"] == [theirs_uri] and doc["totalItems"] == 1

    # another member cannot download it, nor see it
    assert httpx.get(ready["url"], headers=auth(other), timeout=30).status_code == 404
    assert httpx.get(ready["url"], timeout=30).status_code == 401
    assert await asyncio.to_thread(listed, base, other) == []
    one = f"{base}/api/v1/redpoll/archives/{made['id']}"
    assert httpx.get(one, headers=auth(other), timeout=30).status_code == 404
    assert httpx.get(one, headers=auth(me), timeout=30).json() == ready

    # a second request within the interval: 429, saying when
    again = await asyncio.to_thread(ask, base, me)
    assert again.status_code == 429, again.text
    assert 0 < int(again.headers["Retry-After"]) <= limits.ARCHIVE_INTERVAL_S
    assert "7 days" in again.json()["error"]
    assert len(await asyncio.to_thread(listed, base, me)) == 1

    # past its time it is removed: its file and its record
    uid = int(me_now["id"])
    found = await arp.archives.get(uid, int(made["id"]))
    path = archive.path_of(str(dirs[0]), found)
    assert path.is_file()
    # its removal is queued for its time
    expiry = ArchiveExpireJob(uid=uid, aid=found.id, file=found.file)
    assert await arp.queue.due_at(expiry) == found.expires_at
    assert (
        await archive.expire(arp.store, str(dirs[0]), uid, found.id, found.file) == found.expires_at
    )
    assert path.is_file()  # not due yet
    later = found.expires_at + 1
    assert (
        await archive.expire(arp.store, str(dirs[0]), uid, found.id, found.file, now=later) is None
    )
    assert not path.exists() and not path.parent.joinpath(f"{found.id}.parts").exists()
    assert await asyncio.to_thread(listed, base, me) == []
    assert httpx.get(ready["url"], headers=auth(me), timeout=30).status_code == 404


async def test_requests_racing_make_one_archive(asrv, arp):
    (me,) = await asyncio.to_thread(accounts, asrv.base, 1)
    answers = await asyncio.gather(*[asyncio.to_thread(ask, asrv.base, me) for _ in range(6)])
    codes = sorted(a.status_code for a in answers)
    assert codes == [202] + [429] * 5, codes
    await arp.drain()
    assert [a["state"] for a in await asyncio.to_thread(listed, asrv.base, me)] == ["ready"]


async def test_a_job_cut_short_at_any_await_gives_one_whole_archive(asrv, arp, dirs, monkeypatch):
    # small steps (in this process, where the job runs): pages of 2 statuses, 1 id
    monkeypatch.setattr(limits, "ARCHIVE_STATUS_STEP", 2)
    monkeypatch.setattr(limits, "ARCHIVE_ID_STEP", 1)
    me, other = await asyncio.to_thread(accounts, asrv.base, 2)
    kinds = ("public", "unlisted", "private", "direct", "public")

    def post() -> None:
        for i, visibility in enumerate(kinds):
            me.status_post(f"note {i}", visibility=visibility)
        for i in range(3):
            theirs = other.status_post(f"theirs {i}")
            me.status_favourite(theirs["id"])
            if i:
                me.status_bookmark(theirs["id"])

    await asyncio.to_thread(post)
    await arp.drain()
    uid = int((await asyncio.to_thread(me.me))["id"])
    # (the data folder is the module's; the database is flushed per test)
    before_here = {p.name for p in archive.folder(data_dir(dirs), uid).glob("*")}
    # its job as a start cut short after holding it leaves it: no record yet
    job = ArchiveJob(uid=uid, aid=7, made=now_ms(), token="ab" * 16, base=asrv.base)
    queue = JobQueue(arp.store)
    media = open_storage(arp.settings)
    renderer = archive_renderer(arp.store, arp.settings)
    data = str(dirs[0])

    def step():
        return archive.step(arp.store, queue, media, renderer, data, job)

    async def cursor() -> tuple:
        raw = await arp.store.hgetall(keys.archive_record(uid, job.aid))
        return tuple(raw.get(f) for f in (b"state", b"phase", b"page"))

    # each step cut at each of its awaits in turn (k = 0, 1, ...); a cut
    # after its change landed is the next step's turn (k again from 0)
    steps, cuts, seen, k, phases = 0, 0, set(), 0, set()
    while True:
        before = await cursor()
        phases.add(before[1])
        finished = await drive(step(), k)
        ready = [a for a in await arp.archives.listed(uid) if a.state == "ready"]
        if not ready:  # a partial file is never offered
            with pytest.raises(archive.ArchiveNotFound):
                await arp.archives.ready_file(uid, job.aid)
        else:  # once offered, whole
            _, path = await arp.archives.ready_file(uid, job.aid)
            assert opened(path.read_bytes()).namelist()
        seen.add(bool(ready))
        if finished:
            steps += 1
        else:
            cuts += 1
        k = 0 if finished or await cursor() != before else k + 1
        # done: ready, and its last step (the removal queued, the pages gone) run
        if ready and not archive.work_folder(data, uid, job.aid).exists():
            break
    assert await step() is False
    assert phases >= {None, b"outbox", b"likes", b"bookmarks", b"pack"}, phases
    assert cuts > 4 * 5, cuts  # (every phase cut at several awaits)
    assert seen == {False, True}  # cut before the archive was ready, and after
    found = await arp.archives.get(uid, job.aid)
    assert found.state == "ready"
    body = archive.path_of(data, found).read_bytes()
    assert len(body) == found.size
    zf = opened(body)
    outbox = json.loads(zf.read("outbox.json"))
    assert outbox["totalItems"] == len(kinds)
    # every page once, in order: oldest first
    contents = [i["object"]["content"] for i in outbox["orderedItems"]]
    assert contents == [f"<p>note {i}</p>" for i in range(len(kinds))]
    likes = json.loads(zf.read("likes.json"))
    bookmarks = json.loads(zf.read("bookmarks.json"))
    assert (likes["totalItems"], bookmarks["totalItems"]) == (3, 2)
    assert len(set(likes["orderedItems"])) == 3
    assert set(bookmarks["orderedItems"]) < set(likes["orderedItems"])
    # nothing else left in its folder: no partial file, no pages
    left = {p.name for p in archive.folder(data, uid).iterdir()} - before_here
    assert left == {found.file}
