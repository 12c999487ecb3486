"""The command line: seed and stats against the test server."""

from __future__ import annotations

import json

from click.testing import CliRunner

from redpoll.tools.cli import main


def env_for(server) -> dict:
    url, cluster, _ = server
    return {"REDIS_URL": url, "REDPOLL_CLUSTER": "1" if cluster else "0"}


def test_seed_then_stats(settings, server):
    runner = CliRunner()
    seeded = runner.invoke(
        main,
        ["seed", "--users", "40", "--posts", "60", "--avg-follows", "5", "--seed", "3"],
        env=env_for(server),
    )
    assert seeded.exit_code == 0, (seeded.output, seeded.exception)
    assert "follows" in seeded.output
    result = runner.invoke(main, ["stats", "--json"], env=env_for(server))
    assert result.exit_code == 0, (result.output, result.exception)
    figures = json.loads(result.stdout)
    assert figures["users"] == 40 and figures["statuses"] == 60
    assert figures["queue_depth"] == 0  # seed drains by default
    assert figures["used_memory_bytes"] > 0


def test_bad_setting_is_refused_with_its_name(server):
    result = CliRunner().invoke(
        main, ["stats"], env=env_for(server) | {"REDPOLL_FSYNC": "sometimes"}
    )
    assert result.exit_code != 0
    assert "REDPOLL_FSYNC" in result.output
