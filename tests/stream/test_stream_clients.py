"""Real v1.1 client libraries against the real stream server process:
tweepy 4.12.1 (its v1.1 Stream, pointed at our host over http) and
python-twitter 3.5 (``stream_url`` pointed at us). Both identify with their
OAuth 1.0a credentials, as they did with Twitter."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import tweepy
import twitter
from requests_oauthlib import OAuth1
from support.streams import WAIT, stream  # noqa: F401
from tweepy.streaming import BaseStream

pytestmark = pytest.mark.timeout(180)


class LocalStream(tweepy.Stream):
    """tweepy 4.12.1's v1.1 Stream with its connection pointed at our server."""

    def __init__(self, base: str):
        super().__init__("consumer-key", "consumer-secret", "access-token", "access-secret")
        self.base = base
        self.statuses: list = []
        self.deletes: list = []
        self.keep_alives = 0
        self.connected = threading.Event()
        self.errors: list = []

    def _connect(self, method, endpoint, **kwargs):
        # what tweepy's own _connect does, with our URL instead of stream.twitter.com
        auth = OAuth1(
            self.consumer_key, self.consumer_secret, self.access_token, self.access_token_secret
        )
        BaseStream._connect(
            self, method, f"{self.base}/1.1/{endpoint}.json", auth=auth, timeout=90, **kwargs
        )

    def on_connect(self):
        self.connected.set()

    def on_status(self, status):
        self.statuses.append(status)

    def on_delete(self, status_id, user_id):
        self.deletes.append((status_id, user_id))

    def on_keep_alive(self):
        self.keep_alives += 1

    def on_request_error(self, status_code):
        self.errors.append(status_code)
        self.disconnect()


async def wait_for(predicate, what: str):
    deadline = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def test_tweepy_filter_and_sample_with_deletes_and_keep_alives(stream, rp):
    alice = await rp.accounts.sign_up("alice")
    bob = await rp.accounts.sign_up("bob")
    filt = LocalStream(stream.base)
    sample = LocalStream(stream.base)
    threads = [
        filt.filter(
            track=["redis"],
            follow=[str(bob.id)],
            locations=[-122.75, 36.8, -121.75, 37.8],
            threaded=True,
        ),
        sample.sample(threaded=True),
    ]
    try:
        await wait_for(lambda: filt.connected.is_set() and sample.connected.is_set(), "connect")
        await stream.wait_subscribers(2)
        s1 = await rp.statuses.post(alice.id, "Redis streams!")
        s2 = await rp.statuses.post(bob.id, "bob talks")
        s3 = await rp.statuses.post(alice.id, "from SF", {"location": "37.7,-122.4"})
        s4 = await rp.statuses.post(alice.id, "unrelated")
        await rp.statuses.delete(s1.id, alice.id)
        await rp.statuses.delete(s4.id, alice.id)
        await wait_for(lambda: len(filt.statuses) >= 3 and filt.deletes, "tweepy filter events")
        assert [s.id for s in filt.statuses] == [s1.id, s2.id, s3.id]
        first = filt.statuses[0]
        assert first.text == "Redis streams!" and first.user.screen_name == "alice"
        assert first.created_at.timestamp() == pytest.approx(s1.created_at / 1000, abs=1)
        await wait_for(lambda: filt.keep_alives > 0, "a keep-alive")
        assert filt.deletes == [(s1.id, alice.id)]  # s4 was never sent to this client
        # sample (default 10%): exactly the statuses whose id falls in its residues
        from redpoll.stream.filters import residues

        want = [s.id for s in (s1, s2, s3, s4) if s.id % 100 in residues("oauth:access-token", 10)]
        marker = s4
        for i in range(200):  # post until one lands in the sample, as an end marker
            marker = await rp.statuses.post(alice.id, f"filler {i}")
            if marker.id % 100 in residues("oauth:access-token", 10):
                break
        await wait_for(lambda: any(s.id == marker.id for s in sample.statuses), "sample marker")
        got = [s.id for s in sample.statuses]
        assert got[:-1] == want and got[-1] == marker.id
        assert sample.errors == [] and filt.errors == []
    finally:
        filt.disconnect()
        sample.disconnect()
        for t in threads:
            await asyncio.to_thread(t.join, WAIT)
    assert not any(t.is_alive() for t in threads)
    await stream.wait_subscribers(0)


async def test_tweepy_gets_401_without_identification(stream):
    # the same stream, without OAuth credentials and without identifier
    class Anonymous(LocalStream):
        def _connect(self, method, endpoint, **kwargs):
            BaseStream._connect(self, method, f"{self.base}/1.1/{endpoint}.json", **kwargs)

    s = Anonymous(stream.base)
    t = s.sample(threaded=True)
    await asyncio.to_thread(t.join, WAIT)
    assert s.errors == [401]


def _collect(gen, n: int, out: list, done: threading.Event) -> None:
    try:
        for msg in gen:
            out.append(msg)
            if len(out) >= n:
                break
    finally:
        gen.close()
        done.set()


async def test_python_twitter_filter_and_sample(stream, rp):
    alice = await rp.accounts.sign_up("alice")
    api = twitter.Api(
        consumer_key="ck",
        consumer_secret="cs",
        access_token_key="pt-token",
        access_token_secret="ts",
        stream_url=f"{stream.base}/1.1",
    )
    got_filter, got_sample = [], []
    done_f, done_s = threading.Event(), threading.Event()
    gen_f = api.GetStreamFilter(
        track=["redis stream", "cats"],
        follow=[str(alice.id + 1000)],
        locations=["0", "0", "1", "1"],
        stall_warnings=True,
    )
    gen_s = api.GetStreamSample(delimited=False, stall_warnings=True)
    # python-twitter sends the request when the generator first runs
    tf = threading.Thread(target=_collect, args=(gen_f, 4, got_filter, done_f))
    ts = threading.Thread(target=_collect, args=(gen_s, 1, got_sample, done_s))
    tf.start()
    ts.start()
    try:
        await stream.wait_subscribers(2)
        s1 = await rp.statuses.post(alice.id, "a Redis Stream")
        await rp.statuses.post(alice.id, "only redis")
        s3 = await rp.statuses.post(alice.id, "Cats!")
        s4 = await rp.statuses.post(alice.id, "null island", {"location": "0.5,0.5"})
        await rp.statuses.delete(s3.id, alice.id)
        sampled = None
        for i in range(300):
            s = await rp.statuses.post(alice.id, f"sample filler {i}")
            from redpoll.stream.filters import residues

            if s.id % 100 in residues("oauth:pt-token", 10):
                sampled = s
                break
        await wait_for(done_f.is_set, "python-twitter filter messages")
        await wait_for(done_s.is_set, "python-twitter sample message")
    finally:
        tf.join(WAIT)
        ts.join(WAIT)
    assert [m.get("id") for m in got_filter[:3]] == [s1.id, s3.id, s4.id]
    assert got_filter[3] == {
        "delete": {
            "status": {
                "id": s3.id,
                "id_str": str(s3.id),
                "user_id": alice.id,
                "user_id_str": str(alice.id),
            },
            "timestamp_ms": got_filter[3]["delete"]["timestamp_ms"],
        }
    }
    assert got_filter[0]["user"]["screen_name"] == "alice"
    assert got_sample[0]["id"] == sampled.id
    await stream.wait_subscribers(0)


async def test_python_twitter_sees_the_error_of_a_bad_filter(stream):
    api = twitter.Api(
        consumer_key="ck",
        consumer_secret="cs",
        access_token_key="pt-token",
        access_token_secret="ts",
        stream_url=f"{stream.base}/1.1",
    )

    def first():
        return next(iter(api.GetStreamFilter(track=["x" * 61])))

    with pytest.raises(twitter.TwitterError) as info:
        await asyncio.to_thread(first)
    assert "track" in str(info.value)
