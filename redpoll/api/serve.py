"""``redpoll serve``: everything on one machine in one command.

1. The database: REDIS_URL if set; else the embedded server already running
   on the data directory, or a new one started (and stopped) by this process.
2. The listening socket is bound first, before the database is started or
   reached and before any worker starts: a port that is taken is one line
   at once, and ``--port 0`` picks a free port that is known (and printed)
   up front.
3. The HTTP side: uvicorn (httptools + uvloop) running
   ``redpoll.api.app:create_app`` in this process (``--workers 1``) or in N
   child processes sharing the socket (the default: one per core).
   Each HTTP process also runs the background job worker (``--jobs``).
4. SIGINT/SIGTERM: uvicorn stops accepting, finishes open requests, then
   each process's lifespan stops its job worker after the jobs in hand;
   queued jobs live in Redis and are picked up at the next start. Then the
   embedded server (if ours) shuts down, flushing its append-only file.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import logging.config
import os
import resource
import shutil
import signal
import socket
import sys
import tempfile
import time
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

from ..core import limits
from ..core.errors import ConfigError
from ..core.metrics import MULTIPROC_ENV
from ..core.settings import EMBEDDED_URL_ENV, Settings, redact
from ..engine import migrate
from ..mail import smtp
from ..storage.server import EmbeddedServer, Supervisor, die_with_parent, reach
from ..stream.handoff import StreamHttpProtocol, StreamWebSocketProtocol
from . import logs

log = logging.getLogger("redpoll.serve")

APP = "redpoll.api.app:create_app"
#: The serve process's pid, for its HTTP worker processes to watch.
SERVE_PID_ENV = "REDPOLL_SERVE_PID"
#: The HTTP stack (measured in docs/decisions.md): uvicorn with the
#: httptools parser and the uvloop event loop, named rather than left to
#: uvicorn's "auto", which silently falls back to the pure-Python h11 parser
#: (a third of the speed) when httptools is missing.
HTTP_PARSER = "httptools"
EVENT_LOOP = "uvloop"
STACK = f"uvicorn-{HTTP_PARSER}-{EVENT_LOOP}"


def follow_serve() -> int | None:
    """In an HTTP worker process of ``redpoll serve`` (not serve itself, with
    ``--workers 1``): ask the kernel to send SIGTERM when serve dies, even by
    SIGKILL (PR_SET_PDEATHSIG, Linux), so the worker stops (its listening
    socket first) instead of holding the port with no database behind it.
    Returns serve's pid for :func:`watch_serve`, or None."""
    raw = os.environ.get(SERVE_PID_ENV)
    if not raw or not raw.isdigit() or int(raw) == os.getpid():
        return None
    die_with_parent(signal.SIGTERM)
    return int(raw)


async def watch_serve(serve_pid: int) -> None:
    """Where the kernel does not signal a worker whose serve died (not
    Linux, or serve died before :func:`follow_serve` asked it to), notice
    it: the worker's parent is no longer serve. Then stop, as SIGTERM would."""
    while os.getppid() == serve_pid:
        await asyncio.sleep(limits.PARENT_WATCH_S)
    log.warning("serve process gone; stopping", extra={"serve_pid": serve_pid})
    os.kill(os.getpid(), signal.SIGTERM)


def default_workers() -> int:
    """One HTTP process per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def bind(host: str, port: int, backlog: int = 2048) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    # Listen at once: connections made as soon as the URL is printed wait in
    # the backlog until the workers accept, instead of being refused.
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


def listen(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """:func:`bind`, or a ConfigError at once when the port cannot be had
    (one line; a port in use names --port). Only while the port is held by
    the HTTP processes of a serve that is gone (they close it as they stop:
    :func:`follow_serve`) it waits, up to ``limits.SERVE_BIND_WAIT_S``: a
    serve restarted at once after a crash gets its port."""
    deadline = time.monotonic() + limits.SERVE_BIND_WAIT_S
    waiting = False
    while True:
        try:
            return bind(host, port, backlog)
        except OSError as exc:
            in_use = exc.errno == errno.EADDRINUSE
            # once a gone serve's processes were seen holding it, the wait goes
            # on while the port is in use: a process on its way out may no
            # longer read as one (its environment gone) before its socket is
            if (
                in_use
                and port
                and time.monotonic() < deadline
                and (waiting or held_by_a_gone_serve(port))
            ):
                if not waiting:
                    log.warning(
                        "port held by the HTTP processes of a serve that is gone; "
                        "waiting for them to close it",
                        extra={"port": port, "wait_s": limits.SERVE_BIND_WAIT_S},
                    )
                    waiting = True
                time.sleep(0.1)
                continue
            if in_use:
                raise ConfigError(
                    f"port {port} on {host} is already in use (another redpoll "
                    "serve?); choose another with --port, or --port 0 for a "
                    "free one"
                ) from None
            raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def held_by_a_gone_serve(port: int) -> bool:
    """Whether the processes listening on ``port`` (those this process may
    see, Linux's /proc) are all HTTP processes of a ``redpoll serve`` that
    is gone: their parent is no longer the serve named in their
    environment (SERVE_PID_ENV). False when none is seen."""
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            # local address "HEX_IP:HEX_PORT", state 0A: listening; the socket's inode
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                sockets.add(f"socket:[{cols[9]}]")
    if not sockets:
        return False
    holders = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if any(
                os.readlink(f"/proc/{pid}/fd/{fd}") in sockets
                for fd in os.listdir(f"/proc/{pid}/fd")
            ):
                holders.append(pid)
        except OSError:
            continue
    if not holders:
        return False
    key = SERVE_PID_ENV.encode() + b"="
    for pid in holders:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat", "rb") as f:
                parent = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        serve_pid = next((e[len(key) :] for e in env if e.startswith(key)), b"")
        if not serve_pid.isdigit() or int(serve_pid) == parent or int(serve_pid) == int(pid):
            return False  # not serve's, or its serve still runs
    return True


def raise_open_files(need: int = limits.SERVE_OPEN_FILES_NEEDED) -> tuple[int, int]:
    """Raise this process's open-file limit (RLIMIT_NOFILE) from its soft value
    to its hard one: every open stream holds a socket, and the usual soft
    default (1,024) would refuse connections long before the streams' own
    limits do. The HTTP worker processes inherit it. Logs what it did, and a
    warning naming the figure when the limit stays below ``need``
    (``limits.SERVE_OPEN_FILES_NEEDED``). Returns (before, after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, need)
    now = soft
    if want > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            now = want
        except (ValueError, OSError) as exc:  # e.g. a hard limit above the kernel's nr_open
            log.warning(
                "cannot raise the open-file limit",
                extra={"open_files": soft, "hard_limit": hard, "error": str(exc)},
            )
    log.info("open-file limit", extra={"open_files": now, "was": soft, "hard_limit": hard})
    if now < need:
        log.warning(
            f"open-file limit {now} is below the {need} this process needs for "
            f"about {need - limits.SERVE_OPEN_FILES_SPARE} concurrent streams: "
            f"connections beyond it are refused; raise the hard limit "
            f"(ulimit -Hn, systemd LimitNOFILE=)",
            extra={"open_files": now, "needed": need, "hard_limit": hard},
        )
    return soft, now


def serve(
    settings: Settings,
    *,
    host: str,
    port: int,
    workers: int,
    jobs: bool,
    access_log: bool,
    log_level: str,
    backlog: int = 2048,
) -> None:
    logging.config.dictConfig(logs.config(log_level))
    # The port first: one that cannot be had is one line before anything
    # (the embedded server included) has started.
    sock = listen(host, port, backlog)
    try:
        _serve(
            settings,
            sock,
            host=host,
            workers=workers,
            jobs=jobs,
            access_log=access_log,
            log_level=log_level,
            backlog=backlog,
        )
    finally:
        sock.close()


def _serve(
    settings: Settings,
    sock: socket.socket,
    *,
    host: str,
    workers: int,
    jobs: bool,
    access_log: bool,
    log_level: str,
    backlog: int,
) -> None:
    embedded = None
    where = settings.database()
    url = settings.redis_url or EmbeddedServer.running_in(settings.data_dir)
    supervisor = None
    if url is None:
        embedded = EmbeddedServer.for_data_dir(settings.data_dir, fsync=settings.fsync).start()
        url = embedded.url
        where += f", server started at {redact(url)}"
        log.info(
            "embedded server started", extra={"redis": redact(url), "data_dir": settings.data_dir}
        )
        # restarted on the same port and data if it dies
        supervisor = Supervisor(embedded, log).start()
    else:
        # "listening" is printed only once the database answered; a server
        # that does not answer stops us here with one line (ConfigError)
        try:
            reach(url, settings.cluster)
        except ConfigError as exc:
            raise ConfigError(f"{exc} (REDIS_URL)" if settings.redis_url else str(exc)) from None
        if settings.redis_url is None:
            where += f", server already running at {redact(url)}"
            # takes the server over if its owner stops or dies
            supervisor = Supervisor.standby_for(
                settings.data_dir,
                log,
                fsync=settings.fsync,
                port=EmbeddedServer.recorded_port(settings.data_dir),
            ).start()
    log.info("database", extra={"database": where})
    log.info("e-mail " + smtp.describe(settings))
    # the layout brought up to date once, here, under the migration lock
    # (another serve migrating meanwhile is waited for), before any HTTP
    # process opens the database; a migration due by hand stops us here
    try:
        report = asyncio.run(migrate.before_serving(url, settings.cluster))
    except ConfigError:
        if supervisor is not None:
            supervisor.stop()
        raise
    if report.made:
        log.info(
            "database layout brought up to date",
            extra={"from_version": report.before, "to_version": report.after},
        )
    # after the database answered: a start-up failure stays one line
    _, open_files = raise_open_files()
    # a request beyond the cap is answered 503 at once, before the process
    # runs out of descriptors and accepting fails
    connections = min(settings.connections_max, max(64, open_files - limits.SERVE_FDS_RESERVED))
    # The HTTP processes read their settings from the environment: the
    # embedded server's URL apart from REDIS_URL, so that they say which it is.
    if settings.redis_url is None:
        os.environ[EMBEDDED_URL_ENV] = url
    else:
        os.environ["REDIS_URL"] = url
        os.environ.pop(EMBEDDED_URL_ENV, None)
    os.environ["REDPOLL_SERVE_JOBS"] = "1" if jobs else "0"
    os.environ["REDPOLL_ACCESS_LOG"] = "1" if access_log else "0"
    # HTTP worker processes end when this one does, however it ends (app.py)
    os.environ[SERVE_PID_ENV] = str(os.getpid())
    metrics_dir = None
    if workers > 1:
        # several processes answer /metrics: prometheus-client's multiprocess
        # mode sums their values from files in this directory (redpoll.core.metrics)
        metrics_dir = tempfile.mkdtemp(prefix="redpoll-metrics-")
        os.environ[MULTIPROC_ENV] = metrics_dir
    else:
        os.environ.pop(MULTIPROC_ENV, None)
    chosen = sock.getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else (f"[{host}]" if ":" in host else host)
    public = f"http://{shown}:{chosen}"
    config = uvicorn.Config(
        APP,
        factory=True,
        workers=workers,
        log_config=logs.config(log_level),
        # httptools, plus the hand-off of started streams (redpoll/stream/handoff.py)
        http=StreamHttpProtocol,
        loop=EVENT_LOOP,
        ws=StreamWebSocketProtocol,
        # No per-message compression, as Mastodon's streaming server: its zlib
        # state costs tens of KB a socket, and a socket without it can be
        # handed off (redpoll/stream/handoff.py)
        ws_per_message_deflate=False,
        log_level=log_level.lower(),
        access_log=False,
        proxy_headers=False,
        server_header=False,
        lifespan="on",
        backlog=backlog,
        limit_concurrency=connections,
        timeout_keep_alive=limits.HTTP_KEEP_ALIVE_S,
        # open streams never end by themselves: they are cut after this long
        timeout_graceful_shutdown=limits.GRACEFUL_SHUTDOWN_S,
        # Mastodon's streaming server pings WebSockets every 30 s
        ws_ping_interval=settings.ws_ping_s,
        ws_ping_timeout=settings.ws_ping_s,
    )
    # Signal handlers are in place before the URL is printed: a SIGTERM sent
    # as soon as it appears stops the server instead of being lost.
    if workers == 1:
        runner: Any = uvicorn.Server(config)  # (or a Multiprocess: both run it)

        def stop_soon(*_) -> None:
            # Until uvicorn installs its own handlers a signal asks it to stop
            # once started; after its shutdown uvicorn re-raises the signal it
            # caught, which lands here too, so the cleanup below runs.
            runner.should_exit = True

        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, stop_soon)
    else:
        runner = Multiprocess(config, sockets=[sock])  # installs its handlers here
    print(f"Redpoll listening on {public}", flush=True)
    log.info(
        "listening",
        extra={
            "url": public,
            "workers": workers,
            "jobs": jobs,
            "connections_max": connections,
            "redis": redact(url),
            "cluster": settings.cluster,
        },
    )
    try:
        if workers == 1:
            runner.run(sockets=[sock])
        else:
            runner.run()
    finally:
        sock.close()
        if supervisor is not None:
            ours = not supervisor.standby
            supervisor.stop()  # stops the embedded server (if ours), AOF flushed
            if ours:
                log.info("embedded server stopped")
        if metrics_dir is not None:
            shutil.rmtree(metrics_dir, ignore_errors=True)
        log.info("stopped")
        sys.stderr.flush()
