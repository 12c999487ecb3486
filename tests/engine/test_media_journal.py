"""An upload or a profile image whose producer died part way: its journal is
settled by a worker, leaving no file and no record of what did not finish
(and keeping what did). The producer's death is played by stopping after a
step; the settle is driven with a time argument, not by waiting."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from redpoll import Redpoll
from redpoll.bus.queue import NotYet
from redpoll.core import keys
from redpoll.core.errors import MediaStorageError, ValidationError
from redpoll.core.models import now_ms
from redpoll.media import files, processing, profile_images, uploads
from redpoll.media import keys as media_keys
from redpoll.media.jobs import MediaJob, ProfileImageJob
from redpoll.moderation import moderation

SETTLE_MS = 60_000


def jpeg(size=(64, 48)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (1, 200, 3)).save(out, "JPEG")
    return out.getvalue()


@pytest.fixture
async def mrp(settings, tmp_path):
    engine = await Redpoll.open(settings.with_(media_dir=str(tmp_path / "media")))
    yield engine
    await engine.close()


def stored(rp: Redpoll) -> set[str]:
    root = rp.media_storage.root
    return (
        {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
        if root.exists()
        else set()
    )


async def test_an_upload_cut_short_after_its_files_is_given_up_whole(mrp):
    alice = await mrp.accounts.sign_up("alice")
    data = jpeg()
    probe = processing.inspect(data)
    done = processing.process(data, probe)
    # the producer's steps 2-8 by hand, then it "dies" before marking the record ready
    mid = await mrp.store.incr(media_keys.MEDIA_SEQ)
    held = await mrp.queue.hold(MediaJob(owner=alice.id, mid=mid))
    await mrp.store.zadd(media_keys.PENDING, {media_keys.pending_member(alice.id, mid): now_ms()})
    key = media_keys.record(alice.id, mid)
    assert await mrp.store.run(
        "media_create", [key], ["id", mid, "owner", alice.id, "state", "processing", "at", now_ms()]
    )
    names = await files.names(mrp.store, mid, done.files)
    assert await mrp.store.run("media_step", [key], ["files", " ".join(names)])
    for name, out in zip(names, done.files):
        await mrp.media_storage.put(name, out.data)
    assert stored(mrp) == set(names)

    job = MediaJob(owner=alice.id, mid=mid)
    with pytest.raises(NotYet):  # the producer may only be slow
        await uploads.settle(mrp.store, mrp.media_storage, job, held.entry_id, SETTLE_MS)
    finished = await uploads.settle(
        mrp.store, mrp.media_storage, job, held.entry_id, SETTLE_MS, now=now_ms() + SETTLE_MS + 1
    )
    assert finished is False
    assert stored(mrp) == set()
    assert (await mrp.store.hgetall(key))[b"state"] == b"gone"
    assert await mrp.store.zcard(media_keys.PENDING) == 0
    # the slow producer's last step is refused, and nothing can be attached
    assert not await mrp.store.run("media_step", [key], ["state", "ready"])
    with pytest.raises(ValidationError):
        await mrp.statuses.post(alice.id, "with it", media=[mid])
    # settling again is harmless
    await uploads.settle(mrp.store, mrp.media_storage, job, held.entry_id, 0)


async def test_an_upload_cut_short_before_its_record_leaves_only_a_tombstone(mrp):
    alice = await mrp.accounts.sign_up("alice")
    mid = await mrp.store.incr(media_keys.MEDIA_SEQ)
    held = await mrp.queue.hold(MediaJob(owner=alice.id, mid=mid))
    await uploads.settle(
        mrp.store, mrp.media_storage, MediaJob(owner=alice.id, mid=mid), held.entry_id, 0
    )
    key = media_keys.record(alice.id, mid)
    assert not await mrp.store.run("media_create", [key], ["id", mid, "state", "processing"])
    assert 0 < await mrp.store.ttl(key) <= 86_400


async def test_a_finished_upload_survives_its_journal_being_settled(mrp):
    alice = await mrp.accounts.sign_up("alice")
    upload = await mrp.media.upload(alice.id, jpeg((800, 600)), description="kept")
    assert upload.ready
    job = MediaJob(owner=alice.id, mid=upload.id)
    assert await uploads.settle(mrp.store, mrp.media_storage, job, b"1-0", 0) is True
    status = await mrp.statuses.post(alice.id, "", media=[upload.id])
    assert len(stored(mrp)) == 2 and "media" in status.extra
    await mrp.drain()  # (the journal was released by the upload itself)
    assert await mrp.queue.depth() == 0


async def test_a_profile_image_cut_short_keeps_what_the_record_names(mrp):
    alice = await mrp.accounts.sign_up("alice")
    first = await profile_images.prepare("avatar", jpeg((500, 500)))
    await profile_images.store_image(mrp.store, mrp.queue, mrp.media_storage, alice.id, first)
    current = (await mrp.store.hget(keys.user(alice.id), "avatar_f")).decode().split()
    assert set(current) == stored(mrp)
    # a second avatar: its files written, then the producer dies before the swap
    second = await profile_images.prepare("avatar", jpeg((300, 300)))
    mid = await mrp.store.incr(media_keys.MEDIA_SEQ)
    names = await files.names(mrp.store, mid, second.processed.files)
    job = ProfileImageJob(
        uid=alice.id, image="avatar", files=" ".join(names), old=" ".join(current)
    )
    held = await mrp.queue.hold(job)
    for name, out in zip(names, second.processed.files):
        await mrp.media_storage.put(name, out.data)
    gone = await profile_images.settle(mrp.store, job, held.entry_id, 0)
    assert set(gone) == set(names)  # the record still names the first avatar
    await mrp.queue.release(held)
    for name in gone:
        await mrp.media_storage.delete(name)
    assert stored(mrp) == set(current)
    assert (await mrp.accounts.get_user(alice.id)).avatar.endswith(current[0])


async def test_a_removed_avatar_cut_short_keeps_or_deletes_as_the_record_says(mrp):
    """A removal whose producer dies after its journal is held: before the
    record changed, the settle deletes nothing; after, it deletes the
    files the record no longer names."""
    alice = await mrp.accounts.sign_up("alice")
    image = await profile_images.prepare("avatar", jpeg((500, 500)))
    await profile_images.store_image(mrp.store, mrp.queue, mrp.media_storage, alice.id, image)
    current = (await mrp.store.hget(keys.user(alice.id), "avatar_f")).decode()
    job = ProfileImageJob(uid=alice.id, image="avatar", files="", old=current)
    held = await mrp.queue.hold(job)  # (the producer dies here)
    assert await profile_images.settle(mrp.store, job, held.entry_id, 0) == ()
    await mrp.queue.release(held)
    held = await mrp.queue.hold(job)
    await mrp.store.run("profile_image", [keys.user(alice.id)], ["avatar", current, "", "", ""])
    # (and here, after the record changed)
    assert set(await profile_images.settle(mrp.store, job, held.entry_id, 0)) == set(
        current.split()
    )
    await mrp.queue.release(held)
    # the whole call: the record cleared, the files' deletion queued with the release
    again = await profile_images.prepare("avatar", jpeg((300, 300)))
    await profile_images.store_image(mrp.store, mrp.queue, mrp.media_storage, alice.id, again)
    assert await profile_images.remove_image(mrp.store, mrp.queue, alice.id, "avatar")
    assert (await mrp.accounts.get_user(alice.id)).avatar == ""
    assert not await profile_images.remove_image(mrp.store, mrp.queue, alice.id, "avatar")


async def test_workers_queue_the_sweep_once_per_interval(mrp):
    import asyncio

    from redpoll.media import keys as mk

    alice = await mrp.accounts.sign_up("alice")
    upload = await mrp.media.upload(alice.id, jpeg())
    stop = asyncio.Event()
    runs = [asyncio.create_task(mrp.worker(f"w{i}").run(stop)) for i in range(2)]
    for _ in range(100):
        if await mrp.store.exists(mk.SWEEP_DUE) and await mrp.queue.depth() == 0:
            break
        await asyncio.sleep(0.02)
    stop.set()
    await asyncio.gather(*runs)
    assert 0 < await mrp.store.ttl(mk.SWEEP_DUE) <= 600
    assert await mrp.queue.depth() == 0
    # the sweep ran as of now: a fresh upload stays
    assert (await mrp.media.attachment(alice.id, upload.id)).ready


async def test_a_deleted_account_takes_its_uploads_avatar_and_header_along(mrp):
    alice = await mrp.accounts.sign_up("alice")
    shown = await mrp.media.upload(alice.id, jpeg((800, 600)))
    loose = await mrp.media.upload(alice.id, jpeg((700, 500)))
    await mrp.statuses.post(alice.id, "with a picture", media=[shown.id])
    await mrp.accounts.update_credentials(
        alice.id, {}, {"avatar": jpeg((500, 500)), "header": jpeg((1600, 600))}
    )
    await mrp.drain()
    assert len(stored(mrp)) == 6  # two uploads of two files, an avatar, a header
    uid = await moderation.delete_account(mrp.store, mrp.queue, "alice")
    await mrp.drain()
    await moderation.purge_account(mrp.store, mrp.queue, uid, "alice")
    await mrp.drain()
    assert stored(mrp) == set()
    for mid in (shown.id, loose.id):
        assert (await mrp.store.hgetall(media_keys.record(uid, mid)))[b"state"] == b"gone"


async def test_a_storage_that_fails_a_write_gives_the_upload_up_at_once(settings, tmp_path):
    """The local directory cannot be written (a file stands where it should
    be): the upload is refused with MediaStorageError (503) and given up at
    once, as S3's refusals are (tests/api/test_media_s3.py): a tombstone
    saying why, no pending entry, no held journal; an avatar changes
    nothing, the profile's fields included."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_bytes(b"")
    rp = await Redpoll.open(settings.with_(media_dir=str(blocker)))
    try:
        alice = await rp.accounts.sign_up("alice")
        with pytest.raises(MediaStorageError, match="could not store a file"):
            await rp.media.upload(alice.id, jpeg())
        mid = int(await rp.store.get(media_keys.MEDIA_SEQ))
        record = await rp.store.hgetall(media_keys.record(alice.id, mid))
        assert record[b"state"] == b"gone" and b"could not store" in record[b"err"]
        upload = await rp.media.attachment(alice.id, mid)  # reads as failed, saying why
        assert upload.state == uploads.FAILED and "could not store" in upload.error
        assert await rp.store.zcard(media_keys.PENDING) == 0
        assert sum([await rp.store.xlen(k) for k in keys.all_held_job_streams()]) == 0
        with pytest.raises(MediaStorageError):
            await rp.accounts.update_credentials(
                alice.id, {"display_name": "Changed"}, {"avatar": jpeg((300, 300))}
            )
        after = await rp.accounts.get_user(alice.id)
        assert after.display_name != "Changed" and after.avatar == ""
        await rp.drain()  # the deletions queued find nothing to delete
    finally:
        await rp.close()
    assert blocker.read_bytes() == b""
