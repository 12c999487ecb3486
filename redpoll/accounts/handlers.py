"""The accounts package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core import limits
from ..core.settings import Settings
from ..storage.store import Store
from . import account
from .jobs import SignUpJob


async def sign_up(store: Store, settings: Settings, job: SignUpJob, entry_id: bytes) -> Done:
    settle_after_ms = settings.job_claim_ms * limits.SIGN_UP_SETTLE_CLAIMS
    settled = await account.settle_sign_up(store, job, entry_id, settle_after_ms)
    return Done(count="users") if settled else Done()


TABLE: dict[type, Handler] = {SignUpJob: sign_up}
