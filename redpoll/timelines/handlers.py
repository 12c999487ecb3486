"""The timelines package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..storage.store import Store
from . import fanout, refill
from .jobs import CleanupJob, FanoutJob, RefillJob


async def fan_out(store: Store, settings: Settings, job: FanoutJob, entry_id: bytes) -> Done:
    if await fanout.gone(store, job.sid):
        return Done()  # deleted meanwhile: its cleanup chain takes over
    return Done((await fanout.advance(store, settings, job)).next)


async def cleanup(store: Store, settings: Settings, job: CleanupJob, entry_id: bytes) -> Done:
    return Done(await fanout.sweep(store, settings, job))


async def refill_timeline(
    store: Store, settings: Settings, job: RefillJob, entry_id: bytes
) -> Done:
    if job.lid is not None:
        await refill.refill_list(store, job.uid, job.lid)
    else:
        await refill.refill_home(store, job.uid)
    return Done()


TABLE: dict[type, Handler] = {FanoutJob: fan_out, CleanupJob: cleanup, RefillJob: refill_timeline}
