"""`redpoll bench --no-engine --scale --quick --json` runs end to end on its
own embedded server and reports the scale figures. No
speed assertions; the counts it reports are checked, since they are exact:
a large author's post reaches no follower's home, a fanned-out one reaches
every follower's."""

from __future__ import annotations

import json

from click.testing import CliRunner

from redpoll.tools.cli import main


def test_quick_scale_bench_reports_its_figures():
    result = CliRunner().invoke(
        main, ["bench", "--no-engine", "--scale", "--quick", "--json"], env={"REDIS_URL": ""}
    )
    assert result.exit_code == 0, (result.output, result.exception)
    scale = json.loads(result.stdout)["scale"]
    for key in ("post_ms_1m", "writes_per_post_1m", "merge20_page_cost_ratio"):
        assert scale[key] > 0 and key in scale["targets"] and isinstance(scale["pass"][key], bool)
    small, *_, large = scale["posting"]
    assert small["mode"] == "fanned out" and large["mode"] == "caught up at read"
    # every follower's home got each fanned-out post (warm-up + timed ones) ...
    assert small["first_follower_home_entries"] == small["posts"] + 1
    assert small["writes_per_post"] >= small["followers"]
    # ... and none got the large author's: its writes do not grow with followers
    assert large["first_follower_home_entries"] == 0
    # (a post's own writes, its full-text index entries among them, stay
    # about a hundred: under 1% of the large author's followers)
    assert large["writes_per_post"] < 200 and large["writes_per_post"] * 100 < large["followers"]
    pages = scale["pages"]
    assert set(pages["page_ms"]) == {"large_0", "large_5", "large_20"}
    assert all(n == 20 for n in pages["statuses_per_page"].values())
    # the pages were read twice: with news before every visit, and steady
    assert set(pages["steady"]["page_ms"]) == set(pages["page_ms"])
    assert all(n == 20 for n in pages["steady"]["statuses_per_page"].values())
    assert all(v > 0 for v in pages["visits"].values())
    assert scale["idle_return"]["first_page_ms_p50"] > 0
    assert scale["memory"]["active_user_bytes"] > 0
