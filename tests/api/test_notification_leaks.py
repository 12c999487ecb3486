"""Notifications pass the visibility decision when they are shown: a follow
request to a locked account with ``notify=true`` reads none of its private
posts (user stream, REST, unread counts), before or after the request is
rejected; an accepted request keeps the notify it asked for. Mastodon.py
against a real ``redpoll serve``; both topologies."""

from __future__ import annotations

import asyncio

import pytest
from support.mastodon import NoteListener, accounts  # noqa: F401

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]


def _status_notes(api) -> list:
    return [n for n in api.notifications() if n["type"] == "status"]


async def test_a_follow_request_with_notify_reads_no_private_post(srv, rp):
    lou, req, fan = await asyncio.to_thread(accounts, srv.base, 3)
    lou_id = (await asyncio.to_thread(lou.me))["id"]
    await asyncio.to_thread(lou.account_update_credentials, locked=True)
    await asyncio.to_thread(req.account_follow, lou_id, notify=True)
    listener = NoteListener()
    handle = await asyncio.to_thread(req.stream_user, listener, run_async=True)
    try:
        await srv.wait_subscribers(1)
        secret = await asyncio.to_thread(
            lou.status_post, "for followers only", visibility="private"
        )
        public = await asyncio.to_thread(lou.status_post, "for everyone")
        await rp.drain()
        await asyncio.sleep(0.5)  # anything of lou's would have come before now
        with listener.lock:
            got = [n["status"]["id"] for n in listener.notifications if n.get("status")]
        assert secret["id"] not in got and public["id"] not in got, got
        assert _status_notes(req) == []
        assert (await asyncio.to_thread(req.notifications_unread_count))["count"] == 0
        # rejected: still nothing
        await asyncio.to_thread(lou.follow_request_reject, (await asyncio.to_thread(req.me))["id"])
        later = await asyncio.to_thread(lou.status_post, "still private", visibility="private")
        await rp.drain()
        await asyncio.sleep(0.5)
        with listener.lock:
            got = [n["status"]["id"] for n in listener.notifications if n.get("status")]
        assert later["id"] not in got
        assert _status_notes(req) == []
        assert (await asyncio.to_thread(req.notifications_unread_count))["count"] == 0
    finally:
        handle.close()

    # an accepted request keeps the notify it was made with
    fan_id = (await asyncio.to_thread(fan.me))["id"]
    rel = await asyncio.to_thread(fan.account_follow, lou_id, notify=True)
    assert rel["requested"] and not rel["notifying"]
    await asyncio.to_thread(lou.follow_request_authorize, fan_id)
    rel = (await asyncio.to_thread(fan.account_relationships, lou_id))[0]
    assert rel["following"] and rel["notifying"]
    post = await asyncio.to_thread(lou.status_post, "now you may", visibility="private")
    await rp.drain()
    assert [n["status"]["id"] for n in _status_notes(fan)] == [post["id"]]


async def test_a_notification_whose_status_is_hidden_now_is_not_shown_or_counted(srv, rp):
    """The follower gets the status notification; after lou removes them
    from her followers, it is shown nowhere and counted nowhere."""
    lou, fol = await asyncio.to_thread(accounts, srv.base, 2)
    lou_id = (await asyncio.to_thread(lou.me))["id"]
    fol_id = (await asyncio.to_thread(fol.me))["id"]
    await asyncio.to_thread(fol.account_follow, lou_id, notify=True)
    post = await asyncio.to_thread(lou.status_post, "followers only", visibility="private")
    await rp.drain()
    assert [n["status"]["id"] for n in _status_notes(fol)] == [post["id"]]
    assert (await asyncio.to_thread(fol.notifications_unread_count))["count"] == 1
    await asyncio.to_thread(lou.account_remove_from_followers, fol_id)
    await rp.drain()
    assert _status_notes(fol) == []
    assert (await asyncio.to_thread(fol.notifications_unread_count))["count"] == 0
    # and no longer a notifier: a new private post makes nothing
    again = await asyncio.to_thread(lou.status_post, "again", visibility="private")
    await rp.drain()
    assert again["id"] not in [n["status"]["id"] for n in _status_notes(fol)]
