"""`redpoll bench --no-engine --capacity --quick --json` runs end to end: people
seeded through the engine, a real `redpoll serve`, streams and requests from
load-generator processes of their own.

Only sanity is checked (CPU was spent, every kind of request was made and
answered, stream events arrived, the figures add up): no timing assertions,
timings on a shared machine are not test material.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from redpoll.tools.bench_capacity import KINDS, MIX, format_report
from redpoll.tools.cli import main

pytestmark = pytest.mark.timeout(300)

KEYS = (
    "people_per_core",
    "cpu_s_per_1000_person_hours",
    "memory_per_person_kb",
    "stream_delivery_p99_ms",
    "all_p99_under_250ms",
    "errors",
    "person_hours",
    "people_per_core_uncompressed",
    "idle_stream_cpu_s_per_1000_connection_hours",
)


def test_quick_capacity_run_reports_every_figure():
    result = CliRunner().invoke(
        main, ["bench", "--no-engine", "--capacity", "--quick", "--json"], env={"REDIS_URL": ""}
    )
    assert result.exit_code == 0, (result.output, result.exception)
    res = json.loads(result.stdout)["capacity"]
    for key in KEYS:
        assert key in res, key
    for kind in KINDS:
        assert f"{kind}_p99_ms" in res, kind
    # every kind of request was made, and answered
    assert res["errors"] == 0, res["errors_by_kind"]
    for kind in KINDS:
        k = res["kinds"][kind]
        assert k["requests"] > 0, (kind, res["kinds"])
        assert 0 < k["p50_ms"] <= k["p99_ms"], (kind, k)
    assert res["requests"] == sum(k["requests"] for k in res["kinds"].values())
    # reads outnumber writes, as the mix says
    assert res["kinds"]["home"]["requests"] > res["kinds"]["post"]["requests"]
    assert set(res["mix_per_hour"]) == set(MIX) | {"return"}
    # every active person held a stream, and posts reached followers' streams
    assert res["streams"] == res["active_people"] > 0
    assert res["stream_events"] > 0 and res["stream_deliveries_timed"] > 0
    assert res["stream_delivery_p99_ms"] >= res["stream_delivery_p50_ms"] >= 0
    # the server's side spent CPU, and the per-person figures follow from it
    assert res["server_cpu_s"] > 0 and res["person_hours"] > 0
    assert res["cpu_s_per_1000_person_hours"] == pytest.approx(
        res["server_cpu_s"] / res["person_hours"] * 1000, rel=0.02
    )
    assert res["people_per_core"] == pytest.approx(
        3600 / (res["cpu_s_per_1000_person_hours"] / 1000), rel=0.02
    )
    assert 0 < res["people_per_core_uncompressed"] <= res["people_per_core"]
    assert res["memory_per_person_kb"] > 0 and res["valkey_used_memory_mb"] > 0
    assert res["workers"] >= 1 and res["load_processes"] >= 1 and res["jobs_left"] >= 0
    assert res["overrun_s"] >= 0
    assert isinstance(res["all_p99_under_250ms"], bool)
    # the table names the headline figures
    table = format_report(res)
    for name in (
        "people_per_core",
        "cpu_s_per_1000_person_hours",
        "memory_per_person_kb",
        "stream delivery",
    ):
        assert name in table
