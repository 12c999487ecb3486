"""Editing statuses, driven by Mastodon.py against a real ``redpoll serve``,
in both topologies: PUT /api/v1/statuses/:id, ``edited_at``, the history
and the source; every kept rendering follows an edit; Mastodon's refusals;
an edit refused by its script leaves the old record whole; ``status.update``
on the Mastodon streams (SSE and WebSocket) only to those who may see the
status, decided when it is sent; the boosters' ``update`` notification."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest
import websockets
from mastodon import MastodonAPIError, MastodonNotFoundError
from support.mastodon import Listener, accounts, wait_for  # noqa: F401

from redpoll.core import keys, limits
from redpoll.core.errors import Conflict
from redpoll.records import writes

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]


class EditListener(Listener):
    def __init__(self):
        super().__init__()
        self.edits: list = []

    def on_status_update(self, status):
        with self.lock:
            self.edits.append(status)


def run(fn, *args, **kwargs):
    return asyncio.to_thread(fn, *args, **kwargs)


async def test_an_edit_changes_the_status_everywhere_and_keeps_its_history(srv, rp):
    alice, bob = await run(accounts, srv.base, 2)
    me, bob_me = await run(alice.me), await run(bob.me)
    await run(bob.account_follow, me["id"])
    one, two = "one" + uuid.uuid4().hex[:6], "two" + uuid.uuid4().hex[:6]
    post = await run(alice.status_post, f"first thoughts #{one}", language="en")
    assert post["edited_at"] is None
    # every kept rendering of it is made before the edit (status, home, public, tag)
    assert (await run(bob.status, post["id"]))["content"].startswith("<p>first thoughts")
    assert (await run(bob.timeline_home))[0]["id"] == post["id"]
    assert post["id"] in [s["id"] for s in await run(bob.timeline_hashtag, one)]
    history = await run(bob.status_history, post["id"])  # never edited: itself only
    assert len(history) == 1 and "first thoughts" in history[0]["content"]

    edited = await run(
        alice.status_update,
        post["id"],
        f"second thoughts @{bob_me['username']} #{two}",
        spoiler_text="careful",
    )
    assert edited["id"] == post["id"] and edited["edited_at"] is not None
    assert "second thoughts" in edited["content"] and edited["spoiler_text"] == "careful"
    assert edited["sensitive"] is True and edited["language"] == "en"  # kept
    assert edited["visibility"] == "public" and edited["created_at"] == post["created_at"]
    assert [m["id"] for m in edited["mentions"]] == [bob_me["id"]]
    assert [t["name"] for t in edited["tags"]] == [two]

    # every read path shows the edit (the version bump renews every kept rendering)
    shown = await run(bob.status, post["id"])
    assert "second thoughts" in shown["content"] and shown["edited_at"] is not None
    assert "second thoughts" in (await run(bob.timeline_home))[0]["content"]
    public = {s["id"]: s for s in await run(bob.timeline_public)}
    assert "second thoughts" in public[post["id"]]["content"]
    profile = await run(bob.account_statuses, me["id"])
    assert "second thoughts" in profile[0]["content"]
    assert post["id"] in [s["id"] for s in await run(bob.timeline_hashtag, two)]
    assert post["id"] not in [s["id"] for s in await run(bob.timeline_hashtag, one)]
    with httpx.Client(base_url=srv.base, timeout=30) as http:  # anonymous, too
        anon = http.get(f"/api/v1/statuses/{post['id']}").json()
        assert "second thoughts" in anon["content"]
        anon_history = http.get(f"/api/v1/statuses/{post['id']}/history").json()
        assert len(anon_history) == 2
        assert http.get(f"/api/v1/statuses/{post['id']}/source").status_code == 401
    # the newly mentioned is told, as when posting
    notes = await run(bob.notifications, types=["mention"])
    assert post["id"] in [n["status"]["id"] for n in notes]

    await run(alice.status_update, post["id"], "third thoughts")
    history = await run(bob.status_history, post["id"])
    assert [
        "first thoughts" in history[0]["content"],
        "second thoughts" in history[1]["content"],
        "third thoughts" in history[2]["content"],
    ] == [True, True, True]
    assert history[0]["created_at"] == post["created_at"]
    assert [h["spoiler_text"] for h in history] == ["", "careful", ""]
    assert [h["sensitive"] for h in history] == [False, True, False]
    assert all(h["account"]["id"] == me["id"] for h in history)
    source = await run(alice.status_source, post["id"])
    assert source["id"] == post["id"] and source["text"] == "third thoughts"
    assert source["spoiler_text"] == ""
    with pytest.raises(MastodonNotFoundError):  # another's source: 404
        await run(bob.status_source, post["id"])
    # deleting it takes its history along
    await run(alice.status_delete, post["id"])
    await rp.drain()
    assert not await rp.store.exists(keys.status_edits(int(post["id"])))


async def test_what_mastodon_refuses_to_edit_is_refused_and_nothing_changes(srv, rp):
    alice, bob = await run(accounts, srv.base, 2)
    mine = await run(alice.status_post, "mine")
    bobs = await run(bob.status_post, "bob's")
    boost = await run(alice.status_reblog, bobs["id"])
    with pytest.raises(MastodonNotFoundError):  # another's: 404, as Mastodon
        await run(alice.status_update, bobs["id"], "hijacked")
    with pytest.raises(MastodonNotFoundError):
        await run(alice.status_update, 999_999_999_999, "nothing there")
    for args, kwargs in [
        ((boost["id"], "a boost"), {}),
        ((mine["id"], "   "), {}),
        ((mine["id"], "x" * (limits.STATUS_MAX_CHARS + 1)), {}),
        ((mine["id"], "x" * (limits.STATUS_MAX_CHARS - 3)), {"spoiler_text": "too long"}),
        ((mine["id"], "new media"), {"media_ids": [12345]}),
    ]:
        with pytest.raises(MastodonAPIError) as refused:
            await run(alice.status_update, *args, **kwargs)
        assert refused.value.args[1] == 422, (args[1][:20], refused.value.args)
    with httpx.Client(base_url=srv.base, timeout=30) as http:
        headers = {"Authorization": f"Bearer {alice.access_token}"}
        polled = http.put(
            f"/api/v1/statuses/{mine['id']}",
            headers=headers,
            json={"status": "a bad poll", "poll": {"options": ["only one"], "expires_in": 3600}},
        )
        assert polled.status_code == 422 and "poll" in polled.json()["error"]
    shown = await run(alice.status, mine["id"])
    assert shown["content"] == "<p>mine</p>" and shown["edited_at"] is None
    assert len(await run(alice.status_history, mine["id"])) == 1
    assert (await run(bob.status, bobs["id"]))["edited_at"] is None


async def test_an_edit_refused_by_its_script_leaves_the_old_record_whole(srv, rp):
    """Cut short: a full history, or a record that changed since the edit
    read it, refuses the one script, and nothing of the edit is written."""
    (alice,) = await run(accounts, srv.base, 1)
    me = await run(alice.me)
    post = await run(alice.status_post, "version 0")
    sid, uid = int(post["id"]), int(me["id"])
    for i in range(1, limits.EDITS_MAX + 1):
        await rp.statuses.edit(uid, sid, f"version {i}")
    raw = await rp.store.hgetall(keys.status(sid))
    held = await rp.store.lrange(keys.status_edits(sid), 0, -1)
    assert len(held) == limits.EDITS_MAX + 1
    with pytest.raises(MastodonAPIError) as full:
        await run(alice.status_update, post["id"], "one too many")
    assert full.value.args[1] == 422 and "at most" in str(full.value.args[-1])
    assert await rp.store.hgetall(keys.status(sid)) == raw
    assert await rp.store.lrange(keys.status_edits(sid), 0, -1) == held
    shown = await run(alice.status, post["id"])
    assert shown["content"] == f"<p>version {limits.EDITS_MAX}</p>"

    # a stale version: refused whole, nothing written
    other = await run(alice.status_post, "untouched")
    osid = int(other["id"])
    before = await rp.store.hgetall(keys.status(osid))
    with pytest.raises(Conflict):
        await writes.of(rp.store).edit_status(
            osid, uid, "7", ("{}", "{}"), {"text": "stale"}, ["x:language"]
        )
    assert await rp.store.hgetall(keys.status(osid)) == before
    assert not await rp.store.exists(keys.status_edits(osid))


async def test_an_edit_of_a_private_status_reaches_only_who_may_see_it(srv, rp):
    """The leak test: status.update on SSE and WebSocket, and the history,
    decided by the one visibility decision from the record as it is when
    each is sent or read; an edit that names someone lets them see it, one
    that stops naming them hides it again."""
    alice, fol, oth = await run(accounts, srv.base, 3)
    me, oth_me = await run(alice.me), await run(oth.me)
    await run(fol.account_follow, me["id"])
    streams = {"fol": EditListener(), "oth": EditListener(), "public": EditListener()}
    handles = [
        await run(fol.stream_user, streams["fol"], run_async=True),
        await run(oth.stream_user, streams["oth"], run_async=True),
        await run(oth.stream_public, streams["public"], run_async=True),
    ]
    ws_url = srv.base.replace("http", "ws") + "/api/v1/streaming?access_token=" + oth.access_token
    try:
        async with websockets.connect(ws_url) as ws:
            await ws.send(json.dumps({"type": "subscribe", "stream": "user"}))
            await srv.wait_subscribers(len(handles) + 1)
            private = await run(alice.status_post, "for followers", visibility="private")
            await run(alice.status_update, private["id"], "for followers, edited")
            await wait_for(
                lambda: private["id"] in [s["id"] for s in streams["fol"].edits],
                "the follower's status.update",
            )
            edit = [s for s in streams["fol"].edits if s["id"] == private["id"]][0]
            assert "edited" in edit["content"] and edit["edited_at"] is not None
            assert len(await run(fol.status_history, private["id"])) == 2
            for fn in (oth.status_history, oth.status):
                with pytest.raises(MastodonNotFoundError):
                    await run(fn, private["id"])

            # naming oth lets oth see it, from the same write on
            await run(alice.status_update, private["id"], f"now for @{oth_me['username']} too")
            await wait_for(
                lambda: private["id"] in [s["id"] for s in streams["oth"].edits],
                "the newly mentioned's status.update",
            )
            assert len(await run(oth.status_history, private["id"])) == 3
            frames = []

            async def until_update():
                while True:
                    frame = json.loads(await ws.recv())
                    frames.append(frame)
                    if frame.get("event") == "status.update":
                        return json.loads(frame["payload"])

            payload = await asyncio.wait_for(until_update(), 30)
            assert payload["id"] == private["id"] and "now for" in payload["content"]

            # and no longer naming them hides it again, stream and history alike
            await run(alice.status_update, private["id"], "followers only again")
            marker = await run(alice.status_post, "the end")
            await wait_for(
                lambda: marker["id"] in [s["id"] for s in streams["public"].updates],
                "the public marker",
            )
            await wait_for(
                lambda: len([s for s in streams["fol"].edits if s["id"] == private["id"]]) == 3,
                "fol's third edit",
            )
            await asyncio.sleep(0.5)
            assert [
                s
                for s in streams["oth"].edits
                if s["id"] == private["id"] and "again" in s["content"]
            ] == []
            assert streams["public"].edits == []  # never on a public stream
            for fn in (oth.status_history, oth.status):
                with pytest.raises(MastodonNotFoundError):
                    await run(fn, private["id"])
            ws_frames = []
            try:
                while True:
                    ws_frames.append(json.loads(await asyncio.wait_for(ws.recv(), 0.5)))
            except TimeoutError:
                pass
            assert not [
                f
                for f in ws_frames
                if f.get("event") == "status.update" and "again" in f["payload"]
            ]
    finally:
        for handle in handles:
            handle.close()


async def test_boosters_get_an_update_notification_shown_by_the_visibility_decision(srv, rp):
    alice, bob, carol = await run(accounts, srv.base, 3)
    post = await run(alice.status_post, "boost me")
    await run(bob.status_reblog, post["id"])
    await run(carol.status_favourite, post["id"])
    await rp.drain()
    await run(alice.status_update, post["id"], "boost me, edited")
    notes = await run(bob.notifications, types=["update"])
    assert [n["status"]["id"] for n in notes] == [post["id"]]
    assert "edited" in notes[0]["status"]["content"]
    assert notes[0]["account"]["id"] == (await run(alice.me))["id"]
    assert await run(carol.notifications, types=["update"]) == []  # a favourite is not told
    await run(alice.status_update, post["id"], "boost me, edited twice")
    assert len(await run(bob.notifications, types=["update"])) == 2  # each edit its own
    # blocked since: not shown (the decision is taken when it is shown)
    await run(bob.account_block, (await run(alice.me))["id"])
    assert await run(bob.notifications, types=["update"]) == []


async def test_an_edit_counts_a_link_as_23_characters(srv, rp):
    (alice,) = await run(accounts, srv.base, 1)
    mine = await run(alice.status_post, "a link to come")
    link = "https://example.com/" + "long/" * 60  # 320 characters
    fits = "x" * (limits.STATUS_MAX_CHARS - limits.STATUS_URL_CHARS - 1) + " " + link
    assert len(fits) > limits.STATUS_MAX_CHARS
    edited = await run(alice.status_update, mine["id"], fits)
    assert link in edited["content"]
    with pytest.raises(MastodonAPIError) as refused:  # one character more, counted
        await run(alice.status_update, mine["id"], "x" + fits)
    assert refused.value.args[1] == 422
