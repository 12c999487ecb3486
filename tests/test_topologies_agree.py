"""The differential test of the two topologies: the same actions on one
embedded server and on a 3-master cluster, both started here, build the
same homes (the lists themselves, entry by entry), the same list timelines
and the same pages, with every author fanned out and with large accounts
caught up with at read. Two fixtures: the hybrid one (test_hybrid.scenario)
and one that meets every condition of the home rule on every path that
asks it (push, catch-up, idle rebuild, follow and list backfill). It runs
once (it starts both topologies itself), whatever the leg."""

from __future__ import annotations

import asyncio

import pytest
from support.hybrid import NEVER, home_ids, scenario, walks  # noqa: F401

from redpoll import Redpoll, Settings
from redpoll.core import keys
from redpoll.storage.server import EmbeddedCluster, EmbeddedServer

pytestmark = pytest.mark.timeout(300)


async def rule_scenario(rp) -> dict:
    """Every condition of the home rule, on every path: a reply to an
    account followed, to one not followed, to the viewer; a direct status;
    a boost whose original the home holds, one shown, one by a booster the
    viewer hides; a list (replies policy "list") with a member followed by
    its owner and one it has only asked to follow (``ra``, locked after its
    followers came); an idle user rebuilt at read; a follow and a list
    membership made after the posts (backfills); ``ra`` large at threshold
    3 (caught up with at read)."""
    u = {
        n: (await rp.accounts.sign_up(n)).id
        for n in ("rv", "ra", "rb", "rc", "ridle", "rlate", "rowner", "rhider")
    }
    for i in range(4):  # ra has more than 3 followers
        await rp.relations.follow((await rp.accounts.sign_up(f"rfan{i}")).id, u["ra"])
    for who in ("rv", "ridle"):
        for target in ("ra", "rb"):
            await rp.relations.follow(u[who], u[target])
        await rp.relations.follow_with_options(u[who], u["rhider"], reblogs=False)
    await rp.relations.follow(u["rowner"], u["rb"])
    lst = (await rp.lists.create(u["rowner"], "rule")).id
    await rp.lists.add(u["rowner"], lst, u["rb"])
    await rp.timelines.home(u["ridle"])
    await asyncio.sleep(1.3)  # ridle is idle from here: fan-out skips them
    t: dict[str, int] = {}

    async def post(who, text, reply=None, **extra):
        t[text] = (await rp.statuses.post(u[who], text, extra or None, reply)).id

    await post("rc", "c's")
    await post("rb", "b's")
    await post("rv", "v's")
    await post("ra", "walk")  # the post that sees ra cross the threshold
    await post("ra", "plain")
    await post("ra", "to c", t["c's"])
    await post("ra", "to b", t["b's"])
    await post("ra", "to v", t["v's"])
    await post("ra", "@rc direct", visibility="direct")
    await post("ra", "private", visibility="private")
    t["b boosts plain"] = await rp.statuses.boost(u["rb"], t["plain"])  # its original just below
    t["a boosts c"] = await rp.statuses.boost(u["ra"], t["c's"])
    t["hider boosts b"] = await rp.statuses.boost(u["rhider"], t["b's"])
    await post("rb", "b to c", t["c's"])
    await post("rb", "b to itself", t["b's"])
    await rp.drain()
    await rp.relations.follow(u["rlate"], u["ra"])  # backfills, both after the posts
    await rp.relations.follow(u["rlate"], u["rb"])
    await rp.accounts.update_profile(u["ra"], locked=True)
    await rp.relations.follow(u["rowner"], u["ra"])  # a request: a list may hold it
    await rp.lists.add(u["rowner"], lst, u["ra"])
    await rp.drain()
    pages = {
        "rv": await walks(
            lambda **c: rp.timelines.home(u["rv"], **c), await rp.timelines.home(u["rv"])
        ),
        "ridle": [s.id for s in await rp.timelines.home(u["ridle"])],  # rebuilt
        "rlate": [s.id for s in await rp.timelines.home(u["rlate"])],
        "list": [s.id for s in await rp.timelines.of_list(u["rowner"], lst)],
    }
    pages["homes"] = {n: await home_ids(rp, keys.home(u[n])) for n in ("rv", "ridle", "rlate")}
    pages["list_raw"] = await home_ids(rp, keys.list_timeline(u["rowner"], lst))
    pages["texts"] = t
    return pages


async def rule_scenario_again(rp, got: dict) -> dict:
    """More news after the viewer's first page, read by a process that has
    seen the viewer's large accounts (a single server catches up in the
    page's own round trip then): a plain status whose boost the home holds
    already, a reply to an account not followed, a boost shown."""
    u = {n: (await rp.accounts.lookup(n)).id for n in ("rv", "ra", "rb", "rc")}
    t = dict(got["texts"])
    await rp.timelines.home(u["rv"])  # this process learns rv's large accounts
    t["plain 2"] = (await rp.statuses.post(u["ra"], "plain 2")).id
    t["b boosts plain 2"] = await rp.statuses.boost(
        u["rb"], t["plain 2"]
    )  # before rv's home has it
    t["to c 2"] = (await rp.statuses.post(u["ra"], "to c 2", None, t["c's"])).id
    t["a boosts b"] = await rp.statuses.boost(u["ra"], t["b's"])
    await rp.drain()
    page = await walks(
        lambda **c: rp.timelines.home(u["rv"], **c), await rp.timelines.home(u["rv"])
    )
    return {
        "rv again": page,
        "home again": await home_ids(rp, keys.home(u["rv"])),
        "texts again": t,
    }


def rule_held(got: dict) -> None:
    """The fixture means something: each condition left out or let in what
    it should (so "equal" is not "equally wrong")."""
    t = got["texts"]
    for view in ("rv", "ridle"):
        shown = [i for p in got["rv"]["down"] for i in p] if view == "rv" else got[view]
        for there in ("plain", "to b", "private", "a boosts c", "b to itself"):
            assert t[there] in shown, (view, there)
        for gone in ("to c", "@rc direct", "b boosts plain", "hider boosts b", "b to c"):
            assert t[gone] not in shown, (view, gone)
        # a reply to rv: in rv's home, not in ridle's (who does not follow rv)
        assert (t["to v"] in shown) == (view == "rv"), view
    late = got["rlate"]
    assert t["plain"] in late and t["to c"] not in late and t["@rc direct"] not in late
    assert t["b boosts plain"] not in late  # the backfill's window
    listed = got["list"]
    assert t["to b"] in listed and t["plain"] in listed and t["b to itself"] in listed
    for gone in ("to c", "to v", "b to c", "@rc direct", "private"):
        assert t[gone] not in listed, gone
    t = got["texts again"]
    shown = [i for p in got["rv again"]["down"] for i in p]
    assert t["plain 2"] in shown and t["a boosts b"] not in shown  # b's is in the window
    assert t["b boosts plain 2"] not in shown and t["to c 2"] not in shown


@pytest.mark.parametrize("threshold", [NEVER, 3])
async def test_both_topologies_build_the_same_homes(tmp_path, threshold):
    single = EmbeddedServer(tmp_path / "single")
    cluster = EmbeddedCluster(tmp_path / "cluster")
    single.start()
    cluster.start()
    try:
        got = {}
        for name, url, is_cluster in (
            ("single", single.url, False),
            ("cluster", cluster.url, True),
        ):
            settings = Settings(
                redis_url=url, cluster=is_cluster, job_claim_ms=500, fanout_threshold=threshold
            )
            rp = await Redpoll.open(settings)
            try:
                pages = await scenario(rp, None, threshold)
                users = {
                    login: (await rp.accounts.lookup(login)).id
                    for login in ("viewer", "viewer2", "big1", "small1", "small2")
                }
                pages["homes"] = {
                    login: await home_ids(rp, keys.home(uid)) for login, uid in users.items()
                }
                got[name] = pages
            finally:
                await rp.close()
            rp = await Redpoll.open(settings.with_(idle_after_s=1))
            try:
                got[name + " rule"] = await rule_scenario(rp)
            finally:
                await rp.close()
            rp = await Redpoll.open(settings)
            try:
                got[name + " rule"].update(await rule_scenario_again(rp, got[name + " rule"]))
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
    single_rule, cluster_rule = got["single rule"], got["cluster rule"]
    assert single_rule["texts"] == cluster_rule["texts"]
    for part in (
        "homes",
        "list_raw",
        "rv",
        "ridle",
        "rlate",
        "list",
        "texts again",
        "rv again",
        "home again",
    ):
        assert single_rule[part] == cluster_rule[part], part
    rule_held(single_rule)
