"""``redpoll bench --cluster``: what the engine bench cannot show on one
server, measured on a Redis Cluster (by default the 3-master loopback
cluster the tests start, embedded servers, no replicas):

spread
    For each phase of the engine bench (fan-out, reads, follows) and for
    the two runs below: the commands each master processed
    (``total_commands_processed``) and the CPU it used (``used_cpu_*``),
    as shares of the whole. Even spread is 1/masters each.
keys
    Keys each master holds once the bench data is built (``DBSIZE``).
hot keys
    *posts*: many authors posting (``rp.statuses.post``, no followers), unlisted and
    then public: a public status also goes to the public timeline (one of
    ``limits.PUBLIC_TIMELINE_SHARDS`` LISTs on a cluster), and every post
    writes the status id counter and the stream's event log, each one key
    on one master (printed: which). The busiest master's share, public
    against unlisted, is what the public timeline adds.
    *celebrity*: reads of one account's profile (one key, one master)
    against reads of many accounts' profiles, pages of 20.
    For each: the rates, and each master's share of the commands; the hot
    key's own share ``h`` (its master's commands beyond the others' mean,
    over all commands) gives what ``M`` masters would carry at most:
    ``h + (1 - h) / M`` of the load on one of them (the projection for 10
    masters is printed beside the 3 measured).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from redis.asyncio.cluster import RedisCluster

from ..core import keys, limits

#: Posts of the hot public-timeline run, and their concurrency.
HOT_POSTS = 600
HOT_CONCURRENCY = 16
#: Profile pages read by each contender of the celebrity run.
CELEBRITY_READS = 3000
#: Masters the projection is made for.
PROJECT_TO = 10


class Nodes:
    """Per-master counters of one cluster, read before and after a phase."""

    def __init__(self, client: RedisCluster):
        self.client = client

    async def counters(self) -> dict[str, tuple[int, float]]:
        stats = await self.client.info("stats", target_nodes=RedisCluster.PRIMARIES)
        cpu = await self.client.info("cpu", target_nodes=RedisCluster.PRIMARIES)
        return {
            node: (
                int(stats[node]["total_commands_processed"]),
                float(cpu[node]["used_cpu_user"]) + float(cpu[node]["used_cpu_sys"]),
            )
            for node in sorted(stats)
        }

    async def keys_per_master(self) -> dict[str, int]:
        info = await self.client.info("keyspace", target_nodes=RedisCluster.PRIMARIES)
        return {node: int(v.get("db0", {}).get("keys", 0)) for node, v in sorted(info.items())}

    def node_of(self, key: str) -> str:
        node = self.client.get_node_from_key(key)
        return f"{node.host}:{node.port}"


def shares(before: dict, after: dict) -> dict[str, Any]:
    """Each master's share of the commands and CPU between two readings."""
    cmds = {n: after[n][0] - before[n][0] for n in after}
    cpu = {n: after[n][1] - before[n][1] for n in after}
    total_c, total_u = sum(cmds.values()) or 1, sum(cpu.values()) or 1e-9
    return {
        "commands": sum(cmds.values()),
        "command_share": {n: round(c / total_c, 3) for n, c in cmds.items()},
        "cpu_share": {n: round(u / total_u, 3) for n, u in cpu.items()},
        "max_over_even": round(max(cmds.values()) / (total_c / len(cmds)), 2),
    }


def hot_share(spread: dict, hot_node: str) -> float:
    """The hot key's own share of all commands: its master's beyond the
    others' mean."""
    share = spread["command_share"]
    others = [v for n, v in share.items() if n != hot_node]
    return max(0.0, share[hot_node] - (statistics.mean(others) if others else 0.0))


def projection(h: float, masters: int) -> float:
    """The largest share one of ``masters`` carries with a hot key of share h."""
    return round(h + (1 - h) / masters, 3)


async def measured(nodes: Nodes, run) -> tuple[Any, dict]:
    before = await nodes.counters()
    result = await run()
    return result, shares(before, await nodes.counters())


async def hot_keys(rp, bench, say) -> dict[str, Any]:
    """The two hot-key runs (on bench users, removed with the bench's data)."""
    nodes = Nodes(rp.store.client)
    out: dict[str, Any] = {}
    authors = bench.uids(HOT_CONCURRENCY * 4)
    await bench.make_users(authors, naive=False)
    bench.created += [k for uid in authors for k in (keys.profile(uid), keys.home(uid))]
    # posts: every public status also goes to the public timeline
    posted: list[int] = []

    def post_all(visibility: str):
        async def run():
            queue = list(range(HOT_POSTS))
            extra = {"visibility": visibility}

            async def one(worker: int):
                while queue:
                    n = queue.pop()
                    status = await rp.statuses.post(
                        authors[(worker + n) % len(authors)], f"hot post {n}", extra
                    )
                    posted.append(status.id)

            t0 = time.perf_counter()
            await asyncio.gather(*(one(w) for w in range(HOT_CONCURRENCY)))
            return HOT_POSTS / (time.perf_counter() - t0)

        return run

    # unlisted posts skip the public timeline and nothing else: the
    # difference on its master is what the public timeline itself costs
    say(f"  hot key: {HOT_POSTS} unlisted posts, then {HOT_POSTS} public ones ...")
    _, unlisted = await measured(nodes, post_all("unlisted"))
    rate, spread = await measured(nodes, post_all("public"))
    # the busiest master under public posts, and its share beyond the others
    public_node = max(spread["command_share"], key=spread["command_share"].get)
    h = hot_share(spread, public_node)
    shards = sorted(
        {nodes.node_of(k) for k in keys.public_timeline_shards(limits.PUBLIC_TIMELINE_SHARDS)}
    )
    # every post writes these one-of-a-kind keys: where each of them lives
    singles = {
        name: nodes.node_of(key)
        for name, key in (
            ("status id counter", keys.STATUS_SEQ),
            ("stream event log", keys.EVENT_LOG),
            ("hashtag names", keys.TAG_NAMES),
        )
    }
    singles["public timeline shards"] = f"{len(shards)} masters"
    out["post_single_keys"] = singles
    out["unlisted_posts"] = unlisted
    out["public_timeline"] = {
        "posts_per_s": round(rate),
        "node": public_node,
        **spread,
        "node_share_unlisted": unlisted["command_share"][public_node],
        "hot_share": round(h, 3),
        "largest_share_3": projection(h, 3),
        f"largest_share_{PROJECT_TO}": projection(h, PROJECT_TO),
    }
    bench.created += [keys.status(sid) for sid in posted]
    bench.created += [keys.status_counts(sid) for sid in posted]
    bench.fanout_sids += posted  # cleanup takes them off the public timeline
    await rp.drain(timeout=300)  # the posts' jobs (their fan-out finds no followers)
    # celebrity: one profile read by everyone, against many profiles
    celebrity = authors[0]

    def reader(pick):
        async def run():
            t0 = time.perf_counter()
            for n in range(CELEBRITY_READS):
                await rp.timelines.profile(pick(n), limit=20)
            return CELEBRITY_READS / (time.perf_counter() - t0)

        return run

    say(f"  hot key: {CELEBRITY_READS} reads of one profile, then of {len(authors)} ...")
    one_rate, one_spread = await measured(nodes, reader(lambda n: celebrity))
    many_rate, many_spread = await measured(nodes, reader(lambda n: authors[n % len(authors)]))
    profile_node = nodes.node_of(keys.profile(celebrity))
    h = hot_share(one_spread, profile_node)
    out["celebrity_profile"] = {
        "one_profile_pages_per_s": round(one_rate),
        "many_profiles_pages_per_s": round(many_rate),
        "node": profile_node,
        "one": one_spread,
        "many": many_spread,
        "hot_share": round(h, 3),
        "largest_share_3": projection(h, 3),
        f"largest_share_{PROJECT_TO}": projection(h, PROJECT_TO),
    }
    return out


def table(res: dict) -> str:
    lines = [
        f"cluster: {res['masters']} masters on loopback; shares of commands (cpu) per master,"
        " even = 1/masters"
    ]
    for phase, spread in res["phases"].items():
        parts = ", ".join(
            f"{spread['command_share'][n]:.2f} ({spread['cpu_share'][n]:.2f})"
            for n in spread["command_share"]
        )
        lines.append(f"  {phase:<10} {parts}; busiest/even {spread['max_over_even']}")
    lines.append("  keys per master: " + ", ".join(str(v) for v in res["keys"].values()))
    pt, cp = res["hot"]["public_timeline"], res["hot"]["celebrity_profile"]
    lines.append(
        f"  public posts (busiest {pt['node']}): {pt['posts_per_s']:,} posts/s, its own share "
        f"{pt['hot_share']:.3f}: busiest master carries {pt['largest_share_3']:.2f} of 3, "
        f"{pt[f'largest_share_{PROJECT_TO}']:.2f} of {PROJECT_TO} masters"
    )
    lines.append(
        f"  that master's share of post commands: {pt['command_share'][pt['node']]:.2f} "
        f"public, {pt['node_share_unlisted']:.2f} unlisted (no public timeline)"
    )
    lines.append(
        "  one-of-a-kind keys every post writes: "
        + ", ".join(f"{name} on {node}" for name, node in res["hot"]["post_single_keys"].items())
    )
    lines.append(
        f"  celebrity profile ({cp['node']}): {cp['one_profile_pages_per_s']:,} pages/s of "
        f"one profile vs {cp['many_profiles_pages_per_s']:,} of many; own share "
        f"{cp['hot_share']:.3f}: busiest carries {cp['largest_share_3']:.2f} of 3, "
        f"{cp[f'largest_share_{PROJECT_TO}']:.2f} of {PROJECT_TO}"
    )
    return "\n".join(lines)
