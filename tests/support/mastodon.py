"""Mastodon.py against a real ``redpoll serve``: the serve environment, apps,
accounts and a streaming listener."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import pytest
from mastodon import (
    Mastodon,
    StreamListener,
)

from redpoll.api.process import ServeProcess
from support.streams import WAIT, StreamProc

LOOSE = {
    "REDPOLL_RATE_TOKEN": "100000/60",
    "REDPOLL_RATE_IP": "100000/60",
    "REDPOLL_RATE_SIGNUP": "100000/60",
    "REDPOLL_RATE_LOGIN": "100000/60",
    "REDPOLL_RATE_APPS": "100000/60",
    "REDPOLL_RATE_IP_TOKENS": "100000/60",
    "REDPOLL_RATE_LOGIN_ACCOUNT": "100000/60",
}


@pytest.fixture(scope="module")
def mstream(server, tmp_path_factory):
    url, cluster, _ = server
    proc = StreamProc(url, cluster, tmp_path_factory.mktemp("mstream"), **LOOSE).start()
    yield proc
    proc.stop()


class Listener(StreamListener):
    def __init__(self):
        self.updates: list = []
        self.deletes: list = []
        self.heartbeats = 0
        self.lock = threading.Lock()

    def on_update(self, status):
        with self.lock:
            self.updates.append(status)

    def on_delete(self, status_id):
        with self.lock:
            self.deletes.append(int(status_id))

    def handle_heartbeat(self):
        self.heartbeats += 1


class NoteListener(Listener):
    """A Listener that keeps the notification events too."""

    def __init__(self):
        super().__init__()
        self.notifications: list = []

    def on_notification(self, notification):
        with self.lock:
            self.notifications.append(notification)


async def wait_for(predicate, what: str):
    deadline = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def accounts(base: str, n: int) -> list[Mastodon]:
    cid, secret = Mastodon.create_app(
        "stream-test", api_base_url=base, scopes=["read", "write", "follow"]
    )
    out = []
    for _ in range(n):
        name = "u" + uuid.uuid4().hex[:10]
        m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
        m.create_account(
            name,
            "correct horse battery",
            f"{name}@example.com",
            agreement=True,
            scopes=["read", "write", "follow"],
        )
        out.append(m)
    return out


LOOSE_LIMITS = {
    "REDPOLL_RATE_TOKEN": "100000/60",
    "REDPOLL_RATE_IP": "100000/60",
    "REDPOLL_RATE_SIGNUP": "100000/60",
    "REDPOLL_RATE_LOGIN": "100000/60",
    "REDPOLL_RATE_APPS": "100000/60",
    "REDPOLL_RATE_IP_TOKENS": "100000/60",
    "REDPOLL_RATE_LOGIN_ACCOUNT": "100000/60",
}


def serve_env(server, **extra) -> dict:
    url, cluster, _ = server
    return {
        "REDIS_URL": url,
        "REDPOLL_CLUSTER": "1" if cluster else "0",
        "REDPOLL_JOB_CLAIM_MS": "500",
        **LOOSE_LIMITS,
        **extra,
    }


@pytest.fixture(scope="module")
def api(server):
    with ServeProcess(serve_env(server)) as srv:
        yield srv
        assert srv.process.poll() is None, srv.logs()[-3000:]


def new_app(api) -> tuple[str, str]:
    return Mastodon.create_app(
        "redpoll-test", api_base_url=api.url, scopes=["read", "write", "follow", "push"]
    )


def client(api, app, token=None) -> Mastodon:
    return Mastodon(
        client_id=app[0],
        client_secret=app[1],
        access_token=token,
        api_base_url=api.url,
        ratelimit_method="throw",
    )


def register(api, app, name, scopes=("read", "write", "follow", "push")) -> Mastodon:
    m = client(api, app)
    m.create_account(
        name, "correct horse battery", f"{name}@example.com", agreement=True, scopes=list(scopes)
    )
    return m
