"""The connection to Redis (one server or a Cluster) and the Lua scripts.

Scripts live in ``lua/``, one per atomic operation. :meth:`Store.run` runs a
script whose keys share a slot; :meth:`Store.run_grouped` runs one over keys
of many users by splitting them into one call per hash slot (on a single
server there are no slots, so it is one call).
"""
from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

import redis.asyncio as aredis
from redis.asyncio.cluster import RedisCluster
from redis.cluster import key_slot

from . import limits
from .settings import Settings

LUA_DIR = Path(__file__).with_name("lua")
#: Script calls in flight at once for one run_grouped (bounds the connections
#: a fan-out opens per cluster node).
GROUP_CONCURRENCY = 32


class Store:
    def __init__(self, client: aredis.Redis | RedisCluster, cluster: bool):
        self.client = client
        self.cluster = cluster
        self.scripts = {
            path.stem: client.register_script(path.read_text())
            for path in sorted(LUA_DIR.glob("*.lua"))
        }

    @classmethod
    def connect(cls, url: str, cluster: bool = False) -> "Store":
        if cluster:
            # redis-py's cluster client cannot wait for a free connection (it
            # raises at the limit), so its per-node limit is set high and the
            # callers bound their own concurrency (HTTP server, run_grouped).
            client = RedisCluster.from_url(url, max_connections=limits.CLUSTER_MAX_CONNECTIONS)
        else:
            # A burst of calls waits for a free connection instead of failing.
            pool = aredis.BlockingConnectionPool.from_url(
                url, max_connections=limits.REDIS_MAX_CONNECTIONS,
                timeout=limits.REDIS_POOL_WAIT_S)
            client = aredis.Redis(connection_pool=pool)
        return cls(client, cluster)

    @classmethod
    def from_settings(cls, settings: Settings, url: str) -> "Store":
        return cls.connect(url, settings.cluster)

    async def close(self) -> None:
        await self.client.aclose()

    def pipeline(self):
        """A non-transactional pipeline: one round trip (per node on a cluster)."""
        return self.client.pipeline(transaction=False)

    async def run(self, name: str, keys: Sequence[str], args: Iterable[Any] = ()) -> Any:
        """Run one script; all ``keys`` must share a hash slot."""
        return await self.scripts[name](keys=list(keys), args=list(args))

    def slot_groups(self, keys: Sequence[str]) -> list[list[str]]:
        if not self.cluster:
            return [list(keys)] if keys else []
        groups: dict[int, list[str]] = defaultdict(list)
        for key in keys:
            groups[key_slot(key.encode())].append(key)
        return list(groups.values())

    async def run_grouped(self, name: str, keys: Sequence[str], args: Iterable[Any] = ()) -> list[Any]:
        """Run a script over keys of many slots, one call per slot, concurrently."""
        args = list(args)
        groups = self.slot_groups(keys)
        if len(groups) == 1:
            return [await self.run(name, groups[0], args)]
        gate = asyncio.Semaphore(GROUP_CONCURRENCY)

        async def one(group: list[str]) -> Any:
            async with gate:
                return await self.run(name, group, args)

        return list(await asyncio.gather(*(one(g) for g in groups)))
