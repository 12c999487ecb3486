"""Remote followers listed with the local ones: through Mastodon.py against
a real ``redpoll serve`` on the test's database (both topologies), remote
accounts following by the inbox as a peer's Follow and Undo would: the
followers' list shows them among the local followers by follow time, pages
across a local and a remote follow without repeating or skipping one, drops
one that unfollowed, agrees with followers_count and the ActivityPub
collection's total, and places a remote follow recorded in ms (before
follows were in µs) by its time."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.federation import HERE, fed  # noqa: F401
from support.mastodon import LOOSE, accounts  # noqa: F401
from support.streams import StreamProc  # noqa: F401

from redpoll.federation import documents, followers, inbox, remote, signing
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import InboxJob

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]

PAIR = signing.KeyPair.generate()


def actor(host: str, name: str) -> dict:
    uri = f"https://{host}/users/{name}"
    return {
        "id": uri,
        "type": "Person",
        "preferredUsername": name,
        "inbox": f"{uri}/inbox",
        "publicKey": {"id": f"{uri}#main-key", "publicKeyPem": PAIR.public_pem},
    }


@pytest.fixture(scope="module")
def fedsrv(server, tmp_path_factory):
    url, cluster, _ = server
    proc = StreamProc(
        url,
        cluster,
        tmp_path_factory.mktemp("serve"),
        REDPOLL_PUBLIC_URL=HERE,
        REDPOLL_FEDERATION_LOOPBACK="1",
        **LOOSE,
    ).start()
    yield proc
    proc.stop()


async def send(fed, who, activity: dict) -> None:
    await inbox.process(
        fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(activity))
    )


def follow(who, login: str, n: int) -> dict:
    return {
        "id": f"{who.uri}/follows/{n}",
        "type": "Follow",
        "actor": who.uri,
        "object": documents.actor_id(HERE, login),
    }


def ids(page) -> list[int]:
    return [int(a["id"]) for a in page]


async def test_remote_followers_are_listed_among_the_local_ones_by_follow_time(fedsrv, fed):
    me, early, late = await asyncio.to_thread(accounts, fedsrv.base, 3)
    me_id, login = int(me.me()["id"]), me.me()["username"]
    far = await remote.keep(fed.store, remote.parse_actor(actor("far.example", "fan")))
    other = await remote.keep(fed.store, remote.parse_actor(actor("far.example", "other")))
    early.account_follow(me_id)
    await send(fed, far, follow(far, login, 1))
    late.account_follow(me_id)
    await send(fed, other, follow(other, login, 2))
    order = [other.id, int(late.me()["id"]), far.id, int(early.me()["id"])]
    assert ids(me.account_followers(me_id)) == order
    # paged one by one across local and remote follows: each once, in order
    seen, page = [], me.account_followers(me_id, limit=1)
    while page:
        seen += ids(page)
        page = me.fetch_next(page)
    assert seen == order
    assert me.account(me_id)["followers_count"] == 4
    assert (await fed.federation.collection_document(login, "followers"))["totalItems"] == 4
    # an Undo from elsewhere is seen: the follower is no longer listed
    undo = {
        "id": f"{far.uri}/follows/1/undo",
        "type": "Undo",
        "actor": far.uri,
        "object": follow(far, login, 1),
    }
    await send(fed, far, undo)
    assert ids(me.account_followers(me_id)) == [
        other.id,
        int(late.me()["id"]),
        int(early.me()["id"]),
    ]
    assert me.account(me_id)["followers_count"] == 3


async def test_a_remote_follow_recorded_in_ms_is_placed_by_its_time(fedsrv, fed):
    me, local = await asyncio.to_thread(accounts, fedsrv.base, 2)
    me_id = int(me.me()["id"])
    old = await remote.keep(fed.store, remote.parse_actor(actor("old.example", "fan")))
    local.account_follow(me_id)
    followed_at = await fed.store.zscore(f"fers:{{{me_id}}}", int(local.me()["id"]))
    # a follow an older release recorded, in ms, a second before the local one
    await fed.store.zadd(fed_keys.remote_followers(me_id), {old.id: followed_at // 1000 - 1000})
    assert ids(me.account_followers(me_id)) == [int(local.me()["id"]), old.id]
    first = me.account_followers(me_id, limit=1)
    assert ids(first) == [int(local.me()["id"])]
    assert ids(me.fetch_next(first)) == [old.id]
    newer = await remote.keep(fed.store, remote.parse_actor(actor("old.example", "newer")))
    await followers.fed_follow(fed.store, me_id, newer.id, "https://old.example/inbox", True)
    assert ids(me.account_followers(me_id)) == [newer.id, int(local.me()["id"]), old.id]


async def test_familiar_followers_count_remote_followers_of_local_accounts(fedsrv, fed):
    """GET /api/v1/accounts/familiar_followers (Mastodon.py's
    account_familiar_followers): a remote account the viewer follows that
    follows a local account is among that account's familiar followers,
    with a local one, newest follow of the viewer's first; one the viewer
    does not follow is not, and an Undo from elsewhere takes it out."""
    viewer, target, friend = await asyncio.to_thread(accounts, fedsrv.base, 3)
    target_id, login = int(target.me()["id"]), target.me()["username"]
    friend_id = int(friend.me()["id"])
    fan = await remote.keep(fed.store, remote.parse_actor(actor("fans.example", "fan")))
    stranger = await remote.keep(fed.store, remote.parse_actor(actor("fans.example", "stranger")))
    friend.account_follow(target_id)
    await send(fed, fan, follow(fan, login, 1))
    await send(fed, stranger, follow(stranger, login, 2))
    viewer.account_follow(friend_id)
    viewer.account_follow(fan.id)  # (an unlocked remote account: a follow at once)
    assert viewer.account_relationships(fan.id)[0]["following"] is True

    def familiar() -> list[int]:
        (answer,) = viewer.account_familiar_followers(target_id)
        assert int(answer["id"]) == target_id
        return ids(answer["accounts"])

    assert await asyncio.to_thread(familiar) == [fan.id, friend_id]
    undo = {
        "id": f"{fan.uri}/follows/1/undo",
        "type": "Undo",
        "actor": fan.uri,
        "object": follow(fan, login, 1),
    }
    await send(fed, fan, undo)
    assert await asyncio.to_thread(familiar) == [friend_id]
