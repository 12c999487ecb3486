"""Quote posts across two Redpoll servers on loopback (Mastodon 4.5,
FEP-044f), seen through Mastodon.py on each side: a quote of the other
server's post is pending until its author's server answers the QuoteRequest,
accepted by its author's policy (the Note then carries the authorization
that server publishes), rejected when the policy says no, and revoked by
its author there (the Delete of the authorization reaches the quoting
server)."""

from __future__ import annotations

import httpx
import pytest
from support.federation import Instance, eventually
from support.names import unique

pytestmark = pytest.mark.timeout(300)
AP = {"Accept": "application/activity+json"}


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fedquotes")
    a, b = Instance(tmp, "a"), Instance(tmp, "b")
    with a.proc, b.proc:
        yield a, b
        for one in (a, b):
            assert one.proc.process.poll() is None, one.proc.logs()[-3000:]


def test_a_quote_approved_refused_and_revoked_across_servers(pair):
    a, b = pair
    ada_login, bob_login = unique("ada"), unique("bob")
    ada, bob = a.person(ada_login), b.person(bob_login)
    found = bob.search_v2(f"@{ada_login}@{a.host}", resolve=True)["accounts"]
    bob.account_follow(found[0]["id"])
    eventually(lambda: ada.me()["followers_count"] == 1, what="bob following ada")
    open_ = ada.status_post("anyone may quote this")
    later = ada.status_post("quotable no more")

    def on_b(status):
        return eventually(
            lambda: [s for s in bob.timeline_home() if s["uri"] == status["uri"]],
            what=f"{status['uri']} in bob's home",
        )[0]

    theirs, theirs_later = on_b(open_), on_b(later)
    assert theirs["quote_approval"]["current_user"] == "automatic"
    # ada closes the second after it went out (bob's server still has it as open)
    closed = httpx.put(
        f"{a.url}/api/v1/statuses/{later['id']}/interaction_policy",
        json={"quote_approval_policy": "nobody"},
        headers={"Authorization": f"Bearer {ada.access_token}"},
    )
    assert closed.status_code == 200, closed.text

    # bob quotes the first: pending until ada's server accepts
    quote = bob.status_post("look at this", quoted_status_id=theirs["id"])
    assert quote["quote"]["state"] == "pending" and quote["quote"]["quoted_status"] is None
    shown = eventually(
        lambda: (s := bob.status(quote["id"]))["quote"]["state"] == "accepted" and s,
        what="the quote accepted on B",
    )
    assert shown["quote"]["quoted_status"]["uri"] == open_["uri"]
    # on ada's server: the quote counted, ada told, shown with her post
    told = eventually(
        lambda: [n for n in ada.notifications() if n["type"] == "quote"], what="ada told"
    )
    assert told[0]["status"]["uri"] == quote["uri"]
    theirs_quote = ada.status(told[0]["status"]["id"])
    assert theirs_quote["quote"]["state"] == "accepted"
    assert theirs_quote["quote"]["quoted_status"]["id"] == open_["id"]
    assert ada.status(open_["id"])["quotes_count"] == 1
    # bob's Note names what it quotes and the authorization ada's server publishes
    note = eventually(
        lambda: (d := httpx.get(quote["uri"], headers=AP).json()).get("quoteAuthorization") and d,
        what="the authorization in bob's Note",
    )
    assert note["quote"] == note["quoteUri"] == note["_misskey_quote"] == open_["uri"]
    approval = note["quoteAuthorization"]
    assert approval.startswith(f"{a.url}/users/{ada_login}/quote_authorizations/")
    stamp = httpx.get(approval, headers=AP)
    assert stamp.status_code == 200 and stamp.headers["content-type"].startswith(
        "application/activity+json"
    )
    doc = stamp.json()
    assert doc["type"] == "QuoteAuthorization" and doc["id"] == approval
    assert doc["attributedTo"] == f"{a.url}/users/{ada_login}"
    assert doc["interactionTarget"] == open_["uri"] and doc["interactingObject"] == quote["uri"]
    # ada's Note says who may quote it
    mine = httpx.get(open_["uri"], headers=AP).json()
    assert mine["interactionPolicy"]["canQuote"]["automaticApproval"] == [
        "https://www.w3.org/ns/activitystreams#Public"
    ]

    # the second: ada's server refuses it
    refused = bob.status_post("and this", quoted_status_id=theirs_later["id"])
    assert refused["quote"]["state"] == "pending"
    eventually(
        lambda: bob.status(refused["id"])["quote"]["state"] == "rejected",
        what="the quote rejected on B",
    )
    assert ada.status(later["id"])["quotes_count"] == 0

    # ada revokes the first: revoked on both servers, the authorization gone
    ada.status_quote_revoke(open_["id"], theirs_quote["id"])
    assert ada.status(theirs_quote["id"])["quote"]["state"] == "revoked"
    eventually(
        lambda: bob.status(quote["id"])["quote"]["state"] == "revoked",
        what="the revocation reaching B",
    )
    assert bob.status(quote["id"])["quote"]["quoted_status"] is None
    assert httpx.get(approval, headers=AP).status_code == 404
