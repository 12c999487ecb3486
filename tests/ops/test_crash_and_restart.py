"""Nothing leaks, nothing lingers: real ``redpoll`` processes on their own
embedded Valkey (or their own cluster) in temporary directories, killed,
restarted and starved the way an operator's machine would see it.

* Idle and slow-header connections are cut after the header timeout, and
  connections past the cap get a 503 instead of hanging.
* The embedded Valkey wants a password (kept in the data directory, 0600)
  and its data files are private; ``redpoll stats`` still attaches.
* A SIGKILLed serve leaves no process behind, an immediate restart on the
  same port answers within 10 s, and no acknowledged post is lost.
* A serve attached to another's server takes it over when that one stops.
* ``./run.sh`` and the ``redpoll`` command use the same data.
* A REDIS_URL that is not Redis is one line from every command.
* A database outage costs little CPU and two log lines, no traceback.

Each test starts its own servers on free ports, so the module runs beside
any other.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import psutil
import pytest
import redis
from conftest import CLUSTER
from support.cli import REDPOLL, own_env, redpoll  # noqa: F401
from support.mastodon import LOOSE_LIMITS  # noqa: F401
from support.rest import bearer, make_app, sign_up  # noqa: F401

from redpoll.api.process import ServeProcess
from redpoll.storage.server import EmbeddedCluster, EmbeddedServer, free_port

ROOT = Path(__file__).resolve().parents[2]
#: "at once": well under what a restart blocked by the dead serve's leftovers
#: would take (its orphaned jobs are claimed after limits.ORPHAN_CLAIM_MS, 60
#: s); a loaded 2-core machine took 13.8 s to start two workers and Valkey
BACK_WITHIN_S = 20.0


def wait_ready(base: str, within: float) -> float:
    """Seconds until ``base``/ready answers 200; fails after ``within``."""
    start = time.monotonic()
    last = None
    with httpx.Client(base_url=base, timeout=5) as http:
        while True:
            try:
                last = http.get("/ready")
                if last.status_code == 200:
                    return time.monotonic() - start
            except httpx.TransportError as exc:
                last = exc
            if time.monotonic() - start > within:
                said = last.text if isinstance(last, httpx.Response) else ""
                raise AssertionError(f"/ready not 200 within {within} s: {last!r} {said}")
            time.sleep(0.05)


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def gone(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def reap(procs: list[psutil.Process]) -> None:
    """Kill whichever of ``procs`` still runs (a failed test leaves nothing)."""
    for p in procs:
        try:
            if not gone(p):
                p.kill()
        except psutil.NoSuchProcess:
            pass


def wait_gone(procs: list[psutil.Process], within: float) -> None:
    deadline = time.monotonic() + within
    while not all(gone(p) for p in procs):
        left = [p for p in procs if not gone(p)]
        if time.monotonic() > deadline:
            for p in left:  # leave nothing behind, then fail
                try:
                    p.kill()
                except psutil.NoSuchProcess:
                    pass
            raise AssertionError(
                f"still running after {within} s: "
                f"{[(p.pid, p.name()) for p in left if not gone(p)]}"
            )
        time.sleep(0.1)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


# --- idle and slow connections ---------------------------------------------------------


def test_idle_and_slow_header_connections_are_cut_and_the_cap_answers_503(tmp_path):
    """Sockets that send nothing, or their headers a byte at a time, are
    closed after the header timeout; while more connections are open than
    the cap, a request gets a short 503 at once instead of waiting."""
    env = own_env(
        tmp_path,
        REDPOLL_DATA_DIR=str(tmp_path / "data"),
        REDPOLL_HEADER_TIMEOUT_S="4",
        REDPOLL_CONNECTIONS_MAX="30",
    )
    with ServeProcess(env) as srv:
        host, port = srv.url.removeprefix("http://").split(":")
        silent = [socket.create_connection((host, int(port)), timeout=30) for _ in range(40)]
        trickling = [socket.create_connection((host, int(port)), timeout=30) for _ in range(5)]
        request = b"GET /api/v1/instance HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
        closed: dict[int, float] = {}
        stop = threading.Event()
        opened = time.monotonic()

        def trickle() -> None:
            for i in range(len(request)):
                for n, sock in enumerate(trickling):
                    if n in closed:
                        continue
                    try:
                        sock.sendall(request[i : i + 1])
                    except OSError:
                        closed[n] = time.monotonic() - opened
                if stop.wait(0.3) or len(closed) == len(trickling):
                    return

        trickler = threading.Thread(target=trickle, daemon=True)
        trickler.start()
        try:
            with httpx.Client(base_url=srv.url, timeout=10) as http:
                over = http.get("/api/v1/instance")
                assert over.status_code == 503, (over.status_code, over.text[:200])
                assert len(over.content) < 200
                # every silent socket is closed by the server after the timeout
                for sock in silent:
                    sock.settimeout(max(1.0, 40 - (time.monotonic() - opened)))
                    try:
                        said = sock.recv(1024)
                    except ConnectionResetError:
                        said = b""
                    except TimeoutError:
                        raise AssertionError("an idle socket is still open") from None
                    assert said == b"" or said.startswith(b"HTTP/1.1 408"), said
                took = time.monotonic() - opened
                assert took < 30, took
                deadline = time.monotonic() + 30
                while len(closed) < len(trickling):
                    assert time.monotonic() < deadline, f"slow senders still open: {closed}"
                    time.sleep(0.1)
                assert min(closed.values()) >= 3, closed  # not before the timeout
                ok = http.get("/api/v1/instance")
                assert ok.status_code == 200, ok.text
        finally:
            stop.set()
            trickler.join(10)
            for sock in silent + trickling:
                sock.close()


# --- the embedded server is private ------------------------------------------------------


def test_embedded_server_wants_a_password_and_its_files_are_private(tmp_path):
    data = tmp_path / "data"
    env = own_env(tmp_path, REDPOLL_DATA_DIR=str(data))
    with ServeProcess(env) as srv, httpx.Client(base_url=srv.url, timeout=10) as http:
        sign_up(http, make_app(http))
        port = EmbeddedServer.recorded_port(data)
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=port, socket_timeout=5).get("anything")
        mode = stat.S_IMODE(data.stat().st_mode)
        assert mode & 0o077 == 0, oct(mode)
        for path in data.rglob("*"):
            mode = stat.S_IMODE(path.lstat().st_mode)
            assert mode & 0o077 == 0, (str(path), oct(mode))
        # another process on the same data directory still attaches
        stats = redpoll(["stats", "--json"], env)
        assert stats.returncode == 0, stats.stderr
        assert json.loads(stats.stdout)["users"] == 1
        assert "already running" in stats.stderr, stats.stderr
        secret = (data / "server.pass").read_text().strip()
        assert len(secret) >= 32 and secret not in stats.stderr + srv.logs()


# --- a SIGKILLed serve, restarted at once -------------------------------------------------


def test_sigkilled_serve_leaves_nothing_behind_and_restarts_at_once(tmp_path):
    """``redpoll serve`` (two HTTP processes) is SIGKILLed while posts are
    being made and started again at once on the same port and data: it
    answers within BACK_WITHIN_S, every post acknowledged before the kill is there,
    and none of the first serve's processes (HTTP workers, Valkey) is left.
    An acknowledged post is one whose 200 the client received; the embedded
    server is stopped by a signal, not killed, so it flushes its AOF (the
    default fsync, everysec, is enough)."""
    data = tmp_path / "data"
    port = free_port()
    env = own_env(tmp_path, REDPOLL_DATA_DIR=str(data))
    # (ServeProcess puts --port 0 first: the last one given wins)
    first = ServeProcess(env, args=["--port", str(port)], workers=2).start()
    again, left = None, descendants(first.process.pid)
    try:
        assert first.url.endswith(f":{port}")
        with httpx.Client(base_url=first.url, timeout=10) as http:
            author, _ = sign_up(http, make_app(http))
        acknowledged: list[str] = []
        stop = threading.Event()

        def post_all_the_time() -> None:
            with httpx.Client(base_url=first.url, timeout=10) as poster:
                while not stop.is_set():
                    try:
                        r = poster.post(
                            "/api/v1/statuses",
                            data={"status": uuid.uuid4().hex},
                            headers={**bearer(author), "Idempotency-Key": uuid.uuid4().hex},
                        )
                    except httpx.TransportError:
                        return
                    if r.status_code == 200:
                        acknowledged.append(r.json()["id"])

        posters = [threading.Thread(target=post_all_the_time, daemon=True) for _ in range(3)]
        for poster in posters:
            poster.start()
        deadline = time.monotonic() + 60
        while len(acknowledged) < 20:
            assert time.monotonic() < deadline, "posts not acknowledged"
            time.sleep(0.05)
        left = descendants(first.process.pid)
        names = [p.name() for p in left]
        assert any("valkey" in n for n in names), names
        assert len(left) >= 3, names  # two HTTP workers and Valkey at least
        first.process.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        first.process.wait(30)
        stop.set()
        for poster in posters:
            poster.join(30)
        before_restart = list(acknowledged)

        again = ServeProcess(env, args=["--port", str(port)], workers=2).start()
        assert again.url.endswith(f":{port}")
        wait_ready(again.url, BACK_WITHIN_S)
        back_after = time.monotonic() - killed
        assert back_after < BACK_WITHIN_S, f"answering again {back_after:.1f} s after the kill"
        wait_gone(left, 30)
        with httpx.Client(base_url=again.url, timeout=10) as http:
            for sid in before_restart:
                r = http.get(f"/api/v1/statuses/{sid}", headers=bearer(author))
                assert r.status_code == 200, (sid, r.status_code)
        assert "Address already in use" not in again.logs()
    finally:
        first.close()
        if again is not None:
            survivors = descendants(again.process.pid)
            again.close()
            wait_gone(survivors, 30)
        reap(left)


# --- a second serve on the same data -------------------------------------------------------


def test_attached_serve_takes_over_when_the_owner_stops(tmp_path):
    data = tmp_path / "data"
    env = own_env(tmp_path, REDPOLL_DATA_DIR=str(data))
    owner = ServeProcess(env).start()
    attached = ServeProcess(env)
    owner_children = descendants(owner.process.pid)
    try:
        attached.start()
        assert "already running" in attached.logs()
        with httpx.Client(base_url=attached.url, timeout=10) as http:
            token, _ = sign_up(http, make_app(http))
            assert owner.stop() == 0  # a clean stop: its Valkey shuts down with it
            wait_gone(owner_children, 30)
            wait_ready(attached.url, BACK_WITHIN_S)
            r = http.get("/api/v1/accounts/verify_credentials", headers=bearer(token))
            assert r.status_code == 200, r.text
            assert (
                http.post(
                    "/api/v1/statuses", headers=bearer(token), data={"status": "still here"}
                ).status_code
                == 200
            )
        msgs = [line["msg"] for line in json_lines(attached.logs())]
        assert msgs.count("embedded server taken over") == 1, msgs
        assert "Traceback" not in attached.logs()
        # the new owner's server ends with it
        children = descendants(attached.process.pid)
        assert any("valkey" in p.name() for p in children)
        assert attached.stop() == 0
        wait_gone(children, 30)
    finally:
        children = descendants(attached.process.pid) if attached.process else []
        attached.close()
        owner.close()
        reap(children + owner_children)


# --- one data directory for run.sh and the command ------------------------------------------


def test_run_sh_and_the_command_use_the_same_data(tmp_path):
    """``./run.sh`` then ``redpoll stats`` (as the README says to): the
    account made through run.sh's server is counted, and both say where the
    data is. Runs a copy of run.sh in a checkout of its own whose .venv
    holds this one's commands and an install stamp newer than its
    pyproject.toml (so it installs nothing, and no data lands here)."""
    place = tmp_path / "checkout"
    (place / ".venv" / "bin").mkdir(parents=True)
    shutil.copy2(ROOT / "run.sh", place / "run.sh")
    shutil.copy2(ROOT / "pyproject.toml", place / "pyproject.toml")
    for name in ("python", "redpoll"):
        (place / ".venv" / "bin" / name).symlink_to(Path(sys.executable).with_name(name))
    past = time.time() - 3600
    os.utime(place / "pyproject.toml", (past, past))
    (place / ".venv" / ".redpoll-installed").touch()
    env = own_env(tmp_path)
    home = tmp_path / "xdg" / "redpoll"
    srv = ServeProcess(env)
    srv.command = lambda: [str(place / "run.sh"), *srv.args]
    with srv, httpx.Client(base_url=srv.url, timeout=10) as http:
        sign_up(http, make_app(http))
        served = srv.logs()
    assert str(home) in served, served[-2000:]
    stats = redpoll(["stats", "--json"], env, cwd=place)
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["users"] == 1, (stats.stdout, stats.stderr)
    assert str(home) in stats.stderr
    assert not (place / "redpoll-data").exists()


# --- a REDIS_URL that is not Redis ------------------------------------------------------------


class _Web(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"<html>not redis</html>")

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def web_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Web)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"redis://127.0.0.1:{server.server_address[1]}/0"
    server.shutdown()
    server.server_close()


def test_a_redis_url_that_is_not_redis_is_one_line_from_every_command(tmp_path, web_server):
    closed = f"redis://127.0.0.1:{free_port()}/0"
    commands = (
        ["stats"],
        ["admin", "reports"],
        ["seed", "--users", "2", "--posts", "1"],
        ["demo"],
        ["worker"],
        ["serve", "--port", "0"],
    )
    for url in (web_server, closed):
        env = own_env(tmp_path, REDIS_URL=url)
        for args in commands:
            done = redpoll(args, env, timeout=60)
            said = [line for line in done.stderr.splitlines() if line.strip()]
            assert done.returncode != 0, (url, args, done.stderr)
            assert "Traceback" not in done.stderr, (url, args, done.stderr[-2000:])
            assert len(said) == 1, (url, args, said)
            assert url in said[0], (url, args, said)


# --- an outage costs little --------------------------------------------------------------------


def _own_database(tmp_path: Path):
    """A database of this test's own, of the topology the run is for."""
    if CLUSTER:
        return EmbeddedCluster(tmp_path / "cluster").start(), {"REDPOLL_CLUSTER": "1"}
    return EmbeddedServer(tmp_path / "db").start(), {}


def _nodes(db) -> list[EmbeddedServer]:
    return db.nodes if isinstance(db, EmbeddedCluster) else [db]


@pytest.mark.topology
def test_a_database_outage_backs_off_and_logs_each_change_once(tmp_path):
    """The database goes away for a while under a serve with its job worker
    (and a redpoll worker): both back off (little CPU), log one line when
    it goes and one when it is back, no traceback, and serve again."""
    db, extra = _own_database(tmp_path)
    env = own_env(tmp_path, REDIS_URL=db.url, **extra)
    srv = ServeProcess(env)
    worker, worker_log = None, tmp_path / "worker.log"
    worker_log.touch()
    try:
        srv.start()
        worker = subprocess.Popen(
            [str(REDPOLL), "worker"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=worker_log.open("w"),
        )
        with httpx.Client(base_url=srv.url, timeout=10) as http:
            token, _ = sign_up(http, make_app(http))
            wait_ready(srv.url, 30)
            deadline = time.monotonic() + 60
            while "worker running" not in worker_log.read_text():
                assert worker.poll() is None and time.monotonic() < deadline, worker_log.read_text()
                time.sleep(0.1)
            mark = len(srv.logs())
            for node in _nodes(db):
                node.kill()
            watched = [psutil.Process(srv.process.pid), psutil.Process(worker.pid)]
            time.sleep(2)  # the outage is noticed, the back-off reaches its pace
            cpu = [sum(p.cpu_times()[:2]) for p in watched]
            began = time.monotonic()
            time.sleep(8)
            used = [sum(p.cpu_times()[:2]) - c for p, c in zip(watched, cpu)]
            span = time.monotonic() - began
            # the outage lasts until the worker noticed it too (on a loaded machine its
            # first blocking read may come late; a test that ended the outage before
            # would test nothing of the worker)
            deadline = time.monotonic() + 30
            while "database unreachable" not in worker_log.read_text():
                assert time.monotonic() < deadline, worker_log.read_text()[-3000:]
                time.sleep(0.2)
            for node in _nodes(db):
                node.start()
            wait_ready(srv.url, 60)
            deadline = time.monotonic() + 30  # (a cluster's slot map is read again)
            while (
                r := http.get("/api/v1/timelines/home", headers=bearer(token))
            ).status_code != 200:
                assert r.status_code == 503 and time.monotonic() < deadline, srv.logs()[mark:][
                    -3000:
                ]
                time.sleep(0.2)
        assert max(used) / span < 0.25, (used, span, srv.logs()[mark:][-3000:])
        deadline = time.monotonic() + 30  # the probe's next PING says it is back
        while "database reachable again" not in srv.logs()[mark:]:
            assert time.monotonic() < deadline, srv.logs()[mark:][-3000:]
            time.sleep(0.2)
        outage = srv.logs()[mark:]
        assert "Traceback" not in outage, outage[-3000:]
        msgs = [line["msg"] for line in json_lines(outage)]
        assert msgs.count("database unreachable") == 1, msgs
        assert msgs.count("database reachable again") == 1, msgs
        deadline = time.monotonic() + 30  # the worker's probe, likewise
        while "database reachable again" not in worker_log.read_text():
            assert time.monotonic() < deadline, worker_log.read_text()[-3000:]
            time.sleep(0.2)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(60) == 0
        err = worker_log.read_text()
        assert "Traceback" not in err, err[-3000:]
        assert err.count("database unreachable") == 1, err[-3000:]
        assert err.count("database reachable again") == 1, err[-3000:]
    finally:
        if worker is not None and worker.poll() is None:
            worker.kill()
            worker.wait()
        srv.close()
        db.stop()
