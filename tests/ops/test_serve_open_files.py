"""`redpoll serve` raises its open-file limit (RLIMIT_NOFILE soft -> hard) at
start, logs it, and warns when the limit stays below what 10,000 streams need
(limits.SERVE_OPEN_FILES_NEEDED). Real serve processes started under
``prlimit`` with a low soft limit; the kernel's view read from /proc."""

from __future__ import annotations

import json
import resource

import httpx
import pytest
from support.streams import StreamProc  # noqa: F401

from redpoll.core import limits

pytestmark = pytest.mark.timeout(120)


class LimitedServe(StreamProc):
    """A serve process started with the open-file limit ``soft:hard``."""

    def __init__(self, *args, nofile: str, **env):
        super().__init__(*args, **env)
        self.nofile = nofile

    def command(self) -> list[str]:
        cmd = super().command()
        cmd[cmd.index("--log-level") + 1] = "info"
        return ["prlimit", f"--nofile={self.nofile}", *cmd]


def open_files(pid: int) -> tuple[int, int]:
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                soft, hard = line.split()[3:5]
                return int(soft), int(hard)
    raise AssertionError("no open-files line")


def log_lines(proc: StreamProc) -> list[dict]:
    out = []
    for line in proc.log_path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def run(server, tmp_path, nofile: str):
    url, cluster, _ = server
    proc = LimitedServe(url, cluster, tmp_path, nofile=nofile).start()
    try:
        assert httpx.get(proc.base + "/api/v1/streaming/health").text == "OK"
        return open_files(proc.process.pid), log_lines(proc)
    finally:
        proc.stop()


def test_serve_raises_soft_limit_to_hard(server, tmp_path):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    hard = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    (soft_now, hard_now), lines = run(server, tmp_path, f"1024:{hard}")
    assert (soft_now, hard_now) == (hard, hard)
    said = [x for x in lines if x.get("msg") == "open-file limit"]
    assert said and said[0]["was"] == 1024 and said[0]["open_files"] == hard
    short = [x for x in lines if x["level"] == "warning" and "open-file limit" in x["msg"]]
    assert bool(short) == (hard < limits.SERVE_OPEN_FILES_NEEDED)


def test_serve_says_when_hard_limit_is_too_low(server, tmp_path):
    (soft_now, hard_now), lines = run(server, tmp_path, "256:4096")
    assert (soft_now, hard_now) == (4096, 4096)
    short = [x for x in lines if x["level"] == "warning" and "open-file limit" in x["msg"]]
    assert len(short) == 1
    assert short[0]["needed"] == limits.SERVE_OPEN_FILES_NEEDED and short[0]["open_files"] == 4096
    assert "4096" in short[0]["msg"] and "ulimit" in short[0]["msg"]
