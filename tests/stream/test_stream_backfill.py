"""What a v1.1 ``count`` backfill or an SSE ``Last-Event-ID`` resume may cost:
read in pages, stopped at what the client's queue can
take, and counted per identifier and per IP in a window. Against a real
``redpoll serve`` and an event log filled to its cap."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

import httpx
import pytest
from support.streams import (  # noqa: F401
    WAIT,
    StreamProc,
    app_token,  # noqa: F401
)

from redpoll.bus import events
from redpoll.core import keys, limits
from redpoll.core.models import Status

pytestmark = pytest.mark.timeout(300)

FULL = limits.EVENT_LOG_MAXLEN


async def fill_log(rp, n: int) -> None:
    """``n`` realistic update events in the log, as posting appends them."""
    now = int(time.time() * 1000)
    for start in range(0, n, 5000):
        pipe = rp.store.pipeline()
        for i in range(start, min(n, start + 5000)):
            status = Status(
                id=10_000 + i,
                text=f"filler status number {i} about nothing much",
                created_at=now,
                user_id=1 + i % 50,
                login=f"user{i % 50}",
            )
            pipe.xadd(
                keys.EVENT_LOG,
                {events.FIELD: events.update_event(status)},
                maxlen=limits.EVENT_LOG_MAXLEN,
                approximate=True,
            )
        await pipe.execute()


def peak_rss_kb(pid: int) -> tuple[int, int]:
    """(current, peak) resident memory of a process, in KB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


async def drain(c: httpx.AsyncClient, method: str, url: str, **kw) -> tuple[int, bytes]:
    """Run one streaming request to its end; (status, body)."""
    async with c.stream(method, url, **kw) as r:
        body = b""
        try:
            async for chunk in r.aiter_raw():
                body += chunk
        except httpx.RemoteProtocolError:  # cut off: the body ends there
            body += b"<cut>"
        return r.status_code, body


@pytest.fixture
def loose(server, tmp_path):
    url, cluster, _ = server
    proc = StreamProc(
        url, cluster, tmp_path, REDPOLL_RATE_IP="off", REDPOLL_RATE_TOKEN="off"
    ).start()
    yield proc
    proc.stop()


async def test_five_full_log_replays_leave_other_requests_fast(loose, rp):
    await fill_log(rp, FULL)
    base = loose.base
    async with httpx.AsyncClient(timeout=httpx.Timeout(120, read=None)) as c:
        token = await app_token(c, base)
        for _ in range(5):  # warm up
            await c.get(base + "/api/v1/instance")
        samples = []
        for _ in range(20):
            t = time.perf_counter()
            assert (await c.get(base + "/api/v1/instance")).status_code == 200
            samples.append(time.perf_counter() - t)
        baseline = statistics.median(samples)
        rss_before, _ = peak_rss_kb(loose.process.pid)

        sample = base + "/1.1/statuses/sample.json"
        replays = [
            drain(
                c,
                "GET",
                sample,
                params={"identifier": f"greedy{i}", "percent": "100", "count": "-150000"},
            )
            for i in range(3)
        ]
        # a filter that matches nothing: the whole log is read, and nothing kept
        replays.append(
            drain(
                c,
                "GET",
                base + "/1.1/statuses/filter.json",
                params={"identifier": "greedy3", "track": "absentword", "count": "-150000"},
            )
        )
        # SSE resume from the very start of the log, with an app token
        replays.append(
            drain(
                c,
                "GET",
                base + "/api/v1/streaming/public",
                headers={"Authorization": f"Bearer {token}", "Last-Event-ID": "0-0"},
            )
        )
        running = asyncio.gather(*replays)
        during = []
        start = time.monotonic()
        while not running.done() and time.monotonic() - start < 60:
            t = time.perf_counter()
            assert (await c.get(base + "/api/v1/instance")).status_code == 200
            during.append(time.perf_counter() - t)
        results = await asyncio.wait_for(running, WAIT)
    # every replay ended by itself: v1.1 ones with a disconnect message
    for status, body in results[:4]:
        assert status == 200 and b'"disconnect"' in body, body[-300:]
    assert results[4][0] == 200
    assert during, "the replays ended before any request could be timed"
    bound = max(1.0, 20 * baseline)
    assert max(during) < bound, (
        f"instance took {max(during):.3f}s during the replays "
        f"(baseline {baseline * 1000:.1f} ms, bound {bound:.2f}s)"
    )
    _, peak = peak_rss_kb(loose.process.pid)
    assert peak - rss_before < 60_000, f"peak memory grew by {(peak - rss_before) // 1024} MB"


async def test_a_replay_that_does_not_fit_the_queue_stops_at_once(loose, rp):
    await fill_log(rp, 5000)
    async with httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c:
        status, body = await drain(
            c,
            "GET",
            loose.base + "/1.1/statuses/sample.json",
            params={"identifier": "big", "percent": "100", "count": "4000"},
        )
    assert status == 200
    # the queue (1,000) cannot take 4,000: cut off as stalled, nothing half-sent
    assert body.strip().splitlines() == [
        b'{"disconnect":{"code":4,"stream_name":"statuses/sample","reason":'
        b'"Stall: the client is not reading fast enough; its queue is full"}}'
    ]


async def test_replays_are_counted_per_identifier_and_per_ip(server, tmp_path, rp):
    url, cluster, _ = server
    proc = StreamProc(
        url,
        cluster,
        tmp_path,
        REDPOLL_STREAM_REPLAYS_PER_IDENTIFIER="3/60",
        REDPOLL_STREAM_REPLAYS_PER_IP="5/60",
    ).start()
    try:
        alice = await rp.accounts.sign_up("alice")
        await rp.statuses.post(alice.id, "something to replay")
        sample = proc.base + "/1.1/statuses/sample.json"
        async with httpx.AsyncClient(timeout=httpx.Timeout(WAIT, read=None)) as c:

            async def replay(ident: str) -> tuple[int, bytes]:
                return await drain(
                    c, "GET", sample, params={"identifier": ident, "percent": "100", "count": "-1"}
                )

            for _ in range(3):
                assert (await replay("same"))[0] == 200
            status, body = await replay("same")
            assert status == 429
            assert b"backfill" in body and b"identifier" in body and b"3 per 60" in body
            # a stream without count is not a replay: still served
            async with c.stream("GET", sample, params={"identifier": "same", "percent": "1"}) as r:
                assert r.status_code == 200
            # every attempt counts for the IP too (4 so far): one more, then it is spent
            assert (await replay("other"))[0] == 200
            status, body = await replay("third")
            assert status == 429 and b"IP" in body and b"5 per 60" in body
    finally:
        proc.stop()
