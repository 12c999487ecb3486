"""Mastodon's narrowed public streams and the notification stream, through
real clients (Mastodon.py's SSE streams, raw WebSockets) against a real
``redpoll serve``, on both topologies: ``public:local`` and
``hashtag:local`` carry this server's statuses only, ``public:remote``
other servers' only, the ``:media`` streams only statuses with attachments
(the REST public timeline's ``local``/``remote``/``only_media`` rules);
``user:notification`` only notification events. None of them carries an
unlisted, private or direct status, nor anything of an account the listener
blocks or mutes. Statuses of another server come in through the inbox, in
process, as a peer's Create would."""

from __future__ import annotations

import io
import json
import time
import uuid

import httpx
import pytest
from PIL import Image
from support.federation import fed  # noqa: F401
from support.leaks import WS, call, me, scoped, sse, ws_url  # noqa: F401
from support.mastodon import LOOSE, Listener, NoteListener, accounts, wait_for  # noqa: F401
from support.streams import WAIT, StreamProc  # noqa: F401
from websockets.asyncio.client import connect

from redpoll.federation import documents, inbox, remote, signing
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import InboxJob

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]

PAIR = signing.KeyPair.generate()
#: the public streams a WebSocket subscribes to, by name
PUBLIC = (
    "public",
    "public:media",
    "public:local",
    "public:local:media",
    "public:remote",
    "public:remote:media",
)


@pytest.fixture(scope="module")
def media_srv(server, tmp_path_factory):
    """``redpoll serve`` keeping uploads (local statuses with media)."""
    url, cluster, _ = server
    proc = StreamProc(
        url,
        cluster,
        tmp_path_factory.mktemp("oserve"),
        REDPOLL_MEDIA_DIR=str(tmp_path_factory.mktemp("omedia")),
        **LOOSE,
    ).start()
    yield proc
    proc.stop()


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (10, 120, 240)).save(out, "PNG")
    return out.getvalue()


class Peer:
    """An account of another server and the notes it sends here."""

    def __init__(self, fed, host: str):
        self.fed, self.host = fed, host
        self.name = "r" + uuid.uuid4().hex[:6]
        self.uri = f"https://{host}/users/{self.name}"

    async def keep(self) -> Peer:
        self.account = await remote.keep(
            self.fed.store,
            remote.parse_actor(
                {
                    "id": self.uri,
                    "type": "Person",
                    "preferredUsername": self.name,
                    "inbox": f"{self.uri}/inbox",
                    "publicKey": {"id": f"{self.uri}#main-key", "publicKeyPem": PAIR.public_pem},
                }
            ),
        )
        return self

    async def note(self, text: str, *, media: bool = False, to: str = "public") -> str:
        """The id (as the API gives it) of the status a Create of a note made."""
        note_id = f"{self.uri}/statuses/{time.time_ns()}"
        audience = {
            "public": ([documents.PUBLIC], []),
            "unlisted": ([f"{self.uri}/followers"], [documents.PUBLIC]),
            "private": ([f"{self.uri}/followers"], []),
        }[to]
        obj = {
            "id": note_id,
            "type": "Note",
            "attributedTo": self.uri,
            "content": f"<p>{text}</p>",
            "to": audience[0],
            "cc": audience[1],
        }
        if media:
            obj["attachment"] = [
                {
                    "type": "Document",
                    "mediaType": "image/png",
                    "url": f"https://{self.host}/media/{time.time_ns()}.png",
                }
            ]
        create = {"id": f"{note_id}/activity", "type": "Create", "actor": self.uri, "object": obj}
        await inbox.process(
            self.fed.store,
            self.fed.queue,
            self.fed.settings,
            InboxJob(uid=self.account.id, activity=json.dumps(create)),
        )
        sid = await self.fed.store.get(fed_keys.note(note_id))
        assert sid, "the note was kept"
        return str(int(sid))


async def post(api, text: str, *, media: bool = False, visibility: str = "public") -> str:
    ids = (
        [(await call(api.media_post, png(), "image/png", synchronous=True))["id"]]
        if media
        else None
    )
    return str((await call(api.status_post, text, media_ids=ids, visibility=visibility))["id"])


def updates(listener: Listener) -> set[str]:
    return {str(s["id"]) for s in listener.updates}


async def test_local_streams_carry_only_this_servers_statuses(media_srv, rp, fed):
    """The local streams used to be the public ones: a status of another
    server reached a ``public:local`` listener."""
    (fan,) = await call(accounts, media_srv.base, 1)
    peer = await Peer(fed, "loud.example").keep()
    tag = "here" + uuid.uuid4().hex[:6]
    local_sse = Listener()
    handle = await call(fan.stream_public, local_sse, run_async=True, local=True)
    try:
        async with connect(ws_url(media_srv.base, fan.access_token)) as ws:
            sock = WS(ws)
            await ws.send(json.dumps({"type": "subscribe", "stream": "public:local"}))
            await ws.send(json.dumps({"type": "subscribe", "stream": "hashtag:local", "tag": tag}))
            await ws.send(json.dumps({"type": "subscribe", "stream": "hashtag", "tag": tag}))
            await media_srv.wait_subscribers(4)
            theirs = await peer.note(f"from afar #{tag}")
            mine = await post(fan, f"from here #{tag}")
            await wait_for(
                lambda: (
                    mine in updates(local_sse)
                    and mine in sock.ids("public:local")
                    and mine in sock.ids("hashtag:local")
                    and mine in sock.ids("hashtag")
                ),
                "the local status",
            )
            assert updates(local_sse) == {mine}
            assert sock.ids("public:local") == [mine]
            assert sock.ids("hashtag:local") == [mine]
            assert sock.ids("hashtag") == [theirs, mine]  # the tag stream has both
    finally:
        handle.close()
    await media_srv.wait_subscribers(0)


async def test_origin_and_media_streams_carry_what_they_name_and_nothing_hidden(media_srv, rp, fed):
    alice, fan, hid, third = await call(accounts, media_srv.base, 4)
    fan_name, hid_name = (await call(fan.me))["username"], (await call(hid.me))["username"]
    loud = await Peer(fed, "loud.example").keep()
    other = await Peer(fed, "other.example").keep()  # the remote end marker's author
    await call(hid.account_block, loud.account.id)
    await call(hid.account_mute, await me(alice))
    await call(fan.account_follow, loud.account.id)  # a follower sees its private notes
    await call(fan.account_follow, await me(alice))
    tag = "m" + uuid.uuid4().hex[:6]

    # Mastodon.py's SSE: stream_public(local=, remote=, only_media=) picks
    # /public, /public/local, /public/remote, ?only_media=true
    sse_args = {
        "public": {},
        "public:media": {"only_media": True},
        "public:local": {"local": True},
        "public:local:media": {"local": True, "only_media": True},
        "public:remote": {"remote": True},
        "public:remote:media": {"remote": True, "only_media": True},
    }
    listeners = {name: Listener() for name in sse_args}
    notes = {"fan": NoteListener(), "hid": NoteListener()}
    handles = [
        await call(fan.stream_public, listeners[n], run_async=True, **a)
        for n, a in sse_args.items()
    ]
    handles += [
        await call(fan.stream_user_notifications, notes["fan"], run_async=True),
        await call(hid.stream_user_notifications, notes["hid"], run_async=True),
    ]
    try:
        async with (
            connect(ws_url(media_srv.base, fan.access_token)) as ws1,
            connect(ws_url(media_srv.base, hid.access_token)) as ws2,
        ):
            socks = {"fan": WS(ws1), "hid": WS(ws2)}
            for ws in (ws1, ws2):
                for name in PUBLIC:
                    await ws.send(json.dumps({"type": "subscribe", "stream": name}))
                await ws.send(
                    json.dumps({"type": "subscribe", "stream": "hashtag:local", "tag": tag})
                )
                await ws.send(json.dumps({"type": "subscribe", "stream": "user:notification"}))
            await media_srv.wait_subscribers(len(handles) + 2 * (len(PUBLIC) + 2))
            # never on any of them: not public (with media, and mentioning
            # both, so that the direct one is a notification)
            hidden = {
                await post(alice, f"unlisted #{tag}", media=True, visibility="unlisted"),
                await post(alice, f"private #{tag}", media=True, visibility="private"),
                await post(
                    alice, f"@{fan_name} @{hid_name} direct #{tag}", media=True, visibility="direct"
                ),
                await loud.note(f"unlisted #{tag}", media=True, to="unlisted"),
                await loud.note(f"private #{tag}", media=True, to="private"),
            }
            s = {
                "L": await post(alice, f"local #{tag}"),
                "R": await loud.note(f"remote #{tag}"),
                "LM": await post(alice, f"local with media #{tag}", media=True),
                "RM": await loud.note(f"remote with media #{tag}", media=True),
            }
            s["G"] = gone = await post(alice, f"local with media, deleted #{tag}", media=True)
            await call(alice.status_delete, gone)
            # the end markers, seen by everyone: after them nothing else comes
            s["ZL"] = await post(third, f"@{fan_name} @{hid_name} the end here #{tag}", media=True)
            s["ZR"] = await other.note(f"the end there #{tag}", media=True)
            await rp.drain()  # the mention notifications
            expect = {
                "public": {"L", "R", "LM", "RM", "G", "ZL", "ZR"},
                "public:media": {"LM", "RM", "G", "ZL", "ZR"},
                "public:local": {"L", "LM", "G", "ZL"},
                "public:local:media": {"LM", "G", "ZL"},
                "public:remote": {"R", "RM", "ZR"},
                "public:remote:media": {"RM", "ZR"},
            }
            local = {"public", "public:media", "public:local", "public:local:media"}

            def marker(name):  # the last status the stream carries
                return (
                    s["ZR"] if "remote" in name or name in ("public", "public:media") else s["ZL"]
                )

            for name in expect:
                await wait_for(
                    lambda: (
                        marker(name) in updates(listeners[name])
                        and marker(name) in socks["fan"].ids(name)
                        and marker(name) in socks["hid"].ids(name)
                    ),
                    f"{name} marker",
                )
            await wait_for(lambda: s["ZL"] in socks["fan"].ids("hashtag:local"), "tag marker")
            for name, want in expect.items():
                want_ids = {s[k] for k in want}
                # (a local stream's marker comes before ZR, which may still be
                # on its way: RM, before the marker, is what it must not carry)
                late = {s["ZR"]} - want_ids
                assert updates(listeners[name]) - late == want_ids, (name, "SSE")
                assert set(socks["fan"].ids(name)) - late == want_ids, (name, "WebSocket")
                # hid blocks loud and mutes alice: only the markers' authors
                assert set(socks["hid"].ids(name)) - late == want_ids & {s["ZL"], s["ZR"]}, (
                    name,
                    "blocked and muted",
                )
                # the deletion goes where the status went, and nowhere else
                deleted = {str(i) for i in listeners[name].deletes}
                assert deleted == ({gone} if name in local else set()), (name, "delete")
                assert {
                    m["payload"]
                    for m in socks["fan"].messages
                    if m.get("event") == "delete" and m["stream"] == [name]
                } == deleted, (name, "WS delete")
                assert not (updates(listeners[name]) | set(socks["fan"].ids(name))) & hidden
            assert set(socks["fan"].ids("hashtag:local")) == {s["L"], s["LM"], gone, s["ZL"]}
            # the frames name their stream as Mastodon's do
            labels = {tuple(m["stream"]) for m in socks["fan"].messages if "event" in m}
            assert labels == {(n,) for n in PUBLIC} | {
                ("hashtag:local", tag),
                ("user:notification",),
            }
            # user:notification: the notifications, no status events; a
            # blocked account's mention never
            await wait_for(
                lambda: (
                    len(notes["hid"].notifications) == 1 and len(notes["fan"].notifications) == 2
                ),
                "mentions",
            )
            for who in ("fan", "hid"):
                assert notes[who].updates == [] and notes[who].deletes == []
                assert {
                    m["event"]
                    for m in socks[who].messages
                    if m.get("stream") == ["user:notification"]
                } == {"notification"}
            assert [n["type"] for n in notes["fan"].notifications] == ["mention", "mention"]
            assert [n["account"]["id"] for n in notes["hid"].notifications] == [await me(third)]
    finally:
        for h in handles:
            h.close()
    await media_srv.wait_subscribers(0)


async def test_notification_stream_scopes_and_public_streams_need_none(media_srv, rp):
    """As Mastodon: ``user:notification`` needs ``read`` or
    ``read:notifications`` (``read:statuses`` is not enough); the public
    streams need no scope."""
    you, pal = await call(accounts, media_srv.base, 2)
    email = f"{(await call(you.me))['username']}@example.com"
    notes = await call(scoped, media_srv.base, email, ["read:notifications"])
    statuses = await call(scoped, media_srv.base, email, ["read:statuses"])
    writer = await call(scoped, media_srv.base, email, ["write:statuses"])
    async with httpx.AsyncClient(base_url=media_srv.base, timeout=WAIT) as http:
        for api, path, status in (
            (notes, "/api/v1/streaming/user/notification", 200),
            (statuses, "/api/v1/streaming/user/notification", 401),
            (notes, "/api/v1/streaming/user", 401),
            *(
                (writer, f"/api/v1/streaming/public{p}{q}", 200)
                for p in ("", "/local", "/remote")
                for q in ("", "?only_media=true")
            ),
        ):
            async with sse(http, path, api.access_token) as r:
                assert r.status_code == status, (path, api is notes)
    async with connect(ws_url(media_srv.base, statuses.access_token)) as ws:
        sock = WS(ws)
        await ws.send(json.dumps({"type": "subscribe", "stream": "user:notification"}))
        await wait_for(lambda: sock.errors(), "the refusal")
        assert sock.errors() == [
            {
                "error": "Access token does not have the required scopes",
                "status": 401,
                "stream": ["user:notification"],
            }
        ]
    await media_srv.wait_subscribers(0)


async def test_a_blocked_domain_leaves_the_open_streams_at_once(media_srv, rp, fed):
    """A member's domain block reaches their open streams when it is made
    (and lifted), without a reconnection: the domain's statuses stop on the
    public stream and the home (user) stream, others' go on."""
    (fan,) = await call(accounts, media_srv.base, 1)
    bad = await Peer(fed, "bad.example").keep()
    good = await Peer(fed, "good.example").keep()
    for peer in (bad, good):
        await call(fan.account_follow, peer.account.id)
    async with connect(ws_url(media_srv.base, fan.access_token)) as ws:
        sock = WS(ws)
        for name in ("public", "user"):
            await ws.send(json.dumps({"type": "subscribe", "stream": name}))
        await media_srv.wait_subscribers(2)
        before = await bad.note("before the block")
        await wait_for(
            lambda: before in sock.ids("public") and before in sock.ids("user"),
            "the domain's status before the block",
        )
        await call(fan.domain_block, "bad.example")
        during = await bad.note("during the block")
        marker = await good.note("another server's")
        await wait_for(
            lambda: marker in sock.ids("public") and marker in sock.ids("user"),
            "the other server's status",
        )
        assert during not in sock.ids("public") and during not in sock.ids("user")
        await call(fan.domain_unblock, "bad.example")
        after = await bad.note("after the block")
        await wait_for(lambda: after in sock.ids("public"), "the domain's status after it")
    await media_srv.wait_subscribers(0)
