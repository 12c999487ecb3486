"""The fixtures of the tests of other servers' media kept here (remote
attachments, avatars, custom emoji): a ``redpoll serve`` with no job
workers (the tests drain in their own engine, ``rp``), its media in
``media_dir``, federation on over loopback, and a loopback ``peer`` that
serves the files; an activity received (``receive``) and a status as the
API shows it (``shown``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from redpoll import Redpoll
from redpoll.federation import keys as fed_keys
from support.federation import Peer
from support.streams import StreamProc


@pytest.fixture(scope="module")
def media_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
def serve(server, tmp_path_factory, media_dir):
    """``redpoll serve`` (no job workers: the tests drain) on the session's
    database, its media in ``media_dir``."""
    url, cluster, _ = server
    proc = StreamProc(
        url,
        cluster,
        tmp_path_factory.mktemp("serve"),
        REDPOLL_MEDIA_DIR=str(media_dir),
        REDPOLL_FEDERATION_LOOPBACK="1",
        REDPOLL_RATE_INBOX_HOST="off",
        REDPOLL_RATE_IP="off",
    )
    # every link it gives is its own address
    proc.env["REDPOLL_PUBLIC_URL"] = proc.base
    yield proc.start()
    proc.stop()


@pytest.fixture
async def rp(settings, serve, media_dir):
    engine = await Redpoll.open(
        settings.with_(public_url=serve.base, federation_loopback=True, media_dir=str(media_dir))
    )
    yield engine
    await engine.close()


@pytest.fixture
def peer():
    one = Peer()
    yield one
    try:
        one.close()
    except OSError:
        pass


async def receive(rp: Redpoll, serve: StreamProc, peer: Peer, activity: dict) -> int:
    """The activity delivered to the server's inbox, its jobs drained; the
    id of the status it made."""
    status = await asyncio.to_thread(peer.post, f"{serve.base}/inbox", activity)
    assert status == 202
    await rp.drain()
    sid = await rp.store.get(fed_keys.note(activity["object"]["id"]))
    assert sid, "the note was not kept"
    return int(sid)


def shown(serve: StreamProc, sid: int) -> dict:
    answer = httpx.get(f"{serve.base}/api/v1/statuses/{sid}")
    assert answer.status_code == 200, answer.text
    return answer.json()
