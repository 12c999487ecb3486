"""redpoll.store: the engine's one way to the database. Plain commands go by
redis-py's names and arguments through the Store, which picks the
connection (the multiplexed one on a single server, redis-py's cluster
client on a cluster); replies come back in redis-py's shapes either way."""
from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aredis

from redpoll.store import Store


@pytest.fixture
async def pair(server):
    """The engine's store and a plain redis-py client on the same database."""
    url, cluster, _ = server
    store = Store.connect(url, cluster)
    plain = (aredis.RedisCluster.from_url(url) if cluster
             else aredis.Redis.from_url(url, protocol=2))
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
    blocked = asyncio.ensure_future(store.blpop(["empty-list{store-block}"], timeout=2))
    await asyncio.sleep(0.05)
    started = asyncio.get_running_loop().time()
    await store.set("quick{store-block}", "1")
    assert await store.get("quick{store-block}") == b"1"
    assert asyncio.get_running_loop().time() - started < 1.0
    assert not blocked.done()
    assert await blocked is None


async def test_an_unknown_name_is_an_attribute_error(pair):
    store, _ = pair
    with pytest.raises(AttributeError, match="no_such_command"):
        store.no_such_command
