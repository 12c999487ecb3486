"""The moderation package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..storage.store import Store
from . import admin_accounts, moderation
from .jobs import ApprovalJob, PurgeAccountJob


async def purge_account(
    store: Store, settings: Settings, job: PurgeAccountJob, entry_id: bytes
) -> Done:
    await moderation.purge_account_keys(store, job.uid, job.login)
    return Done(count="users_gone")


async def approve_account(
    store: Store, settings: Settings, job: ApprovalJob, entry_id: bytes
) -> Done:
    """The replay of an approval cut short: its steps, then its mail queued
    as the journal's continuation (in the step that finishes it)."""
    return Done(next=await admin_accounts.finish_approval(store, settings, job))


TABLE: dict[type, Handler] = {PurgeAccountJob: purge_account, ApprovalJob: approve_account}
