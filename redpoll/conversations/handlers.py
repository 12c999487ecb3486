"""The conversations package's job handlers (records: jobs.py), merged into
the worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..storage.store import Store
from . import tags
from .jobs import TagFollowJob


async def tag_follow(store: Store, settings: Settings, job: TagFollowJob, entry_id: bytes) -> Done:
    await tags.replay(store, settings, job)
    return Done()


TABLE: dict[type, Handler] = {TagFollowJob: tag_follow}
