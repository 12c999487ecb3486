"""The ``redpoll`` command as an operator runs it: its environment, its
subcommands (``redpoll admin ...``) and a ``redpoll worker`` process."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from redpoll.storage.server import (
    _die_with_parent,
)
from support.mastodon import LOOSE_LIMITS

REDPOLL = Path(sys.executable).with_name("redpoll")


def own_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A clean operator environment: no redpoll settings from outside, a
    data home of its own, loose rate limits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDPOLL_") and k != "REDIS_URL"}
    env.update(LOOSE_LIMITS, XDG_DATA_HOME=str(tmp_path / "xdg"), REDPOLL_JOB_CLAIM_MS="500")
    env.update(extra)
    return env


def redpoll(
    args: list[str], env: dict[str, str], cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REDPOLL), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


#: The console script of this virtualenv.
REDPOLL = Path(sys.executable).with_name("redpoll")


#: Bound on every wait: generous, the machine is shared and has 2 cores.
WAIT_S = 180.0


#: Small fan-out steps make long chains of deferred jobs: with 2,000 followers
#: a chain is 200 jobs, long enough to kill a worker twice in the middle of it
#: (a worker runs a batch of 50 over 2,000 followers in well under a second).
BATCH = 10


async def wait_for(
    check, what: str, timeout: float = WAIT_S, interval: float = 0.01, detail=None
) -> None:
    """Poll ``await check()`` until true; fail saying ``what`` did not happen."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        if loop.time() > deadline:
            extra = f"\n{await detail()}" if detail is not None else ""
            raise AssertionError(f"gave up after {timeout:.0f}s waiting for {what}{extra}")
        await asyncio.sleep(interval)


class WorkerProcess:
    """``redpoll worker`` as a child process, output in a log file."""

    def __init__(
        self, url: str, cluster: bool, log_path: Path, *, batch: int = BATCH, claim_ms: int = 500
    ):
        env = {
            k: v for k, v in os.environ.items() if not k.startswith("REDPOLL_") and k != "REDIS_URL"
        }
        env.update(
            REDIS_URL=url,
            REDPOLL_CLUSTER="1" if cluster else "0",
            REDPOLL_JOB_CLAIM_MS=str(claim_ms),
            REDPOLL_FANOUT_BATCH=str(batch),
            REDPOLL_DATA_DIR=str(log_path.parent / "worker-data"),
        )
        self.log_path = log_path
        self._log = open(log_path, "ab")
        # Started from the event loop's (main) thread: the child is told to die
        # with it (PR_SET_PDEATHSIG), so a crashed test run leaves no worker.
        self.proc = subprocess.Popen(
            [str(REDPOLL), "worker"],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def tail(self, chars: int = 3000) -> str:
        return f"--- {self.log_path.name} (rc={self.proc.poll()}) ---\n{self.log()[-chars:]}"

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is acknowledged on the way out."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        assert self.proc.returncode == -signal.SIGKILL

    def terminate(self) -> int:
        """SIGTERM, the graceful stop; returns the exit code."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"worker ignored SIGTERM for 60s\n{self.tail()}") from None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


def admin(srv, *args, stdin: str | None = None) -> subprocess.CompletedProcess:
    script = Path(sys.executable).with_name("redpoll")
    env = dict(os.environ, REDIS_URL=srv.redis_url, REDPOLL_CLUSTER="1" if srv.cluster else "0")
    return subprocess.run(
        [str(script), "admin", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, (done.stdout, done.stderr[-2000:])
    return done.stdout


def admin_ok(server, *args: str) -> str:
    """``redpoll admin ARGS`` on the test's database (the ``server``
    fixture's URL and topology); its output, or a failed assertion with
    what it said."""
    url, cluster, _ = server
    env = dict(os.environ, REDIS_URL=url, REDPOLL_CLUSTER="1" if cluster else "0")
    done = subprocess.run(
        [str(REDPOLL), "admin", *args], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, (done.stdout, done.stderr[-2000:])
    return done.stdout
