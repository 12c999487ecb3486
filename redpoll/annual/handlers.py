"""The annual package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..storage.store import Store
from . import reports
from .jobs import AnnualReportJob


async def annual_report(
    store: Store, settings: Settings, job: AnnualReportJob, entry_id: bytes
) -> Done:
    # the same report however often this runs (reports.generate overwrites)
    await reports.generate(store, job.uid, job.year)
    return Done()


TABLE: dict[type, Handler] = {AnnualReportJob: annual_report}
