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

    async def used_memory(self) -> int:
        raise NotImplementedError

    async def alive(self) -> None:
        """Whether the database serves again after an outage (the health
        probe's question, redpoll.core.health); raises if not."""
        await self.store.ping()


class SingleServer(Topology):
    name = "single server"

    async def used_memory(self) -> int:
        return (await self.store.info("memory"))["used_memory"]


class Cluster(Topology):
    name = "cluster"

    def slot(self, key) -> int:
        return key_slot(key if isinstance(key, bytes) else key.encode())

    async def used_memory(self) -> int:
        info = await self.store.info("memory", target_nodes=RedisCluster.PRIMARIES)
        return sum(node["used_memory"] for node in info.values())

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
