"""The scheduling package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler, JobQueue
from ..core.settings import Settings
from ..storage.store import Store
from . import scheduled
from .jobs import ScheduledStatusJob


async def scheduled_status(
    store: Store, settings: Settings, job: ScheduledStatusJob, entry_id: bytes
) -> Done:
    # posted once however often this runs (scheduled.publish)
    await scheduled.publish(store, JobQueue(store), settings, job)
    return Done()


TABLE: dict[type, Handler] = {ScheduledStatusJob: scheduled_status}
