"""The end of every crash and cut-short test: ``redpoll check`` finds nothing."""

from __future__ import annotations

from redpoll.engine import check


async def run(rp, repair: bool = False, batch: int = 2) -> check.Report:
    return await check.check(rp.store, rp.queue, rp.media_storage, repair=repair, batch=batch)


async def assert_clean(rp) -> None:
    """What the crash and cut-short tests end with: nothing broken."""
    report = await run(rp, batch=200)
    assert report.findings == [], [f.line() for f in report.findings]
