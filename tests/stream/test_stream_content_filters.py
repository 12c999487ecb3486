"""Content filters on the Mastodon streams (SSE through Mastodon.py, and the
WebSocket): a ``hide`` filter keeps a status out of the user and public
streams, a ``warn`` one adds ``filtered`` to that viewer's delivery only,
each in its context; a filter made while a stream is open applies to the
very next status; another account's filters never apply."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from support.mastodon import Listener, accounts, wait_for  # noqa: F401
from websockets.asyncio.client import connect

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]


def run(fn, *args, **kwargs):
    return asyncio.to_thread(fn, *args, **kwargs)


# (Mastodon.py fills what a payload leaves out with None: no ``filtered`` reads falsy)


def by_id(listener: Listener) -> dict:
    with listener.lock:
        return {str(s["id"]): s for s in listener.updates}


async def test_hide_and_warn_on_the_user_and_public_streams(srv, rp):
    alice, bob, carol = await run(accounts, srv.base, 3)
    await run(alice.account_follow, (await run(bob.me))["id"])
    await run(
        alice.create_filter_v2,
        "veg",
        ["home", "public"],
        filter_action="hide",
        keywords_attributes=[{"keyword": "broccoli"}],
    )
    warn = await run(
        alice.create_filter_v2,
        "tv",
        ["home"],
        filter_action="warn",
        keywords_attributes=[{"keyword": "finale"}],
    )
    # carol hides what alice is shown: never applies to alice
    await run(
        carol.create_filter_v2,
        "plain",
        ["home", "public"],
        filter_action="hide",
        keywords_attributes=[{"keyword": "plain"}],
    )
    user, public, carols = Listener(), Listener(), Listener()
    handles = [
        await run(alice.stream_user, user, run_async=True),
        await run(alice.stream_public, public, run_async=True),
        await run(carol.stream_public, carols, run_async=True),
    ]
    try:
        await srv.wait_subscribers(3)
        hidden = await run(bob.status_post, "Broccoli for dinner")
        warned = await run(bob.status_post, "that finale!")
        plain = await run(bob.status_post, "a plain post")
        mine = await run(alice.status_post, "my broccoli")  # one's own: never hidden
        await wait_for(
            lambda: (
                str(mine["id"]) in by_id(user)
                and str(mine["id"]) in by_id(public)
                and str(mine["id"]) in by_id(carols)
            ),
            "the last post everywhere",
        )
        got_user, got_public, got_carol = by_id(user), by_id(public), by_id(carols)
        assert str(hidden["id"]) not in got_user and str(hidden["id"]) not in got_public
        assert str(plain["id"]) in got_user and str(plain["id"]) in got_public
        (result,) = got_user[str(warned["id"])]["filtered"]
        assert result["filter"]["id"] == warn["id"] and result["keyword_matches"] == ["finale"]
        assert not got_public[str(warned["id"])]["filtered"]  # not a public-context filter
        assert not got_user[str(plain["id"])]["filtered"]
        # carol gets what alice hides, and not what her own filter hides
        assert str(hidden["id"]) in got_carol and not got_carol[str(warned["id"])]["filtered"]
        assert str(plain["id"]) not in got_carol
    finally:
        for h in handles:
            h.close()
    await srv.wait_subscribers(0)


async def test_a_filter_made_while_the_stream_is_open_applies_to_the_next_status(srv, rp):
    alice, bob = await run(accounts, srv.base, 2)
    await run(alice.account_follow, (await run(bob.me))["id"])
    user = Listener()
    handle = await run(alice.stream_user, user, run_async=True)
    url = (
        f"ws://127.0.0.1:{srv.port}/api/v1/streaming?stream=public"
        f"&access_token={alice.access_token}"
    )
    try:
        async with connect(url) as ws:
            await srv.wait_subscribers(2)
            before = await run(bob.status_post, "kale, first")
            await wait_for(lambda: str(before["id"]) in by_id(user), "the first kale")
            f = await run(
                alice.create_filter_v2,
                "kale",
                ["home", "public"],
                filter_action="hide",
                keywords_attributes=[{"keyword": "kale"}],
            )
            after = await run(bob.status_post, "kale, second")  # right after: hidden
            end = await run(bob.status_post, "the end")
            await wait_for(lambda: str(end["id"]) in by_id(user), "the end")
            assert str(after["id"]) not in by_id(user)
            seen = []
            while str(end["id"]) not in seen:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if msg.get("event") == "update":
                    seen.append(str(json.loads(msg["payload"])["id"]))
            assert seen == [str(before["id"]), str(end["id"])]

            # changed to warn: the next one comes, marked
            await run(alice.update_filter_v2, f["id"], filter_action="warn")
            third = await run(bob.status_post, "kale, third")
            await wait_for(lambda: str(third["id"]) in by_id(user), "the third kale")
            assert by_id(user)[str(third["id"])]["filtered"][0]["filter"]["filter_action"] == "warn"
            # deleted: nothing applies any more
            await run(alice.delete_filter_v2, f["id"])
            fourth = await run(bob.status_post, "kale, fourth")
            await wait_for(lambda: str(fourth["id"]) in by_id(user), "the fourth kale")
            assert not by_id(user)[str(fourth["id"])]["filtered"]
    finally:
        handle.close()
    await srv.wait_subscribers(0)


async def test_notification_events_follow_the_notifications_context(srv, rp):
    alice, bob = await run(accounts, srv.base, 2)
    me = await run(alice.me)
    await run(
        alice.create_filter_v2,
        "hush",
        ["notifications"],
        filter_action="hide",
        keywords_attributes=[{"keyword": "hush"}],
    )
    await run(
        alice.create_filter_v2,
        "tv",
        ["notifications"],
        filter_action="warn",
        keywords_attributes=[{"keyword": "finale"}],
    )
    url = (
        f"ws://127.0.0.1:{srv.port}/api/v1/streaming?stream=user&access_token={alice.access_token}"
    )
    async with connect(url) as ws:
        await srv.wait_subscribers(1)
        hushed = await run(bob.status_post, f"@{me['acct']} hush now")
        warned = await run(bob.status_post, f"@{me['acct']} the finale")
        end = await run(bob.status_post, f"@{me['acct']} the end")
        notes = {}
        while str(end["id"]) not in notes:
            msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if msg.get("event") == "notification":
                note = json.loads(msg["payload"])
                notes[note["status"]["id"]] = note
        assert str(hushed["id"]) not in notes
        assert notes[str(warned["id"])]["status"]["filtered"][0]["filter"]["title"] == "tv"
        assert "filtered" not in notes[str(end["id"])]["status"]
    # the REST page and the unread count agree
    page = await run(alice.notifications)
    assert str(hushed["id"]) not in [str(n["status"]["id"]) for n in page if n.get("status")]
    assert len(page) == 2
    async with httpx.AsyncClient(base_url=srv.base, timeout=30) as http:
        r = await http.get(
            "/api/v1/notifications/unread_count",
            headers={"Authorization": f"Bearer {alice.access_token}"},
        )
    assert r.json()["count"] == 2
