"""redpoll.storage.mux: many calls in flight on one connection, against a real server
of its own (the multiplexed connection is for single servers only, so this
module starts one even when the suite runs on a cluster)."""

from __future__ import annotations

import asyncio

import pytest
import redis
from redis.exceptions import (
    AuthenticationError,
    ConnectionError,
    DataError,
    NoScriptError,
    ResponseError,
    TimeoutError,
)

from redpoll.storage.mux import Multiplexed
from redpoll.storage.server import EmbeddedServer


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    server = EmbeddedServer(tmp_path_factory.mktemp("mux") / "data").start()
    yield server
    server.stop()


@pytest.fixture
async def mux(single):
    redis.Redis(port=single.port).flushall()
    conn = Multiplexed(single.url)
    yield conn
    await conn.close()


async def test_concurrent_calls_each_get_their_own_reply(mux):
    replies = await asyncio.gather(*(mux.call("ECHO", f"reply-{i}") for i in range(500)))
    assert replies == [f"reply-{i}".encode() for i in range(500)]


async def test_replies_keep_types(mux):
    assert await mux.call("SET", "k", "v") == b"OK"
    assert await mux.call("GET", "missing") is None
    assert await mux.call("INCRBY", "n", 5) == 5
    await mux.call("HSET", "h", "a", "1", "b", "2")
    assert await mux.call("HGETALL", "h") == [b"a", b"1", b"b", b"2"]


async def test_error_reply_raises_and_the_connection_goes_on(mux):
    await mux.call("SET", "s", "text")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        await mux.call("LPUSH", "s", "x")
    with pytest.raises(NoScriptError):
        await mux.call("EVALSHA", "0" * 40, 0)
    assert await mux.call("GET", "s") == b"text"


async def test_batch_returns_every_reply_in_order_with_errors_in_place(mux):
    await mux.call("SET", "s", "text")
    replies = await mux.call_many([("ECHO", "a"), ("LPUSH", "s", "x"), ("ECHO", "b")])
    assert replies[0] == b"a" and replies[2] == b"b"
    assert isinstance(replies[1], ResponseError) and "WRONGTYPE" in str(replies[1])
    assert await mux.call_many([]) == []


async def test_batches_and_single_calls_interleave(mux):
    async def batch(i):
        return await mux.call_many([("ECHO", f"{i}-{k}") for k in range(7)])

    async def single(i):
        return await mux.call("ECHO", f"single-{i}")

    results = await asyncio.gather(*(batch(i) if i % 2 else single(i) for i in range(200)))
    for i, got in enumerate(results):
        if i % 2:
            assert got == [f"{i}-{k}".encode() for k in range(7)]
        else:
            assert got == f"single-{i}".encode()


async def test_a_cancelled_call_does_not_shift_later_replies(mux):
    task = asyncio.create_task(mux.call("ECHO", "cancelled"))
    await asyncio.sleep(0)  # sent (queued for the write), reply not yet read
    task.cancel()
    assert await mux.call("ECHO", "next") == b"next"
    assert await mux.call_many([("ECHO", "x"), ("ECHO", "y")]) == [b"x", b"y"]


async def test_oversized_batch_and_unsendable_arguments_are_refused(single):
    conn = Multiplexed(single.url, max_in_flight=4)
    try:
        with pytest.raises(DataError):
            await conn.call_many([("PING",)] * 5)
        with pytest.raises(DataError):
            await conn.call("SET", "k", object())
        assert await conn.call("PING") == b"PONG"
    finally:
        await conn.close()


async def test_in_flight_calls_are_bounded(single):
    conn = Multiplexed(single.url, max_in_flight=2)
    try:
        assert await conn.call("PING") == b"PONG"
        replies = await asyncio.gather(*(conn.call("ECHO", str(i)) for i in range(50)))
        assert replies == [str(i).encode() for i in range(50)]
        assert conn._in_flight == 0 and not conn._slot_waiters  # every slot given back
        # waiting for a slot and being cancelled there leaves the others going
        calls = [asyncio.create_task(conn.call("ECHO", str(i))) for i in range(6)]
        await asyncio.sleep(0)
        calls[4].cancel()
        done = await asyncio.gather(*calls, return_exceptions=True)
        assert isinstance(done[4], asyncio.CancelledError)
        assert [d for i, d in enumerate(done) if i != 4] == [b"0", b"1", b"2", b"3", b"5"]
        assert conn._in_flight == 0 and not conn._slot_waiters
    finally:
        await conn.close()


async def test_lost_connection_fails_calls_in_flight_and_the_next_call_reconnects(mux, single):
    admin = redis.Redis(port=single.port)
    client_id = await mux.call("CLIENT", "ID")
    # a reply that will not come before the kill: a blocking pop on nothing
    pending = asyncio.create_task(mux.call("BLPOP", "never-pushed", 10))
    await asyncio.sleep(0.05)
    assert await asyncio.to_thread(admin.client_kill_filter, _id=client_id) == 1
    with pytest.raises(ConnectionError, match="connection to the server lost.*outcome"):
        await asyncio.wait_for(pending, 5)
    assert await mux.call("PING") == b"PONG"  # connected again
    assert await mux.call("CLIENT", "ID") != client_id


async def test_a_call_without_a_reply_in_time_fails_and_the_next_call_reconnects(single):
    """every call has a time limit. A hung server (here a
    blocking pop that outlives the limit) fails the calls in flight with a
    TimeoutError that says so, and the connection is dropped."""
    conn = Multiplexed(single.url, call_timeout_s=0.3)
    try:
        first = await conn.call("CLIENT", "ID")
        loop = asyncio.get_running_loop()
        started = loop.time()
        stuck = asyncio.gather(
            conn.call("BLPOP", "never-pushed", 5), conn.call("PING"), return_exceptions=True
        )
        replies = await asyncio.wait_for(stuck, 3)
        assert loop.time() - started < 2
        for reply in replies:
            assert isinstance(reply, TimeoutError) and "no reply" in str(reply), replies
        assert await conn.call("PING") == b"PONG"  # a new connection
        assert await conn.call("CLIENT", "ID") != first
        # calls that answer in time are never hit by the limit
        await asyncio.sleep(0.5)
        assert await conn.call("ECHO", "late but fine") == b"late but fine"
    finally:
        await conn.close()


async def test_unreachable_server_is_a_connection_error():
    conn = Multiplexed("redis://127.0.0.1:1/0")
    with pytest.raises(ConnectionError):
        await conn.call("PING")


async def test_database_number_and_credentials_from_the_url(single):
    admin = redis.Redis(port=single.port)
    admin.acl_setuser(
        "muxuser", enabled=True, passwords=["+s3cret"], commands=["+@all"], keys=["*"]
    )
    try:
        conn = Multiplexed(f"redis://muxuser:s3cret@127.0.0.1:{single.port}/3")
        try:
            await conn.call("SET", "in-db-3", "yes")
        finally:
            await conn.close()
        assert redis.Redis(port=single.port, db=3).get("in-db-3") == b"yes"
        assert redis.Redis(port=single.port, db=0).get("in-db-3") is None
        wrong = Multiplexed(f"redis://muxuser:wrong@127.0.0.1:{single.port}/0")
        with pytest.raises(AuthenticationError):
            await wrong.call("PING")
    finally:
        admin.acl_deluser("muxuser")
        redis.Redis(port=single.port, db=3).flushdb()


def test_a_new_event_loop_gets_a_new_connection(single):
    conn = Multiplexed(single.url)
    assert asyncio.run(conn.call("ECHO", "first loop")) == b"first loop"
    assert asyncio.run(conn.call("ECHO", "second loop")) == b"second loop"
    asyncio.run(conn.close())


def test_only_plain_urls_are_multiplexed():
    assert Multiplexed.supports("redis://127.0.0.1:6379/0")
    assert Multiplexed.supports("unix:///tmp/valkey.sock")
    assert not Multiplexed.supports("rediss://example.com:6380")
