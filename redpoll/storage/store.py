"""The connection to Redis (one server or a Cluster) and the Lua scripts.

Scripts live in the ``lua/`` folder of the package whose operation each one
is (storage has none of its own), one per atomic operation, every name
once (:func:`script_files`). :meth:`Store.run` runs a
script whose keys share a slot; :meth:`Store.run_grouped` runs one over keys
of many users by splitting them into one call per hash slot (on a single
server there are no slots, so it is one call).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import redis.asyncio as aredis
from redis.asyncio.cluster import RedisCluster
from redis.cluster import key_slot
from redis.exceptions import NoScriptError, ResponseError

from ..core import keys, limits, metrics
from ..core.errors import from_script
from ..core.memo import Memo
from ..core.models import Status, User
from ..core.settings import Settings
from .mux import ClusterMultiplexed, Multiplexed
from .redispy import CLUSTER_OWN, COMMANDS, FastConnection, FastUnixConnection, MuxCommands

#: the package root: each package's scripts are in its ``lua/`` folder
PACKAGES = Path(__file__).resolve().parent.parent


def script_files() -> dict[str, Path]:
    """Every Lua script by name (its file's stem): a name used twice is an
    error here, not a script silently shadowed."""
    found: dict[str, Path] = {}
    for path in sorted(PACKAGES.glob("*/lua/*.lua")):
        if path.stem in found:
            raise RuntimeError(f"two Lua scripts named {path.stem}: {found[path.stem]}, {path}")
        found[path.stem] = path
    return found


SCRIPT_FILES = script_files()


def own_client(url: str, cluster: bool, *, blocking: bool) -> aredis.Redis | RedisCluster:
    """A client with connections of its own, for a reader that holds one
    (the stream hub's blocking reads of the event log, redpoll.stream.hub):
    no read timeout when ``blocking``. Everything else goes through a
    :class:`Store`."""
    if cluster:
        return RedisCluster.from_url(url)
    return aredis.Redis.from_url(
        url, socket_timeout=None if blocking else 10, socket_connect_timeout=5
    )


class Store:
    """The engine's one way to the database. Scripts (:meth:`run`,
    :meth:`run_many`, :meth:`run_grouped`), batches (:meth:`batch`),
    pipelines (:meth:`pipeline`) and plain commands by redis-py's names and
    arguments (``await store.hget(key, field)``); which connection carries
    each is decided here, once, when the store connects: the multiplexed
    connection on a single server, one per master on a cluster, routed by
    slot (redpoll.storage.mux.ClusterMultiplexed); redis-py's client (pool, or
    cluster client) for what those do not carry (``MuxCommands``) and for
    pipelines."""

    def __init__(
        self,
        client: aredis.Redis | RedisCluster,
        cluster: bool,
        mux: Multiplexed | ClusterMultiplexed | None = None,
    ):
        self.client = client
        #: whether this is a cluster: the Store's own business (which client
        #: call to make); the engine asks ``redpoll.storage.topology.of(store)`` instead
        self.cluster = cluster
        #: scripts, batches and commands go over the multiplexed
        #: connection(s) (redpoll.storage.mux: ~10x less client CPU a call than a
        #: pooled one); same calls on both topologies
        self.mux = mux
        #: what carries plain commands (``__getattr__``)
        # (redis-py's command mixin declares its clients' _event_dispatcher
        # abstract; no command sent over the mux reads it)
        self.commands: Any = (
            MuxCommands(mux, client)  # type: ignore[abstract]
            if mux is not None
            else client
        )
        #: command methods taken from the client as they are (cluster only)
        self.client_own = CLUSTER_OWN if cluster and mux is not None else frozenset()
        #: decoded records kept under redpoll.core.memo's one rule: statuses by
        #: id at their 'v', users by id at their 'rev'
        self.statuses: Memo[Status] = Memo(limits.STATUS_RECORDS_KEPT)
        self.users: Memo[User] = Memo(limits.USER_RECORDS_KEPT)
        #: keys.EPOCH as this process knows it: the records above belong to it
        self.epoch: bytes | None = None
        self.scripts = {
            name: client.register_script(path.read_text()) for name, path in SCRIPT_FILES.items()
        }
        #: the calls counter of each script and of batches, bound once
        self.counted = {
            name: metrics.REDIS_CALLS.labels(name) for name in [*self.scripts, "batch", "run_many"]
        }

    @classmethod
    def connect(cls, url: str, cluster: bool = False) -> Store:
        if cluster:
            # redis-py's cluster client cannot wait for a free connection (it
            # raises at the limit), so its per-node limit is set high and the
            # callers bound their own concurrency (HTTP server, run_grouped).
            client: Any = RedisCluster.from_url(
                url, max_connections=limits.CLUSTER_MAX_CONNECTIONS, connection_class=FastConnection
            )
            if Multiplexed.supports(url):
                return cls(client, cluster, ClusterMultiplexed(client, url))
        else:
            # A burst of calls waits for a free connection instead of failing.
            pool = aredis.BlockingConnectionPool.from_url(
                url, max_connections=limits.REDIS_MAX_CONNECTIONS, timeout=limits.REDIS_POOL_WAIT_S
            )
            pool.connection_class = (
                FastUnixConnection if url.startswith("unix://") else FastConnection
            )
            client = aredis.Redis(connection_pool=pool)
            if Multiplexed.supports(url):
                return cls(client, cluster, Multiplexed(url))
        return cls(client, cluster)

    @classmethod
    def from_settings(cls, settings: Settings, url: str) -> Store:
        return cls.connect(url, settings.cluster)

    async def close(self) -> None:
        if self.mux is not None:
            await self.mux.close()
        await self.client.aclose()

    async def renew_connections(self) -> None:
        """Close the pooled connections (they reconnect on next use): after a
        server restart, each idle one would fail once before being replaced.
        (The multiplexed connections reconnect on their own; a cluster's
        slot map is read again, where a master may have changed.)"""
        pool = getattr(self.client, "connection_pool", None)  # single server
        if pool is not None:
            await pool.disconnect(inuse_connections=False)
        if isinstance(self.mux, ClusterMultiplexed):
            await self.mux.refresh(force=True)

    def __getattr__(self, name: str) -> Any:
        # (only for names not found on the Store itself) a Redis command
        if name in COMMANDS:
            return getattr(self.client if name in self.client_own else self.commands, name)
        raise AttributeError(f"Store has no attribute {name!r}")

    def pipeline(self, transaction: bool = False):
        """A pipeline: one round trip (per node on a cluster); with
        ``transaction`` a MULTI/EXEC (all its keys in one slot)."""
        return self.client.pipeline(transaction=transaction)

    async def run(self, name: str, keys: Sequence[str | bytes], args: Iterable[Any] = ()) -> Any:
        """Run one script; all ``keys`` must share a hash slot. A script's
        error reply raises its exception from errors.SCRIPT_ERRORS."""
        script = self.scripts[name]
        self.counted[name].inc()  # /metrics: redpoll_redis_calls{op=name}
        try:
            if self.mux is None:
                return await script(keys=list(keys), args=list(args))
            # (on a cluster: to the master of the keys' slot; a redirection
            # is followed there, which is safe for every script: a MOVED or
            # ASK reply means it did not run, redpoll.storage.mux.ClusterMultiplexed)
            try:
                return await self.mux.call("EVALSHA", script.sha, len(keys), *keys, *args)
            except NoScriptError:  # the server restarted and lost its script cache
                await self.mux.load_script(script.script, keys)
                return await self.mux.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except ResponseError as exc:
            metrics.REDIS_ERRORS.labels(name).inc()
            raise from_script(name, exc) from None
        except Exception:
            metrics.REDIS_ERRORS.labels(name).inc()
            raise

    async def load_scripts(self) -> None:
        """Load every script (on every primary of a cluster) so that batches
        of EVALSHA in one pipeline (``run_many``) find them: those the
        server does not hold yet (one SCRIPT EXISTS first; a cluster's
        answer is true only where every primary holds it)."""
        scripts = list(self.scripts.values())
        held = await self.client.script_exists(*[s.sha for s in scripts])
        for script, there in zip(scripts, held):
            if not there:
                await self.client.script_load(script.script)

    async def run_many(
        self, calls: Sequence[tuple[str, Sequence, Sequence]], reads: Sequence[tuple] = ()
    ) -> list[Any]:
        """Several scripts in one round trip, run in the order given; each
        result, or the exception its error reply is (errors.SCRIPT_ERRORS),
        in a list. On a cluster each goes to its keys' master, so the order
        holds among calls on one master only: callers that need it pass
        calls of one hash slot (one user's keys). ``reads``: plain commands
        (reads only) sent after the scripts in the same round trip, their
        replies after the scripts' in the list (an error reply raises).

        If the server lost its script cache (a restart), the scripts are
        loaded and the whole batch runs again; callers only batch idempotent
        scripts. A call that did run the first time keeps its first result
        (say, "changed"), since the second run only confirms it."""
        if self.cluster and self.mux is None:  # (a cluster pipeline keeps no order)
            raise RuntimeError("run_many on a cluster needs its multiplexed connections")
        self.counted["run_many"].inc()
        first = await self._pipeline_scripts(calls, reads)
        if any(isinstance(r, NoScriptError) for r in first):
            await self.load_scripts()
            again = await self._pipeline_scripts(calls, reads)
            first = [b if isinstance(a, NoScriptError) else a for a, b in zip(first, again)]
        out = [
            from_script(name, r) if isinstance(r, ResponseError) else r
            for (name, _, _), r in zip(calls, first)
        ]
        for reply in first[len(calls) :]:
            if isinstance(reply, Exception):
                raise reply
        return out + [
            [x for item in r.items() for x in item] if isinstance(r, dict) else r
            for r in first[len(calls) :]
        ]

    async def _pipeline_scripts(self, calls, reads: Sequence[tuple] = ()) -> list[Any]:
        if self.mux is not None:
            return await self.mux.call_many(
                [
                    *(
                        ("EVALSHA", self.scripts[name].sha, len(script_keys), *script_keys, *args)
                        for name, script_keys, args in calls
                    ),
                    *reads,
                ]
            )
        pipe = self.client.pipeline(transaction=False)
        for name, script_keys, args in calls:
            pipe.evalsha(self.scripts[name].sha, len(script_keys), *script_keys, *args)
        for command in reads:
            pipe.execute_command(*command)
        return await pipe.execute(raise_on_error=False)

    async def memos_valid(self, seen: bytes | None) -> bool:
        """Whether the kept records (``statuses``, ``users``) still belong to
        this database, given keys.EPOCH as just read in the caller's batch:
        the epoch part of redpoll.core.memo's rule. If it changed or is gone (the
        database was wiped and will hand out the same ids again), they are
        dropped, a new epoch is set if needed, and False is returned: the
        caller reads afresh."""
        if seen is not None and seen == self.epoch:
            return True
        self.statuses.clear()
        self.users.clear()
        if seen is None:
            await self.adopt_epoch()
        else:
            self.epoch = seen
        return False

    async def adopt_epoch(self) -> None:
        """Set keys.EPOCH if the database has none yet (at open, or after a
        wipe), and remember its value."""
        _, self.epoch = await self.batch(
            [("SET", keys.EPOCH, uuid.uuid4().hex, "NX"), ("GET", keys.EPOCH)]
        )

    async def batch(self, commands: Sequence[tuple]) -> list[Any]:
        """Plain commands in one round trip (per node on a cluster, where each
        command's keys must share a slot), replies in order; an error reply
        raises. Not a transaction: for reads, or writes safe to repeat."""
        if not commands:
            return []
        self.counted["batch"].inc()
        if self.mux is not None:
            replies = await self.mux.call_many(list(commands))
            if any(isinstance(r, NoScriptError) for r in replies):
                # an EVALSHA in the batch, and the server lost its scripts
                # (a restart): load them and send the batch (reads) again
                await self.load_scripts()
                replies = await self.mux.call_many(list(commands))
            for reply in replies:
                if isinstance(reply, Exception):
                    raise reply
            return replies
        pipe = self.pipeline()
        for command in commands:
            pipe.execute_command(*command)
        # redis-py turns HGETALL replies into dicts; callers get them as sent
        return [
            [x for item in r.items() for x in item] if isinstance(r, dict) else r
            for r in await pipe.execute()
        ]

    async def batch_run(
        self,
        commands: Sequence[tuple],
        name: str,
        script_keys: Sequence[str],
        args: Iterable[Any] = (),
    ) -> list[Any]:
        """Plain ``commands`` (reads, or writes safe to repeat), then script
        ``name``, in one round trip (:meth:`batch`): their replies, the
        script's last. An error reply raises; if the server lost its scripts
        (a restart) they are loaded and all is sent again (the script did
        not run the first time)."""
        self.counted[name].inc()
        call = ("EVALSHA", self.scripts[name].sha, len(script_keys), *script_keys, *args)
        try:
            return await self.batch([*commands, call])
        except NoScriptError:  # a cluster node restarted (the multiplexed batch reloads itself)
            await self.load_scripts()
            return await self.batch([*commands, call])
        except ResponseError as exc:
            raise from_script(name, exc) from None

    async def hash_rows(self, hash_keys: Sequence[str]) -> list[list]:
        """HGETALL of each key, in order, in one round trip, each hash as the
        flat [field, value, ...] list HGETALL sends (empty if absent): callers
        look a record up by these bytes before decoding it. One batch on the
        multiplexed connection, else a pipeline (on a cluster, per node).
        Plain HGETALLs, not a script: the server spends a third of what the
        same reads cost inside one (each call from Lua is converted to Lua
        values and back)."""
        return await self.batch([("HGETALL", key) for key in hash_keys])

    def slot_groups(self, keys: Sequence[str | bytes]) -> list[list[str | bytes]]:
        if not self.cluster:
            return [list(keys)] if keys else []
        groups: dict[int, list[str | bytes]] = defaultdict(list)
        for key in keys:
            groups[key_slot(key if isinstance(key, bytes) else key.encode())].append(key)
        return list(groups.values())

    async def run_grouped(
        self, name: str, keys: Sequence[str], args: Iterable[Any] = ()
    ) -> list[Any]:
        """Run a script over keys of many slots, one call per slot. On a
        cluster the calls go as one batch per master (on its multiplexed
        connection), all masters at once: as many round trips as masters,
        not as slots, which is what a fan-out batch spread over a thousand
        slots needs.
        Each call is idempotent (callers rely on it): a node that lost its
        scripts gets them and the calls are sent again."""
        args = list(args)
        groups = self.slot_groups(keys)
        if len(groups) == 1:
            return [await self.run(name, groups[0], args)]
        sha = self.scripts[name].sha
        self.counted[name].inc(len(groups))

        async def send() -> list[Any]:
            if self.mux is not None:  # one batch per master, all at once
                return await self.mux.call_many(
                    [("EVALSHA", sha, len(group), *group, *args) for group in groups]
                )
            pipe = self.client.pipeline(transaction=False)
            for group in groups:
                # (the named evalsha is blocked on cluster pipelines; the
                # command routes by its keys all the same)
                pipe.execute_command("EVALSHA", sha, len(group), *group, *args)
            return await pipe.execute(raise_on_error=False)

        replies = await send()
        if any(isinstance(r, NoScriptError) for r in replies):
            await self.load_scripts()
            replies = await send()
        for reply in replies:
            if isinstance(reply, ResponseError):
                metrics.REDIS_ERRORS.labels(name).inc()
                raise from_script(name, reply)
            if isinstance(reply, Exception):
                raise reply
        return replies
