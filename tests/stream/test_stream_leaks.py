"""Streams show what REST would show, now: a follow that ends (removed from
followers, blocked, unfollowed), a mute or a block reaches an open stream at
once, through an event, and a new follow does too; token scopes are enforced
per stream; a replay (SSE Last-Event-ID, v1.1 count) leaves out deleted
statuses and suspended authors; boosts never go out on public streams, and
never a boost of an unlisted status; a block applies on v1.1 streams; an
anonymous v1.1 identifier counts apart from a user's streams. Real clients
(httpx, websockets, Mastodon.py) against a real ``redpoll serve``; both
topologies."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest
from mastodon import Mastodon
from support.leaks import WS, call, me, scoped, sse, ws_url  # noqa: F401
from support.mastodon import LOOSE, accounts, wait_for  # noqa: F401
from support.streams import WAIT, StreamProc  # noqa: F401
from websockets.asyncio.client import connect

from redpoll.moderation import moderation

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]


class SSE:
    """A raw Mastodon SSE stream: its events as (name, id, data) in order."""

    def __init__(self, response: httpx.Response):
        self.response = response
        self.events: list[tuple[str, str | None, str]] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        buf = b""
        try:
            async for chunk in self.response.aiter_raw():
                buf += chunk
                while b"\n\n" in buf:
                    block, buf = buf.split(b"\n\n", 1)
                    fields = dict(
                        line.decode().split(": ", 1)
                        for line in block.split(b"\n")
                        if line and not line.startswith(b":")
                    )
                    if "event" in fields:
                        self.events.append((fields["event"], fields.get("id"), fields["data"]))
        except httpx.HTTPError:  # the test closed it
            pass

    def ids(self, name: str = "update") -> list[str]:
        return [
            str(json.loads(data)["id"]) if name != "delete" else data
            for event, _, data in self.events
            if event == name
        ]

    def close(self) -> None:
        self.task.cancel()


# --- relationship changes reach open streams at once ---------------------------------------
async def test_follow_removal_block_and_unfollow_reach_open_streams_at_once(srv, rp):
    """Each private post comes right after the change (well within the
    membership refresh): it reaches the open user stream (SSE and
    WebSocket) and list stream exactly when REST would show it. A follow
    that ends takes lou out of fol's list too (as Mastodon's), so the list
    stream shows lou again only once fol follows and lists lou again."""
    lou, fol, other = await call(accounts, srv.base, 3)
    lou_id, fol_id, other_id = await me(lou), await me(fol), await me(other)
    lst = await call(fol.list_create, "lou")
    await call(fol.account_follow, lou_id)
    await call(fol.account_follow, other_id)
    await call(fol.list_accounts_add, lst["id"], [lou_id, other_id])
    async with (
        httpx.AsyncClient(base_url=srv.base, timeout=None) as http,
        sse(http, "/api/v1/streaming/user", fol.access_token) as r1,
        sse(http, f"/api/v1/streaming/list?list={lst['id']}", fol.access_token) as r2,
        connect(ws_url(srv.base, fol.access_token, stream="user")) as ws,
    ):
        home, listed, sock = SSE(r1), SSE(r2), WS(ws)
        await srv.wait_subscribers(3)

        async def private_then_marker(text: str) -> tuple[str, str]:
            """A private post of lou's, then a marker every stream gets
            after it (fol's own post for home, other's for the list)."""
            secret = await call(lou.status_post, text, visibility="private")
            mine = await call(fol.status_post, "marker " + text)
            theirs = await call(other.status_post, "list marker " + text)
            await wait_for(
                lambda: (
                    str(mine["id"]) in home.ids()
                    and str(mine["id"]) in sock.ids("user")
                    and str(theirs["id"]) in listed.ids()
                ),
                f"markers after {text}",
            )
            return str(secret["id"]), str(theirs["id"])

        def shown(sid: str) -> list[bool]:
            return [sid in home.ids(), sid in sock.ids("user"), sid in listed.ids()]

        async def members() -> list[str]:
            return sorted(str(a["id"]) for a in await call(fol.list_accounts, lst["id"]))

        sid, _ = await private_then_marker("while following")
        assert shown(sid) == [True, True, True]

        await call(lou.account_remove_from_followers, fol_id)
        assert await members() == [str(other_id)]
        sid, _ = await private_then_marker("after removal")
        assert shown(sid) == [False, False, False]

        await call(fol.account_follow, lou_id)  # the reverse: at once too
        sid, _ = await private_then_marker("right after a new follow")
        assert shown(sid) == [True, True, False]  # not back in the list
        await call(fol.list_accounts_add, lst["id"], [lou_id])
        sid, _ = await private_then_marker("listed again")
        assert shown(sid) == [True, True, True]

        await call(fol.account_unfollow, lou_id)
        assert await members() == [str(other_id)]
        sid, _ = await private_then_marker("after unfollow")
        assert shown(sid) == [False, False, False]

        await call(fol.account_follow, lou_id)
        await call(fol.list_accounts_add, lst["id"], [lou_id])
        sid, _ = await private_then_marker("followed and listed once more")
        assert shown(sid) == [True, True, True]

        await call(lou.account_block, fol_id)
        assert await members() == [str(other_id)]
        secret = await call(lou.status_post, "after the block", visibility="private")
        public = await call(lou.status_post, "after the block, public")
        mine = await call(fol.status_post, "marker after the block")
        await wait_for(
            lambda: str(mine["id"]) in home.ids() and str(mine["id"]) in sock.ids("user"),
            "marker after the block",
        )
        for sid in (str(secret["id"]), str(public["id"])):
            assert shown(sid)[:2] == [False, False]
        # nor on the list stream
        late = await call(other.status_post, "list marker")
        await wait_for(lambda: str(late["id"]) in listed.ids(), "list marker")
        assert str(secret["id"]) not in listed.ids() and str(public["id"]) not in listed.ids()
        for stream in (home, listed):
            stream.close()
    await srv.wait_subscribers(0)


async def test_blocks_and_mutes_reach_open_public_streams_at_once(srv, rp):
    lou, fol, third = await call(accounts, srv.base, 3)
    lou_id, third_id = await me(lou), await me(third)
    async with (
        httpx.AsyncClient(base_url=srv.base, timeout=None) as http,
        sse(http, "/api/v1/streaming/public", fol.access_token) as r1,
        sse(http, "/api/v1/streaming/hashtag?tag=leak", fol.access_token) as r2,
        connect(ws_url(srv.base, fol.access_token, stream="public")) as ws,
    ):
        public, tagged, sock = SSE(r1), SSE(r2), WS(ws)
        await srv.wait_subscribers(3)
        before = await call(lou.status_post, "seen #leak")
        await wait_for(
            lambda: (
                str(before["id"]) in public.ids()
                and str(before["id"]) in tagged.ids()
                and str(before["id"]) in sock.ids("public")
            ),
            "lou's post",
        )

        async def hidden_after(change, author: Mastodon) -> None:
            await call(*change)
            post = await call(author.status_post, "hidden now #leak")
            end = await call(fol.status_post, "marker #leak")
            await wait_for(
                lambda: all(
                    str(end["id"]) in ids
                    for ids in (public.ids(), tagged.ids(), sock.ids("public"))
                ),
                "marker",
            )
            assert [
                str(post["id"]) in ids for ids in (public.ids(), tagged.ids(), sock.ids("public"))
            ] == [False, False, False]

        await hidden_after((lou.account_block, await me(fol)), lou)  # blocked by lou
        await hidden_after((fol.account_mute, third_id), third)  # muting third
        await call(fol.account_unmute, third_id)  # not hidden: at once too (no leak either way)
        back = await call(third.status_post, "unmuted #leak")
        await wait_for(
            lambda: str(back["id"]) in public.ids() and str(back["id"]) in sock.ids("public"),
            "unmuted post",
        )
        assert (
            lou_id
            not in [json.loads(d)["account"]["id"] for e, _, d in public.events if e == "update"][
                1:
            ]
        )
        public.close()
        tagged.close()
    await srv.wait_subscribers(0)


async def test_streams_enforce_token_scopes(srv, rp):
    you, pal = await call(accounts, srv.base, 2)
    you_acct = await call(you.me)
    email = f"{you_acct['username']}@example.com"
    pal_id = (await call(pal.me))["id"]
    await call(you.account_follow, pal_id)
    lst = await call(you.list_create, "pals")
    await call(you.list_accounts_add, lst["id"], [pal_id])
    writer = await call(scoped, srv.base, email, ["write:statuses"])
    reader = await call(scoped, srv.base, email, ["read:accounts"])
    statuses = await call(scoped, srv.base, email, ["read:statuses"])
    # REST: 403 for both
    async with httpx.AsyncClient(base_url=srv.base, timeout=WAIT) as http:
        for api in (writer, reader):
            r = await http.get(
                "/api/v1/timelines/home", headers={"Authorization": f"Bearer {api.access_token}"}
            )
            assert r.status_code == 403
            for path in (
                "/api/v1/streaming/user",
                f"/api/v1/streaming/list?list={lst['id']}",
                "/api/v1/streaming/direct",
            ):
                async with sse(http, path, api.access_token) as r:
                    assert r.status_code == 401, path
                    assert "scope" in (await r.aread()).decode()
            # public streams need no scope (Mastodon: PUBLIC_CHANNELS)
            async with sse(http, "/api/v1/streaming/public", api.access_token) as r:
                assert r.status_code == 200
    for api in (writer, reader):
        async with connect(ws_url(srv.base, api.access_token, stream="user")) as ws:
            sock = WS(ws)
            for stream in (
                {"stream": "direct"},
                {"stream": "list", "list": str(lst["id"])},
                {"stream": "public"},
            ):
                await ws.send(json.dumps({"type": "subscribe", **stream}))
            dm = await call(pal.status_post, f"@{you_acct['username']} psst", visibility="direct")
            home = await call(pal.status_post, "for the home")
            await wait_for(lambda: str(home["id"]) in sock.ids("public"), "public marker")
            assert sorted(e["status"] for e in sock.errors()) == [401, 401, 401]
            assert [m for m in sock.messages if "event" in m and m["stream"][0] != "public"] == []
            assert dm["id"] not in [
                json.loads(m["payload"]).get("id")
                for m in sock.messages
                if m.get("event") == "update"
            ]
    await srv.wait_subscribers(0)
    # read:statuses: the home timeline but not the notifications (Mastodon:
    # a user stream carries notifications only with read or read:notifications)
    async with (
        httpx.AsyncClient(base_url=srv.base, timeout=None) as http,
        sse(http, "/api/v1/streaming/user", statuses.access_token) as r,
        connect(ws_url(srv.base, statuses.access_token, stream="user")) as ws,
    ):
        assert r.status_code == 200
        home, sock = SSE(r), WS(ws)
        await srv.wait_subscribers(2)
        mention = await call(pal.status_post, f"hi @{you_acct['username']}")
        await rp.drain()
        await wait_for(
            lambda: str(mention["id"]) in home.ids() and str(mention["id"]) in sock.ids("user"),
            "pal's post at home",
        )
        await call(pal.status_favourite, (await call(you.status_post, "like me"))["id"])
        await rp.drain()
        end = await call(pal.status_post, "the end")
        await wait_for(
            lambda: str(end["id"]) in home.ids() and str(end["id"]) in sock.ids("user"), "marker"
        )
        assert [e for e, _, _ in home.events if e == "notification"] == []
        assert [m for m in sock.messages if m.get("event") == "notification"] == []
        home.close()
    await srv.wait_subscribers(0)


# --- replays -------------------------------------------------------------------------------------
async def test_replays_leave_out_deleted_statuses_and_suspended_authors(srv, rp):
    # carol gets an id no other test of this module gives out (each starts
    # from an empty database): the server remembers a suspended user's
    # streams as ended for a while (Hub.hold)
    alice, *_, carol = await call(accounts, srv.base, 6)
    carol_login, carol_id = (await call(carol.me))["username"], (await call(carol.me))["id"]
    alice_id = (await call(alice.me))["id"]
    async with httpx.AsyncClient(base_url=srv.base, timeout=httpx.Timeout(WAIT, read=None)) as http:
        async with sse(http, "/api/v1/streaming/public", alice.access_token) as r:
            live = SSE(r)
            await srv.wait_subscribers(1)
            start = await call(alice.status_post, "before")
            await wait_for(lambda: str(start["id"]) in live.ids(), "start marker")
            after = next(i for e, i, d in live.events if e == "update")
            live.close()
        kept = await call(alice.status_post, "kept")
        gone = await call(alice.status_post, "deleted later")
        theirs = await call(carol.status_post, "by an account suspended later")
        await call(alice.status_delete, gone["id"])
        await moderation.suspend(rp.store, carol_login)
        end = await call(alice.status_post, "the end")

        # SSE Last-Event-ID
        async with sse(
            http, "/api/v1/streaming/public", alice.access_token, **{"Last-Event-ID": after}
        ) as r:
            again = SSE(r)
            await wait_for(lambda: str(end["id"]) in again.ids(), "replayed end")
            again.close()
        assert again.ids() == [str(kept["id"]), str(end["id"])]
        assert again.ids("delete") == [str(gone["id"])]
        # v1.1 count backfill (sample and filter)
        for endpoint, params in (
            ("sample", {"percent": "100"}),
            ("filter", {"follow": f"{alice_id},{carol_id}"}),
        ):
            async with http.stream(
                "GET",
                f"/1.1/statuses/{endpoint}.json",
                params={"identifier": "replay-" + uuid.uuid4().hex, "count": "-50", **params},
            ) as r:
                body = (await r.aread()).decode()
            lines = [json.loads(x) for x in body.split("\r\n") if x.strip()]
            got = [m["id"] for m in lines if "id" in m]
            assert int(gone["id"]) not in got and int(theirs["id"]) not in got, endpoint
            assert int(kept["id"]) in got and int(end["id"]) in got, endpoint
    await srv.wait_subscribers(0)


# --- boosts on public streams ---------------------------------------------------------------------
async def test_no_boosts_on_public_streams(srv, rp):
    ann, bob, fan = await call(accounts, srv.base, 3)
    bob_id = (await call(bob.me))["id"]
    quiet = await call(ann.status_post, "unlisted #boosted", visibility="unlisted")
    loud = await call(ann.status_post, "public #boosted")
    async with (
        httpx.AsyncClient(base_url=srv.base, timeout=None) as http,
        sse(http, "/api/v1/streaming/public", fan.access_token) as r1,
        sse(http, "/api/v1/streaming/public/local", fan.access_token) as r2,
        sse(http, "/api/v1/streaming/hashtag?tag=boosted", fan.access_token) as r3,
        http.stream(
            "GET", "/1.1/statuses/sample.json", params={"identifier": "boosts", "percent": "100"}
        ) as v1,
        http.stream(
            "GET",
            "/1.1/statuses/filter.json",
            params={"identifier": "boosts", "follow": str(bob_id), "track": "boosted"},
        ) as v2,
        connect(ws_url(srv.base, fan.access_token, stream="public")) as ws,
    ):
        streams = [SSE(r1), SSE(r2), SSE(r3)]
        sock = WS(ws)
        for s in ("public:local", "hashtag"):
            await ws.send(json.dumps({"type": "subscribe", "stream": s, "tag": "boosted"}))
        v1_lines: dict[str, list] = {"sample": [], "filter": []}

        async def read_v1(name, resp):
            buf = ""
            try:
                async for chunk in resp.aiter_text():
                    buf += chunk
                    while "\r\n" in buf:
                        line, buf = buf.split("\r\n", 1)
                        if line.strip():
                            v1_lines[name].append(json.loads(line))
            except httpx.HTTPError:  # the test closed it
                pass

        readers = [
            asyncio.create_task(read_v1("sample", v1)),
            asyncio.create_task(read_v1("filter", v2)),
        ]
        await srv.wait_subscribers(8)
        b_quiet = await call(bob.status_reblog, quiet["id"])
        b_loud = await call(bob.status_reblog, loud["id"])
        end = await call(bob.status_post, "end #boosted")

        def v1_ids(name):
            return [str(m["id"]) for m in v1_lines[name] if "id" in m]

        await wait_for(
            lambda: (
                all(str(end["id"]) in s.ids() for s in streams)
                and all(str(end["id"]) in v1_ids(n) for n in v1_lines)
                and all(
                    str(end["id"]) in sock.ids(n) for n in ("public", "public:local", "hashtag")
                )
            ),
            "end marker",
        )
        for boost in (b_quiet, b_loud):  # Mastodon: no boosts on public streams
            for s in streams:
                assert str(boost["id"]) not in s.ids()
            for n in ("public", "public:local", "hashtag"):
                assert str(boost["id"]) not in sock.ids(n)
        # v1.1 (Twitter's retweets): a boost of an unlisted status never
        for name in v1_lines:
            assert str(b_quiet["id"]) not in v1_ids(name), name
            assert quiet["id"] not in [
                m.get("retweeted_status", {}).get("id") for m in v1_lines[name]
            ], name
        for task in readers:
            task.cancel()
        for s in streams:
            s.close()
    await srv.wait_subscribers(0)


# --- blocks on v1.1 streams ----------------------------------------------------------------------
async def test_blocks_apply_on_v1_streams_of_the_blocked_user(srv, rp):
    lou, bob, third = await call(accounts, srv.base, 3)
    lou_id, bob_id = (await call(lou.me))["id"], (await call(bob.me))["id"]
    third_id = (await call(third.me))["id"]
    await call(lou.account_block, bob_id)  # before the streams open
    async with httpx.AsyncClient(base_url=srv.base, timeout=None) as http:
        got: dict[str, list] = {}

        async def read(name, resp):
            buf = ""
            got[name] = []
            try:
                async for chunk in resp.aiter_text():
                    buf += chunk
                    while "\r\n" in buf:
                        line, buf = buf.split("\r\n", 1)
                        if line.strip():
                            got[name].append(json.loads(line))
            except httpx.HTTPError:  # the test closed it
                pass

        auth = {"Authorization": f"Bearer {bob.access_token}"}
        async with (
            http.stream(
                "GET", "/1.1/statuses/sample.json", headers=auth, params={"percent": "100"}
            ) as s1,
            http.stream(
                "POST",
                "/1.1/statuses/filter.json",
                data={"follow": f"{lou_id},{third_id}", "access_token": bob.access_token},
            ) as s2,
            http.stream(
                "GET",
                "/1.1/statuses/filter.json",
                headers=auth,
                params={"follow": f"{lou_id},{third_id}"},
            ) as s3,
        ):
            assert (s1.status_code, s2.status_code, s3.status_code) == (200, 200, 200)
            tasks = [
                asyncio.create_task(read(n, r))
                for n, r in (("sample", s1), ("filter", s2), ("filter-get", s3))
            ]
            await srv.wait_subscribers(3)
            before = await call(lou.status_post, "bob must not see this")
            await call(third.account_block, bob_id)  # while they are open
            after = await call(third.status_post, "nor this")
            end = await call(lou.status_post, "hmm")  # hidden too; the marker is someone else's
            await call(lou.account_unblock, bob_id)
            marker = await call(lou.status_post, "unblocked: seen")

            def ids(name):
                return [str(m["id"]) for m in got.get(name, []) if "id" in m]

            await wait_for(
                lambda: all(
                    str(marker["id"]) in ids(n) for n in ("sample", "filter", "filter-get")
                ),
                "marker",
            )
            for name in ("sample", "filter", "filter-get"):
                for hidden in (before, after, end):
                    assert str(hidden["id"]) not in ids(name), name
            for task in tasks:
                task.cancel()
    await srv.wait_subscribers(0)


# --- anonymous identifiers ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tight(server, tmp_path_factory):
    url, cluster, _ = server
    proc = StreamProc(
        url,
        cluster,
        tmp_path_factory.mktemp("tight"),
        **(
            LOOSE
            | {
                "REDPOLL_STREAM_CONNECTIONS_PER_IDENTIFIER": "2",
                "REDPOLL_STREAM_REPLAYS_PER_IDENTIFIER": "2/60",
                "REDPOLL_STREAM_REPLAYS_PER_IP": "1000/60",
            }
        ),
    ).start()
    yield proc
    proc.stop()


async def test_anonymous_identifiers_do_not_share_a_users_budget(tight, rp):
    (you,) = await call(accounts, tight.base, 1)
    uid = (await call(you.me))["id"]
    sample = "/1.1/statuses/sample.json"
    async with httpx.AsyncClient(
        base_url=tight.base, timeout=httpx.Timeout(WAIT, read=None)
    ) as http:
        # the replay budget: two anonymous replays named after the user...
        for _ in range(2):
            async with http.stream(
                "GET", sample, params={"identifier": f"user:{uid}", "count": "-1"}
            ) as r:
                assert r.status_code == 200
                await r.aread()
        # ...leave the user's own replays alone
        async with http.stream(
            "GET", sample, params={"access_token": you.access_token, "count": "-1"}
        ) as r:
            assert r.status_code == 200
            await r.aread()
        # the connection slots: two anonymous streams named after the user...
        async with (
            http.stream("GET", sample, params={"identifier": f"user:{uid}"}) as a1,
            http.stream("GET", sample, params={"identifier": f"user:{uid}"}) as a2,
        ):
            assert (a1.status_code, a2.status_code) == (200, 200)
            # ...and the user still has both of theirs
            async with (
                http.stream("GET", sample, params={"access_token": you.access_token}) as u1,
                sse(http, "/api/v1/streaming/public", you.access_token) as u2,
            ):
                assert (u1.status_code, u2.status_code) == (200, 200)
                async with http.stream(
                    "GET", sample, params={"access_token": you.access_token}
                ) as u3:
                    assert u3.status_code == 420  # the user's own limit still holds
