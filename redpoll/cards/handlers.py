"""The cards package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker), which gives them the domain
policy's word on a server's media (cards.Rejected)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..storage.store import Store
from . import cards
from .jobs import CardImageJob, CardJob


def table(rejected: cards.Rejected) -> dict[type, Handler]:
    async def card(store: Store, settings: Settings, job: CardJob, entry_id: bytes) -> Done:
        # idempotent: a passing failure (a timeout, a 5xx) is retried
        await cards.attach(store, settings, rejected, job.sid)
        return Done()

    async def image(store: Store, settings: Settings, job: CardImageJob, entry_id: bytes) -> Done:
        # idempotent: kept once under the same member; a passing failure is retried
        await cards.keep_image_again(store, settings, rejected, job.sid, job.part)
        return Done()

    return {CardJob: card, CardImageJob: image}
