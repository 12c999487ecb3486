"""Run ``redpoll serve`` as a real child process (tests and the HTTP bench).

with ServeProcess({"REDIS_URL": url}) as srv:
    httpx.get(srv.url + "/api/v1/instance")
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

LISTENING = "Redpoll listening on "


class ServeProcess:
    def __init__(
        self,
        env: dict[str, str] | None = None,
        args: list[str] | None = None,
        start_timeout: float = 60.0,
        workers: int | None = 1,
    ):
        self.env = {**os.environ, **(env or {})}
        args = list(args or [])
        # One HTTP process unless asked (``workers=None``: serve's own default,
        # one per core): on a test machine running many servers, more costs
        # more than it shows. tests/test_api_serve.py checks that default.
        if workers is not None and "--workers" not in args:
            args += ["--workers", str(workers)]
        self.args = ["--port", "0", *args]
        self.start_timeout = start_timeout
        self.process: subprocess.Popen | None = None
        self.url = ""
        self.log = tempfile.NamedTemporaryFile(
            "w+b", prefix="redpoll-serve-", suffix=".log", delete=False
        )

    def command(self) -> list[str]:
        script = Path(sys.executable).with_name("redpoll")
        if script.exists():
            return [str(script), "serve", *self.args]
        return [
            sys.executable,
            "-c",
            "from redpoll.tools.cli import main; main()",
            "serve",
            *self.args,
        ]

    def start(self) -> ServeProcess:
        self.process = subprocess.Popen(
            self.command(), env=self.env, stdout=subprocess.PIPE, stderr=self.log, text=True
        )
        found: list[str] = []

        def read() -> None:
            assert self.process is not None and self.process.stdout is not None
            for line in self.process.stdout:
                if line.startswith(LISTENING):
                    found.append(line[len(LISTENING) :].strip())
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        if not found:
            self.stop()
            raise RuntimeError(f"redpoll serve did not start; log:\n{self.logs()[-4000:]}")
        self.url = found[0]
        return self

    def logs(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM, then wait for the clean shutdown; the exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        return self.process.returncode

    def close(self) -> None:
        self.stop()
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)

    def __enter__(self) -> ServeProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
