"""The mail package's job handler, merged into the worker's table
(redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..storage.store import Store
from . import delivery
from .jobs import MailJob


async def mail(store: Store, settings: Settings, job: MailJob, entry_id: bytes) -> Done:
    # its retries are jobs for later of their own (delivery.send)
    await delivery.send(store, settings, job)
    return Done()


TABLE: dict[type, Handler] = {MailJob: mail}
