"""The search package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..conversations.jobs import IndexJob
from ..core.settings import Settings
from ..storage.store import Store
from . import index
from .jobs import ReindexAuthorJob


async def index_one(store: Store, settings: Settings, job: IndexJob, entry_id: bytes) -> Done:
    if not await index.index_status(store, job.sid):
        raise RuntimeError(f"status {job.sid} kept changing while indexed: again later")
    return Done()


async def reindex_author(
    store: Store, settings: Settings, job: ReindexAuthorJob, entry_id: bytes
) -> Done:
    last = await index.reindex_author(store, job.uid, job.before)
    return Done(ReindexAuthorJob(job.uid, last) if last else None)


TABLE: dict[type, Handler] = {IndexJob: index_one, ReindexAuthorJob: reindex_author}
