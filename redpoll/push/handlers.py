"""The push package's job handler, merged into the worker's table
(redpoll.engine.worker). Its record, PushJob, is the notifications
package's (redpoll.notifications.jobs): a notification queues it, and
notifications sit below push."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..notifications.jobs import PushJob
from ..storage.store import Store
from . import delivery


async def push(store: Store, settings: Settings, job: PushJob, entry_id: bytes) -> Done:
    # its retries are jobs for later of their own (delivery.send)
    await delivery.send(store, settings, job)
    return Done()


TABLE: dict[type, Handler] = {PushJob: push}
