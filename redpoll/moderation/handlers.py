"""The moderation package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..storage.store import Store
from . import moderation
from .jobs import PurgeAccountJob


async def purge_account(
    store: Store, settings: Settings, job: PurgeAccountJob, entry_id: bytes
) -> Done:
    await moderation.purge_account_keys(store, job.uid, job.login)
    return Done(count="users_gone")


TABLE: dict[type, Handler] = {PurgeAccountJob: purge_account}
