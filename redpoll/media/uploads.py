"""Uploads (media attachments): upload, read, describe, attach to a status,
remove with the status, sweep those never attached.

An upload, step by step (:func:`start`, then :func:`_finish`), and what
each step is:

1. the header is read and checked (type, pixels, frames): nothing written;
2. an id is drawn (INCR: only a skipped id if the call stops here);
3. its journal is held (jobs.MediaJob, job_hold.lua: atomic). From here a
   call cut short is finished by a worker (:func:`settle`);
4. its entry in keys.PENDING (ZADD: idempotent), before the record, so
   that a record never escapes the sweep of never-attached uploads;
5. its record, state processing (media_create.lua: atomic, once);
6. the pixels are processed on the processing threads (nothing written);
7. the files' names are noted on the record (media_step.lua: atomic, only
   while processing) before any file is written, so whoever gives the
   upload up knows which files to delete;
8. each file is written whole or not at all (MediaStorage.put: atomic per
   file, idempotent: a name is its content's). If the storage fails, the
   upload is given up at once (:func:`_give_up`, what settling would do) and
   the caller gets MediaStorageError (503);
9. the record is marked ready with its URLs, meta and blurhash
   (media_step.lua: atomic, only while processing);
10. the journal is released.

A worker settling the journal of a producer that died (after
limits.MEDIA_SETTLE_CLAIMS claim periods) keeps a ready upload and gives up
any other: its record becomes a tombstone (media_drop.lua 'void': atomic;
it refuses steps 5, 7 and 9 of a producer that was only slow) and the noted
files are deleted. So an upload cut short leaves, once settled, no file and
no record (only a tombstone, which expires).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from dataclasses import dataclass

from ..bus.queue import Held, JobQueue, NotYet, entry_ms
from ..core import keys as base_keys
from ..core import limits, validate
from ..core.errors import (
    Busy,
    MediaStorageError,
    NotFound,
    RedpollError,
    UserNotFound,
    ValidationError,
)
from ..core.models import Status, now_ms
from ..storage.store import Store
from . import entity, files, keys, processing, remote
from .jobs import MediaFilesJob, MediaJob
from .storage import MediaStorage

log = logging.getLogger("redpoll.media")

PROCESSING, READY, FAILED, GONE = "processing", "ready", "failed", "gone"

#: uploads this process has taken in and not finished (limits.MEDIA_PROCESSING_QUEUE)
_in_hand = 0
#: the processing of v2 uploads answered before it finished (kept referenced)
_running: set[asyncio.Task] = set()


@dataclass(frozen=True)
class Upload:
    """An upload's record as the API shows it."""

    id: int
    owner: int
    state: str
    fields: dict[str, str]

    @classmethod
    def from_hash(cls, raw) -> Upload:
        h = {
            (k.decode() if isinstance(k, bytes) else k): (
                v.decode() if isinstance(v, bytes) else str(v)
            )
            for k, v in (raw.items() if isinstance(raw, dict) else zip(raw[0::2], raw[1::2]))
        }
        # (a tombstone may know neither its id nor its owner)
        return cls(int(h.get("id", 0)), int(h.get("owner", 0)), h.get("state", GONE), h)

    @property
    def ready(self) -> bool:
        return self.state == READY

    @property
    def error(self) -> str:
        return self.fields.get("err", "")

    def entity(self, base: str) -> dict:
        return entity.attachment(entity.record_item(self.fields), base)


# --- checks of what clients send ------------------------------------------------------
def description(value) -> str | None:
    if value is None:
        return None
    return validate.text(value, "description", limits.MEDIA_DESCRIPTION_MAX_CHARS, allow_empty=True)


def focus(value) -> str | None:
    """Mastodon's ``focus``: "x,y", each from -1.0 to 1.0."""
    if value is None or value == "":
        return None
    try:
        x, y = (float(v) for v in str(value).split(","))
    except ValueError:
        raise ValidationError("focus", "must be two numbers x,y from -1.0 to 1.0") from None
    if not all(math.isfinite(v) and -1.0 <= v <= 1.0 for v in (x, y)):
        raise ValidationError("focus", "must be two numbers x,y from -1.0 to 1.0")
    return f"{x:g},{y:g}"


# --- uploading ------------------------------------------------------------------------
async def start(
    store: Store,
    queue: JobQueue,
    storage: MediaStorage,
    owner: int,
    data: bytes,
    *,
    desc: str | None = None,
    focus_xy: str | None = None,
) -> tuple[Upload, asyncio.Task]:
    """Steps 1-5 in the call; returns the record (processing) and the task
    running steps 6-10, which the caller awaits (POST /api/v1/media) or
    not (POST /api/v2/media: 202). ValidationError (422) for a file that is
    not a supported image or is over the bounds, Busy (503) when this
    process has too many uploads in hand."""
    global _in_hand
    # (the header only: not queued behind other uploads' processing)
    probe = await asyncio.to_thread(processing.inspect, data)
    if _in_hand >= limits.MEDIA_PROCESSING_QUEUE:
        raise Busy("too many uploads are being processed; try again in a moment")
    await queue.check_capacity()
    if not await store.exists(base_keys.user(owner)):
        raise UserNotFound(f"user {owner} does not exist")
    mid = await store.incr(keys.MEDIA_SEQ)
    held = await queue.hold(MediaJob(owner=owner, mid=mid))
    _in_hand += 1
    try:
        await store.zadd(keys.PENDING, {keys.pending_member(owner, mid): now_ms()})
        record = {
            "id": str(mid),
            "owner": str(owner),
            "state": PROCESSING,
            "at": str(now_ms()),
            "mime": probe.mime,
            "v": "1",
        }
        if desc:
            record["desc"] = desc
        if focus_xy:
            record["focus"] = focus_xy
        await store.run(
            "media_create", [keys.record(owner, mid)], [x for pair in record.items() for x in pair]
        )
    except BaseException:
        _in_hand -= 1
        raise
    task = asyncio.ensure_future(_finish(store, queue, storage, owner, mid, data, probe, held))
    _running.add(task)
    task.add_done_callback(_done)
    return Upload.from_hash(record), task


def _done(task: asyncio.Task) -> None:
    _running.discard(task)
    if task.cancelled() or task.exception() is None:
        return
    if isinstance(task.exception(), MediaStorageError):  # given up (_give_up; logged there)
        log.warning("an upload was given up: %s", task.exception())
    else:  # its journal stays held: a worker settles the upload (settle)
        log.error("processing an upload failed", exc_info=task.exception())


async def _finish(
    store: Store,
    queue: JobQueue,
    storage: MediaStorage,
    owner: int,
    mid: int,
    data: bytes,
    probe: processing.Probe,
    held: Held,
) -> Upload:
    """Steps 6-10; the record as it ends."""
    global _in_hand
    key = keys.record(owner, mid)
    try:
        try:
            done = await processing.run(processing.process, data, probe)
        except ValidationError as exc:  # a damaged file: the record says why
            await store.run("media_step", [key], ["state", FAILED, "err", exc.message])
            await queue.release(held)
            return await _read(store, owner, mid)
        names = await files.names(store, mid, done.files)
        if await store.run("media_step", [key], ["files", " ".join(names)]):
            try:
                for name, out in zip(names, done.files):
                    await storage.put(name, out.data)
            except MediaStorageError as exc:
                await _give_up(store, queue, storage, owner, mid, held, exc.message)
                raise
            ready = await store.run(
                "media_step",
                [key],
                [
                    "state",
                    READY,
                    "url",
                    storage.url(names[0]),
                    "purl",
                    storage.url(names[1]),
                    "meta",
                    json.dumps(done.meta, separators=(",", ":")),
                    "blurhash",
                    done.blurhash or "",
                ],
            )
            if not ready:  # given up meanwhile: what this call wrote goes too
                for name in names:
                    await storage.delete(name)
        await queue.release(held)
        return await _read(store, owner, mid)
    finally:
        _in_hand -= 1


async def _give_up(
    store: Store, queue: JobQueue, storage: MediaStorage, owner: int, mid: int, held: Held, why: str
) -> None:
    """A file of upload ``mid`` could not be stored: the upload is given up
    now, as a worker settling its journal would (:func:`settle`): its record
    becomes a tombstone keeping ``why`` (media_drop.lua 'void': atomic; GET
    /api/v1/media/:id then says why), its pending entry goes (idempotent),
    and its journal is released with a job deleting the files it may have
    written (job_next.lua: atomic with the release; the job is retried if the
    storage fails again). Cut short, the held journal is settled later."""
    gone = await store.run(
        "media_drop", [keys.record(owner, mid)], ["void", "", limits.MEDIA_TOMBSTONE_S, why]
    )
    names = _names(gone)
    await store.zrem(keys.PENDING, keys.pending_member(owner, mid))
    await queue.release(held, MediaFilesJob(owner=owner, names=names) if names else None)


async def _read(store: Store, owner: int, mid: int) -> Upload:
    raw = await store.hgetall(keys.record(owner, mid))
    if not raw:
        raise NotFound(f"upload {mid} does not exist")
    return Upload.from_hash(raw)


async def wait(task: asyncio.Task) -> Upload:
    """The upload once processed (POST /api/v1/media): ValidationError if
    processing found the file damaged, MediaStorageError if the storage
    failed (the upload was given up)."""
    upload = await asyncio.shield(task)
    if upload.state == FAILED:
        raise ValidationError("file", upload.error.removeprefix("file: "))
    return upload


# --- reading and describing ---------------------------------------------------------
async def get(store: Store, owner: int, mid: int, changes: dict[str, str] | None = None) -> Upload:
    """``owner``'s upload ``mid`` while it is not attached to a status (as
    Mastodon: the media API sees only one's own unattached uploads; what a
    status shows is read through the status), with ``changes``
    (desc, focus) applied. NotFound otherwise. An upload given up because
    the storage failed (:func:`_give_up`) reads as failed, saying why."""
    pairs = [x for pair in (changes or {}).items() for x in pair]
    raw = await store.run("media_update", [keys.record(owner, mid)], pairs)
    if not raw:
        raise NotFound(f"upload {mid} does not exist")
    upload = Upload.from_hash(raw)
    if upload.state == GONE:  # (only its reason is read: media_update.lua)
        return Upload(mid, owner, FAILED, {"state": FAILED, "err": upload.error})
    return upload


class MediaInUse(RedpollError):
    """An upload attached to a status (or held for a scheduled one) is not
    deleted by the media API: Mastodon's answer."""

    status = 422

    def __init__(self) -> None:
        super().__init__("Media attachment is currently used by a status")


async def delete_unattached(store: Store, queue: JobQueue, owner: int, mid: int) -> None:
    """DELETE /api/v1/media/:id (Mastodon 4.4): ``owner``'s upload ``mid``
    not attached to a status becomes a tombstone (media_drop.lua 'stale'
    with no age bound: atomic, a no-op on one attached or held meanwhile)
    and a job deletes its files; then its pending entry goes. NotFound for
    no such upload of ``owner``'s, MediaInUse for one attached or held.
    A repeated call finds the tombstone: NotFound."""
    record = keys.record(owner, mid)
    state = (await store.hmget(record, ["state"]))[0]
    if state is None or state.decode() == GONE:
        raise NotFound(f"upload {mid} does not exist")
    gone = await store.run(
        "media_drop", [record], ["stale", now_ms() + 1, limits.MEDIA_TOMBSTONE_S]
    )
    after = (await store.hmget(record, ["state"]))[0]
    if after is None or after.decode() != GONE:
        raise MediaInUse()
    names = _names(gone)
    if names:
        await queue.enqueue(MediaFilesJob(owner=owner, names=names))
    await store.zrem(keys.PENDING, keys.pending_member(owner, mid))


# --- attaching to a status (redpoll.posting) --------------------------------------
def requested(ids) -> list[int]:
    ids = list(dict.fromkeys(validate.an_id(i, "media_ids") for i in ids))
    if len(ids) > limits.MEDIA_PER_STATUS:
        raise ValidationError(
            "media_ids", f"at most {limits.MEDIA_PER_STATUS} attachments on one status"
        )
    return ids


#: The status extra naming the scheduled status a status is the posting of
#: (redpoll.scheduling): the uploads held for it may be attached to it.
HELD_FOR = "scheduled"


async def for_post(store: Store, owner: int, ids, held_for: str = "") -> str:
    """The ``media`` extra of a status of ``owner`` attaching uploads ``ids``
    (in that order): read and checked here (each must be the owner's, ready,
    not attached, not held for a scheduled status other than ``held_for``),
    attached by :func:`attach` in the post's journal."""
    ids = requested(ids)
    rows = await store.batch([("HGETALL", keys.record(owner, mid)) for mid in ids])
    records = []
    for mid, row in zip(ids, rows):
        upload = Upload.from_hash(row) if row else None
        if (
            upload is None
            or upload.state == GONE
            or "sid" in upload.fields
            or upload.fields.get("sched", held_for) != held_for
        ):
            raise ValidationError(
                "media_ids", f"no upload {mid} of yours that is not attached to another status"
            )
        if upload.state != READY:
            raise ValidationError(
                "media_ids",
                f"upload {mid} has not finished processing; try again in a moment"
                if upload.state == PROCESSING
                else f"upload {mid} could not be processed",
            )
        records.append(upload.fields)
    return entity.snapshot(records)


_WHY = {
    "missing": "does not exist",
    "processing": "has not finished processing",
    "failed": "could not be processed",
    "attached": "is attached to another status",
    "held": "is held for a scheduled status",
    "changed": "was changed while the status was posted; try again",
}


async def attach(store: Store, status: Status) -> None:
    """Attach the uploads of ``status``'s ``media`` extra to it, all or none
    (media_attach.lua: atomic; a replay is a no-op), then forget their
    pending entries (idempotent). ValidationError when one cannot be."""
    items = [i for i in entity.snapshot_items(status.extra.get("media")) if not i.get("remote")]
    if not items:  # (another server's attachments have no upload here)
        return
    owner = status.user_id
    index, why = await store.run(
        "media_attach",
        [keys.record(owner, i["id"]) for i in items],
        [status.id, *(i.get("v", "0") for i in items), status.extra.get(HELD_FOR, "")],
    )
    if index:
        why = why.decode() if isinstance(why, bytes) else why
        mid = items[index - 1]["id"]
        raise ValidationError("media_ids", f"upload {mid} {_WHY.get(why, why)}")
    await store.zrem(keys.PENDING, *(keys.pending_member(owner, i["id"]) for i in items))


# --- holding for a scheduled status (redpoll.scheduling) ------------------------------
async def hold(store: Store, owner: int, ids, scheduled_id: int) -> None:
    """Hold ``owner``'s uploads ``ids`` for the scheduled status
    ``scheduled_id``, all or none (media_hold.lua: atomic; again: no
    change): not attachable elsewhere, left by the sweep of never-attached
    uploads. ValidationError when one cannot be."""
    ids = requested(ids)
    if not ids:
        return
    index, why = await store.run(
        "media_hold", [keys.record(owner, mid) for mid in ids], [scheduled_id, "hold"]
    )
    if index:
        why = why.decode() if isinstance(why, bytes) else why
        raise ValidationError("media_ids", f"upload {ids[index - 1]} {_WHY.get(why, why)}")


async def release(store: Store, owner: int, ids, scheduled_id: int) -> None:
    """Release the uploads held for ``scheduled_id`` (media_hold.lua:
    atomic; those it does not hold are left), then put them back among the
    never-attached uploads the sweep reads, at their upload time
    (idempotent, a replay too): as Mastodon, a cancelled scheduled status leaves its
    uploads unattached, removed by the sweep once old enough."""
    ids = [int(mid) for mid in ids]
    if not ids:
        return
    ats = await store.run(
        "media_hold", [keys.record(owner, mid) for mid in ids], [scheduled_id, "release"]
    )
    back = {keys.pending_member(owner, mid): int(at) for mid, at in zip(ids, ats) if at}
    if back:
        await store.zadd(keys.PENDING, back)


# --- removing ------------------------------------------------------------------------
def _names(replies) -> tuple[str, ...]:
    out: list[str] = []
    for value in replies:
        out += (value.decode() if isinstance(value, bytes) else value).split()
    return tuple(dict.fromkeys(out))


async def forget_status(store: Store, queue: JobQueue, status: Status) -> None:
    """A status is being deleted: its uploads' records become tombstones
    (media_drop.lua 'status': atomic) and a job deletes their files. Called
    from the delete journal's first step: a replay does it again, with the
    same names (the tombstones keep them)."""
    # its attachments now, and those an edit dropped (kept for its history)
    snapshots = [status.extra.get("media")] + [
        json.loads(row).get("media")
        for row in await store.lrange(base_keys.status_edits(status.id), 0, limits.EDITS_MAX)
    ]
    # another server's attachments have no upload here: the copies kept of them go
    kept = await remote.forget_status(
        store,
        status.id,
        [i for raw in snapshots for i in entity.snapshot_items(raw) if i.get("remote")],
    )
    if kept:
        await queue.enqueue(MediaFilesJob(owner=status.user_id, names=kept))
    items = list(
        {
            int(i["id"]): i
            for raw in snapshots
            for i in entity.snapshot_items(raw)
            if not i.get("remote")
        }.values()
    )
    if not items:
        return
    owner = status.user_id
    gone = await store.run(
        "media_drop",
        [keys.record(owner, i["id"]) for i in items],
        ["status", status.id, limits.MEDIA_TOMBSTONE_S],
    )
    names = _names(gone)
    if names:
        await queue.enqueue(MediaFilesJob(owner=owner, names=names))


async def forget_account(
    store: Store, queue: JobQueue, uid: int, record_keys: list[str], more: tuple[str, ...] = ()
) -> None:
    """An account is being purged: every upload record of it (``record_keys``)
    becomes a tombstone and a job deletes their files and ``more``
    (its avatar's and header's)."""
    names: tuple[str, ...] = ()
    for i in range(0, len(record_keys), 100):
        names += _names(
            await store.run(
                "media_drop", record_keys[i : i + 100], ["any", "", limits.MEDIA_TOMBSTONE_S]
            )
        )
    names = tuple(dict.fromkeys(names + more))
    if names:
        await queue.enqueue(MediaFilesJob(owner=uid, names=names))


async def drop_orphan(store: Store, storage: MediaStorage, owner: int, mid: int, sid: int) -> int:
    """Upload ``mid`` of ``owner``, attached to status ``sid`` that is gone
    (redpoll check --repair): its record becomes a tombstone (media_drop.lua
    'status': atomic, a no-op unless it is still attached to ``sid``) and
    its files are deleted, as the status's delete would have. Idempotent;
    how many files it named."""
    gone = await store.run(
        "media_drop", [keys.record(owner, mid)], ["status", sid, limits.MEDIA_TOMBSTONE_S]
    )
    names = _names(gone)
    await delete_files(storage, names)
    return len(names)


async def delete_files(storage: MediaStorage, names) -> None:
    """Each of ``names`` deleted (idempotent)."""
    for name in names:
        await storage.delete(name)


async def sweep(store: Store, storage: MediaStorage, now: int | None = None) -> int:
    """Remove the uploads never attached to a status that are older than
    limits.MEDIA_UNATTACHED_TTL_S as of ``now`` (ms), at most
    limits.MEDIA_SWEEP_BATCH of them; how many entries were handled. For
    each: its record becomes a tombstone (media_drop.lua 'stale': atomic,
    a no-op on an attached one), its files are deleted, then its pending
    entry goes; a sweep cut short is redone by the next. Also removes what
    file writes cut short left behind."""
    now = now or now_ms()
    cutoff = now - limits.MEDIA_UNATTACHED_TTL_S * 1000
    members = await store.zrangebyscore(
        keys.PENDING, "-inf", cutoff, start=0, num=limits.MEDIA_SWEEP_BATCH
    )
    for member in members:
        uid, mid = keys.parse_pending(member)
        gone = await store.run(
            "media_drop", [keys.record(uid, mid)], ["stale", cutoff, limits.MEDIA_TOMBSTONE_S]
        )
        await delete_files(storage, _names(gone))
        await store.zrem(keys.PENDING, member)
    await storage.tidy(limits.MEDIA_PARTIAL_FILE_S)
    return len(members)


async def settle(
    store: Store,
    storage: MediaStorage,
    job: MediaJob,
    entry_id: bytes,
    settle_after_ms: int,
    now: int | None = None,
) -> bool:
    """The journal of an upload whose producer went quiet (entry
    ``entry_id``): True if the upload finished (ready or failed: it stays).
    Otherwise NotYet while the journal is younger than ``settle_after_ms``
    (the producer may only be slow); then the upload is given up: its record
    a tombstone (media_drop.lua 'void', atomic: a slow producer's next step
    is refused), its noted files deleted, its pending entry removed."""
    raw = await store.hmget(keys.record(job.owner, job.mid), ["state"])
    state = raw[0].decode() if raw[0] else None
    if state in (READY, FAILED):
        return True
    if (now or now_ms()) - entry_ms(entry_id) < settle_after_ms:
        raise NotYet(f"upload {job.mid} may still be processing")
    gone = await store.run(
        "media_drop", [keys.record(job.owner, job.mid)], ["void", "", limits.MEDIA_TOMBSTONE_S]
    )
    await delete_files(storage, _names(gone))
    await store.zrem(keys.PENDING, keys.pending_member(job.owner, job.mid))
    return False


async def sweep_due(store: Store) -> bool:
    """Whether this process should queue the sweep now (one per interval
    over every worker: SET NX with the interval as expiry)."""
    return bool(
        await store.set(keys.SWEEP_DUE, str(now_ms()), nx=True, ex=limits.MEDIA_SWEEP_INTERVAL_S)
    )


def in_hand() -> int:
    return _in_hand
