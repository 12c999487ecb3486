"""A Move moves the old account's local followers, blocks and mutes to the
new account: through a real ``redpoll serve`` and Mastodon.py, with the
test playing the server of both actors (signed Move in, signed Follow and
Undo out); the Moves that are refused move nothing; and the Move's job,
cut short at every await, is finished by its re-run."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from support.cutshort import drive  # noqa: F401
from support.federation import Instance, Peer, eventually  # noqa: F401

from redpoll import Redpoll
from redpoll.bus import queue as jobs
from redpoll.core import keys
from redpoll.federation import inbox, moves, remote, signing
from redpoll.federation.jobs import InboxJob, MoveJob

pytestmark = pytest.mark.timeout(600)


# --- through a real server ----------------------------------------------------------------------
def test_a_move_moves_the_followers_blocks_mutes_and_lists(tmp_path):
    peer = Peer()
    server = Instance(tmp_path, "moves")
    try:
        with server.proc:
            _moves_through_the_api(server, peer)
    finally:
        peer.close()


def _finger(peer: Peer, name: str) -> None:
    host = peer.base.split("://", 1)[1]
    peer.docs[f"/.well-known/webfinger?resource=acct:{name}@{host}"] = {
        "subject": f"acct:{name}@{host}",
        "links": [
            {
                "rel": "self",
                "type": "application/activity+json",
                "href": f"{peer.base}/users/{name}",
            }
        ],
    }


def _moves_through_the_api(server: Instance, peer: Peer) -> None:
    host = peer.base.split("://", 1)[1]
    old_uri, new_uri, other_uri = peer.actor("old"), peer.actor("new"), peer.actor("other")
    for name in ("old", "new", "other"):
        _finger(peer, name)
    peer.docs["/users/new"]["alsoKnownAs"] = [old_uri]
    peer.docs["/users/other"]["alsoKnownAs"] = [old_uri]
    ada, bob, cat, dan, eve = (server.person(n) for n in ("ada", "bob", "cat", "dan", "eve"))
    old = ada.search_v2(f"old@{host}", resolve=True)["accounts"][0]
    new = ada.search_v2(f"new@{host}", resolve=True)["accounts"][0]
    ada.account_follow(old["id"], reblogs=False, notify=True)
    bob.account_follow(old["id"])
    eve.account_follow(old["id"])
    eve.account_block(new["id"])  # a follower that blocks the new account is left as it was
    cat.account_block(old["id"])
    dan.account_mute(old["id"], notifications=False)
    friends = ada.list_create("friends")
    ada.list_accounts_add(friends["id"], [old["id"]])
    server.settle()
    before = len(peer.deliveries)

    def move(target: str, n: int) -> int:
        return peer.post(
            f"{server.url}/inbox",
            {
                "id": f"{old_uri}#moves/{n}",
                "type": "Move",
                "actor": old_uri,
                "object": old_uri,
                "target": target,
            },
        )

    assert move(new_uri, 1) == 202
    server.settle()

    def rel(who, target):
        return who.account_relationships([target["id"]])[0]

    ada_new, ada_old = rel(ada, new), rel(ada, old)
    assert ada_new["following"] and not ada_old["following"]
    assert ada_new["showing_reblogs"] is False and ada_new["notifying"] is True
    assert rel(bob, new)["following"] and not rel(bob, old)["following"]
    assert rel(bob, new)["showing_reblogs"] is True
    assert not rel(eve, new)["following"] and rel(eve, old)["following"]
    assert rel(cat, new)["blocking"]
    dan_new = rel(dan, new)
    assert dan_new["muting"] and not dan_new["muting_notifications"]
    assert [a["id"] for a in ada.list_accounts(friends["id"])] == [new["id"]]
    # the account shows where it moved (Mastodon.py parses it as an account)
    shown = ada.account(old["id"])
    assert shown.moved is not None and shown.moved.id == new["id"]
    assert shown.moved.acct == f"new@{host}"
    assert ada.account(new["id"]).get("moved") is None
    # as the new account is now (Mastodon renders it live): ada and bob follow it
    assert shown.moved.followers_count == 2 == ada.account(new["id"]).followers_count
    raw = httpx.get(f"{server.url}/api/v1/accounts/{old['id']}").json()
    assert raw["moved"]["id"] == str(new["id"]) and "moved" not in raw["moved"]

    # what the peer was sent, each signed by its local account's key
    def sent_now():
        found = [
            x
            for x in peer.deliveries[before:]
            if x["body"].get("type") in ("Follow", "Undo", "Block")
        ]
        return found if len(found) >= 5 else None

    sent = eventually(sent_now, what="the Follows, Undos and the Block")
    for item in sent:
        _check_signature(server, item)
    kinds = {
        (x["body"]["type"], x["body"]["actor"].rsplit("/", 1)[1], _object(x["body"])) for x in sent
    }
    assert {
        ("Follow", "ada", new_uri),
        ("Follow", "bob", new_uri),
        ("Undo", "ada", old_uri),
        ("Undo", "bob", old_uri),
        ("Block", "cat", new_uri),
    } <= kinds
    assert not any(who == "eve" for _, who, _ in kinds)

    # a second Move of the same account (to another that names it): nothing new
    mark = len(peer.deliveries)
    assert move(other_uri, 2) == 202
    server.settle()
    other = ada.search_v2(f"other@{host}", resolve=True)["accounts"][0]
    assert not rel(ada, other)["following"] and rel(ada, new)["following"]
    assert ada.account(old["id"]).moved.id == new["id"]
    assert not [x for x in peer.deliveries[mark:] if x["body"].get("type") == "Follow"]


def _object(activity: dict) -> str:
    obj = activity.get("object")
    if isinstance(obj, dict):  # an Undo: of the Follow, naming its object
        obj = obj.get("object")
    return obj if isinstance(obj, str) else ""


def _check_signature(server: Instance, item: dict) -> None:
    actor = httpx.get(item["body"]["actor"], headers={"Accept": "application/activity+json"}).json()
    signed = signing.parse(item["headers"]["signature"])
    assert signed.key_id == actor["publicKey"]["id"]
    signing.verify(
        signed,
        actor["publicKey"]["publicKeyPem"],
        "POST",
        item["path"],
        item["headers"],
        item["raw"],
    )


# --- refused Moves, in process --------------------------------------------------------------------
@pytest.fixture
async def fed(settings):
    rp = await Redpoll.open(
        settings.with_(public_url="http://127.0.0.1:1", federation_loopback=True, job_claim_ms=50)
    )
    yield rp
    await rp.close()


async def _queued(rp, kind) -> list:
    found = []
    for stream in keys.all_job_streams():
        for _, fields in await rp.store.xrange(stream):
            job = jobs.decode(fields)
            if isinstance(job, kind):
                found.append(job)
    return found


async def test_refused_moves_move_nothing(fed):
    peer = Peer()
    try:
        host = peer.base.split("://", 1)[1]
        old_uri = peer.actor("old")
        named, stranger, blocked = peer.actor("new"), peer.actor("stranger"), peer.actor("b")
        peer.docs["/users/new"]["alsoKnownAs"] = [old_uri]
        old = await remote.keep(fed.store, remote.parse_actor(peer.docs["/users/old"]))
        other = await remote.keep(fed.store, remote.parse_actor(peer.docs["/users/stranger"]))
        fan = await fed.accounts.sign_up("fan")
        await fed.relations.follow(fan.id, old.id)

        def move(actor, obj, target) -> InboxJob:
            return InboxJob(
                uid=actor.id,
                activity=json.dumps(
                    {
                        "id": f"{actor.uri}#moves/{time.time_ns()}",
                        "type": "Move",
                        "actor": actor.uri,
                        "object": obj,
                        "target": target,
                    }
                ),
            )

        note = f"{peer.base}/notes/1"  # names the old account, but is no actor
        peer.docs["/notes/1"] = {"id": note, "type": "Note", "alsoKnownAs": [old_uri]}
        refused = [
            move(old, old.uri, stranger),  # it does not name the old account
            move(old, old.uri, note),  # not an actor (refused, not retried)
            move(old, old.uri, old.uri),  # to itself
            move(other, old.uri, named),  # not the old account's own Move
            move(old, old.uri, "http://127.0.0.1:1/users/fan"),
        ]  # to one of here
        await fed.federation.domain_block("127.0.0.1")  # the new account's domain suspended
        peer.docs["/users/b"]["alsoKnownAs"] = [old_uri]
        with pytest.raises(inbox.Refused):
            await inbox.process(fed.store, fed.queue, fed.settings, move(old, old.uri, blocked))
        await fed.federation.domain_unblock("127.0.0.1")
        for job in refused:
            with pytest.raises(inbox.Refused):
                await inbox.process(fed.store, fed.queue, fed.settings, job)
        assert (await remote.details(fed.store, old.id)).get("moved_to") is None
        assert (await fed.accounts.get_user(old.id)).moved is None
        assert await _queued(fed, MoveJob) == []
        assert await fed.relations.is_following(fan.id, old.id)
        assert host  # (the peer served them)
    finally:
        peer.close()


# --- the job cut short anywhere ------------------------------------------------------------------
async def _world(fed, k: int):
    """Old and new remote accounts (their inboxes on a closed port), three
    local followers of the old one (one with options and a list holding
    it), a blocker and a muter."""

    def doc(name):
        uri = f"http://127.0.0.1:9/k{k}/users/{name}"
        return {
            "id": uri,
            "type": "Person",
            "preferredUsername": f"{name}{k}",
            "inbox": f"{uri}/inbox",
            "publicKey": {"id": f"{uri}#main-key", "publicKeyPem": PAIR.public_pem},
        }

    old = await remote.keep(fed.store, remote.parse_actor(doc("old")))
    new = await remote.keep(fed.store, remote.parse_actor(doc("new")))
    fans = [await fed.accounts.sign_up(f"f{k}x{i}") for i in range(3)]
    await fed.relations.follow_with_options(fans[0].id, old.id, reblogs=False, notify=True)
    for fan in fans[1:]:
        await fed.relations.follow(fan.id, old.id)
    lst = await fed.lists.create(fans[0].id, "l")
    await fed.lists.add(fans[0].id, lst.id, old.id)
    blocker, muter = await fed.accounts.sign_up(f"b{k}"), await fed.accounts.sign_up(f"m{k}")
    await fed.relations.block(blocker.id, old.id)
    await fed.relations.mute(muter.id, old.id, 0, False)
    return old, new, fans, lst, blocker, muter


PAIR = signing.KeyPair.generate()


async def _run(fed, job: MoveJob | None) -> None:
    while job is not None:
        job = await moves.step(fed.store, fed.queue, fed.settings, job, batch=2)


async def test_the_move_job_cut_short_anywhere_is_finished_by_its_rerun(fed):
    for k in range(400):
        old, new, fans, lst, blocker, muter = await _world(fed, k)
        state = {"job": MoveJob(old.id, new.id)}

        async def chain():  # the steps as workers run them, one after another
            while state["job"] is not None:
                state["job"] = await moves.step(
                    fed.store, fed.queue, fed.settings, state["job"], batch=2
                )

        finished = await drive(chain(), k)  # cut at its k-th await
        await _run(fed, state["job"])  # the re-run of the step cut short, to the end
        await fed.drain()  # (the journals of the follows it made or ended, taken over)
        for fan in fans:
            assert await fed.relations.is_following(fan.id, new.id), k
            assert not await fed.relations.is_following(fan.id, old.id), k
        rel = await fed.relations.relationship(fans[0].id, new.id)
        assert not rel.showing_reblogs and rel.notifying, k
        assert await fed.lists.member_ids(fans[0].id, lst.id) == {new.id}, k
        assert (await fed.relations.relation(blocker.id, new.id)).blocking, k
        mute = (await fed.relations.relation(muter.id, new.id)).mute
        assert mute is not None and not mute.notifications, k
        if finished:
            assert k > 0
            return
    raise AssertionError("the job never finished")


async def test_mutes_from_before_their_index_are_carried_over(settings):
    """A database whose mutes were made before keys.muted_by existed: the
    engine that opens it indexes them once (migration 3), so a
    Move carries them over too."""
    rp = await Redpoll.open(
        settings.with_(public_url="http://127.0.0.1:1", federation_loopback=True)
    )
    try:
        old = await remote.keep(rp.store, remote.parse_actor(_doc("was", "ancient")))
        new = await remote.keep(rp.store, remote.parse_actor(_doc("now", "ancient")))
        muter, later = await rp.accounts.sign_up("muter"), await rp.accounts.sign_up("later")
        await rp.relations.mute(muter.id, old.id, 0, False)
        # as an older version left it: the mute, and no index of its muters
        await rp.store.delete(keys.muted_by(old.id), keys.MUTED_BY_BUILT, keys.LAYOUT)
    finally:
        await rp.close()
    rp = await Redpoll.open(
        settings.with_(public_url="http://127.0.0.1:1", federation_loopback=True)
    )
    try:
        assert await rp.store.zscore(keys.muted_by(old.id), muter.id) is not None
        await rp.relations.mute(later.id, old.id)  # one since: in the index by itself
        await _run(rp, MoveJob(old.id, new.id))
        await rp.drain()
        for who, quiet in ((muter, False), (later, True)):
            mute = (await rp.relations.relation(who.id, new.id)).mute
            assert mute is not None and mute.notifications is quiet
    finally:
        await rp.close()


def _doc(name: str, host: str) -> dict:
    uri = f"http://127.0.0.1:9/{host}/users/{name}"
    return {
        "id": uri,
        "type": "Person",
        "preferredUsername": name,
        "inbox": f"{uri}/inbox",
        "publicKey": {"id": f"{uri}#main-key", "publicKeyPem": PAIR.public_pem},
    }
