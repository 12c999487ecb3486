"""redpoll.storage.store: the engine's one way to the database. Plain commands go by
redis-py's names and arguments through the Store, which picks the
connection (the multiplexed one on a single server, redis-py's cluster
client on a cluster); replies come back in redis-py's shapes either way."""

from __future__ import annotations

import asyncio
import socket

import pytest
import redis
import redis.asyncio as aredis
from redis.crc import key_slot
from redis.exceptions import ClusterDownError, ConnectionError

from redpoll.storage.mux import Unroutable
from redpoll.storage.server import EmbeddedCluster
from redpoll.storage.store import Store


@pytest.fixture
async def pair(server):
    """The engine's store and a plain redis-py client on the same database."""
    url, cluster, _ = server
    store = Store.connect(url, cluster)
    plain = aredis.RedisCluster.from_url(url) if cluster else aredis.Redis.from_url(url, protocol=2)
    yield store, plain
    await store.close()
    await plain.aclose()


async def test_commands_reply_in_redis_py_shapes(pair):
    store, plain = pair
    tag = "{store-shapes}"
    await plain.hset(f"h{tag}", mapping={"a": "1", "b": "2"})
    await plain.zadd(f"z{tag}", {"x": 1.5, "y": 2})
    await plain.sadd(f"s{tag}", "m")
    await plain.xadd(f"x{tag}", {"f": "v"})
    calls = [
        ("hgetall", (f"h{tag}",), {}),
        ("hmget", (f"h{tag}", ["a", "missing"]), {}),
        ("hget", (f"h{tag}", "b"), {}),
        ("hexists", (f"h{tag}", "a"), {}),
        ("zscore", (f"z{tag}", "x"), {}),
        ("zscore", (f"z{tag}", "nobody"), {}),
        ("zmscore", (f"z{tag}", ["x", "nobody"]), {}),
        ("zrange", (f"z{tag}", 0, -1), {"withscores": True}),
        ("zrevrangebyscore", (f"z{tag}", "+inf", "-inf"), {"withscores": True}),
        ("sismember", (f"s{tag}", "m"), {}),
        ("smembers", (f"s{tag}",), {}),
        ("exists", (f"h{tag}",), {}),
        ("get", (f"missing{tag}",), {}),
        ("xlen", (f"x{tag}",), {}),
    ]
    for name, args, options in calls:
        mine = await getattr(store, name)(*args, **options)
        theirs = await getattr(plain, name)(*args, **options)
        assert mine == theirs and type(mine) is type(theirs), name
    assert await store.set(f"n{tag}", "1", nx=True) is True
    assert await store.set(f"n{tag}", "2", nx=True) is None
    assert await store.incr(f"n{tag}") == 2
    assert await store.ping() is True


async def test_a_multi_key_command_spans_slots(pair):
    """DEL over keys of many users: on a cluster the Store's client splits
    it by slot, as the engine's clean-ups rely on."""
    store, plain = pair
    names = [f"spread:{{{i}}}" for i in range(20)]
    for name in names:
        await plain.set(name, "1")
    assert await store.delete(*names) == 20
    assert await plain.exists(*names) == 0


async def test_a_blocking_read_does_not_hold_up_other_calls(pair):
    """A blocking command gets a connection of its own: on the multiplexed
    one, every call queued behind it would wait for it."""
    store, _ = pair
    blocked = asyncio.ensure_future(store.blpop(["empty-list{store-block}"], timeout=3))
    await asyncio.sleep(0.05)
    # queued behind the BLPOP, these would answer only when it times out:
    # they answer while it still waits (3 s leaves a loaded machine room;
    # a longer BLPOP outlasts the connection's read timeout here)
    await store.set("quick{store-block}", "1")
    assert await store.get("quick{store-block}") == b"1"
    assert not blocked.done()
    assert await blocked is None


async def test_an_unknown_name_is_an_attribute_error(pair):
    store, _ = pair
    with pytest.raises(AttributeError, match="no_such_command"):
        _ = store.no_such_command


# --- a cluster's routing: commands go to the master of their key's slot, over
# one multiplexed connection per master. These tests start a 3-master cluster
# of their own (they move slots and restart a master), so they run the same in
# the single-server and the cluster pass.


@pytest.fixture(scope="module")
def own_cluster(tmp_path_factory):
    cluster = EmbeddedCluster(tmp_path_factory.mktemp("routing") / "cluster").start()
    yield cluster
    cluster.stop()


@pytest.fixture
async def routed(own_cluster):
    for node in own_cluster.nodes:
        redis.Redis(port=node.port).flushall()
    store = Store.connect(own_cluster.url, cluster=True)
    yield store, own_cluster
    await store.close()


def node_id(node) -> str:
    return redis.Redis(port=node.port).execute_command("CLUSTER", "MYID").decode()


def master_of(cluster, key: str):
    slot = key_slot(key.encode())
    for node in cluster.nodes:
        for start, end, *_ in redis.Redis(port=node.port).execute_command("CLUSTER", "SLOTS"):
            if start <= slot <= end:
                owner = _[0]
                return next(n for n in cluster.nodes if n.port == int(owner[1]))
    raise AssertionError(f"no master for slot {slot}")


async def test_cluster_commands_go_to_every_master_over_one_connection_each(routed):
    store, cluster = routed
    names = [f"spread-{i}" for i in range(60)]
    replies = await store.batch([("SET", name, f"v{i}") for i, name in enumerate(names)])
    assert replies == [b"OK"] * 60
    assert await store.hash_rows([f"none-{i}" for i in range(5)]) == [[]] * 5
    # every master holds some of them, and each got them on one connection of
    # the store's (not one per call, as a pool would open under load)
    for node in cluster.nodes:
        assert redis.Redis(port=node.port).dbsize() > 0
    assert {(n.port) for n in cluster.nodes} == {port for _, port in store.mux.masters}
    assert await store.batch([("GET", name) for name in names]) == [
        f"v{i}".encode() for i in range(60)
    ]
    # plain commands by redis-py's names, one per master's key
    for name in names[:6]:
        assert await store.get(name) == f"v{names.index(name)}".encode()
    # a script over keys of many slots: one call per slot, on every master
    timelines = [f"tl-{i}" for i in range(30)]
    assert await store.run_grouped("deliver", timelines, [7, 100]) == [1] * 30
    assert all(
        redis.Redis(port=master_of(cluster, t).port).lrange(t, 0, -1) == [b"7"] for t in timelines
    )


async def test_cluster_redirections_after_a_slot_moves(routed):
    """A slot moved to another master with CLUSTER SETSLOT while the store
    holds the old map: during the move a new key's command is sent where the
    ASK reply says; after it, the MOVED reply updates the map and the
    command (a script too) runs at the new master, once."""
    store, cluster = routed
    old_key = "{moving}old"
    await store.set(old_key, "before")
    assert await store.run("deliver", ["{moving}tl"], [5, 100]) == 1
    source = master_of(cluster, old_key)
    target = next(n for n in cluster.nodes if n is not source)
    slot = key_slot(old_key.encode())
    src, dst = redis.Redis(port=source.port), redis.Redis(port=target.port)
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(source))
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(target))
    # a key the source does not hold: ASK, sent to the target after ASKING
    assert await store.set("{moving}new", "asked") is True
    assert await store.get(old_key) == b"before"  # still at the source
    moving = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100)
    src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *moving)
    for node in [target, source, *(n for n in cluster.nodes if n not in (source, target))]:
        redis.Redis(port=node.port).execute_command(
            "CLUSTER", "SETSLOT", slot, "NODE", node_id(target)
        )
    assert dst.get("{moving}new") == b"asked"
    # the store still sends the slot to the source: MOVED, then the target
    assert store.mux.slots[slot].address[1] == source.port
    assert await store.get(old_key) == b"before"
    assert store.mux.slots[slot].address[1] == target.port
    assert await store.batch([("GET", "{moving}new"), ("GET", "nothing-here")]) == [b"asked", None]
    # a script: the target may not have it loaded (NOSCRIPT, loaded, run once)
    assert await store.run("deliver", ["{moving}tl"], [6, 100]) == 1
    assert await store.run("deliver", ["{moving}tl"], [6, 100]) == 0
    assert dst.lrange("{moving}tl", 0, -1) == [b"6", b"5"]
    # a MOVED met in a batch is followed too
    back = key_slot(b"{moving2}")
    owner = master_of(cluster, "{moving2}")
    other = next(n for n in cluster.nodes if n is not owner)
    await store.set("{moving2}k", "x")
    for node in [other, owner, *(n for n in cluster.nodes if n not in (owner, other))]:
        r = redis.Redis(port=node.port)
        if node is owner:
            r.delete("{moving2}k")  # (an empty slot moves without MIGRATE)
        r.execute_command("CLUSTER", "SETSLOT", back, "NODE", node_id(other))
    assert await store.batch([("SET", "{moving2}k", "y"), ("GET", "{moving}new")]) == [
        b"OK",
        b"asked",
    ]
    assert redis.Redis(port=other.port).get("{moving2}k") == b"y"


async def test_cluster_master_restarted(routed):
    """A master that goes away: calls for its slots fail at once with redis's
    ConnectionError (what the engine takes as the database unreachable),
    the other masters' keys are still served, and once it is back the next
    calls reach it (its scripts loaded again)."""
    store, cluster = routed
    key_of = {}
    for i in range(200):
        key_of.setdefault(master_of(cluster, f"r{i}").port, f"r{i}")
    assert len(key_of) == 3
    for key in key_of.values():
        await store.set(key, "1")
        assert await store.run("deliver", [f"{{{key}}}tl"], [1, 100]) == 1
    victim = master_of(cluster, key_of[cluster.nodes[1].port])
    down_key = key_of[victim.port]
    up_key = next(k for port, k in key_of.items() if port != victim.port)
    victim.stop()
    try:
        started = asyncio.get_running_loop().time()
        with pytest.raises(ConnectionError):
            await store.get(down_key)
        with pytest.raises(ConnectionError):
            await store.batch([("GET", up_key), ("GET", down_key)])
        assert asyncio.get_running_loop().time() - started < 5
        assert await store.get(up_key) == b"1"
        assert await store.run("deliver", [f"{{{up_key}}}tl"], [2, 100]) == 1
    finally:
        victim.start()
    # (until the restarted master has rejoined, the cluster answers CLUSTERDOWN,
    # which the store waits out a little, then raises as redis-py's client does)
    for _ in range(50):
        try:
            assert await store.get(down_key) == b"1"
            break
        except ClusterDownError:
            await asyncio.sleep(0.1)
    assert await store.run("deliver", [f"{{{down_key}}}tl"], [2, 100]) == 1
    assert await store.batch([("GET", k) for k in key_of.values()]) == [b"1"] * 3


async def test_cluster_slot_of_a_command(routed):
    """Which slot a command goes to, by its keys as COMMAND places them (the
    wrong master would still answer, with MOVED, so this is checked here)."""
    store, _ = routed
    await store.get("anything")  # (reads the map and where commands' keys are)
    mux = store.mux
    for key in ["a", "status:123", "tl:{42}", "{}a", "x{y}{z}", "{a", "é{ü}", b"\xff{\x00}"]:
        raw = key if isinstance(key, bytes) else key.encode()
        assert mux.slot_of(("GET", key)) == key_slot(raw)
        assert mux.slot_of(("ZADD", key, 1, "m")) == key_slot(raw)
    assert mux.slot_of(("EVALSHA", "0" * 40, 2, "{u1}a", "{u1}b", "arg")) == key_slot(b"u1")
    assert mux.slot_of(("MGET", "{t}1", "{t}2")) == key_slot(b"t")
    assert mux.slot_of(("GET", 12)) == key_slot(b"12")
    for unroutable in [
        ("PING",),
        ("EVALSHA", "0" * 40, 0),
        ("MGET", "a", "b"),
        ("EVALSHA", "0" * 40, 2, "a", "b"),
        ("ZUNIONSTORE", "d", 1, "s"),
    ]:
        with pytest.raises(Unroutable):
            mux.slot_of(unroutable)


async def test_run_many_keeps_the_order_of_one_slots_calls(pair):
    """Scripts in one round trip run in the order given: on a cluster, calls
    on one master (here one slot) do, on its one connection."""
    store, plain = pair
    timeline = "tl:{run-many}"
    calls = [
        ("deliver", [timeline], [5, 100]),
        ("deliver", [timeline], [5, 100]),
        ("deliver", [timeline], [9, 100]),
        ("undeliver", [timeline], [5, 100]),
    ]
    assert await store.run_many(calls) == [1, 0, 1, 1]
    assert await plain.lrange(timeline, 0, -1) == [b"9"]


def test_a_cluster_node_whose_bus_port_was_taken_starts_on_another(tmp_path):
    """Free ports are found, not reserved: another process (a parallel test
    worker) may bind one between the choice and the start. The node then
    starts on other ports and the cluster forms all the same."""
    cluster = EmbeddedCluster(tmp_path / "c", masters=3)
    taken = int(cluster.nodes[1].config["cluster-port"])
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", taken))
        squatter.listen()
        with cluster:
            assert int(cluster.nodes[1].config["cluster-port"]) != taken
            assert redis.Redis(port=cluster.nodes[1].port).cluster("info")["cluster_state"] == "ok"


@pytest.mark.topology
async def test_scripts_are_loaded_where_missing_and_only_there(pair, server):
    """load_scripts asks which scripts the server holds and loads the
    others: after one master forgot every script (SCRIPT FLUSH, as a
    restart without persistence does), each script runs again by its sha."""
    store, plain = pair
    _, _, handle = server
    await store.load_scripts()
    nodes = handle.nodes if isinstance(handle, EmbeddedCluster) else [handle]
    redis.Redis(port=nodes[-1].port).script_flush()
    shas = [s.sha for s in store.scripts.values()]
    assert not all(await plain.script_exists(*shas))
    await store.load_scripts()
    assert all(await plain.script_exists(*shas))
    again = Store.connect(*server[:2])
    try:
        await again.load_scripts()  # all there: nothing loaded, nothing refused
        assert all(await plain.script_exists(*shas))
    finally:
        await again.close()
