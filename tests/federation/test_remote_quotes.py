"""Quote posts across servers (Mastodon 4.5, FEP-044f) on the test's
database (both topologies): peers played by the test on loopback
(support.federation.Peer: their actors, notes and QuoteAuthorizations
served over http, what is delivered to them kept), their activities applied
by the inbox as a worker would, this server's deliveries made by its jobs.

A remote QuoteRequest is answered by the local author's policy (Accept with
an authorization this server publishes, or Reject) and a local revocation
sends the Delete of it; a local quote of a remote status is pending until
its author's Accept (Reject: rejected; the authorization's Delete:
revoked); a third server's quote counts only with an authorization that
verifies; forged requests, answers, authorizations and revocations change
nothing."""

from __future__ import annotations

import json
import time

import pytest
from support.federation import HERE, Peer, fed  # noqa: F401

from redpoll.bus import events
from redpoll.core.errors import StatusNotFound
from redpoll.federation import documents, inbox, outbox, publish, quoting, remote
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import InboxJob
from redpoll.quotes import quotes

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]


@pytest.fixture
def peer():
    one = Peer()
    yield one
    one.close()


@pytest.fixture
def third():
    one = Peer()
    yield one
    one.close()


async def send(fed, who, activity: dict) -> None:
    await inbox.process(
        fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(activity))
    )


async def account(fed, peer: Peer, name: str):
    return await remote.fetch_actor(fed.store, HERE, peer.actor(name), loopback=True)


def note(who, text: str, **more) -> dict:
    nid = f"{who.uri}/statuses/{time.time_ns()}"
    return {
        "id": nid,
        "type": "Note",
        "attributedTo": who.uri,
        "content": f"<p>{text}</p>",
        "to": [documents.PUBLIC],
        "cc": [],
        **more,
    }


async def create(fed, who, obj: dict) -> int:
    await send(
        fed, who, {"id": f"{obj['id']}/activity", "type": "Create", "actor": who.uri, "object": obj}
    )
    return int(await fed.store.get(fed_keys.note(obj["id"])))


async def state(fed, viewer, sid: int) -> str:
    shown = await fed.timelines.status_page(viewer, sid)
    return shown.states[sid].quote_state


def delivered(peer: Peer, kind: str) -> list[dict]:
    return [a for a in peer.received if a.get("type") == kind]


async def test_a_quote_request_is_answered_by_the_quoted_authors_policy(fed, peer):
    ada = await fed.accounts.sign_up("ada_quoted")
    quoter = await account(fed, peer, "quoter")
    open_ = await fed.statuses.post(ada.id, "anyone may quote this")
    closed = await fed.statuses.post(ada.id, "only followers", {"qpol": "followers"})
    open_uri = documents.note_id(HERE, ada.login, open_.id)
    closed_uri = documents.note_id(HERE, ada.login, closed.id)

    # the quote arrives first: pending, not counted, nobody told
    q = note(quoter, "look", quote=open_uri, _misskey_quote=open_uri, quoteUri=open_uri)
    qsid = await create(fed, quoter, q)
    assert await state(fed, ada.id, qsid) == "pending"
    assert (await fed.timelines.status_page(ada.id, open_.id)).states[open_.id].quotes == 0
    shown = await fed.timelines.status_page(None, qsid)
    assert shown.states[qsid].quoted == open_.id and shown.quoted == {}

    # its QuoteRequest: accepted by the policy, an Accept with the authorization
    request = {
        "id": f"{quoter.uri}#quote_requests/1",
        "type": "QuoteRequest",
        "actor": quoter.uri,
        "object": open_uri,
        "instrument": q["id"],
    }
    await send(fed, quoter, request)
    await fed.drain()
    [accept] = delivered(peer, "Accept")
    approval = quoting.authorization_id(HERE, ada.login, qsid)
    assert accept["actor"] == documents.actor_id(HERE, ada.login)
    assert accept["result"] == approval
    assert accept["object"]["id"] == request["id"] and accept["object"]["type"] == "QuoteRequest"
    assert await state(fed, ada.id, qsid) == "accepted"
    page = await fed.timelines.status_page(None, qsid)
    assert list(page.quoted) == [open_.id]  # shown to anyone now
    assert (await fed.timelines.status_page(ada.id, open_.id)).states[open_.id].quotes == 1
    told = [n for n in await fed.notifications.listed(ada.id) if n.type == "quote"]
    assert [n.status for n in told] == [qsid]
    doc = await publish.quote_authorization(fed.store, fed.settings, ada.login, qsid)
    assert doc["id"] == approval and doc["type"] == "QuoteAuthorization"
    assert doc["attributedTo"] == documents.actor_id(HERE, ada.login)
    assert doc["interactionTarget"] == open_uri and doc["interactingObject"] == q["id"]
    # an edit of the quoted status: no quoted_update for the quote's remote author here
    await fed.statuses.edit(ada.id, open_.id, "anyone may quote this, edited")
    assert [n.type for n in await fed.notifications.listed(quoter.id)] == []
    # the same request again: the same answer, nothing more
    await send(fed, quoter, request)
    await fed.drain()
    assert {a["id"] for a in delivered(peer, "Accept")} == {accept["id"]}
    assert len([n for n in await fed.notifications.listed(ada.id) if n.type == "quote"]) == 1

    # followers only and the quoter follows not: Rejected (the quote inlined, kept, rejected)
    q2 = note(quoter, "me too", quote=closed_uri)
    await send(
        fed,
        quoter,
        {
            "id": f"{quoter.uri}#quote_requests/2",
            "type": "QuoteRequest",
            "actor": quoter.uri,
            "object": closed_uri,
            "instrument": q2,
        },
    )
    await fed.drain()
    [reject] = delivered(peer, "Reject")
    assert reject["object"]["id"] == f"{quoter.uri}#quote_requests/2"
    q2sid = int(await fed.store.get(fed_keys.note(q2["id"])))
    assert await state(fed, ada.id, q2sid) == "rejected"
    with pytest.raises(StatusNotFound):
        await publish.quote_authorization(fed.store, fed.settings, ada.login, q2sid)

    # ada revokes the accepted one: the Delete of its authorization goes out
    await fed.statuses.revoke_quote(ada.id, open_.id, qsid)
    await fed.drain()
    [delete] = delivered(peer, "Delete")
    assert delete["object"] == approval and delete["id"] == f"{approval}#delete"
    assert delete["actor"] == documents.actor_id(HERE, ada.login)
    assert await state(fed, ada.id, qsid) == "revoked"
    with pytest.raises(StatusNotFound):
        await publish.quote_authorization(fed.store, fed.settings, ada.login, qsid)
    # asked again after the revocation: never accepted again
    await send(fed, quoter, {**request, "id": f"{quoter.uri}#quote_requests/3"})
    assert await state(fed, ada.id, qsid) == "revoked"


async def test_forged_quote_requests_are_refused(fed, peer, third):
    ada = await fed.accounts.sign_up("ada_forged")
    quoter = await account(fed, peer, "quoter")
    other = await account(fed, third, "someone")
    mine = await fed.statuses.post(ada.id, "mine")
    mine_uri = documents.note_id(HERE, ada.login, mine.id)
    theirs = note(other, "another host's note")
    await create(fed, other, theirs)
    q = note(quoter, "quoting", quote=mine_uri)
    qsid = await create(fed, quoter, q)

    # an id on another host than its actor's: refused
    with pytest.raises(inbox.Refused):
        await send(
            fed,
            quoter,
            {
                "id": f"{third.base}/requests/1",
                "type": "QuoteRequest",
                "actor": quoter.uri,
                "object": mine_uri,
                "instrument": q["id"],
            },
        )
    # a request for another host's object: not this server's to answer
    await send(
        fed,
        quoter,
        {
            "id": f"{quoter.uri}#quote_requests/9",
            "type": "QuoteRequest",
            "actor": quoter.uri,
            "object": theirs["id"],
            "instrument": q["id"],
        },
    )
    # a request naming a quote that is another's (the third host's account's): Rejected
    not_theirs = note(other, "not the quoter's", quote=mine_uri)
    await create(fed, other, not_theirs)
    await send(
        fed,
        quoter,
        {
            "id": f"{quoter.uri}#quote_requests/10",
            "type": "QuoteRequest",
            "actor": quoter.uri,
            "object": mine_uri,
            "instrument": not_theirs["id"],
        },
    )
    await fed.drain()
    assert delivered(peer, "Accept") == []
    assert [r["object"]["id"] for r in delivered(peer, "Reject")] == [
        f"{quoter.uri}#quote_requests/10"
    ]
    assert await state(fed, ada.id, qsid) == "pending"
    other_q = int(await fed.store.get(fed_keys.note(not_theirs["id"])))
    assert await state(fed, ada.id, other_q) == "pending"  # (its own author never asked)
    assert (await fed.timelines.status_page(ada.id, mine.id)).states[mine.id].quotes == 0
    # an account closed here asks for nothing: Rejected
    await remote.close(fed.store, quoter.id)
    await send(
        fed,
        quoter,
        {
            "id": f"{quoter.uri}#quote_requests/11",
            "type": "QuoteRequest",
            "actor": quoter.uri,
            "object": mine_uri,
            "instrument": q["id"],
        },
    )
    await fed.drain()
    assert delivered(peer, "Accept") == []
    assert f"{quoter.uri}#quote_requests/11" in [
        r["object"]["id"] for r in delivered(peer, "Reject")
    ]
    assert await quotes.state_of(fed.store, mine.id, qsid) == "rejected"


async def test_a_local_quote_of_a_remote_status_waits_for_its_authors_answer(fed, peer, third):
    bob = await fed.accounts.sign_up("bob_quoting")
    carl = await account(fed, peer, "carl")
    mallory = await account(fed, third, "mallory")
    n1 = note(
        carl, "quote me", interactionPolicy={"canQuote": {"automaticApproval": [documents.PUBLIC]}}
    )
    n2 = note(carl, "quote me too")
    s1, s2 = await create(fed, carl, n1), await create(fed, carl, n2)
    quote = await fed.statuses.post(bob.id, "quoting carl", {"quote": str(s1)})
    assert await state(fed, bob.id, quote.id) == "pending"
    assert (await fed.timelines.status_page(bob.id, quote.id)).quoted == {}

    # sent as Mastodon sends it: the Note's quote fields, a QuoteRequest to carl
    doc = await outbox.note_of(fed.store, HERE, quote)
    assert doc["quote"] == doc["quoteUri"] == doc["_misskey_quote"] == n1["id"]
    assert "quoteAuthorization" not in doc
    assert doc["interactionPolicy"] == {"canQuote": {"automaticApproval": [documents.PUBLIC]}}
    await outbox.handle(fed.store, fed.queue, HERE, events.update_event(quote).encode())
    await fed.drain()
    [created] = delivered(peer, "Create")
    assert created["object"]["quote"] == n1["id"]
    [request] = delivered(peer, "QuoteRequest")
    assert request["actor"] == documents.actor_id(HERE, bob.login)
    assert request["object"] == n1["id"]
    assert request["instrument"] == documents.note_id(HERE, bob.login, quote.id)

    # an Accept by someone else than carl: nothing
    approval = f"{peer.base}/users/carl/quote_authorizations/1"
    forged = f"{third.base}/users/mallory/quote_authorizations/1"
    await send(
        fed,
        mallory,
        {
            "id": f"{mallory.uri}#a/1",
            "type": "Accept",
            "actor": mallory.uri,
            "object": request,
            "result": forged,
        },
    )
    assert await state(fed, bob.id, quote.id) == "pending"
    # carl's Accept, with a result on another host: nothing either
    await send(
        fed,
        carl,
        {
            "id": f"{carl.uri}#a/0",
            "type": "Accept",
            "actor": carl.uri,
            "object": request,
            "result": forged,
        },
    )
    assert await state(fed, bob.id, quote.id) == "pending"
    # carl's Accept: accepted, and the Note goes out again with its authorization
    peer.received.clear()
    await send(
        fed,
        carl,
        {
            "id": f"{carl.uri}#a/2",
            "type": "Accept",
            "actor": carl.uri,
            "object": request,
            "result": approval,
        },
    )
    assert await state(fed, bob.id, quote.id) == "accepted"
    assert list((await fed.timelines.status_page(None, quote.id)).quoted) == [s1]
    await fed.drain()
    [update] = delivered(peer, "Update")
    assert update["object"]["quoteAuthorization"] == approval

    # a Delete of carl's authorization by mallory: nothing; by carl: revoked
    await send(
        fed,
        mallory,
        {"id": f"{approval}#delete", "type": "Delete", "actor": mallory.uri, "object": approval},
    )
    assert await state(fed, bob.id, quote.id) == "accepted"
    await send(
        fed,
        carl,
        {"id": f"{approval}#delete", "type": "Delete", "actor": carl.uri, "object": approval},
    )
    assert await state(fed, bob.id, quote.id) == "revoked"
    assert (await fed.timelines.status_page(bob.id, quote.id)).quoted == {}

    # carl refuses another: rejected
    other = await fed.statuses.post(bob.id, "again", {"quote": str(s2)})
    await send(
        fed,
        carl,
        {
            "id": f"{carl.uri}#r/1",
            "type": "Reject",
            "actor": carl.uri,
            "object": quoting.request_id(HERE, bob.login, other.id),
        },
    )
    assert await state(fed, bob.id, other.id) == "rejected"
    # a note of carl's that takes no quotes cannot be quoted from here at all
    n3 = note(carl, "mine alone", interactionPolicy={"canQuote": {"automaticApproval": [carl.uri]}})
    s3 = await create(fed, carl, n3)
    with pytest.raises(StatusNotFound):
        await fed.statuses.post(bob.id, "no", {"quote": str(s3)})
    # an Update saying who may quote it now is taken: n2 closed, n3 opened
    for doc, approved in ((n2, [carl.uri]), (n3, [documents.PUBLIC])):
        changed = {**doc, "interactionPolicy": {"canQuote": {"automaticApproval": approved}}}
        await send(
            fed,
            carl,
            {"id": f"{doc['id']}#u/1", "type": "Update", "actor": carl.uri, "object": changed},
        )
    with pytest.raises(StatusNotFound):
        await fed.statuses.post(bob.id, "no more", {"quote": str(s2)})
    opened = await fed.statuses.post(bob.id, "now I may", {"quote": str(s3)})
    assert await state(fed, bob.id, opened.id) == "pending"


async def test_a_third_servers_quote_counts_only_with_an_authorization_that_verifies(
    fed, peer, third
):
    reader = await fed.accounts.sign_up("reader_quotes")
    carl = await account(fed, peer, "carl")
    quoter = await account(fed, third, "quoter")
    target = note(carl, "quoted on another server")
    tsid = await create(fed, carl, target)

    def authorization(host: Peer, path: str, by: str, quoting_uri: str, target_uri: str) -> str:
        host.docs[path] = {
            "@context": quoting.AUTHORIZATION_CONTEXT,
            "id": f"{host.base}{path}",
            "type": "QuoteAuthorization",
            "attributedTo": by,
            "interactionTarget": target_uri,
            "interactingObject": quoting_uri,
        }
        return f"{host.base}{path}"

    async def quote_with(approval: str | None) -> int:
        q = note(quoter, "quoting carl", quote=target["id"])
        if approval is not None:
            q["quoteAuthorization"] = approval
        return await create(fed, quoter, q)

    # valid: carl's, on carl's host, naming the quote and the quoted note
    q = note(quoter, "quoting carl", quote=target["id"])
    q["quoteAuthorization"] = authorization(peer, "/auth/1", carl.uri, q["id"], target["id"])
    good = await create(fed, quoter, q)
    assert await state(fed, reader.id, good) == "accepted"
    assert list((await fed.timelines.status_page(reader.id, good)).quoted) == [tsid]

    # by the wrong actor (the quoter's own server vouching for it): pending
    q = note(quoter, "forged", quote=target["id"])
    q["quoteAuthorization"] = authorization(third, "/auth/2", quoter.uri, q["id"], target["id"])
    wrong = await create(fed, quoter, q)
    assert await state(fed, reader.id, wrong) == "pending"
    # carl's, but for another quote: pending
    q = note(quoter, "borrowed", quote=target["id"])
    q["quoteAuthorization"] = authorization(peer, "/auth/3", carl.uri, f"{q['id']}x", target["id"])
    borrowed = await create(fed, quoter, q)
    assert await state(fed, reader.id, borrowed) == "pending"
    # one that is not there: rejected (Mastodon's); none at all: pending
    missing = await quote_with(f"{peer.base}/auth/404")
    assert await state(fed, reader.id, missing) == "rejected"
    none = await quote_with(None)
    assert await state(fed, reader.id, none) == "pending"
    for sid in (wrong, borrowed, missing, none):
        assert (await fed.timelines.status_page(reader.id, sid)).quoted == {}
    # carl revokes the valid one
    approval = f"{peer.base}/auth/1"
    await send(
        fed,
        carl,
        {"id": f"{approval}#delete", "type": "Delete", "actor": carl.uri, "object": approval},
    )
    assert await state(fed, reader.id, good) == "revoked"
    # an author's quote of their own note needs none
    own = await create(fed, carl, note(carl, "myself", quote=target["id"]))
    assert await state(fed, reader.id, own) == "accepted"
    # a quoted note not kept here is fetched from its server
    unseen = note(carl, "not delivered here")
    peer.docs[unseen["id"].removeprefix(peer.base)] = {"@context": documents.CONTEXT, **unseen}
    fetched = await create(fed, carl, note(carl, "quoting my unseen one", quote=unseen["id"]))
    assert await state(fed, reader.id, fetched) == "accepted"
    assert await fed.store.get(fed_keys.note(unseen["id"])) is not None
