"""Fixtures: a real server for the whole run, started here.

``REDPOLL_TEST_CLUSTER=1`` runs the suite against a 3-master Redis Cluster
of embedded servers on loopback instead of one embedded server.
"""
from __future__ import annotations

import os

import pytest
import redis

from redpoll import Redpoll, Settings
from redpoll.server import EmbeddedCluster, EmbeddedServer

CLUSTER = os.environ.get("REDPOLL_TEST_CLUSTER", "") == "1"


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
    from test_stream_mastodon import LOOSE
    from test_stream_support import StreamProc
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path_factory.mktemp("serve"), **LOOSE).start()
    yield proc
    proc.stop()
