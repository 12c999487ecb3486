"""The command line as an operator meets it: real
``redpoll`` processes, real embedded servers in temporary directories.

Start-up failures are one line naming the variable or path; every command
says which database it uses; the data directory is resolved once (so a
command run from another directory finds the same data); the demo keeps to
its own data and can run again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from redpoll.storage.server import EmbeddedServer, free_port

REDPOLL = Path(sys.executable).with_name("redpoll")


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a new operator: no redpoll settings, a data home of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDPOLL_") and k != "REDIS_URL"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    env.update(extra)
    return env


def redpoll(
    args: list[str], env: dict[str, str], cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REDPOLL), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_unreachable_redis_url_is_one_line_in_every_command(tmp_path):
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    env = clean_env(tmp_path, REDIS_URL=url)
    for args in (["stats"], ["worker"], ["serve", "--port", "0"]):
        done = redpoll(args, env)
        assert done.returncode != 0, (args, done.stdout, done.stderr)
        said = lines(done.stderr)
        assert len(said) == 1, (args, done.stderr)
        assert "REDIS_URL" in said[0] or url in said[0], (args, said)
        assert url in said[0] and "Traceback" not in done.stderr
        assert "listening" not in done.stdout  # only printed once Redis answered


def test_unusable_data_dir_is_one_line_naming_the_path(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    env = clean_env(tmp_path, REDPOLL_DATA_DIR=str(blocker / "data"))
    for args in (["stats"], ["worker"], ["serve", "--port", "0"]):
        done = redpoll(args, env)
        assert done.returncode != 0, (args, done.stdout, done.stderr)
        said = lines(done.stderr)
        assert len(said) == 1, (args, done.stderr)
        assert str(blocker / "data") in said[0] and "REDPOLL_DATA_DIR" in said[0], said
        assert "listening" not in done.stdout


def test_cluster_setting_is_quoted_as_typed(tmp_path):
    done = redpoll(["stats"], clean_env(tmp_path, REDPOLL_CLUSTER="yes"))
    assert done.returncode != 0
    assert "REDPOLL_CLUSTER='yes'" in done.stderr, done.stderr


def test_commands_from_any_directory_share_one_data_dir_and_say_so(tmp_path):
    env = clean_env(tmp_path)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    home = tmp_path / "xdg" / "redpoll"
    seeded = redpoll(["seed", "--users", "6", "--posts", "4", "--avg-follows", "2"], env, cwd=here)
    assert seeded.returncode == 0, seeded.stderr
    assert str(home) in seeded.stderr  # which data directory, said on stderr
    stats = redpoll(["stats", "--json"], env, cwd=there)
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["users"] == 6  # the same database, not a new empty one
    assert str(home) in stats.stderr and "REDPOLL_DATA_DIR" in stats.stderr
    assert list(here.iterdir()) == [] and list(there.iterdir()) == []
    # told otherwise, it says so
    other = redpoll(["stats", "--json"], env | {"REDPOLL_DATA_DIR": "elsewhere"}, cwd=there)
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout)["users"] == 0
    assert str(there / "elsewhere") in other.stderr


def test_demo_runs_twice_on_its_own_data(tmp_path):
    env = clean_env(tmp_path)
    for _ in range(2):
        done = redpoll(["demo"], env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "home timeline of" in done.stdout
        assert str(tmp_path / "xdg" / "redpoll-demo") in done.stderr
    assert not (tmp_path / "xdg" / "redpoll").exists()  # serve's data is not the demo's
    stats = redpoll(
        ["stats", "--json"], env | {"REDPOLL_DATA_DIR": str(tmp_path / "xdg" / "redpoll-demo")}
    )
    assert json.loads(stats.stdout)["users"] == 16


def test_a_dead_server_port_file_costs_no_probing_time(tmp_path):
    """After a crash the data directory still names the dead server's port:
    finding out that nothing answers there is one refused connection, not
    seconds of retries (restart took ~4 s)."""
    server = EmbeddedServer(tmp_path / "data").start()
    server.kill()  # as a crash would: the port file stays
    assert EmbeddedServer.recorded_port(tmp_path / "data") == server.port
    started = time.monotonic()
    assert EmbeddedServer.running_in(tmp_path / "data") is None
    assert time.monotonic() - started < 0.5


def test_the_embedded_server_is_reached_over_a_unix_socket_when_its_path_fits(tmp_path):
    """redpoll's own processes reach the embedded server over a Unix socket in
    its data directory (docs/decisions.md: a round trip costs both ends less
    than loopback TCP); the loopback port answers too, and a data directory
    too deep for a socket path (sun_path: 107 bytes) is reached over TCP."""
    import redis

    from redpoll.storage.server import SOCKET_PATH_MAX

    server = EmbeddedServer(tmp_path / "data").start()
    try:
        assert server.url == f"unix://{tmp_path.resolve() / 'data' / 'valkey.sock'}"
        assert redis.Redis.from_url(server.url).ping()
        assert redis.Redis.from_url(server.tcp_url).ping()
        assert oct((tmp_path / "data" / "valkey.sock").stat().st_mode & 0o777) == "0o700"
        # another redpoll process on the same data directory attaches by the socket
        assert EmbeddedServer.running_in(tmp_path / "data") == server.url
    finally:
        server.stop()
    deep = tmp_path / ("d" * (SOCKET_PATH_MAX - len(str(tmp_path.resolve())))) / "data"
    far = EmbeddedServer(deep).start()
    try:
        assert far.url == far.tcp_url and far.url.startswith("redis://127.0.0.1:")
        assert redis.Redis.from_url(far.url).ping()
        assert EmbeddedServer.running_in(deep) == far.tcp_url
    finally:
        far.stop()


def test_run_sh_installs_only_when_pyproject_is_newer():
    """./run.sh: pip runs when the install is older than
    pyproject.toml, not on every start. Runs the real script in this checkout
    (whose .venv runs these tests, as test.sh sets up)."""
    root = Path(__file__).resolve().parents[2]
    assert Path(sys.prefix).resolve() == (root / ".venv").resolve(), (
        "run this suite with the checkout's .venv (./test.sh does)"
    )
    stamp = root / ".venv" / ".redpoll-installed"
    if stamp.exists():  # make the install older than pyproject.toml
        past = (root / "pyproject.toml").stat().st_mtime - 60
        os.utime(stamp, (past, past))
    first = subprocess.run(
        [str(root / "run.sh"), "--help"], capture_output=True, text=True, timeout=300
    )
    assert first.returncode == 0, first.stderr
    assert "installing redpoll" in first.stderr and "--workers" in first.stdout
    assert stamp.stat().st_mtime >= (root / "pyproject.toml").stat().st_mtime
    again = subprocess.run(
        [str(root / "run.sh"), "--help"], capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stderr
    assert "installing" not in again.stderr and "--workers" in again.stdout


def test_serve_on_the_embedded_server_names_it_in_every_process(tmp_path):
    """Without REDIS_URL, serve and each of its HTTP processes say they use
    the embedded server and its data directory, none that REDIS_URL is set."""
    import httpx

    from redpoll.api.process import ServeProcess

    env = clean_env(tmp_path, REDPOLL_DATA_DIR=str(tmp_path / "data"))
    srv = ServeProcess(env, args=["--no-jobs"], workers=2)
    srv.env = env  # without this process's REDIS_URL or REDPOLL_ settings
    srv.start()
    try:
        deadline = time.monotonic() + 60
        while srv.logs().count("database: ") < 2:  # each HTTP process opened its engine
            assert time.monotonic() < deadline, srv.logs()[-4000:]
            with httpx.Client(base_url=srv.url, timeout=30) as http:
                assert http.get("/api/v1/instance").status_code == 200
            time.sleep(0.2)
    finally:
        srv.stop()
    logs = srv.logs()
    assert "REDIS_URL" not in logs, logs[-4000:]
    said = [line for line in logs.splitlines() if "database: " in line]
    assert len(said) == 2 and all(
        "embedded Valkey, data in " + str(tmp_path / "data") in line for line in said
    ), said


def test_a_port_in_use_is_one_line_at_once_and_starts_nothing(tmp_path):
    import socket

    import psutil

    data = tmp_path / "data"
    env = clean_env(tmp_path, REDPOLL_DATA_DIR=str(data))
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = redpoll(["serve", "--port", str(port)], env, timeout=60)
    assert done.returncode != 0, (done.stdout, done.stderr)
    assert lines(done.stderr) == [
        f"Error: port {port} on 127.0.0.1 is already in use (another redpoll serve?); "
        "choose another with --port, or --port 0 for a free one"
    ], done.stderr
    assert "listening" not in done.stdout
    # at once: no wait for the port was logged (stderr is that one line), and
    # nothing was started before the port was tried
    assert not data.exists()  # no embedded server was started
    assert not [
        p
        for p in psutil.process_iter(["name", "cmdline"])
        if "valkey" in (p.info["name"] or "") and str(tmp_path) in " ".join(p.info["cmdline"] or [])
    ]
