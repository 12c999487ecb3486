"""The v1.1 stream carries the conversation: replies with
in_reply_to_status_id / in_reply_to_user_id, boosts as retweeted_status,
mentions and hashtags in Twitter's entities, and track matching hashtags and
mentions as Twitter did."""

from __future__ import annotations

import pytest
from support.streams import Conn, stream  # noqa: F401

pytestmark = pytest.mark.timeout(180)


async def test_reply_mentions_hashtags_and_boost_shapes(stream, rp):
    ann, bob = await rp.accounts.sign_up("Ann"), await rp.accounts.sign_up("bob")
    async with Conn(stream, "filter", follow=f"{ann.id},{bob.id}") as c:
        root = await rp.statuses.post(ann.id, "first #Redis")
        reply = await rp.statuses.post(bob.id, "@ann agreed #redis", in_reply_to=root.id)
        bid = await rp.statuses.boost(bob.id, root.id)
        got = await c.lines.until(lambda m: m.get("id") == bid)
    by_id = {m["id"]: m for m in got if "id" in m}
    r = by_id[reply.id]
    assert (r["in_reply_to_status_id"], r["in_reply_to_status_id_str"]) == (root.id, str(root.id))
    assert (r["in_reply_to_user_id"], r["in_reply_to_user_id_str"]) == (ann.id, str(ann.id))
    assert r["in_reply_to_screen_name"] == "ann"
    [mention] = r["entities"]["user_mentions"]
    assert (mention["id"], mention["id_str"], mention["screen_name"]) == (
        ann.id,
        str(ann.id),
        "ann",
    )
    assert mention["indices"] == [0, 4]
    assert [h["text"] for h in r["entities"]["hashtags"]] == ["redis"]
    assert "redpoll_extra" not in r  # the conversation is in Twitter's own fields
    b = by_id[bid]
    assert b["user"]["id"] == bob.id
    assert b["retweeted_status"]["id"] == root.id
    assert b["retweeted_status"]["user"]["id"] == ann.id
    assert b["text"] == "RT @Ann: first #Redis"
    assert by_id[root.id]["in_reply_to_status_id"] is None


async def test_track_matches_hashtags_and_mentions(stream, rp):
    ann, _ = await rp.accounts.sign_up("ann"), await rp.accounts.sign_up("bob")
    async with Conn(stream, "filter", track="redis,bob,sentinel") as c:
        tagged = await rp.statuses.post(ann.id, "all about #Redis today")
        mentioned = await rp.statuses.post(ann.id, "thanks @bob!")
        await rp.statuses.post(ann.id, "nothing to see")
        end = await rp.statuses.post(ann.id, "sentinel")
        got = await c.lines.until(lambda m: m.get("id") == end.id)
    assert [m["id"] for m in got if "id" in m] == [tagged.id, mentioned.id, end.id]


async def test_track_matches_boosts_by_their_original(stream, rp):
    """A boost's own text is empty; track matches it by the boosted status's
    text, hashtags and mentions, as Twitter matched retweets."""
    ann, bob = await rp.accounts.sign_up("ann"), await rp.accounts.sign_up("bob")
    plain = await rp.statuses.post(ann.id, "nothing to track here")
    tagged = await rp.statuses.post(ann.id, "about #Valkey and @bob")
    worded = await rp.statuses.post(ann.id, "a Keyspace story")
    async with Conn(stream, "filter", track="valkey,keyspace story") as c:
        b_plain = await rp.statuses.boost(bob.id, plain.id)
        b_tagged = await rp.statuses.boost(bob.id, tagged.id)
        b_worded = await rp.statuses.boost(bob.id, worded.id)
        end = await rp.statuses.post(ann.id, "#valkey end")
        got = await c.lines.until(lambda m: m.get("id") == end.id)
    assert [m["id"] for m in got if "id" in m] == [b_tagged, b_worded, end.id]
    assert b_plain not in [m.get("id") for m in got]
    boost = next(m for m in got if m.get("id") == b_tagged)
    assert boost["retweeted_status"]["id"] == tagged.id


# --- Mastodon streaming: boosts and notification events -----------------------------------
import asyncio  # noqa: E402
import json  # noqa: E402

from support.mastodon import Listener, NoteListener, accounts, mstream, wait_for  # noqa: E402, F401
from websockets.asyncio.client import connect  # noqa: E402


async def test_user_stream_gets_boosts_and_its_own_notifications(mstream, rp):
    base = mstream.base
    ann, bob, cat = await asyncio.to_thread(accounts, base, 3)
    ann_id, bob_id = (
        (await asyncio.to_thread(ann.me))["id"],
        (await asyncio.to_thread(bob.me))["id"],
    )
    await asyncio.to_thread(cat.account_follow, bob_id)
    ann_l, cat_l = NoteListener(), NoteListener()
    handles = [
        await asyncio.to_thread(ann.stream_user, ann_l, run_async=True),
        await asyncio.to_thread(cat.stream_user, cat_l, run_async=True),
    ]
    try:
        await mstream.wait_subscribers(2)
        toot = await asyncio.to_thread(ann.status_post, "boost and like this")
        await asyncio.to_thread(bob.status_favourite, toot["id"])
        boost = await asyncio.to_thread(bob.status_reblog, toot["id"])
        await wait_for(lambda: len(ann_l.notifications) == 2, "ann's two notifications")
        fav, reb = ann_l.notifications
        assert (fav["type"], fav["account"]["id"], fav["status"]["id"]) == (
            "favourite",
            bob_id,
            toot["id"],
        )
        assert (reb["type"], reb["account"]["id"]) == ("reblog", bob_id)
        # the group keys grouped notifications use (v2), as Mastodon's streams carry them
        assert fav["group_key"].startswith(f"favourite-{toot['id']}-")
        assert reb["group_key"].startswith(f"reblog-{toot['id']}-")
        grouped = await asyncio.to_thread(ann.grouped_notifications)
        assert {g["group_key"] for g in grouped["notification_groups"]} == {
            fav["group_key"],
            reb["group_key"],
        }
        # cat follows bob: the boost arrives wrapping ann's status; no notifications
        await wait_for(lambda: any(s["id"] == boost["id"] for s in cat_l.updates), "the boost")
        [seen] = [s for s in cat_l.updates if s["id"] == boost["id"]]
        assert seen["reblog"]["id"] == toot["id"] and seen["reblog"]["account"]["id"] == ann_id
        assert cat_l.notifications == []
    finally:
        for h in handles:
            h.close()
    await mstream.wait_subscribers(0)


async def test_user_stream_gets_an_added_to_collection_with_its_collection(mstream, rp):
    """Mastodon 4.6's added_to_collection reaches the featured account's user
    stream carrying the Collection, as the REST notification does."""
    owner, ann = await asyncio.to_thread(accounts, mstream.base, 2)
    for m in (owner, ann):
        m.version_check_mode = "none"  # collections are Mastodon 4.6's
    owner_id, ann_id = (
        (await asyncio.to_thread(owner.me))["id"],
        (await asyncio.to_thread(ann.me))["id"],
    )
    listener = NoteListener()
    handle = await asyncio.to_thread(ann.stream_user, listener, run_async=True)
    try:
        await mstream.wait_subscribers(1)
        made = await asyncio.to_thread(owner.collection_create, "Streamed", account_ids=[ann_id])
        await wait_for(lambda: len(listener.notifications) == 1, "ann's notification")
        (note,) = listener.notifications
        assert note["type"] == "added_to_collection" and note["account"]["id"] == owner_id
        assert note["collection"]["id"] == made["collection"]["id"]
        assert [i["account_id"] for i in note["collection"]["items"]] == [ann_id]
    finally:
        handle.close()
    await mstream.wait_subscribers(0)


async def test_websocket_user_stream_gets_notifications(mstream, rp):
    base = mstream.base
    ann, bob = await asyncio.to_thread(accounts, base, 2)
    url = f"ws://127.0.0.1:{mstream.port}/api/v1/streaming?stream=user&access_token={ann.access_token}"
    async with connect(url) as ws:
        await mstream.wait_subscribers(1)
        await asyncio.to_thread(bob.account_follow, (await asyncio.to_thread(ann.me))["id"])
        await rp.drain()  # the follow notification comes from a job (this server runs none)
        while True:
            msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if msg.get("event") == "notification":
                break
        assert msg["stream"] == ["user"]
        note = json.loads(msg["payload"])
        assert (
            note["type"] == "follow"
            and note["account"]["id"] == (await asyncio.to_thread(bob.me))["id"]
        )
