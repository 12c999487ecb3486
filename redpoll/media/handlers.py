"""The media package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core import limits
from ..core.settings import Settings
from ..storage.store import Store
from . import profile_images, remote, uploads
from .jobs import MediaFilesJob, MediaJob, MediaSweepJob, ProfileImageJob
from .storage import open_storage


def _settle_after_ms(settings: Settings) -> int:
    return settings.job_claim_ms * limits.MEDIA_SETTLE_CLAIMS


async def media(store: Store, settings: Settings, job: MediaJob, entry_id: bytes) -> Done:
    await uploads.settle(store, open_storage(settings), job, entry_id, _settle_after_ms(settings))
    return Done()


async def profile_image(
    store: Store, settings: Settings, job: ProfileImageJob, entry_id: bytes
) -> Done:
    names = await profile_images.settle(store, job, entry_id, _settle_after_ms(settings))
    await uploads.delete_files(open_storage(settings), names)
    return Done()


async def media_files(
    store: Store, settings: Settings, job: MediaFilesJob, entry_id: bytes
) -> Done:
    await uploads.delete_files(open_storage(settings), job.names)
    return Done()


async def media_sweep(
    store: Store, settings: Settings, job: MediaSweepJob, entry_id: bytes
) -> Done:
    storage = open_storage(settings)
    await uploads.sweep(store, storage, job.now or None)
    # other servers' media kept here: past the age limit, or over the size limit
    bounds = remote.Bounds(settings.remote_media_max_age_s, settings.remote_media_max_bytes)
    await remote.evict(store, storage, bounds, now=job.now or None)
    return Done()


TABLE: dict[type, Handler] = {
    MediaJob: media,
    ProfileImageJob: profile_image,
    MediaFilesJob: media_files,
    MediaSweepJob: media_sweep,
}
