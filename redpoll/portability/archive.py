"""A member's archive of their own posts and media, as Mastodon's "Request
your archive" (its BackupService): one ZIP file holding

- ``actor.json``: the member's ActivityPub actor as this server publishes
  it, its ``icon`` and ``image`` naming ``avatar.<ext>`` and
  ``header.<ext>`` in the archive and its ``outbox``, ``likes`` and
  ``bookmarks`` the files below (as Mastodon rewrites them);
- ``outbox.json``: an OrderedCollection of the member's Create activities,
  each with its Note as this server's federation renders it (public,
  unlisted, private and direct ones: Mastodon's archive has them all; the
  boosts are left out), without their ``@context``, every attachment's
  ``url`` the path of its file in the archive;
- ``likes.json`` and ``bookmarks.json``: OrderedCollections of the ids of
  the statuses the member favourited and bookmarked;
- the media files: every attachment under ``media_attachments/files/``
  (the name the storage gives it), and ``avatar.<ext>``, ``header.<ext>``.

How it is made, and why a partial file is never offered:
- :func:`start` draws an id, then holds the archive's job and claims the
  member's gate (keys.archive_gate, expiring after
  limits.ARCHIVE_INTERVAL_S) in one step (job_hold_once.lua): a second
  request within the interval finds the gate taken (:class:`ArchiveTooSoon`),
  however many race. Then the record is written and the job released. Cut
  short between, a worker takes the held job over and its first step writes
  the record (:func:`_ensure`, from the job's own fields): journaled.
- :func:`step` (the job) does one bounded step: limits.ARCHIVE_STATUS_STEP
  of the member's statuses rendered, or limits.ARCHIVE_ID_STEP of their
  favourites or bookmarks read, each page written to a file of its own in
  the archive's work folder (written whole then renamed: a page written
  again is the same file), then the record's cursor advanced by
  ``archive_step.lua`` only if it is still where the step began. A step cut
  short is done again whole.
- The last step packs the pages and media into a ZIP under a temporary
  name, renames it to the archive's name (atomic), and only then marks the
  record ``ready`` (the same script): the file is offered only once whole.
  Packed again after a cut, the same name is written again, whole.
- A ready archive is removed after limits.ARCHIVE_KEPT_S by a job for then
  (:class:`~.jobs.ArchiveExpireJob`); one past its time is not listed even
  if that job has not run yet.

The ZIP is kept in the data folder (``<data dir>/archives/<member>/``), which
the worker that makes it and the server that offers it share, as they share
the local media folder (docs/operating.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import shutil
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ..bus.queue import Claimed, JobQueue
from ..core import keys, limits, uris, validate
from ..core.errors import MediaStorageError, NotFound, RedpollError
from ..core.models import Status, now_ms
from ..media.storage import NAME, MediaStorage
from ..records import statuses
from ..records.users import get_user
from ..relations import visibility
from ..storage.store import Store
from .jobs import ArchiveExpireJob, ArchiveJob

log = logging.getLogger("redpoll.archive")

AS = "https://www.w3.org/ns/activitystreams"
#: The phases of an archive's job, in order.
PHASES = ("outbox", "likes", "bookmarks", "pack")
#: Where the attachments go in the archive.
MEDIA_FOLDER = "media_attachments/files"


class ArchiveNotFound(NotFound):
    """No such archive of this member's (or not ready yet, for its file)."""


class ArchiveTooSoon(RedpollError):
    """An archive was asked for within limits.ARCHIVE_INTERVAL_S of the last:
    429, with when the next may be asked for (``retry_after_s``)."""

    status = 429
    code = "too_soon"

    def __init__(self, message: str, retry_after_s: int):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Renderer(Protocol):
    """What the federation renders for an archive, given by the worker
    (redpoll.engine.areas.archives: this package does not import it)."""

    async def actor(self, uid: int, base: str) -> dict[str, Any]:
        """The member's actor document as this server publishes it."""
        ...

    async def create(self, status: Status, base: str) -> dict[str, Any]:
        """The Create activity of one of the member's statuses, with its Note."""
        ...


@dataclass(frozen=True, slots=True)
class Archive:
    """One archive as its record says."""

    id: int
    uid: int
    state: str  # processing | ready
    created_at: int
    size: int
    file: str
    finished_at: int | None

    @property
    def expires_at(self) -> int:
        return self.created_at + limits.ARCHIVE_KEPT_S * 1000

    @classmethod
    def of(cls, uid: int, aid: int, raw: dict) -> Archive:
        h = {
            (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
            for k, v in raw.items()
        }
        return cls(
            id=aid,
            uid=uid,
            state=h.get("state", "processing"),
            created_at=int(h["made"]),
            size=int(h.get("size") or 0),
            file=h["file"],
            finished_at=int(h["finished"]) if h.get("finished") else None,
        )


# --- where its files are -----------------------------------------------------------------
def folder(data_dir: str, uid: int) -> Path:
    """The member's archives: ``<data dir>/archives/<uid>/``."""
    return Path(data_dir) / "archives" / str(int(uid))


def work_folder(data_dir: str, uid: int, aid: int) -> Path:
    """The pages of archive ``aid`` while its job runs."""
    return folder(data_dir, uid) / f"{int(aid)}.parts"


def path_of(data_dir: str, found: Archive) -> Path:
    return folder(data_dir, found.uid) / found.file


def _file_name(made: int, token: str) -> str:
    """Mastodon's: ``archive-<UTC time>-<random hex>``, here a ZIP."""
    stamp = datetime.fromtimestamp(made / 1000, UTC).strftime("%Y%m%d%H%M%S")
    return f"archive-{stamp}-{token}.zip"


# --- the record ---------------------------------------------------------------------------------
async def start(store: Store, queue: JobQueue, uid: int, base: str) -> Archive:
    """Ask for an archive of ``uid``'s posts and media, its links made with
    ``base`` (this server as the member asked it); ArchiveTooSoon within
    limits.ARCHIVE_INTERVAL_S of the last one (nothing written then)."""
    uid = validate.an_id(uid, "user_id")
    aid = int(await store.incr(keys.archive_seq(uid)))
    made = now_ms()
    job = ArchiveJob(uid=uid, aid=aid, made=made, token=secrets.token_hex(16), base=base)
    shard = job.shard()
    gate = keys.archive_gate(shard, uid)
    held = await queue.hold_once(job, shard, gate, f"{aid}:%s", limits.ARCHIVE_INTERVAL_S)
    if isinstance(held, Claimed):
        (left,) = await store.batch([("PTTL", gate)])
        wait = max(1, (int(left) + 999) // 1000) if int(left) > 0 else 1
        days = limits.ARCHIVE_INTERVAL_S // 86400
        raise ArchiveTooSoon(
            f"An archive can be requested once every {days} days; the next one in {wait} seconds",
            wait,
        )
    await _ensure(store, job)
    await queue.release(held, job)
    await _trim(store, uid)
    return await get(store, uid, aid)


async def _ensure(store: Store, job: ArchiveJob) -> None:
    """The archive's record and its place in the member's list, written
    once (HSETNX of each field, ZADD NX: written again, nothing changes)."""
    record = keys.archive_record(job.uid, job.aid)
    fields = {
        "state": "processing",
        "made": job.made,
        "file": _file_name(job.made, job.token),
        "base": job.base,
        "phase": PHASES[0],
        "page": 0,
        "after": "",
        "size": 0,
    }
    pipe = store.pipeline(transaction=True)
    for name, value in fields.items():
        pipe.hsetnx(record, name, value)
    pipe.zadd(keys.archives(job.uid), {str(job.aid): job.made}, nx=True)
    await pipe.execute()


async def _trim(store: Store, uid: int) -> None:
    """Keep the newest limits.ARCHIVES_KEPT records; older ready ones go
    (their files removed by their expiry job, which finds them gone)."""
    old = await store.zrevrange(keys.archives(uid), limits.ARCHIVES_KEPT, -1)
    for raw in old:
        state = await store.hget(keys.archive_record(uid, int(raw)), "state")
        if state in (None, b"ready"):
            await store.zrem(keys.archives(uid), raw)


async def listed(store: Store, uid: int) -> list[Archive]:
    """The member's archives not yet past their time, newest first."""
    uid = validate.an_id(uid, "user_id")
    ids = [int(i) for i in await store.zrevrange(keys.archives(uid), 0, limits.ARCHIVES_KEPT - 1)]
    raws = await store.batch([("HGETALL", keys.archive_record(uid, i)) for i in ids])
    now = now_ms()
    out = []
    for aid, raw in zip(ids, raws):
        pairs = raw if isinstance(raw, dict) else dict(zip(raw[::2], raw[1::2]))
        if pairs:
            found = Archive.of(uid, aid, pairs)
            if found.expires_at > now:
                out.append(found)
    return out


async def get(store: Store, uid: int, aid) -> Archive:
    uid = validate.an_id(uid, "user_id")
    aid = validate.an_id(aid, "id")
    raw = await store.hgetall(keys.archive_record(uid, aid))
    if not raw:
        raise ArchiveNotFound(f"archive {aid} does not exist")
    found = Archive.of(uid, aid, raw)
    if found.expires_at <= now_ms():
        raise ArchiveNotFound(f"archive {aid} does not exist")
    return found


async def ready_file(store: Store, data_dir: str, uid: int, aid) -> tuple[Archive, Path]:
    """A ready archive of ``uid``'s and its file; ArchiveNotFound if it is
    not ``uid``'s, not ready yet, past its time, or its file is gone."""
    found = await get(store, uid, aid)
    path = path_of(data_dir, found)
    if found.state != "ready" or not await asyncio.to_thread(path.is_file):
        raise ArchiveNotFound(f"archive {aid} is not ready")
    return found, path


# --- the job's step -------------------------------------------------------------------------
async def step(
    store: Store,
    queue: JobQueue,
    media: MediaStorage,
    renderer: Renderer,
    data_dir: str,
    job: ArchiveJob,
) -> bool:
    """Do the next step of the archive ``job`` names: True if there is more."""
    await _ensure(store, job)  # (a start cut short after its job was held)
    uid, aid = job.uid, job.aid
    h = {
        k.decode(): v.decode()
        for k, v in (await store.hgetall(keys.archive_record(uid, aid))).items()
    }
    work = work_folder(data_dir, uid, aid)
    if h.get("state") == "ready":
        # packed: its removal queued for its time, its pages dropped (both
        # idempotent: a step cut short after the pack is done again here)
        expire = ArchiveExpireJob(uid=uid, aid=aid, file=h["file"])
        await queue.enqueue_at(expire, int(h["made"]) + limits.ARCHIVE_KEPT_S * 1000)
        await asyncio.to_thread(shutil.rmtree, work, True)
        return False
    phase, page, after = h["phase"], int(h["page"]), h.get("after", "")
    if phase == "outbox":
        done, last, more = await _outbox_page(store, renderer, uid, h["base"], after)
        await _write(work / f"outbox-{page:06d}.json", done)
    elif phase in ("likes", "bookmarks"):
        ids, last, more = await _id_page(store, uid, h["base"], phase, after)
        await _write(work / f"{phase}-{page:06d}.json", ids)
    else:
        size = await _pack(store, media, renderer, data_dir, uid, h, work)
        await _advance(store, uid, aid, h, "pack", 0, "", size)
        return True  # (the next run queues its removal and drops its pages)
    if more:
        await _advance(store, uid, aid, h, phase, page + 1, last)
    else:
        await _advance(store, uid, aid, h, PHASES[PHASES.index(phase) + 1], 0, "")
    return True


async def _advance(
    store: Store,
    uid: int,
    aid: int,
    h: dict,
    phase: str,
    page: int,
    after: str,
    size: int | None = None,
) -> bool:
    """The record's cursor moved past a step (archive_step.lua: only if no
    other run of it did first); ``size``: the pack is done, the archive ready."""
    return bool(
        await store.run(
            "archive_step",
            [keys.archive_record(uid, aid)],
            [
                h["phase"],
                h["page"],
                h.get("after", ""),
                phase,
                page,
                after,
                *([size, now_ms()] if size is not None else []),
            ],
        )
    )


async def _write(path: Path, value: Any) -> None:
    """A page as a file, whole (a temporary name then a rename)."""
    data = json.dumps(value, separators=(",", ":")).encode()

    def write() -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        try:
            temp.write_bytes(data)
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)

    await asyncio.to_thread(write)


def _media_path(name: str) -> str:
    return f"{MEDIA_FOLDER}/{name}"


def _stored_name(url: str | None) -> str | None:
    """The storage's name of a file from its URL (local or the bucket's)."""
    found = NAME.search(url or "")
    return found.group(0) if found else None


async def _outbox_page(
    store: Store, renderer: Renderer, uid: int, base: str, after: str
) -> tuple[list[dict], str, bool]:
    """Up to limits.ARCHIVE_STATUS_STEP of the member's statuses after
    ``after``, oldest first, as Create activities (the boosts left out);
    the last id read and whether there may be more."""
    low = f"({after}" if after else "-inf"
    ids = [
        int(x)
        for x in await store.zrangebyscore(
            keys.profile(uid), low, "+inf", start=0, num=limits.ARCHIVE_STATUS_STEP
        )
    ]
    found = [s for s in await statuses.get_statuses(store, ids) if s is not None]
    own = [s for s in found if s.user_id == uid and s.reblog_of is None]
    items = []
    for status in await visibility.visible(store, uid, own):  # all of one's own, as ever
        item = await renderer.create(status, base)
        item.pop("@context", None)  # (as Mastodon's archive)
        obj = item.get("object")
        if isinstance(obj, dict):
            for attachment in obj.get("attachment") or []:
                name = _stored_name(attachment.get("url"))
                if name:
                    attachment["url"] = _media_path(name)
        items.append(item)
    last = str(ids[-1]) if ids else after
    return items, last, len(ids) == limits.ARCHIVE_STATUS_STEP


async def _id_page(
    store: Store, uid: int, base: str, phase: str, after: str
) -> tuple[list[str], str, bool]:
    """Up to limits.ARCHIVE_ID_STEP ids of the statuses the member
    favourited or bookmarked after the cursor (the favourite's or
    bookmark's own order, oldest first); deleted statuses left out."""
    key = keys.favourites(uid) if phase == "likes" else keys.bookmarks(uid)
    low = f"({after}" if after else "-inf"
    rows = await store.zrangebyscore(
        key, low, "+inf", start=0, num=limits.ARCHIVE_ID_STEP, withscores=True
    )
    ids = [int(m) for m, _ in rows]
    out = []
    for s in await statuses.get_statuses(store, ids):
        if s is not None:
            out.append(s.extra.get("uri") or uris.status(base, s.login, s.id))
    # (the scores are integers: favourite ids, unique microseconds)
    last = str(int(rows[-1][1])) if rows else after
    return out, last, len(rows) == limits.ARCHIVE_ID_STEP


def _pages(work: Path, phase: str) -> Iterator[Path]:
    return iter(sorted(work.glob(f"{phase}-*.json")))


def _collection_head(cid: str) -> bytes:
    return json.dumps({"@context": AS, "id": cid, "type": "OrderedCollection"})[:-1].encode()


def _write_collection(zf: zipfile.ZipFile, cid: str, pages: list[Path]) -> None:
    """An OrderedCollection of every page's items, written as it is read
    (a page at a time in memory)."""
    total = 0
    with zf.open(cid, "w") as out:
        out.write(_collection_head(cid) + b',"orderedItems":[')
        for page in pages:
            items = json.loads(page.read_bytes())
            for item in items:
                out.write((b"," if total else b"") + json.dumps(item).encode())
                total += 1
        out.write(f'],"totalItems":{total}}}'.encode())


def _attachment_names(pages: list[Path]) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    for page in pages:
        for item in json.loads(page.read_bytes()):
            obj = item.get("object")
            if not isinstance(obj, dict):
                continue
            for attachment in obj.get("attachment") or []:
                url = attachment.get("url") or ""
                if url.startswith(MEDIA_FOLDER + "/"):
                    name = url[len(MEDIA_FOLDER) + 1 :]
                    if name not in seen:
                        seen.add(name)
                        names.append(name)
    return names


async def _pack(
    store: Store,
    media: MediaStorage,
    renderer: Renderer,
    data_dir: str,
    uid: int,
    h: dict,
    work: Path,
) -> int:
    """The ZIP written under a temporary name, then renamed to the
    archive's (atomic); its size. Mastodon's order: the media, the outbox,
    the likes, the bookmarks, the actor with its avatar and header."""
    target = folder(data_dir, uid) / h["file"]
    temp = work / f".pack.{secrets.token_hex(4)}.partial"
    outbox = sorted(_pages(work, "outbox"))
    names = await asyncio.to_thread(_attachment_names, outbox)
    actor = await renderer.actor(uid, h["base"])
    user = await get_user(store, uid)
    images: list[tuple[str, str]] = []  # (name in the storage, name in the archive)
    for field, what, shown in (("icon", user.avatar, "avatar"), ("image", user.header, "header")):
        name = _stored_name(what)
        if field in actor and name:
            actor[field]["url"] = f"{shown}{os.path.splitext(name)[1]}"
            images.append((name, actor[field]["url"]))
    actor["outbox"] = "outbox.json"
    actor["likes"] = "likes.json"
    actor["bookmarks"] = "bookmarks.json"

    def begin() -> zipfile.ZipFile:
        work.mkdir(parents=True, exist_ok=True)
        for old in work.glob(".pack.*.partial"):  # a pack cut short before
            old.unlink(missing_ok=True)
        return zipfile.ZipFile(temp, "w", zipfile.ZIP_DEFLATED)

    zf = await asyncio.to_thread(begin)
    try:
        for name, shown in [(n, _media_path(n)) for n in names] + images:
            data = await _media_file(media, name)
            if data is not None:  # (a file gone is left out, as Mastodon's)
                await asyncio.to_thread(zf.writestr, shown, data, zipfile.ZIP_STORED)
        await asyncio.to_thread(_write_collection, zf, "outbox.json", outbox)
        for phase in ("likes", "bookmarks"):
            pages = sorted(_pages(work, phase))
            await asyncio.to_thread(_write_collection, zf, f"{phase}.json", pages)
        await asyncio.to_thread(zf.writestr, "actor.json", json.dumps(actor))
    finally:
        await asyncio.to_thread(zf.close)

    def finish() -> int:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(temp, target)  # atomic: the name shows the whole archive or none
        return target.stat().st_size

    return await asyncio.to_thread(finish)


async def _media_file(media: MediaStorage, name: str) -> bytes | None:
    try:
        return await media.read(name)
    except MediaStorageError as exc:
        log.warning("archive: could not read media file %s: %s", name, exc)
        return None


# --- removal ------------------------------------------------------------------------------------
async def expire(
    store: Store, data_dir: str, uid: int, aid: int, file: str, now: int | None = None
) -> int | None:
    """Remove archive ``aid`` (its ZIP named ``file``) if it is past its
    time: its file, its pages, then its record (idempotent: a removal cut
    short is done again; a record gone already, with its account, leaves
    the file to remove); None then, else when it is due (ms: its job is
    queued again for then)."""
    raw = await store.hgetall(keys.archive_record(uid, aid))
    if raw:
        found = Archive.of(uid, aid, raw)
        if found.expires_at > (now_ms() if now is None else now):
            return found.expires_at
    if file and "/" not in file and file.startswith("archive-"):
        await asyncio.to_thread((folder(data_dir, uid) / file).unlink, True)
    await asyncio.to_thread(shutil.rmtree, work_folder(data_dir, uid, aid), True)
    pipe = store.pipeline(transaction=True)
    pipe.delete(keys.archive_record(uid, aid))
    pipe.zrem(keys.archives(uid), str(aid))
    await pipe.execute()
    return None
