"""The mail package's job handler, merged into the worker's table
(redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler, NotYet
from ..core import limits
from ..core.settings import Settings
from ..storage.store import Store
from . import delivery, keys
from .jobs import MailJob


async def mail(store: Store, settings: Settings, job: MailJob, entry_id: bytes) -> Done:
    """One message per queued job, though jobs run at least once: a run
    marks the job ``sending`` (SET NX, for as long as a run may take), and
    ``sent`` after; another run meanwhile waits (NotYet), one after sends
    nothing. A run that dies while sending leaves its mark to expire, and
    the job is sent again then (at least once, never twice at once). Its
    retries are jobs for later of their own (delivery.send)."""
    key = keys.sending(entry_id.decode())
    if not await store.set(key, "sending", nx=True, ex=int(MailJob.time_limit_s) + 30):
        if await store.get(key) == b"sent":
            return Done()
        raise NotYet("this mail is being sent by another run")
    try:
        await delivery.send(store, settings, job)
    except BaseException:
        await store.delete(key)
        raise
    await store.set(key, "sent", ex=limits.MAIL_SENT_KEPT_S)
    return Done()


TABLE: dict[type, Handler] = {MailJob: mail}
