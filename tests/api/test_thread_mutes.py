"""Muted threads (Mastodon's muted conversations) through Mastodon.py
against a real ``redpoll serve`` (one server and the cluster): muting a
status's thread leaves out every notification about its statuses (a
favourite of its first status, a mention in a reply two levels down, one
in a reply written before replies named their thread), shows ``muted`` on
its statuses, leaves other threads alone, and an unmute shows them again
(applied when shown, as account mutes)."""

from __future__ import annotations

import asyncio

import pytest
from support.mastodon import accounts  # noqa: F401

from redpoll.core import keys

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]


def kinds(m) -> list[tuple[str, str]]:
    return sorted((n["type"], str(n["status"]["id"])) for n in m.notifications())


async def test_a_muted_thread_notifies_nothing_until_it_is_unmuted(srv, rp):
    ann, bob, cat = await asyncio.to_thread(accounts, srv.base, 3)
    a = ann.me()["username"]
    root = ann.status_post("a thread")
    reply = bob.status_post(f"@{a} an answer", in_reply_to_id=root["id"])
    deeper = cat.status_post(f"@{a} deeper", in_reply_to_id=reply["id"])
    old = cat.status_post(f"@{a} an old reply", in_reply_to_id=deeper["id"])
    # a reply written before replies named their thread: walked up to its first
    await rp.store.hdel(keys.status(int(old["id"])), "x:thread")
    other = ann.status_post("another thread")
    bob.status_favourite(root["id"])
    bob.status_favourite(other["id"])
    await rp.drain()
    everything = kinds(ann)
    assert ("favourite", str(root["id"])) in everything and len(everything) == 5
    answered = ann.status_mute(reply["id"])  # any status of the thread names it
    assert answered["muted"] is True
    assert kinds(ann) == [("favourite", str(other["id"]))]
    assert ann.status(root["id"])["muted"] is True
    assert ann.status(deeper["id"])["muted"] is True
    assert ann.status(other["id"])["muted"] is False
    assert bob.status(root["id"])["muted"] is False  # ann's mute, not bob's
    # new activity in the muted thread stays out too
    bob.status_reblog(root["id"])
    await rp.drain()
    assert kinds(ann) == [("favourite", str(other["id"]))]
    assert ann.status_unmute(root["id"])["muted"] is False
    assert len(kinds(ann)) == 6  # the favourite, mentions and the boost shown again
