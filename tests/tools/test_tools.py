"""Tools are out of the product: the server and the command line load no
load generator or its libraries, and no tool imports the command line."""

from __future__ import annotations

import json
import subprocess
import sys


def loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_server_and_cli_load_no_load_generator():
    mods = loaded_after(
        "import redpoll.tools.cli, redpoll.api.app, redpoll.stream.app, redpoll.api.serve"
    )
    assert "redpoll.tools.cli" in mods and "redpoll.api.app" in mods
    # (httpx is the server's own client for federation, redpoll.federation.client)
    assert "aiohttp" not in mods
    assert not {"redpoll.tools.bench_http", "redpoll.tools.stream_bench"} & mods


def test_tools_do_not_import_the_command_line():
    mods = loaded_after(
        "import redpoll.tools.bench, redpoll.tools.seed, redpoll.tools.demo, "
        "redpoll.tools.bench_http, redpoll.tools.stream_bench"
    )
    assert "redpoll.tools.bench" in mods and "redpoll.tools.cli" not in mods
