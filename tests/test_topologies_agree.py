"""The differential test of the two topologies: the same actions on one
embedded server and on a 3-master cluster, both started here, build the
same homes (the lists themselves, entry by entry) and the same pages, with
every author fanned out and with large accounts caught up with at read.
It runs once (it starts both topologies itself), whatever the leg."""
from __future__ import annotations

import pytest

from redpoll import Redpoll, Settings
from redpoll.core import keys
from redpoll.storage.server import EmbeddedCluster, EmbeddedServer

from test_hybrid import NEVER, home_ids, scenario

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("threshold", [NEVER, 3])
async def test_both_topologies_build_the_same_homes(tmp_path, threshold):
    single = EmbeddedServer(tmp_path / "single")
    cluster = EmbeddedCluster(tmp_path / "cluster")
    single.start()
    cluster.start()
    try:
        got = {}
        for name, url, is_cluster in (("single", single.url, False),
                                      ("cluster", cluster.url, True)):
            rp = await Redpoll.open(Settings(redis_url=url, cluster=is_cluster, job_claim_ms=500,
                                             fanout_threshold=threshold))
            try:
                pages = await scenario(rp, None, threshold)
                users = {login: (await rp.lookup(login)).id
                         for login in ("viewer", "viewer2", "big1", "small1", "small2")}
                pages["homes"] = {login: await home_ids(rp, keys.home(uid))
                                  for login, uid in users.items()}
                got[name] = pages
            finally:
                await rp.close()
    finally:
        cluster.stop()
        single.stop()
    single_pages, cluster_pages = got["single"], got["cluster"]
    assert single_pages["texts"] == cluster_pages["texts"]  # the same ids for the same actions
    for part in ("homes", "viewer", "viewer2", "blocked", "big_homes"):
        assert single_pages[part] == cluster_pages[part], part
    assert len(single_pages["homes"]["viewer"]) > 10  # a comparison of something
