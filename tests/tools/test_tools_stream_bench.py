"""The stream benchmark runs end to end (small N) and loses nothing: through
its function, and through the CLI (``redpoll bench --no-engine --stream
--clients N --json``) with clients of every kind (v1.1, SSE, WebSocket) in
load-generator processes of their own."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

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


def test_stream_bench_cli_json_mixed_clients():
    script = Path(sys.executable).with_name("redpoll")
    head = (
        [str(script)]
        if script.exists()
        else [sys.executable, "-c", "from redpoll.tools.cli import main; main()"]
    )
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "REDPOLL_CLUSTER")}
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    hard = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    # started with a low soft open-file limit: the serve process raises its own
    head = ["prlimit", f"--nofile=1024:{hard}", *head]
    out = subprocess.run(
        head
        + [
            "bench",
            "--no-engine",
            "--stream",
            "--clients",
            "200",
            "--stream-rate",
            "20",
            "--stream-seconds",
            "3",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=200,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout)["stream"]
    for key in (
        "latency_ms_p99",
        "latency_ms_p50",
        "clients",
        "lost_by_kept_up_clients",
        "memory_per_connection_kb",
        "server_cpu_us_per_event",
        "delivered",
    ):
        assert key in res, key
    assert res["clients"] == 200 and res["load_processes"] >= 1
    assert res["mix"] == {"v1": 120, "sse": 40, "ws": 40}
    assert res["disconnected_clients"] == 0 and res["unexpected"] == 0
    assert res["disconnected_by_kind"] == {}
    assert res["server_open_files_limit"] == hard  # from 1,024, by serve itself
    assert res["lost_by_kept_up_clients"] == 0
    assert res["delivered"] >= res["expected"] > 0
    assert 0 < res["latency_ms_p50"] <= res["latency_ms_p99"]
    assert 0 < res["server_lag_ms_p50"] <= res["server_lag_ms_p99"]
    assert res["memory_per_connection_kb"] > 0 and res["server_cpu_us_per_event"] > 0
    # how long the server's loop waited for a CPU while posting (/proc schedstat)
    assert 0 <= res["server_cpu_wait_s_posting"] <= res["duration_s"] + 1
    assert res["server_cpu_wait_percent_posting"] >= 0
    assert res["hub"]["deliveries"] == res["delivered"]
    # the table form marks the targets against these figures
    from redpoll.tools.bench import stream_table

    table = stream_table(res)
    p99_line = next(x for x in table.splitlines() if x.startswith("stream latency_ms_p99 "))
    assert p99_line.endswith("PASS" if res["latency_ms_p99"] < 250 else "MISS")
    lost_line = next(x for x in table.splitlines() if "lost_by_kept_up_clients" in x)
    assert lost_line.endswith("target == 0  PASS")
