"""Redpoll and an independent ActivityPub implementation: bovine's test
server (``bovine.testing.server``, from PyPI), run as its own process. It
verifies every activity it receives with bovine's own signature checker
(fetching our key with its own signed GET) and prints what it accepted;
activities from it are built and signed by bovine's actor in this process.
Nothing here signs or verifies with Redpoll's code on bovine's behalf."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest
from bovine.activitystreams import factories_for_actor_object
from support.bovine import Bovine, post_as_bovine
from support.federation import Instance, eventually

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def peers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bovine")
    bovine = Bovine(tmp)
    redpoll = Instance(tmp, "redpoll")
    try:
        with redpoll.proc:
            yield redpoll, bovine
    finally:
        bovine.stop()


def test_follows_and_posts_both_ways_with_bovine(peers):
    redpoll, bovine = peers
    login = f"ada{uuid.uuid4().hex[:8]}"
    ada = redpoll.person(login)
    me = ada.me()
    ada_uri = f"{redpoll.url}/users/{login}"
    actor_object = bovine.config.create_actor_object()
    activities, objects = factories_for_actor_object(
        actor_object, id_generator=bovine.config.make_id
    )

    # ada finds buttercup through bovine's WebFinger and follows: bovine
    # verifies the Follow's signature with its own checker
    found = ada.search_v2(f"@buttercup@{bovine.config.hostname}", resolve=True)["accounts"]
    assert [a["acct"] for a in found] == [f"buttercup@{bovine.config.hostname}"]
    assert found[0]["display_name"] == "Buttercup the exemplary bovine"
    ada.account_follow(found[0]["id"])
    follows = eventually(
        lambda: [d for s, d in bovine.received() if d.get("type") == "Follow"],
        what="bovine accepting ada's signed Follow",
    )
    assert follows[0]["actor"] == ada_uri and follows[0]["object"] == bovine.config.actor_id
    assert [s for s, d in bovine.received() if d.get("type") == "Follow"][0] == ada_uri

    # buttercup follows ada: Redpoll checks bovine's signature, counts the
    # follower and answers with an Accept that bovine verifies
    follow = activities.follow(ada_uri).build()
    assert post_as_bovine(bovine, f"{redpoll.url}/users/{login}/inbox", follow) == 202
    eventually(lambda: ada.account(me["id"])["followers_count"] == 1, what="the follow counted")
    accepts = eventually(
        lambda: [d for s, d in bovine.received() if d.get("type") == "Accept"],
        what="bovine accepting Redpoll's Accept",
    )
    assert accepts[0]["object"]["id"] == follow["id"]

    # ada posts: the Create reaches bovine's inbox, signed as ada
    status = ada.status_post("moo to the fediverse")
    creates = eventually(
        lambda: [d for s, d in bovine.received() if d.get("type") == "Create"],
        what="ada's post at bovine",
    )
    note = creates[0]["object"]
    assert note["id"] == status["uri"] and "moo to the fediverse" in note["content"]
    assert note["attributedTo"] == ada_uri

    # buttercup favourites and boosts it: counts and ada's notifications
    assert (
        post_as_bovine(bovine, f"{redpoll.url}/inbox", activities.like(note["id"]).build()) == 202
    )
    announce = activities.announce(note["id"]).as_public().build()
    assert post_as_bovine(bovine, f"{redpoll.url}/inbox", announce) == 202
    eventually(
        lambda: (lambda s: s["favourites_count"] == 1 and s["reblogs_count"] == 1)(
            ada.status(status["id"])
        ),
        what="the favourite and the boost counted",
    )
    kinds = eventually(
        lambda: (
            {n["type"] for n in ada.notifications()} >= {"favourite", "reblog"}
            and {n["type"] for n in ada.notifications()}
        ),
        what="ada notified",
    )
    assert "follow" in kinds

    # buttercup posts publicly: it lands in ada's home (she follows buttercup)
    text = f"grass is green {uuid.uuid4().hex[:6]}"
    create = (
        activities.create(objects.note(content=f"<p>{text}</p>").as_public().build())
        .as_public()
        .build()
    )
    assert post_as_bovine(bovine, f"{redpoll.url}/inbox", create) == 202
    home = eventually(
        lambda: [s for s in ada.timeline_home() if text in s["content"]],
        what="buttercup's note in ada's home",
    )
    assert home[0]["account"]["acct"] == f"buttercup@{bovine.config.hostname}"
    assert home[0]["uri"] == create["object"]["id"]
    # the same activity again (a second delivery) is dropped, not posted twice
    post_as_bovine(bovine, f"{redpoll.url}/inbox", create)
    time.sleep(1.5)
    assert len([s for s in ada.timeline_home() if text in s["content"]]) == 1

    # buttercup replies to ada's post: it is in her thread; then deletes it
    answer = objects.reply(note, content="<p>moo back</p>").as_public().build()
    assert (
        post_as_bovine(
            bovine, f"{redpoll.url}/inbox", activities.create(answer).as_public().build()
        )
        == 202
    )
    thread = eventually(
        lambda: ada.status_context(status["id"])["descendants"],
        what="buttercup's reply in ada's thread",
    )
    assert thread[0]["uri"] == answer["id"] and "moo back" in thread[0]["content"]
    assert (
        post_as_bovine(
            bovine, f"{redpoll.url}/inbox", activities.delete(answer["id"]).as_public().build()
        )
        == 202
    )
    eventually(
        lambda: not ada.status_context(status["id"])["descendants"], what="the reply deleted"
    )

    # ada replies to buttercup's note and deletes her reply: bovine receives both
    mine = ada.status_post("@buttercup nice grass", in_reply_to_id=home[0]["id"])
    creates = eventually(
        lambda: [
            d
            for _, d in bovine.received()
            if d.get("type") == "Create" and d["object"]["id"] == mine["uri"]
        ],
        what="the reply at bovine",
    )
    assert creates[0]["object"]["inReplyTo"] == create["object"]["id"]
    ada.status_delete(mine["id"])
    eventually(
        lambda: [
            d
            for _, d in bovine.received()
            if d.get("type") == "Delete" and d["object"]["id"] == mine["uri"]
        ],
        what="the delete at bovine",
    )


def test_bovine_asks_to_quote_and_gets_a_verifiable_authorization(peers):
    """buttercup quotes ada's posts as Mastodon 4.5 does (FEP-044f): a
    signed QuoteRequest with the quote inlined; Redpoll answers by ada's
    policy, an Accept (verified by bovine's own checker) whose result is a
    QuoteAuthorization Redpoll serves, or a Reject."""
    redpoll, bovine = peers
    login = f"quo{uuid.uuid4().hex[:8]}"
    ada = redpoll.person(login)
    ada_uri = f"{redpoll.url}/users/{login}"
    actor_object = bovine.config.create_actor_object()
    _, objects = factories_for_actor_object(actor_object, id_generator=bovine.config.make_id)
    open_ = ada.status_post("quote me, bovine")
    closed = ada.status_post("followers only", quote_approval_policy="followers")

    def ask(quoted: dict) -> tuple[dict, dict]:
        quote = objects.note(content="<p>moo, quoting</p>").as_public().build()
        quote |= {"quote": quoted["uri"], "_misskey_quote": quoted["uri"]}
        request = {
            "@context": [
                "https://www.w3.org/ns/activitystreams",
                {"QuoteRequest": "https://w3id.org/fep/044f#QuoteRequest"},
            ],
            "id": bovine.config.make_id(),
            "type": "QuoteRequest",
            "actor": actor_object["id"],
            "object": quoted["uri"],
            "instrument": {k: v for k, v in quote.items() if k != "@context"},
        }
        assert post_as_bovine(bovine, f"{redpoll.url}/users/{login}/inbox", request) == 202
        return quote, request

    quote, request = ask(open_)
    accepts = eventually(
        lambda: [
            (s, d)
            for s, d in bovine.received()
            if d.get("type") == "Accept" and (d.get("object") or {}).get("id") == request["id"]
        ],
        what="bovine accepting Redpoll's Accept of the QuoteRequest",
    )
    signer, accept = accepts[0]
    assert signer == ada_uri and accept["actor"] == ada_uri
    assert accept["object"]["type"] == "QuoteRequest"
    assert accept["object"]["instrument"]["id"] == quote["id"]
    stamp = httpx.get(accept["result"], headers={"Accept": "application/activity+json"})
    assert stamp.status_code == 200
    doc = stamp.json()
    assert doc["id"] == accept["result"] and doc["type"] == "QuoteAuthorization"
    assert doc["attributedTo"] == ada_uri
    assert doc["interactionTarget"] == open_["uri"] and doc["interactingObject"] == quote["id"]
    # the quote is kept, accepted, counted, and ada told
    assert ada.status(open_["id"])["quotes_count"] == 1
    told = [n for n in ada.notifications() if n["type"] == "quote"]
    assert told[0]["status"]["uri"] == quote["id"]
    assert told[0]["status"]["quote"]["state"] == "accepted"

    # followers only, and buttercup does not follow ada: a Reject
    _, refused = ask(closed)
    eventually(
        lambda: [
            d
            for _, d in bovine.received()
            if d.get("type") == "Reject" and (d.get("object") or {}).get("id") == refused["id"]
        ],
        what="bovine accepting Redpoll's Reject of the QuoteRequest",
    )
    assert ada.status(closed["id"])["quotes_count"] == 0

    # ada revokes the first: the Delete of the authorization reaches bovine, verified
    ada.status_quote_revoke(open_["id"], told[0]["status"]["id"])
    eventually(
        lambda: [
            d
            for _, d in bovine.received()
            if d.get("type") == "Delete" and d.get("object") == accept["result"]
        ],
        what="bovine accepting the Delete of the authorization",
    )
    assert (
        httpx.get(accept["result"], headers={"Accept": "application/activity+json"}).status_code
        == 404
    )


def test_an_account_deleted_on_its_server_is_closed_here(peers):
    redpoll, bovine = peers
    ada = redpoll.person(f"del{uuid.uuid4().hex[:8]}")
    found = ada.search_v2(f"@buttercup@{bovine.config.hostname}", resolve=True)["accounts"][0]
    actor_object = bovine.config.create_actor_object()
    activities, _ = factories_for_actor_object(actor_object, id_generator=bovine.config.make_id)
    gone = activities.delete(actor_object["id"]).build()
    assert post_as_bovine(bovine, f"{redpoll.url}/inbox", gone) == 202
    eventually(
        lambda: ada.account(found["id"]).get("suspended") is True, what="the deleted account closed"
    )
    # a Delete from an actor never seen here is answered 202 and does nothing
    stranger = dict(
        gone,
        id=gone["id"] + "x",
        actor="http://127.0.0.1:9/users/nobody",
        object="http://127.0.0.1:9/users/nobody",
    )
    assert (
        httpx.post(
            f"{redpoll.url}/inbox",
            content=json.dumps(stranger),
            headers={
                "Content-Type": "application/activity+json",
                "Signature": 'keyId="http://127.0.0.1:9/users/nobody#main-key",'
                'headers="(request-target) host date",signature="AAAA"',
            },
        ).status_code
        == 202
    )


def test_bovine_receives_a_poll_as_a_well_formed_question(peers):
    redpoll, bovine = peers
    login = f"pol{uuid.uuid4().hex[:8]}"
    ada = redpoll.person(login)
    me = ada.me()
    activities, _ = factories_for_actor_object(
        bovine.config.create_actor_object(), id_generator=bovine.config.make_id
    )
    follow = activities.follow(f"{redpoll.url}/users/{login}").build()
    assert post_as_bovine(bovine, f"{redpoll.url}/users/{login}/inbox", follow) == 202
    eventually(lambda: ada.account(me["id"])["followers_count"] == 1, what="the follow counted")
    status = ada.status_post(
        "which one?", poll=ada.make_poll(["this", "that"], expires_in=600, multiple=True)
    )
    creates = eventually(
        lambda: [
            d
            for _, d in bovine.received()
            if d.get("type") == "Create" and d["object"]["id"] == status["uri"]
        ],
        what="the poll at bovine",
    )
    question = creates[0]["object"]
    assert question["type"] == "Question" and "oneOf" not in question
    assert [(o["type"], o["name"], o["replies"]["totalItems"]) for o in question["anyOf"]] == [
        ("Note", "this", 0),
        ("Note", "that", 0),
    ]
    assert question["endTime"] and question["votersCount"] == 0 and "closed" not in question
