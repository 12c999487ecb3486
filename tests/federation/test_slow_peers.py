"""Peers that answer slowly or never: every outgoing request has one
deadline for the whole of it (redpoll.net.http), work for other servers
runs in its own lane of job shards (redpoll.bus.queue, the ingress lane)
so it cannot hold the workers local work needs, and an activity refused
inside its job is finished, not retried."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.federation import actor_doc, fed  # noqa: F401

from redpoll import Redpoll
from redpoll.core import keys, limits
from redpoll.engine.worker import HANDLERS
from redpoll.federation import client, inbox, remote
from redpoll.federation.jobs import DeliverJob, InboxJob
from redpoll.net import http, safety

pytestmark = pytest.mark.timeout(180)


class Trickler:
    """A server on loopback that answers every request with its headers
    (a large Content-Length), then one byte of body a second, forever;
    ``silent``: it takes connections and never answers at all."""

    def __init__(self, silent: bool = False):
        self.silent = silent
        self.stop = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.requests = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket):
        with conn:
            try:
                seen = b""
                while b"\r\n\r\n" not in seen:
                    got = conn.recv(65536)
                    if not got:
                        return
                    seen += got
                if self.silent:
                    self.stop.wait()
                    return
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/activity+json\r\n"
                    b"Content-Length: 100000\r\n\r\n"
                )
                while not self.stop.wait(1.0):
                    conn.sendall(b" ")
            except OSError:
                return

    def close(self):
        """Stop: connections open are dropped, new ones refused."""
        self.stop.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # (wakes the accept, refuses the rest)
        except OSError:
            pass
        self.sock.close()


@pytest.fixture
def trickler():
    peer = Trickler()
    yield peer
    peer.close()


@pytest.fixture
def silent():
    peer = Trickler(silent=True)
    yield peer
    peer.close()


@pytest.mark.parametrize("which", ["trickler", "silent"])
async def test_a_fetch_from_a_slow_or_silent_peer_fails_at_its_deadline(
    which, request, monkeypatch
):
    peer = request.getfixturevalue(which)
    monkeypatch.setattr(limits, "FED_FETCH_TIMEOUT_S", 1.5)
    started = time.monotonic()
    with pytest.raises(client.FetchFailed, match="deadline"):
        # (the outer bound only keeps a broken deadline from hanging the test)
        await asyncio.wait_for(client.fetch_json(f"{peer.base}/users/slow", loopback=True), 20)
    assert time.monotonic() - started < 4.5
    assert peer.requests == 1


async def test_a_delivery_to_a_trickling_inbox_fails_at_its_deadline(trickler, monkeypatch):
    monkeypatch.setattr(limits, "FED_FETCH_TIMEOUT_S", 1.5)
    started = time.monotonic()
    with pytest.raises(http.FetchFailed, match="deadline"):
        await asyncio.wait_for(
            http.send("POST", f"{trickler.base}/inbox", loopback=True, body=b"{}"), 20
        )
    assert time.monotonic() - started < 4.5


class _Inbox(BaseHTTPRequestHandler):
    """A quick inbox: what is posted to it is kept."""

    received: list = []

    def do_POST(self):
        self.received.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


async def test_local_work_runs_while_every_ingress_slot_waits_on_a_slow_peer(
    settings, trickler, monkeypatch
):
    """Boosts of notes on a trickling server, from accounts spread over
    every shard either lane could give them, keep the ingress slots
    waiting (each fetch until its deadline); a local account's delivery
    still goes out at once."""
    monkeypatch.setattr(limits, "FED_FETCH_TIMEOUT_S", 5.0)
    rp = await Redpoll.open(
        settings.with_(
            public_url="http://127.0.0.1:1", federation_loopback=True, worker_concurrency=1
        )
    )
    quick = ThreadingHTTPServer(("127.0.0.1", 0), _Inbox)
    threading.Thread(target=quick.serve_forever, daemon=True).start()
    stop = asyncio.Event()
    task = None
    try:
        boosters, covered, n = [], set(), 0
        ingress = keys.lane_shards("ingress")
        everywhere = set(range(limits.JOB_SHARDS)) | set(ingress)
        while covered != everywhere:
            user = await remote.keep(
                rp.store, remote.parse_actor(actor_doc("slow.example", f"booster{n}"))
            )
            crc = zlib.crc32(InboxJob(uid=user.id, activity="{}").subject().encode())
            covered |= {crc % limits.JOB_SHARDS, ingress[crc % len(ingress)]}
            boosters.append(user)
            n += 1
        for user in boosters:
            for i in range(3):
                await rp.queue.enqueue(
                    InboxJob(
                        uid=user.id,
                        activity=json.dumps(
                            {
                                "id": f"{user.uri}/boosts/{i}",
                                "type": "Announce",
                                "actor": user.uri,
                                "object": f"{trickler.base}/notes/{user.id}-{i}",
                            }
                        ),
                    )
                )
        task = asyncio.create_task(rp.worker("lanes").run(stop))
        started = time.monotonic()
        while trickler.requests < limits.INGRESS_SHARDS:  # every ingress slot waiting
            assert time.monotonic() - started < 10, "the boosts were never taken up"
            await asyncio.sleep(0.05)
        sender = await rp.accounts.sign_up("local_sender")
        inbox = f"http://127.0.0.1:{quick.server_address[1]}/inbox"
        await rp.queue.enqueue(DeliverJob(sender.id, inbox, json.dumps({"type": "Create"})))
        queued = time.monotonic()
        while not _Inbox.received:
            assert time.monotonic() - queued < 4, "the local delivery waited behind the boosts"
            await asyncio.sleep(0.05)
    finally:
        trickler.close()  # the boosts left fail at once: the worker can stop
        quick.shutdown()
        stop.set()
        if task is not None:
            await asyncio.wait_for(task, 60)
        await rp.close()


async def test_an_activity_refused_in_its_job_finishes_it_and_is_not_retried(fed, caplog):
    """An actor's Update naming an inbox on another host (remote.BadActor
    inside the job): the job is done at once, with a log line."""
    doc = actor_doc("moving.example", "ann")
    user = await remote.keep(fed.store, remote.parse_actor(doc))
    update = {
        "id": f"{user.uri}#updates/1",
        "type": "Update",
        "actor": user.uri,
        "object": {**doc, "inbox": "https://elsewhere.example/inbox"},
    }
    await fed.queue.enqueue(InboxJob(uid=user.id, activity=json.dumps(update)))
    with caplog.at_level("INFO", logger="redpoll.worker"):
        await fed.drain(timeout=10)  # (a retried job stays queued: the drain would time out)
    assert await fed.queue.depth() == 0
    assert "names an inbox on another host" in caplog.text
    assert "will be retried" not in caplog.text


@pytest.mark.parametrize(
    "error, refusal",
    [
        (inbox.Refused("not an activity"), True),
        (remote.BadActor("no key"), True),
        (safety.Refused("a private address"), True),
        (client.FetchFailed("gone", 410), True),
        (client.FetchFailed("not found", 404), True),
        (client.FetchFailed("slow down", 429), False),
        (client.WrongDocument("another id", 200), True),
        (client.FetchFailed("broken", 503), False),
        (client.FetchFailed("no answer"), False),
        (ConnectionError("the database went away"), False),
    ],
)
async def test_only_refusals_that_would_recur_finish_an_inbox_job(fed, monkeypatch, error, refusal):
    async def process(*args):
        raise error

    monkeypatch.setattr(inbox, "process", process)
    handler = HANDLERS[InboxJob]
    job = InboxJob(uid=1, activity="{}")
    if refusal:
        await handler(fed.store, fed.settings, job, b"1-0")
    else:
        with pytest.raises(type(error)):
            await handler(fed.store, fed.settings, job, b"1-0")
