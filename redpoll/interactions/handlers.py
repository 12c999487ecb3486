"""The interactions package's job handlers (records: jobs.py), merged into
the worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..storage.store import Store
from . import favourites
from .jobs import FavouriteJob


async def favourite(store: Store, settings: Settings, job: FavouriteJob, entry_id: bytes) -> Done:
    await favourites.replay(store, settings, job)
    return Done()


TABLE: dict[type, Handler] = {FavouriteJob: favourite}
