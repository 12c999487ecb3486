"""The leak matrix: for every read path x visibility x
relationship, exactly who sees a status, through Mastodon.py 2.3.3 against a
real ``redpoll serve`` (REST and SSE streams), on one server and on the
cluster.

The scenario, built once: alice posts one status of each visibility, each a
reply to her own public root, mentioning @men and tagged #leak...; ``fol``
follows alice; ``men`` is mentioned but does not follow (and accepts private mentions
from strangers); ``oth`` has only
asked to follow alice (she is locked once her followers came) and keeps her
on a list (a list holds accounts one follows or has asked to follow, as
Mastodon's); ``anon`` has no user token;
``blk`` followed alice and is blocked by her; ``blkr`` blocks alice; ``mut``
follows alice and mutes her. A row of SEES / HOME is one relationship.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
import websockets
from mastodon import Mastodon, MastodonAPIError, MastodonNotFoundError
from support.mastodon import Listener, NoteListener, accounts, wait_for  # noqa: F401
from support.streams import Conn  # noqa: F401

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]

VIS = ("public", "unlisted", "private", "direct")
ALL = frozenset({"alice", "fol", "men", "oth", "anon", "blk", "blkr", "mut"})
#: blocked either way: nothing of alice's anywhere
BLOCKED = frozenset({"blk", "blkr"})
#: who sees a status of each visibility by id, in its thread and on alice's profile
SEES = {
    "public": ALL - BLOCKED,
    "unlisted": ALL - BLOCKED,
    "private": frozenset({"alice", "fol", "men", "mut"}),
    "direct": frozenset({"alice", "men"}),
}
#: who finds alice's public status on the public and tag timelines
#: (muting hides an account from timelines, not from its profile)
LISTS_PUBLIC = ALL - BLOCKED - {"mut"}
#: who finds it with full-text search: the public one anyone with a user token
#: (alice is indexable) but the blocked and the muting; the others the
#: accounts whose library holds them (its author, the mentioned)
FINDS = {
    "public": ALL - BLOCKED - {"mut", "anon"},
    "unlisted": {"alice", "men"},
    "private": {"alice", "men"},
    "direct": {"alice", "men"},
}
#: whose home holds it (the author, followers, the mentioned: as delivered)
HOME = {
    "public": {"alice", "fol", "men"},
    "unlisted": {"alice", "fol", "men"},
    "private": {"alice", "fol", "men"},
    "direct": {"alice", "men"},
}
#: the WebSocket's narrowed streams and which of alice's statuses each
#: carries to ``oth`` (she is of this server and posts no media); ``mut``
#: and ``blkr`` get none of hers on any of them
NARROWED = {
    "public:local": {"public"},
    "hashtag:local": {"public"},
    "public:remote": set(),
    "public:media": set(),
    "public:local:media": set(),
    "public:remote:media": set(),
    "user:notification": set(),
}


async def subscribe_narrowed(ws, tag: str) -> None:
    for name in NARROWED:
        await ws.send(json.dumps({"type": "subscribe", "stream": name, "tag": tag}))


async def narrowed(ws, marker) -> dict:
    """What each of NARROWED carried on ``ws``, read up to ``marker`` on
    public:local (one queue per socket: what came before it has come)."""
    got: dict = {name: set() for name in NARROWED}
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if frame.get("event") == "update":
            status_id = json.loads(frame["payload"])["id"]
            if frame["stream"] == ["public:local"] and status_id == marker:
                return got
            got[frame["stream"][0]].add(status_id)


async def test_leak_matrix(srv, rp):
    base = srv.base
    alice, fol, men, oth, blk, blkr, mut = await asyncio.to_thread(accounts, base, 7)
    anon = Mastodon(api_base_url=base)
    who = {
        "alice": alice,
        "fol": fol,
        "men": men,
        "oth": oth,
        "anon": anon,
        "blk": blk,
        "blkr": blkr,
        "mut": mut,
    }
    me = {k: (await asyncio.to_thread(m.me)) for k, m in who.items() if k != "anon"}
    alice_id = me["alice"]["id"]
    for follower in (fol, blk, blkr, mut):
        await asyncio.to_thread(follower.account_follow, alice_id)
    rel = await asyncio.to_thread(alice.account_block, me["blk"]["id"])
    assert rel["blocking"] and not rel["following"] and not rel["followed_by"]
    rel = await asyncio.to_thread(blkr.account_block, alice_id)
    assert rel["blocking"] and not rel["following"]
    rel = await asyncio.to_thread(mut.account_mute, alice_id)
    assert rel["muting"] and rel["muting_notifications"] and rel["following"]
    assert (await asyncio.to_thread(alice.me))["followers_count"] == 2  # fol and mut
    await asyncio.to_thread(alice.account_update_credentials, locked=True)
    rel = await asyncio.to_thread(oth.account_follow, alice_id)
    assert rel["requested"] and not rel["following"]
    lst = await asyncio.to_thread(oth.list_create, "watching")
    await asyncio.to_thread(oth.list_accounts_add, lst["id"], [alice_id])
    # a private mention from someone one does not follow is filtered by
    # default (Mastodon 4.3's policy); men takes them, to be shown each one
    await asyncio.to_thread(men.update_notifications_policy, for_private_mentions="accept")
    tag = "leak" + uuid.uuid4().hex[:8]

    streams = {
        "fol:user": Listener(),
        "oth:user": Listener(),
        "oth:list": Listener(),
        "oth:public": Listener(),
        "oth:hashtag": Listener(),
        "oth:public:local": Listener(),
        "men:notification": NoteListener(),
    }
    handles = [
        await asyncio.to_thread(fol.stream_user, streams["fol:user"], run_async=True),
        await asyncio.to_thread(oth.stream_user, streams["oth:user"], run_async=True),
        await asyncio.to_thread(oth.stream_list, lst["id"], streams["oth:list"], run_async=True),
        await asyncio.to_thread(oth.stream_public, streams["oth:public"], run_async=True),
        await asyncio.to_thread(oth.stream_hashtag, tag, streams["oth:hashtag"], run_async=True),
        await asyncio.to_thread(
            oth.stream_public, streams["oth:public:local"], run_async=True, local=True
        ),
        await asyncio.to_thread(
            men.stream_user_notifications, streams["men:notification"], run_async=True
        ),
    ]

    def ws_url(m: Mastodon) -> str:
        return srv.base.replace("http", "ws") + "/api/v1/streaming?access_token=" + m.access_token

    v1_params = {"identifier": None, "access_token": fol.access_token}
    try:
        async with (
            websockets.connect(ws_url(fol)) as ws,
            websockets.connect(ws_url(oth)) as oth_ws,
            websockets.connect(ws_url(mut)) as mut_ws,
            websockets.connect(ws_url(blkr)) as blkr_ws,
            Conn(srv, "filter", follow=str(alice_id), **v1_params) as v1_follow,
            Conn(srv, "filter", track=tag, **v1_params) as v1_track,
            Conn(srv, "sample", method="GET", percent="100", **v1_params) as v1_sample,
        ):
            await ws.send(json.dumps({"type": "subscribe", "stream": "user"}))
            await srv.wait_subscribers(len(handles) + 4)
            sockets = {"oth": oth_ws, "mut": mut_ws, "blkr": blkr_ws}
            for sock in sockets.values():
                await subscribe_narrowed(sock, tag)
            await srv.wait_subscribers(len(handles) + 4 + len(sockets) * len(NARROWED))
            root = await asyncio.to_thread(alice.status_post, "the root")
            sid = {}
            for vis in VIS:
                status = await asyncio.to_thread(
                    alice.status_post,
                    f"a {vis} note for @{me['men']['username']} #{tag}",
                    in_reply_to_id=root["id"],
                    visibility=vis,
                )
                assert status["visibility"] == vis
                sid[vis] = status["id"]
            end = await asyncio.to_thread(alice.status_post, f"the end #{tag}")
            mine = await asyncio.to_thread(oth.status_post, "oth's own end")

            def got(name):
                return {s["id"] for s in streams[name].updates}

            for name in set(streams) - {"men:notification"}:
                marker = mine["id"] if name == "oth:user" else end["id"]
                await wait_for(lambda: marker in got(name), f"{name} end marker")
            # the streams: the public places carry only the public status; a
            # user stream what its user may see; a list of an author not
            # followed (only asked to) never its private status; the v1.1-like public filters nothing else
            notes = set(sid.values())
            assert got("fol:user") & notes == {sid["public"], sid["unlisted"], sid["private"]}
            assert got("oth:user") & notes == set()
            assert got("oth:list") & notes == {sid["public"], sid["unlisted"]}
            assert got("oth:public") & notes == {sid["public"]}
            assert got("oth:hashtag") & notes == {sid["public"]}
            assert got("oth:public:local") & notes == {sid["public"]}
            # the narrowed streams on a WebSocket: oth's carry what NARROWED
            # says; a muter's and a blocker's nothing of alice's
            for name, sock in sockets.items():
                carried = await narrowed(sock, mine["id"])
                for stream, shown in NARROWED.items():
                    want = {sid[v] for v in shown} if name == "oth" else set()
                    assert carried[stream] & notes == want, (name, stream)
            # user:notification: men's mentions (one per visibility), no statuses
            await rp.drain()
            await wait_for(
                lambda: len(streams["men:notification"].notifications) >= 4, "men's mentions"
            )
            assert {n["status"]["id"] for n in streams["men:notification"].notifications} == notes
            assert streams["men:notification"].updates == []
            # WebSocket: fol's user stream as over SSE
            ws_ids = set()
            while end["id"] not in ws_ids:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if frame.get("event") == "update":
                    ws_ids.add(json.loads(frame["payload"])["id"])
            assert ws_ids & notes == {sid["public"], sid["unlisted"], sid["private"]}
            # the v1.1 streams (follow, track, sample), even a follower's: public only
            for conn in (v1_follow, v1_track):
                seen = await conn.lines.until(lambda m: m.get("id_str") == str(end["id"]))
                assert {m["id_str"] for m in seen if "id_str" in m} & {str(x) for x in notes} == {
                    str(sid["public"])
                }
            seen = await v1_sample.lines.until(lambda m: m.get("id_str") == str(mine["id"]))
            sampled = {m["id_str"] for m in seen if "id_str" in m}
            assert str(sid["public"]) in sampled and not sampled & {
                str(sid[v]) for v in ("unlisted", "private", "direct")
            }
    finally:
        for h in handles:
            h.close()
    await srv.wait_subscribers(0)

    def by_id(m: Mastodon, status_id) -> bool:
        try:
            return m.status(status_id)["id"] == status_id
        except MastodonNotFoundError:
            return False

    # the full-text index is written by a job: until its author finds each
    for vis in VIS:
        await wait_for(
            lambda v=vis: (
                sid[v]
                in {
                    s["id"]
                    for s in alice.search_v2(f"{v} note", result_type="statuses")["statuses"]
                }
            ),
            f"the {vis} note indexed",
        )
    for vis in VIS:
        for name, m in who.items():
            seen = name in SEES[vis]
            assert by_id(m, sid[vis]) == seen, (vis, name, "status by id")
            try:
                thread = {s["id"] for s in m.status_context(root["id"])["descendants"]}
            except MastodonNotFoundError:  # the root is alice's too
                assert name in BLOCKED
                thread = set()
            assert (sid[vis] in thread) == seen, (vis, name, "context")
            profile = {s["id"] for s in m.account_statuses(alice_id, limit=40)}
            assert (sid[vis] in profile) == seen, (vis, name, "profile")
            listed = vis == "public" and name in LISTS_PUBLIC
            public = {s["id"] for s in m.timeline_public(limit=40)}
            assert (sid[vis] in public) == listed, (vis, name, "public timeline")
            tagged = {s["id"] for s in m.timeline_hashtag(tag, limit=40)}
            assert (sid[vis] in tagged) == listed, (vis, name, "tag timeline")
            if not seen:  # nothing about it answers either
                with pytest.raises(MastodonNotFoundError):
                    m.status_favourited_by(sid[vis])
                with pytest.raises(MastodonNotFoundError):
                    m.status_reblogged_by(sid[vis])
                if name != "anon":
                    with pytest.raises(MastodonNotFoundError):
                        m.status_favourite(sid[vis])
                    with pytest.raises(MastodonNotFoundError):
                        m.status_post("a reply to what I cannot see", in_reply_to_id=sid[vis])
            if name != "anon":
                home = {s["id"] for s in m.timeline_home(limit=40)}
                assert (sid[vis] in home) == (name in HOME[vis]), (vis, name, "home")
                found = {
                    s["id"] for s in m.search_v2(f"{vis} note", result_type="statuses")["statuses"]
                }
                assert found <= {sid[v] for v in VIS if name in SEES[v]}, (vis, name, "search")
                assert (sid[vis] in found) == (name in FINDS[vis]), (vis, name, "search")
    # a block refuses follows both ways and mentions across it
    for a, b in ((blk, alice_id), (alice, me["blk"]["id"]), (blkr, alice_id)):
        with pytest.raises(MastodonAPIError) as refused:
            a.account_follow(b)
        assert refused.value.args[1] == 403
    blk.status_post(f"hey @{me['alice']['username']}")
    mut.status_post(f"hey @{me['alice']['username']}")
    assert {n["account"]["id"] for n in alice.notifications(types=["mention"])} == {me["mut"]["id"]}
    assert [a["id"] for a in alice.blocks()] == [me["blk"]["id"]]
    assert [a["id"] for a in mut.mutes()] == [alice_id]
    # notifications: each mention reached the mentioned, and only them
    mentions = {n["status"]["id"] for n in men.notifications(types=["mention"])}
    assert mentions == set(sid.values())
    assert fol.notifications(types=["mention"]) == []
    # boosts: Mastodon's rule (private: its author only; direct: nobody)
    fol.status_reblog(sid["public"])
    fol.status_reblog(sid["unlisted"])
    with pytest.raises(MastodonAPIError) as refused:
        fol.status_reblog(sid["private"])
    assert refused.value.args[1] == 403
    with pytest.raises(MastodonNotFoundError):
        fol.status_reblog(sid["direct"])
    with pytest.raises(MastodonAPIError) as refused:
        men.status_reblog(sid["direct"])
    assert refused.value.args[1] == 403
    boost = alice.status_reblog(sid["private"])
    assert boost["visibility"] == "private"
    assert oth.timeline_public(limit=40) and boost["id"] not in {
        s["id"] for s in oth.timeline_public(limit=40)
    }
    with pytest.raises(MastodonNotFoundError):
        oth.status(boost["id"])  # the boost of a private status is as private


async def test_default_visibility_through_the_api(srv, rp):
    base = srv.base
    alice, bob = await asyncio.to_thread(accounts, base, 2)
    assert alice.me()["source"]["privacy"] == "public"
    me = alice.account_update_credentials(default_privacy="private")
    assert me["source"]["privacy"] == "private"
    assert alice.preferences()["posting:default:visibility"] == "private"
    plain = alice.status_post("no visibility named")
    assert plain["visibility"] == "private"
    with pytest.raises(MastodonNotFoundError):
        bob.status(plain["id"])
    assert alice.status_post("named", visibility="public")["visibility"] == "public"
    with pytest.raises(MastodonAPIError) as refused:
        alice.account_update_credentials(default_privacy="friends")
    assert refused.value.args[1] == 422
    assert alice.me()["source"]["privacy"] == "private"


async def test_a_suspended_author_vanishes_from_every_read_path(srv, rp):
    """The "suspended author" row: alice's statuses of every visibility, as
    everyone saw them, are gone for everyone once a moderator suspends her."""
    from support.cli import admin, ok  # noqa: F401

    base = srv.base
    alice, fol, men = await asyncio.to_thread(accounts, base, 3)
    me = {
        k: await asyncio.to_thread(m.me) for k, m in (("alice", alice), ("fol", fol), ("men", men))
    }
    await asyncio.to_thread(fol.account_follow, me["alice"]["id"])
    tag = "susp" + uuid.uuid4().hex[:8]
    root = await asyncio.to_thread(alice.status_post, f"root #{tag}")
    sids = [root["id"]] + [
        (
            await asyncio.to_thread(
                alice.status_post,
                f"{vis} @{me['men']['username']} #{tag}",
                visibility=vis,
                in_reply_to_id=root["id"],
            )
        )["id"]
        for vis in VIS
    ]
    assert fol.status(sids[1])["id"] == sids[1]  # seen before
    ok(admin(srv, "suspend", me["alice"]["username"]))
    viewers = {"fol": fol, "men": men, "anon": Mastodon(api_base_url=base)}
    for name, m in viewers.items():
        for sid in sids:
            with pytest.raises(MastodonNotFoundError):
                m.status(sid)
        with pytest.raises(MastodonNotFoundError):
            m.status_context(root["id"])
        assert m.account_statuses(me["alice"]["id"]) == []
        assert not {s["id"] for s in m.timeline_public(limit=40)} & set(sids)
        assert m.timeline_hashtag(tag) == []
        if name != "anon":
            assert not {s["id"] for s in m.timeline_home(limit=40)} & set(sids)
            assert not {n.get("status", {}) and n["status"]["id"] for n in m.notifications()} & set(
                sids
            )
