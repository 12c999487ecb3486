"""``redpoll serve`` as a process: JSON logs without secrets, clean shutdown on
SIGTERM/SIGINT that keeps queued work in Redis, several HTTP workers.

No other serve process is running while these tests run (the other API test
modules' servers are module-scoped), so queued jobs stay queued.
"""

from __future__ import annotations

import json
import os
import signal

import httpx
from support.mastodon import serve_env  # noqa: F401
from support.names import unique  # noqa: F401
from support.rest import PASSWORD, bearer, make_app, sign_up  # noqa: F401

from redpoll import Redpoll, Settings
from redpoll.api.process import ServeProcess


async def test_sigterm_shuts_down_cleanly_and_keeps_queued_work(server):
    url, cluster, _ = server
    # no in-process jobs and a fan-out batch of 1: a post leaves jobs queued
    env = serve_env(server, REDPOLL_FANOUT_BATCH="1")
    srv = ServeProcess(env, args=["--no-jobs"]).start()
    try:
        async with httpx.AsyncClient(base_url=srv.url, timeout=30) as http:
            app = (
                await http.post(
                    "/api/v1/apps",
                    data={
                        "client_name": "t",
                        "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
                        "scopes": "read write follow",
                    },
                )
            ).json()
            creds = {"client_id": app["client_id"], "client_secret": app["client_secret"]}
            tok = (
                await http.post(
                    "/oauth/token",
                    data={
                        "grant_type": "client_credentials",
                        "scope": "read write follow",
                        **creds,
                    },
                )
            ).json()
            tokens, ids = [], []
            for _ in range(4):
                name = unique("sd")
                r = await http.post(
                    "/api/v1/accounts",
                    headers=bearer(tok["access_token"]),
                    data={
                        "username": name,
                        "email": f"{name}@example.com",
                        "password": PASSWORD,
                        "agreement": "true",
                    },
                )
                tokens.append(r.json()["access_token"])
                ids.append(
                    (
                        await http.get(
                            "/api/v1/accounts/verify_credentials", headers=bearer(tokens[-1])
                        )
                    ).json()["id"]
                )
            for t in tokens[1:]:
                assert (
                    await http.post(f"/api/v1/accounts/{ids[0]}/follow", headers=bearer(t))
                ).status_code == 200
            status = (
                await http.post(
                    "/api/v1/statuses", headers=bearer(tokens[0]), data={"status": "fan me out"}
                )
            ).json()
    finally:
        code = srv.stop()
    logs = srv.logs()
    srv.close()
    assert code == 0, logs[-3000:]
    lines = [json.loads(line) for line in logs.splitlines() if line.strip()]
    assert any(
        line.get("msg") == "request" and line.get("path") == "/api/v1/statuses" for line in lines
    )
    assert lines[-1]["msg"] == "stopped"
    for secret in (PASSWORD, app["client_secret"], tok["access_token"], *tokens):
        assert secret not in logs

    rp = await Redpoll.open(Settings(redis_url=url, cluster=cluster, job_claim_ms=500))
    try:
        assert await rp.queue.depth() > 0  # the fan-out still waits, in Redis
        homes = [[s.id for s in await rp.timelines.home(i)] for i in ids[1:]]
        assert sum(int(status["id"]) in h for h in homes) < 3
        await rp.drain(timeout=60)  # what the next start's workers do
        for i in ids[1:]:
            assert int(status["id"]) in [s.id for s in await rp.timelines.home(i)]
    finally:
        await rp.close()


def test_workers_option_serves_from_several_processes(server):
    with (
        ServeProcess(serve_env(server), args=["--workers", "2"]) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as http,
    ):
        for _ in range(10):
            assert http.get("/api/v1/instance").status_code == 200
        app = make_app(http)
        token, _ = sign_up(http, app)
        assert (
            http.post("/api/v1/statuses", headers=bearer(token), data={"status": "hi"}).status_code
            == 200
        )
        srv.process.send_signal(signal.SIGINT)
        assert srv.process.wait(60) == 0


def test_serve_defaults_to_one_http_process_per_core(tmp_path):
    """Without --workers, serve runs one HTTP process per core it may use."""
    import os
    import subprocess

    cores = len(os.sched_getaffinity(0))
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDPOLL_") and k != "REDIS_URL"}
    env["REDPOLL_DATA_DIR"] = str(tmp_path / "data")
    with ServeProcess(env, args=["--no-jobs"], workers=None) as srv:
        with httpx.Client(base_url=srv.url, timeout=30) as http:
            assert http.get("/api/v1/instance").status_code == 200
        children = subprocess.run(
            ["pgrep", "-P", str(srv.process.pid)], capture_output=True, text=True
        ).stdout.split()
        # the HTTP workers are spawned children (the embedded Valkey and
        # multiprocessing's resource tracker are children too)
        workers = [
            c
            for c in children
            if "spawn_main" in open(f"/proc/{c}/cmdline", "rb").read().decode(errors="replace")
        ]
        # one process serves in the parent itself; more are its children
        assert len(workers) == (cores if cores > 1 else 0), children


def test_sigterm_right_after_the_url_is_printed_still_stops_it(tmp_path):
    """`Redpoll listening on` is printed before uvicorn has installed its
    signal handlers: a SIGTERM in that moment used to be swallowed and the
    process ran on."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("REDPOLL_") and k != "REDIS_URL"}
    env["REDPOLL_DATA_DIR"] = str(tmp_path / "data")
    for args in ([], [], ["--workers", "2"]):
        srv = ServeProcess(env, args=args).start()
        srv.process.send_signal(signal.SIGTERM)
        try:
            assert srv.process.wait(30) == 0, srv.logs()[-2000:]
        finally:
            srv.close()


def _ask(sock, path: str = "/api/v1/instance") -> int:
    """One GET on an open keep-alive connection; its status (0: the server
    had closed the connection)."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    head = b""
    try:
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(65536)
            if not chunk:
                return 0
            head += chunk
    except ConnectionResetError:
        return 0
    top, _, body = head.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in top.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return int(top.split(b" ")[1])


def test_a_kept_alive_connection_idle_for_a_clients_poll_interval_is_still_open(tmp_path):
    """Mastodon.py asks for a processing upload every 5 s on one kept-alive
    connection: the server must not close an idle connection at about that
    time (its reuse would race the close and the request be reset), so it
    keeps one open for limits.HTTP_KEEP_ALIVE_S."""
    import socket
    import time

    env = {k: v for k, v in os.environ.items() if not k.startswith("REDPOLL_") and k != "REDIS_URL"}
    env["REDPOLL_DATA_DIR"] = str(tmp_path / "data")
    with ServeProcess(env, args=["--no-jobs"]) as srv:
        host, port = srv.url.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            assert _ask(sock) == 200
            time.sleep(7)  # more than a 5 s poll, with room for a loaded machine
            assert _ask(sock) == 200  # the same connection, not closed meanwhile
