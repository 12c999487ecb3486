"""Peers that answer slowly or never: every outgoing request has one
deadline for the whole of it (redpoll.net.http), work for other servers
runs in its own lane of job shards (redpoll.bus.jobs, the ingress lane)
so it cannot hold the workers local work needs, and an activity refused
inside its job is finished, not retried."""
from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import pytest

from redpoll import Redpoll
from redpoll.core import limits
from redpoll.federation import client
from redpoll.net import http


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
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/activity+json\r\n"
                             b"Content-Length: 100000\r\n\r\n")
                while not self.stop.wait(1.0):
                    conn.sendall(b" ")
            except OSError:
                return

    def close(self):
        self.stop.set()
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
async def test_a_fetch_from_a_slow_or_silent_peer_fails_at_its_deadline(which, request,
                                                                        monkeypatch):
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
        await asyncio.wait_for(http.send("POST", f"{trickler.base}/inbox", loopback=True,
                                         body=b"{}"), 20)
    assert time.monotonic() - started < 4.5
