"""The v1.1 stream endpoints over raw HTTP against a real server process:
errors, every filter kind and their OR, deletes, framing, keep-alive,
backfill, disconnect and release."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from support.streams import Conn, stream  # noqa: F401

from redpoll.stream.filters import residues

pytestmark = pytest.mark.timeout(180)


def ids(messages):
    return [m["id"] for m in messages if "id" in m]


def deleted_ids(messages):
    return [m["delete"]["status"]["id"] for m in messages if "delete" in m]


async def _request(stream, method, endpoint, **params):
    async with httpx.AsyncClient(timeout=30) as c:
        url = f"{stream.base}/1.1/statuses/{endpoint}.json"
        if method == "POST":
            return await c.post(url, data=params)
        return await c.request(method, url, params=params)


# --- errors ---------------------------------------------------------------------------------
async def test_no_identifier_is_401(stream):
    for method, endpoint in [("GET", "sample"), ("POST", "filter"), ("GET", "filter")]:
        r = await _request(stream, method, endpoint, track="x")
        assert r.status_code == 401, (method, endpoint)
    r = await _request(stream, "GET", "sample", access_token="not-a-token")
    assert r.status_code == 401


@pytest.mark.parametrize(
    "params, status, word",
    [
        ({}, 406, "track"),
        ({"track": "x" * 61}, 406, "track"),
        ({"track": ",".join(f"w{i}" for i in range(401))}, 413, "track"),
        ({"follow": "12,not a login"}, 406, "follow"),
        ({"follow": ",".join(str(i) for i in range(1, 5002))}, 413, "follow"),
        ({"locations": "1,2,3"}, 406, "locations"),
        ({"location": "0,0,1,x"}, 406, "location"),
        ({"locations": ",".join(["0,0,1,1"] * 26)}, 413, "locations"),
        ({"track": "x", "count": "150001"}, 416, "count"),
    ],
)
async def test_bad_filter_parameters(stream, params, status, word):
    r = await _request(stream, "POST", "filter", identifier="c", **params)
    assert r.status_code == status
    assert word in r.json()["errors"][0]["message"]


async def test_bad_percent_is_406_and_wrong_method_405(stream):
    r = await _request(stream, "GET", "sample", identifier="c", percent="0")
    assert r.status_code == 406 and "percent" in r.text
    r = await _request(stream, "DELETE", "sample", identifier="c")
    assert r.status_code == 405


# --- filters ----------------------------------------------------------------------------------
async def test_track_follow_locations_each_and_ored(stream, rp):
    alice = await rp.accounts.sign_up("alice")
    bob = await rp.accounts.sign_up("bob")
    carol = await rp.accounts.sign_up("carol")
    async with (
        Conn(stream, "filter", track="redis stream,sentinel") as tr,
        Conn(stream, "filter", follow=f"{bob.id},sentinel_x") as fo_id,
        Conn(stream, "filter", follow="Carol,sentinel_x") as fo_login,
        Conn(stream, "filter", locations="-122.75,36.8,-121.75,37.8,0,0,1,1") as geo,
        Conn(stream, "filter", location="-122.75,36.8,-121.75,37.8", track="sentinel") as geo2,
        Conn(
            stream,
            "filter",
            method="GET",
            track="cats,sentinel",
            follow=str(bob.id),
            locations="0,0,1,1",
        ) as combo,
    ):
        for c in (tr, fo_id, fo_login, geo, geo2, combo):
            assert c.status == 200
        s1 = await rp.statuses.post(alice.id, "A Redis STREAM, really.")  # track
        await rp.statuses.post(alice.id, "redis without the other word")  # nothing
        s3 = await rp.statuses.post(bob.id, "hello from bob")  # follow id
        s4 = await rp.statuses.post(alice.id, "hey @carol look")  # follow login (mention)
        s5 = await rp.statuses.post(carol.id, "carol posting")  # follow login (author)
        s6 = await rp.statuses.post(alice.id, "in SF", {"location": "37.77,-122.41"})  # box 1
        s7 = await rp.statuses.post(alice.id, "near 0,0", {"location": "0.5,0.5"})  # box 2
        s8 = await rp.statuses.post(alice.id, "I love cats!")  # combo track
        end = await rp.statuses.post(bob.id, "sentinel @sentinel_x", {"location": "0.1,0.1"})

        def got(c):
            return c.lines.until(lambda m: m.get("id") == end.id)

        assert ids(await got(tr)) == [s1.id, end.id]
        assert ids(await got(fo_id)) == [s3.id, end.id]
        assert ids(await got(fo_login)) == [s4.id, s5.id, end.id]
        assert ids(await got(geo)) == [s6.id, s7.id, end.id]
        assert ids(await got(geo2)) == [s6.id, end.id]
        assert ids(await got(combo)) == [s3.id, s7.id, s8.id, end.id]


async def test_sample_percent_seeded_by_identifier_and_firehose(stream, rp):
    alice = await rp.accounts.sign_up("alice")
    async with (
        Conn(stream, "sample", method="GET", identifier="seed-a", percent="20") as a,
        Conn(stream, "sample", method="GET", identifier="seed-b", percent="20") as b,
        Conn(stream, "sample", method="POST", identifier="seed-c", percent="100") as fire,
        Conn(stream, "sample", method="GET", identifier="seed-d") as default,
    ):
        posted = [await rp.statuses.post(alice.id, f"status {i}") for i in range(100)]
        last = posted[-1].id
        want = {
            k: [s.id for s in posted if s.id % 100 in residues(k, p)]
            for k, p in [("seed-a", 20), ("seed-b", 20), ("seed-d", 10)]
        }
        # every client gets a final marker through a status it samples
        got_a = ids(await a.lines.until(lambda m: m.get("id") == want["seed-a"][-1]))
        got_b = ids(await b.lines.until(lambda m: m.get("id") == want["seed-b"][-1]))
        got_d = ids(await default.lines.until(lambda m: m.get("id") == want["seed-d"][-1]))
        got_f = ids(await fire.lines.until(lambda m: m.get("id") == last))
        assert got_a == want["seed-a"] and len(got_a) == 20
        assert got_b == want["seed-b"] and got_a != got_b
        assert got_d == want["seed-d"] and len(got_d) == 10
        assert got_f == [s.id for s in posted]


# --- deletes ------------------------------------------------------------------------------------
async def test_delete_goes_exactly_to_clients_that_got_the_status(stream, rp):
    alice = await rp.accounts.sign_up("alice")
    async with (
        Conn(stream, "filter", track="redis,sentinel") as yes,
        Conn(stream, "filter", track="cats,sentinel") as no,
    ):
        s = await rp.statuses.post(alice.id, "redis news")
        other = await rp.statuses.post(alice.id, "cats news")
        await rp.statuses.delete(s.id, alice.id)
        end = await rp.statuses.post(alice.id, "sentinel")
        got_yes = await yes.lines.until(lambda m: m.get("id") == end.id)
        got_no = await no.lines.until(lambda m: m.get("id") == end.id)
        assert ids(got_yes) == [s.id, end.id]
        assert deleted_ids(got_yes) == [s.id]
        d = next(m for m in got_yes if "delete" in m)["delete"]["status"]
        assert d == {
            "id": s.id,
            "id_str": str(s.id),
            "user_id": alice.id,
            "user_id_str": str(alice.id),
        }
        assert ids(got_no) == [other.id, end.id] and deleted_ids(got_no) == []


# --- framing and status shape --------------------------------------------------------------------
async def test_status_shape_and_line_framing(stream, rp):
    alice = await rp.accounts.sign_up("Alice")
    async with Conn(stream, "filter", track="shape") as c:
        assert c.response.headers["transfer-encoding"] == "chunked"
        assert c.response.headers["content-type"].startswith("application/json")
        s = await rp.statuses.post(alice.id, "shape #redis @bob", {"location": "10.5,20.25"})
        msg = await c.lines.message()
    assert msg["id"] == s.id and msg["id_str"] == str(s.id) and msg["text"] == "shape #redis @bob"
    assert msg["user"] == {
        "id": alice.id,
        "id_str": str(alice.id),
        "screen_name": "Alice",
        "name": "Alice",
    }
    assert "in_reply_to_status_id" in msg and msg["in_reply_to_status_id"] is None
    assert msg["coordinates"] == {"type": "Point", "coordinates": [20.25, 10.5]}
    assert msg["entities"]["hashtags"][0]["text"] == "redis"
    import email.utils

    parsed = email.utils.parsedate_to_datetime(msg["created_at"])
    assert abs(parsed.timestamp() * 1000 - s.created_at) < 1000


async def test_delimited_length_framing_and_other_values_unset(stream, rp):
    alice = await rp.accounts.sign_up("alice")
    async with (
        Conn(stream, "filter", track="framed", delimited="length") as d,
        Conn(stream, "filter", track="framed", delimited="False") as plain,
    ):
        s1 = await rp.statuses.post(alice.id, "framed one")
        s2 = await rp.statuses.post(alice.id, "framed two ünïcode")
        got = []
        while len(got) < 2:
            line = await d.lines.line()
            if line == b"":
                continue  # keep-alive newlines may come before a length
            size = int(line)
            while len(d.lines.buf) < size:
                d.lines.buf += await asyncio.wait_for(d.lines.chunks.__anext__(), 30)
            body, d.lines.buf = d.lines.buf[:size], d.lines.buf[size:]
            assert body.endswith(b"\r\n")  # the count includes the trailing \r\n
            got.append(json.loads(body))
        assert [m["id"] for m in got] == [s1.id, s2.id]
        assert ids([await plain.lines.message(), await plain.lines.message()]) == [s1.id, s2.id]


async def test_keep_alive_newlines_on_an_idle_stream(stream):
    # the test server runs with REDPOLL_STREAM_KEEPALIVE_S=1
    async with Conn(stream, "filter", track="nothing-ever-matches-this") as c:
        for _ in range(3):
            assert await c.lines.line(timeout=30) == b""


# --- backfill --------------------------------------------------------------------------------
async def test_count_backfill_positive_then_live_and_negative_disconnects(stream, rp):
    alice = await rp.accounts.sign_up("alice")
    old = [
        await rp.statuses.post(alice.id, f"old {i} {'odd' if i % 2 else 'even'}") for i in range(10)
    ]
    # count=6 considers the last 6 events; the filter keeps the odd ones among them
    async with Conn(stream, "filter", track="odd,live", count="6") as c:
        live = await rp.statuses.post(alice.id, "live one")
        got = await c.lines.until(lambda m: m.get("id") == live.id)
        assert ids(got) == [s.id for s in old[4:] if "odd" in s.text] + [live.id]
    async with Conn(stream, "sample", method="GET", percent="100", count="-3") as c:
        got = await c.lines.until(lambda m: "disconnect" in m)
        assert ids(got) == [s.id for s in old[-2:]] + [live.id]
        assert got[-1]["disconnect"]["code"] == 9
        assert await c.lines.message() is None  # and the server ends the response


async def test_small_queue_backfill_warns_then_overflow_disconnects(stream, tmp_path, server, rp):
    from support.streams import StreamProc  # noqa: F401

    url, cluster, _ = server
    small = StreamProc(url, cluster, tmp_path, REDPOLL_STREAM_QUEUE="20").start()
    try:
        alice = await rp.accounts.sign_up("alice")
        for i in range(30):
            await rp.statuses.post(alice.id, f"filler {i}")
        # 15 of 20 slots at once: over 60% -> FALLING_BEHIND (asked for), then drained
        async with Conn(
            small, "sample", method="GET", percent="100", count="15", stall_warnings="true"
        ) as c:
            got = await c.lines.until(lambda m: "warning" in m)
            w = got[-1]["warning"]
            assert w["code"] == "FALLING_BEHIND" and w["percent_full"] >= 60
            rest = await c.lines.until(lambda m: m.get("text") == "filler 29")
            assert len(ids(got + rest)) == 15
        # 25 at once do not fit: the client is cut off with code 4 (Stall)
        async with Conn(small, "sample", method="GET", percent="100", count="25") as c:
            msg = await c.lines.message()
            assert msg["disconnect"]["code"] == 4
            assert await c.lines.message() is None
    finally:
        small.stop()


# --- disconnect --------------------------------------------------------------------------------
async def test_client_disconnect_releases_the_subscription(stream, rp):
    await stream.wait_subscribers(0)
    conns = [Conn(stream, "filter", track=f"w{i}") for i in range(3)]
    for c in conns:
        await c.__aenter__()
    await stream.wait_subscribers(3)
    for c in conns:
        await c.__aexit__(None, None, None)
    await stream.wait_subscribers(0)


async def test_raw_socket_request_and_chunked_wire_format(stream, rp):
    alice = await rp.accounts.sign_up("alice")
    reader, writer = await asyncio.open_connection("127.0.0.1", stream.port)
    body = b"identifier=raw&track=wire"
    writer.write(
        b"POST /1.1/statuses/filter.json HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    assert head.startswith(b"HTTP/1.1 200") and b"transfer-encoding: chunked" in head.lower()
    s = await rp.statuses.post(alice.id, "wire test")
    while True:  # chunks: hex size \r\n data \r\n; skip keep-alive chunks
        size = int((await asyncio.wait_for(reader.readuntil(b"\r\n"), 30)).strip(), 16)
        data = await reader.readexactly(size + 2)
        if data[:-2] != b"\r\n":
            break
    assert data[:-2].endswith(b"\r\n") and data[:-2].count(b"\r\n") == 1  # one document per chunk
    assert json.loads(data[:-4])["id"] == s.id
    writer.close()
    await writer.wait_closed()
