"""Avatars and headers (PATCH /api/v1/accounts/update_credentials): an
image processed as uploads are (checked, upright, stripped), cropped to
Mastodon's sizes, stored, and named on the user record (fields ``avatar``,
``avatar_s`` (the still: for an animated GIF its first frame as PNG),
``avatar_f`` (its files); the same for ``header``).

Steps (:func:`prepare` writes nothing; :func:`write_files` steps 2-4,
:func:`point` steps 5-6, :func:`store_image` both):

1. check and process the image (nothing written);
2. draw an id (INCR), read the files the user record names now;
3. hold the journal (jobs.ProfileImageJob, atomic) naming the new files and
   the old;
4. write the files (MediaStorage.put: whole or not at all per file;
   idempotent). If the storage fails, the journal is released at once
   queueing the deletion of the new files (job_next.lua: atomic with the
   release), and MediaStorageError (503) goes to the caller: the user
   record still names the old image;
5. point the user record at them (profile_image.lua: atomic, a compare-and-set
   on the old files, with the record's ``rev``);
6. release the journal, queueing the deletion of the old files (job_next.lua:
   atomic with the release).

If the call dies after 3, a worker settles the journal: of the new and the
old files, those the user record does not name are deleted. A caller that
stops between 4 and 5 on purpose (update_credentials: the profile's fields
were refused) calls :func:`abandon`: the same, at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bus.queue import Held, JobQueue, NotYet, entry_ms
from ..core import keys as base_keys
from ..core.errors import Conflict, MediaStorageError, UserNotFound, ValidationError
from ..core.models import now_ms
from ..storage.store import Store
from . import files, keys, processing
from .jobs import MediaFilesJob, ProfileImageJob
from .storage import MediaStorage


@dataclass(frozen=True)
class Prepared:
    kind: str
    processed: processing.Processed


async def prepare(kind: str, data: bytes) -> Prepared:
    """Step 1: ValidationError (422) for what is not a supported image."""
    assert kind in keys.PROFILE_KINDS
    try:
        probe = await processing.run(processing.inspect, data)
        return Prepared(kind, await processing.run(processing.process, data, probe, kind))
    except ValidationError as exc:  # named by the field it came in
        raise ValidationError(kind, exc.message.removeprefix("file: ")) from None


@dataclass(frozen=True)
class Written:
    """An image's files, stored, its journal held (steps 2-4 done)."""

    kind: str
    names: tuple[str, ...]
    old: str
    held: Held


async def write_files(
    store: Store, queue: JobQueue, storage: MediaStorage, uid: int, image: Prepared
) -> Written:
    """Steps 2-4. MediaStorageError if a file could not be stored (the
    journal released, the files' deletion queued: nothing changed)."""
    kind = image.kind
    mid = await store.incr(keys.MEDIA_SEQ)
    names = tuple(await files.names(store, mid, image.processed.files))
    old = await store.hget(base_keys.user(uid), f"{kind}_f")
    old = old.decode() if old else ""
    held = await queue.hold(ProfileImageJob(uid=uid, image=kind, files=" ".join(names), old=old))
    written = Written(kind, names, old, held)
    try:
        for name, out in zip(names, image.processed.files):
            await storage.put(name, out.data)
    except MediaStorageError:
        await abandon(queue, uid, written)
        raise
    return written


async def abandon(queue: JobQueue, uid: int, written: Written) -> None:
    """The stored files will not be used: the journal released with their
    deletion queued (job_next.lua: atomic with the release); the user record
    still names the old image."""
    await queue.release(written.held, MediaFilesJob(owner=uid, names=written.names))


async def point(
    store: Store, queue: JobQueue, storage: MediaStorage, uid: int, written: Written
) -> None:
    """Steps 5-6. Conflict if another upload of the same image won
    meanwhile (the new files go, the other upload's stay)."""
    kind, names, old = written.kind, written.names, written.old
    done = await store.run(
        "profile_image",
        [base_keys.user(uid)],
        [kind, old, storage.url(names[0]), storage.url(names[-1]), " ".join(names)],
    )
    if done != 1:
        await abandon(queue, uid, written)
        if done == -1:
            raise UserNotFound(f"user {uid} does not exist")
        raise Conflict(f"{kind}: another upload changed it meanwhile; try again")
    gone = tuple(n for n in old.split() if n not in names)
    await queue.release(written.held, MediaFilesJob(owner=uid, names=gone) if gone else None)


async def store_image(
    store: Store, queue: JobQueue, storage: MediaStorage, uid: int, image: Prepared
) -> None:
    """Steps 2-6. Conflict if another upload of the same image won meanwhile;
    MediaStorageError if a file could not be stored."""
    await point(store, queue, storage, uid, await write_files(store, queue, storage, uid, image))


async def remove_image(store: Store, queue: JobQueue, uid: int, kind: str) -> bool:
    """The user's avatar or header goes (the default shown again), its
    files deleted by a job; whether there was one. Journaled as an upload:
    a ProfileImageJob naming no new files is held first, the record
    changed by profile_image.lua (a compare-and-set on the files it names),
    then the journal released with the files' deletion (one step); cut
    short, the worker that settles the journal deletes what the record no
    longer names. Conflict if an upload changed it meanwhile."""
    old = await store.hget(base_keys.user(uid), f"{kind}_f")
    old = old.decode() if old else ""
    if not old:
        if not await store.exists(base_keys.user(uid)):
            raise UserNotFound(f"user {uid} does not exist")
        return False
    held = await queue.hold(ProfileImageJob(uid=uid, image=kind, files="", old=old))
    done = await store.run("profile_image", [base_keys.user(uid)], [kind, old, "", "", ""])
    if done != 1:
        await queue.release(held)
        if done == -1:
            raise UserNotFound(f"user {uid} does not exist")
        raise Conflict(f"{kind}: an upload changed it meanwhile; try again")
    await queue.release(held, MediaFilesJob(owner=uid, names=tuple(old.split())))
    return True


async def settle(
    store: Store,
    job: ProfileImageJob,
    entry_id: bytes,
    settle_after_ms: int,
    now: int | None = None,
) -> tuple[str, ...]:
    """The journal of a profile image whose producer went quiet: NotYet
    while it is younger than ``settle_after_ms``; then the names, of its new
    and old files, that the user record does not name (to delete)."""
    if (now or now_ms()) - entry_ms(entry_id) < settle_after_ms:
        raise NotYet(f"the {job.image} of user {job.uid} may still be being stored")
    current = await store.hget(base_keys.user(job.uid), f"{job.image}_f")
    current = set((current or b"").decode().split())
    return tuple(n for n in dict.fromkeys(job.files.split() + job.old.split()) if n not in current)


async def names_of(store: Store, uid: int) -> tuple[str, ...]:
    """The files the user's avatar and header name now (an account's purge)."""
    raw = await store.hmget(base_keys.user(uid), [f"{k}_f" for k in keys.PROFILE_KINDS])
    return tuple(n for value in raw if value for n in value.decode().split())
