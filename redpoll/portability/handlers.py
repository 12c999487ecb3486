"""The portability package's job handlers (records: jobs.py), merged into
the worker's table (redpoll.engine.worker), which gives them what they need
of the packages above: the actions an import does (imports.Actions: the
engine's follow, block, ... with their federation side) and what renders an
archive's documents (archive.Renderer: the federation's actor and notes)."""

from __future__ import annotations

from collections.abc import Callable

from ..bus.queue import Done, Handler, JobQueue
from ..core.settings import Settings
from ..media.storage import open_storage
from ..storage.store import Store
from . import archive, imports
from .jobs import ArchiveExpireJob, ArchiveJob, ImportJob


def table(
    actions: Callable[[Store, Settings], imports.Actions],
    renderer: Callable[[Store, Settings], archive.Renderer],
) -> dict[type, Handler]:
    async def step(store: Store, settings: Settings, job: ImportJob, entry_id: bytes) -> Done:
        # idempotent: a step done twice counts once (imports.step)
        more = await imports.step(store, actions(store, settings), job.uid, job.iid)
        return Done(job if more else None)

    async def archive_step(
        store: Store, settings: Settings, job: ArchiveJob, entry_id: bytes
    ) -> Done:
        # idempotent: each page written whole, the cursor advanced once
        # (archive.step), the ZIP offered once renamed whole
        more = await archive.step(
            store,
            JobQueue(store),
            open_storage(settings),
            renderer(store, settings),
            settings.data_dir,
            job,
        )
        return Done(job if more else None)

    async def archive_expire(
        store: Store, settings: Settings, job: ArchiveExpireJob, entry_id: bytes
    ) -> Done:
        # idempotent: removing what is gone already removes nothing
        due = await archive.expire(store, settings.data_dir, job.uid, job.aid, job.file)
        if due is not None:  # (queued early: again for its time)
            await JobQueue(store).enqueue_at(job, due)
        return Done(None)

    return {ImportJob: step, ArchiveJob: archive_step, ArchiveExpireJob: archive_expire}
