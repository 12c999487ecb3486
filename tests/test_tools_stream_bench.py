"""The stream benchmark runs end to end (small N) and loses nothing."""
from __future__ import annotations

import asyncio

import pytest

from redpoll.tools import stream_bench as bench

pytestmark = pytest.mark.timeout(240)


async def test_stream_bench_small_run_loses_nothing():
    figures = await asyncio.to_thread(bench.run, 60, 20.0, 2.0)
    assert figures["clients"] == 60 and figures["posts"] > 0
    assert figures["disconnected_clients"] == 0
    assert figures["lost_by_kept_up_clients"] == 0
    assert figures["delivered"] == figures["expected"] > 0
    assert figures["latency_ms_p99"] is not None and figures["memory_per_connection_kb"] > 0
