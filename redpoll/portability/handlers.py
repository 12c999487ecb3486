"""The portability package's job handlers (records: jobs.py), merged into
the worker's table (redpoll.engine.worker), which gives them the actions an
import does (imports.Actions: the engine's follow, block, ... with their
federation side)."""

from __future__ import annotations

from collections.abc import Callable

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..storage.store import Store
from . import imports
from .jobs import ImportJob


def table(actions: Callable[[Store, Settings], imports.Actions]) -> dict[type, Handler]:
    async def step(store: Store, settings: Settings, job: ImportJob, entry_id: bytes) -> Done:
        # idempotent: a step done twice counts once (imports.step)
        more = await imports.step(store, actions(store, settings), job.uid, job.iid)
        return Done(job if more else None)

    return {ImportJob: step}
