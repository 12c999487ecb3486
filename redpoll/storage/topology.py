"""The two topologies redpoll runs on, chosen once per Store (:func:`of`):
what differs between one server and a cluster for the database as a whole
(the hash slot of a key, scanning every master, used memory, whether it
serves again after an outage). A feature whose writes or reads differ
between the two keeps both variants side by side in its own package
(redpoll.timelines.placement, redpoll.records.writes) and has
:func:`pick` choose one: the one place code is chosen by the topology. The
Store itself knows nothing of them: it carries commands and scripts.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from redis.asyncio.cluster import RedisCluster
from redis.cluster import key_slot
from redis.exceptions import ClusterDownError

from .store import Store

T = TypeVar("T")


class Topology:
    """What both topologies share; the subclasses are the two layouts."""

    name = ""

    def __init__(self, store: Store):
        self.store = store

    def slot(self, key) -> int:
        """The hash slot of ``key`` where slots matter (a cluster)."""
        return 0

    async def keys_matching(self, pattern: str) -> list[str]:
        """Every key matching ``pattern`` (SCAN, on every master of a
        cluster); for rare administrative work, never a request's."""
        return [
            k.decode() if isinstance(k, bytes) else k
            async for k in self.store.scan_iter(match=pattern, count=1000)
        ]

    async def scan_step(self, pattern: str, cursor: str, count: int) -> tuple[str | None, list]:
        """One SCAN call of a walk over every key matching ``pattern``
        that can stop and go on later: ``cursor`` is "" at the start, then
        what the call before returned; None back when the walk is done.
        Bounded (about ``count`` keys looked at); keys as bytes. A key may
        come twice (SCAN's own promise), one written during the walk may
        not come at all."""
        raise NotImplementedError

    async def used_memory(self) -> int:
        raise NotImplementedError

    async def server_version(self) -> str:
        """The database server's version (INFO's redis_version)."""
        raise NotImplementedError

    async def alive(self) -> None:
        """Whether the database serves again after an outage (the health
        probe's question, redpoll.core.health); raises if not."""
        await self.store.ping()


class SingleServer(Topology):
    name = "single server"

    async def used_memory(self) -> int:
        return (await self.store.info("memory"))["used_memory"]

    async def server_version(self) -> str:
        return str((await self.store.info("server"))["redis_version"])

    async def scan_step(self, pattern: str, cursor: str, count: int) -> tuple[str | None, list]:
        at, found = await self.store.client.execute_command(
            "SCAN", int(cursor or 0), "MATCH", pattern, "COUNT", count
        )
        return (str(at) if int(at) else None), list(found)


class Cluster(Topology):
    name = "cluster"

    def slot(self, key) -> int:
        return key_slot(key if isinstance(key, bytes) else key.encode())

    async def scan_step(self, pattern: str, cursor: str, count: int) -> tuple[str | None, list]:
        """Every master in turn, in the order of their addresses; the cursor
        is ``<master's address> <its SCAN cursor>``. A walk whose master is
        no longer one (a failover, a resharding) starts again at the first:
        the steps that use it are idempotent."""
        client = self.store.client
        assert isinstance(client, RedisCluster)
        masters = sorted(client.get_primaries(), key=lambda n: (n.host, n.port))
        names = [n.name for n in masters]
        name, _, at = cursor.partition(" ")
        if name not in names:
            name, at = names[0], "0"
        node = masters[names.index(name)]
        reply = await client.execute_command(
            "SCAN", int(at or 0), "MATCH", pattern, "COUNT", count, target_nodes=node
        )
        nxt, found = reply
        if isinstance(nxt, dict):  # redis-py's cluster reply: {node: cursor}
            nxt = next(iter(nxt.values()))
        if int(nxt):
            return f"{name} {int(nxt)}", list(found)
        following = names.index(name) + 1
        return (f"{names[following]} 0" if following < len(names) else None), list(found)

    async def used_memory(self) -> int:
        info = await self.store.info("memory", target_nodes=RedisCluster.PRIMARIES)
        return sum(node["used_memory"] for node in info.values())

    async def server_version(self) -> str:
        """The version of the first master (all run one in practice)."""
        info = await self.store.info("server", target_nodes=RedisCluster.PRIMARIES)
        return str(next(iter(info.values()))["redis_version"])

    async def alive(self) -> None:
        """PING, and the answering node has every slot served
        (cluster_state:ok): nodes that came back answer before they agree
        again, and calls meanwhile get CLUSTERDOWN."""
        await self.store.ping()
        client: Any = self.store.client  # (a RedisCluster on this topology)
        info = await client.cluster_info()
        if info.get("cluster_state", "ok") != "ok":
            raise ClusterDownError("CLUSTERDOWN the cluster is not serving every slot yet")


_CHOSEN: weakref.WeakKeyDictionary[Store, Topology] = weakref.WeakKeyDictionary()
_PICKED: weakref.WeakKeyDictionary[Store, dict[Any, Any]] = weakref.WeakKeyDictionary()


def of(store: Store) -> Topology:
    """The topology of ``store``'s database, made once per store."""
    topology = _CHOSEN.get(store)
    if topology is None:
        topology = _CHOSEN[store] = Cluster(store) if store.cluster else SingleServer(store)
    return topology


def pick(store: Store, single: Callable[[Store], T], cluster: Callable[[Store], T]) -> T:
    """A feature's variant for ``store``'s topology (``single`` or
    ``cluster``, each made with the store), made once per store."""
    made = _PICKED.setdefault(store, {})
    found = made.get(single)
    if found is None:
        found = made[single] = (cluster if store.cluster else single)(store)
    return found
