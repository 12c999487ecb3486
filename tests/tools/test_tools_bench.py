"""`redpoll bench --quick --json` runs end to end on its own embedded server.

Only checks that the run works and reports every figure: no speed
assertions (timings on a shared machine are not test material).
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from redpoll.tools.cli import main

RATIOS = ("fanout_ratio", "read_ratio", "follow_ratio", "memory_ratio", "fanout_vs_limit")


def test_quick_bench_prints_ratios_as_json():
    # REDIS_URL unset: the bench must start (and stop) its own server
    result = CliRunner().invoke(main, ["bench", "--quick", "--json"], env={"REDIS_URL": ""})
    assert result.exit_code == 0, (result.output, result.exception)
    figures = json.loads(result.stdout)
    for key in RATIOS:
        value = figures[key]
        assert isinstance(value, float) and math.isfinite(value) and value > 0, (key, value)
        assert key in figures["targets"] and isinstance(figures["pass"][key], bool)
    for part in ("fanout", "read", "follow"):
        assert figures[part]["redpoll_per_s"] > 0 and figures[part]["naive_per_s"] > 0
    assert figures["fanout"]["limit_per_s"] > 0
    # CPU a follow, each contender: this process and the server's main thread
    for side in ("redpoll", "naive"):
        cpu = figures["follow"]["cpu_us_per_follow"][side]
        assert cpu["client"] > 0 and cpu["server"] > 0, (side, cpu)
    # the seed's own read on a synchronous client, for the per-status figure
    assert figures["read"]["seed_sync_per_s"] > 0
    assert set(figures["read"]["statuses_per_s"]) == {
        "redpoll",
        "naive",
        "naive_statuses",
        "seed_sync",
    }
    # the naive client reading what a page shows (counts, authors) does more
    # than the one reading the statuses alone
    assert (
        figures["read_ratio_statuses_only"] > 0 and figures["read"]["naive_statuses_only_per_s"] > 0
    )
    assert figures["memory"]["redpoll_bytes_per_entry"] > 0
    assert figures["memory"]["naive_bytes_per_entry"] > 0
    assert figures["embedded"] is True


def test_http_part_reports_every_contender():
    """`--no-engine --http` on a small load: the home page, the
    notifications page, a thread, the instance endpoint, the fixed probe and
    the all-process pass answered, the figures are there (no speed
    assertion). The home requests outnumber one IP's request budget over
    all its tokens (a small one here, set in the environment the bench's
    server inherits), which the bench's server must not apply (its load
    comes from one address)."""
    budget = 150
    result = CliRunner().invoke(
        main,
        [
            "bench",
            "--no-engine",
            "--http",
            "--http-users",
            "6",
            "--http-requests",
            str(budget + 100),
            "--http-seconds",
            "60",
            "--http-workers",
            "2",
            "--json",
        ],
        env={"REDIS_URL": "", "REDPOLL_RATE_IP_TOKENS": f"{budget}/300"},
    )
    assert result.exit_code == 0, (result.output, result.exception)
    http = json.loads(result.stdout)["http"]
    for name in ("home", "notifications", "thread", "instance", "probe", "home_all_processes"):
        r = http[name]
        assert r["requests"] == budget + 100 and r["errors"] == 0, (name, r)
        assert r["rps"] > 0 and r["p99_ms"] >= r["p50_ms"] > 0, (name, r)
        assert r["generator_cpu_us_per_request"] > 0 and r["server_cpu_us_per_request"] >= 0
    assert http["home_vs_probe"] > 0 and isinstance(http["meets_target"], bool)
    assert http["home_rps"] == http["home"]["rps"] and http["probe_rps"] == http["probe"]["rps"]
    assert http["home_vs_probe"] == round(http["home_rps"] / http["probe_rps"], 3)
    assert http["workers"] == 2
    # the probe answers with the body of a real home page (pages differ a
    # little from user to user, and so do the headers)
    assert abs(http["probe"]["bytes_per_response"] / http["home"]["bytes_per_response"] - 1) < 0.1
    # each user's notifications page and thread have something in them:
    # follows, replies that mention them and favourites, and their replies
    assert http["notifications"]["bytes_per_response"] > 1000
    assert http["thread"]["bytes_per_response"] > 1000
    assert http["notifications_vs_probe_cpu"] >= 0 and http["thread_vs_probe_cpu"] >= 0
    from redpoll.tools.bench_http import format_report

    report = format_report(http)
    assert "home / probe" in report and "/api/v1/notifications (20)" in report


@pytest.mark.filterwarnings("error::RuntimeWarning")  # e.g. a cluster command never awaited
def test_cluster_bench_reports_spread_and_hot_keys():
    """`redpoll bench --quick --cluster --json` starts its own 3-master
    cluster and reports, beside the ratios, each master's share per phase,
    the keys per master and the hot spots. The shares are checked as shares
    (they add up to 1 over three masters), not as speeds."""
    result = CliRunner().invoke(
        main,
        ["bench", "--quick", "--cluster", "--json"],
        env={"REDIS_URL": "", "REDPOLL_CLUSTER": ""},
    )
    assert result.exit_code == 0, (result.output, result.exception)
    figures = json.loads(result.stdout)
    for key in RATIOS:
        assert figures[key] > 0, key
    # the server's CPU summed over the masters
    assert figures["follow"]["cpu_us_per_follow"]["redpoll"]["server"] > 0
    cluster = figures["cluster"]
    assert cluster["masters"] == 3 and len(cluster["keys"]) == 3
    assert all(n > 0 for n in cluster["keys"].values())
    for phase in ("fan-out", "reads", "follows", "posts", "celebrity"):
        shares = cluster["phases"][phase]["command_share"]
        assert len(shares) == 3 and abs(sum(shares.values()) - 1) < 0.01, (phase, shares)
    hot = cluster["hot"]
    assert hot["public_timeline"]["posts_per_s"] > 0
    assert hot["celebrity_profile"]["one_profile_pages_per_s"] > 0
    assert hot["post_single_keys"]["public timeline shards"].endswith("masters")


def test_load_generator_returns_every_latency_of_a_long_phase():
    """A phase's result (every latency) is hundreds of KB: it comes back
    whole from the child process (read from a pipe it was twice cut off at
    64 KB under a heavy load), every request answered."""
    from redpoll.tools import loadgen
    from redpoll.tools.bench_http import Probe

    probe = Probe(b'{"ok": true}')
    try:
        spec = loadgen.Spec(
            "127.0.0.1",
            probe.port,
            [loadgen.get("/", f"127.0.0.1:{probe.port}")],
            count=30_000,
            seconds=60,
            concurrency=8,
        )
        result = loadgen.run_in_child(spec)
    finally:
        probe.close()
    assert result.errors == 0
    assert len(result.latencies_ms) == result.requests == 30_000
    assert len(json.dumps(result.latencies_ms)) > 65_536
