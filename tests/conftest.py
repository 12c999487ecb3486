"""Fixtures: a real server for the whole run, started here.

``REDPOLL_TEST_CLUSTER=1`` runs the suite against a 3-master Redis Cluster
of embedded servers on loopback instead of one embedded server.

The tests mirror the layers: storage/ and engine/ depend on the topology
underneath (every test there is marked ``topology``); api/, stream/, web/,
ops/ and tools/ talk to a real ``redpoll serve`` and mostly do not, except
the modules marked ``topology`` themselves (the leak tests). ./test.sh runs
everything on one server and the ``topology`` tests again on the cluster.
Helpers the tests share are in ``support`` (tests/support/); no test module
imports another (tests/test_layers.py checks it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import redis

from redpoll import Redpoll, Settings
from redpoll.storage.server import EmbeddedCluster, EmbeddedServer

CLUSTER = os.environ.get("REDPOLL_TEST_CLUSTER", "") == "1"

#: folders whose every test depends on the topology
TOPOLOGY_FOLDERS = ("storage", "engine")


def pytest_ignore_collect(collection_path, config):
    """With ``-m topology`` (the cluster pass of ./test.sh), a test module
    outside TOPOLOGY_FOLDERS that marks nothing ``topology`` is not even
    imported: every worker would import it (and what it imports) only to
    deselect all of it."""
    if config.getoption("markexpr") != "topology" or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    if collection_path.parent.name in TOPOLOGY_FOLDERS:
        return None
    return "mark.topology" not in collection_path.read_text()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).resolve().parent.name in TOPOLOGY_FOLDERS:
            item.add_marker(pytest.mark.topology)


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """(url, is_cluster, handle) of the server every test talks to."""
    base = tmp_path_factory.mktemp("server")
    handle = EmbeddedCluster(base / "cluster") if CLUSTER else EmbeddedServer(base / "single")
    handle.start()
    yield handle.url, CLUSTER, handle
    handle.stop()


def flush(handle) -> None:
    nodes = handle.nodes if isinstance(handle, EmbeddedCluster) else [handle]
    for node in nodes:
        redis.Redis(port=node.port).flushall()


@pytest.fixture
def settings(server) -> Settings:
    url, cluster, handle = server
    flush(handle)
    return Settings(redis_url=url, cluster=cluster, job_claim_ms=500)


@pytest.fixture
async def rp(settings):
    engine = await Redpoll.open(settings)
    yield engine
    await engine.close()


@pytest.fixture(scope="module")
def srv(server, tmp_path_factory):
    """A real ``redpoll serve`` (API and streams, no job workers: tests
    drain with ``rp``) on the session's database, one per test module,
    rate limits loose."""
    from support.mastodon import LOOSE
    from support.streams import StreamProc

    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path_factory.mktemp("serve"), **LOOSE).start()
    yield proc
    proc.stop()
