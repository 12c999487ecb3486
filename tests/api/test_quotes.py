"""Quote posts as Mastodon 4.5 has them, on one server, driven by Mastodon.py
2.3.3 against a real ``redpoll serve``, in both topologies: quoting
(``quoted_status_id``) shows a Quote (state and quoted status) and counts it
(``quotes_count``); the quote approval policy (public, followers, nobody;
the author always may; a private or direct status never) refuses with
Mastodon's 404 and writes nothing; the quoted author lists (only they) and
revokes quotes; deleting the quoted status; the ``quote`` and
``quoted_update`` notifications; PUT /api/v1/statuses/:id/interaction_policy."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from support.mastodon import accounts

from redpoll.notifications import notifications as notification_kinds
from redpoll.quotes import keys as quote_keys

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]

REFUSED = {"error": "The post you are trying to quote does not appear to exist."}


def run(fn, *args, **kwargs):
    return asyncio.to_thread(fn, *args, **kwargs)


async def people(srv, n: int):
    """``n`` new accounts; Mastodon.py's version check off."""
    out = await run(accounts, srv.base, n)
    for m in out:
        m.version_check_mode = "none"
    return out


def http(srv, m=None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {m.access_token}"} if m is not None else {}
    return httpx.Client(base_url=srv.base, timeout=30, headers=headers)


def post_quote(srv, m, text: str, quoted, **more) -> httpx.Response:
    with http(srv, m) as c:
        return c.post("/api/v1/statuses", json={"status": text, "quoted_status_id": quoted, **more})


def notes_of(m, kind: str) -> list:
    return [n for n in m.notifications() if n["type"] == kind]


async def test_a_quote_shows_the_quoted_status_counts_it_and_tells_its_author(srv):
    alice, bob, carol = await people(srv, 3)
    bob_me = await run(bob.me)
    original = await run(alice.status_post, "an original thought " + uuid.uuid4().hex[:6])
    assert original["quote"] is None and original["quotes_count"] == 0
    assert original["quote_approval"] == {
        "automatic": ["public"],
        "manual": [],
        "current_user": "automatic",
    }
    quoting = await run(bob.status_post, "look at this", quoted_status_id=original["id"])
    assert quoting["quote"]["state"] == "accepted"
    inner = quoting["quote"]["quoted_status"]
    assert inner["id"] == original["id"] and "an original thought" in inner["content"]
    assert inner["quote"] is None  # it quotes nothing (a ShallowQuote would say)
    assert inner["quotes_count"] == 1

    # every reader is shown it, anonymous too
    seen = await run(carol.status, quoting["id"])
    assert seen["quote"]["state"] == "accepted"
    assert seen["quote"]["quoted_status"]["id"] == original["id"]
    with http(srv) as anon:
        body = anon.get(f"/api/v1/statuses/{quoting['id']}").json()
        assert body["quote"]["quoted_status"]["id"] == original["id"]
        counted = anon.get(f"/api/v1/statuses/{original['id']}").json()
        assert counted["quotes_count"] == 1
        assert counted["quote_approval"]["current_user"] == "denied"  # no one signed in
    profile = await run(carol.account_statuses, bob_me["id"])
    assert profile[0]["quote"]["quoted_status"]["id"] == original["id"]
    home = await run(bob.timeline_home)
    assert home[0]["id"] == quoting["id"] and home[0]["quote"]["state"] == "accepted"

    # the quoted author is told (Mastodon's ``quote``: the quoting status)
    (note,) = notes_of(alice, "quote")
    assert note["account"]["id"] == bob_me["id"] and note["status"]["id"] == quoting["id"]
    assert note["status"]["quote"]["quoted_status"]["id"] == original["id"]

    # quoting a boost quotes its original
    boost = await run(carol.status_reblog, original["id"])
    via = await run(bob.status_post, "again", quoted_status_id=boost["id"])
    assert via["quote"]["quoted_status"]["id"] == original["id"]
    assert (await run(carol.status, original["id"]))["quotes_count"] == 2


async def test_the_policy_refuses_with_nothing_written(srv, rp):
    alice, bob, carol = await people(srv, 3)
    alice_me, bob_me = await run(alice.me), await run(bob.me)
    await run(bob.account_follow, alice_me["id"])
    closed = await run(alice.status_post, "nobody quotes this", quote_approval_policy="nobody")
    assert closed["quote_approval"]["automatic"] == []
    assert (await run(bob.status, closed["id"]))["quote_approval"]["current_user"] == "denied"
    answer = await run(post_quote, srv, bob, "trying", closed["id"])
    assert (answer.status_code, answer.json()) == (404, REFUSED)

    followers = await run(alice.status_post, "my followers may", quote_approval_policy="followers")
    assert followers["quote_approval"]["automatic"] == ["followers"]
    as_carol = await run(carol.status, followers["id"])
    assert as_carol["quote_approval"]["current_user"] == "denied"
    answer = await run(post_quote, srv, carol, "not a follower", followers["id"])
    assert (answer.status_code, answer.json()) == (404, REFUSED)
    as_bob = await run(bob.status, followers["id"])
    assert as_bob["quote_approval"]["current_user"] == "automatic"
    allowed = await run(post_quote, srv, bob, "a follower", followers["id"])
    assert allowed.status_code == 200 and allowed.json()["quote"]["state"] == "accepted"

    # the author always may quote their own, even a private one
    own = await run(alice.status_post, "me again", quoted_status_id=closed["id"])
    assert own["quote"]["quoted_status"]["id"] == closed["id"]
    private = await run(alice.status_post, "followers only", visibility="private")
    assert private["quote_approval"]["automatic"] == []  # downgraded to nobody
    answer = await run(post_quote, srv, bob, "a private one", private["id"])
    assert (answer.status_code, answer.json()) == (404, REFUSED)
    direct = await run(alice.status_post, f"@{bob_me['username']} just us", visibility="direct")
    answer = await run(post_quote, srv, bob, "a direct one", direct["id"])
    assert (answer.status_code, answer.json()) == (404, REFUSED)
    answer = await run(post_quote, srv, bob, "nothing there", "99999999999")
    assert (answer.status_code, answer.json()) == (404, REFUSED)
    # a direct status quoting another's must mention its author
    answer = await run(post_quote, srv, bob, "psst", allowed.json()["id"], visibility="direct")
    assert answer.status_code == 200  # bob's own
    answer = await run(post_quote, srv, carol, "psst", own["id"], visibility="direct")
    assert answer.status_code == 422
    assert answer.json() == {
        "error": "Validation failed: Cannot quote a non-mentioned user in a Private Mention post."
    }
    answer = await run(post_quote, srv, carol, "x", own["id"], quote_approval_policy="everyone")
    assert answer.status_code == 422 and "quote_approval_policy" in answer.json()["error"]

    # a scheduled quote is checked when scheduled, as Mastodon's
    later = (datetime.now(UTC) + timedelta(minutes=30)).isoformat()
    answer = await run(post_quote, srv, carol, "later", closed["id"], scheduled_at=later)
    assert (answer.status_code, answer.json()) == (404, REFUSED)
    with http(srv, carol) as c:
        assert c.get("/api/v1/scheduled_statuses").json() == []
    answer = await run(post_quote, srv, bob, "later", followers["id"], scheduled_at=later)
    assert answer.status_code == 200 and answer.json()["scheduled_at"]

    # nothing of the refused ones was written: no status, no count, no notification
    assert (await run(carol.me))["statuses_count"] == 0
    assert await run(carol.account_statuses, (await run(carol.me))["id"]) == []
    # (closed: alice's own quote; followers: bob's)
    counts = {closed["id"]: 1, followers["id"]: 1, private["id"]: 0, direct["id"]: 0}
    for sid, count in counts.items():
        assert (await run(alice.status, sid))["quotes_count"] == count
    assert await rp.store.zcard(quote_keys.quotes(int(private["id"]))) == 0
    assert {n["status"]["id"] for n in notes_of(alice, "quote")} == {allowed.json()["id"]}


async def test_the_quoted_author_lists_and_revokes_quotes(srv):
    alice, bob, carol = await people(srv, 3)
    original = await run(alice.status_post, "quote me " + uuid.uuid4().hex[:6])
    first = await run(bob.status_post, "one", quoted_status_id=original["id"])
    second = await run(carol.status_post, "two", quoted_status_id=original["id"])
    third = await run(bob.status_post, "three", quoted_status_id=original["id"])

    listed = await run(alice.status_quotes, original["id"])
    assert [s["id"] for s in listed] == [third["id"], second["id"], first["id"]]
    assert all(s["quote"]["quoted_status"]["id"] == original["id"] for s in listed)
    page = await run(alice.status_quotes, original["id"], limit=2)
    assert [s["id"] for s in page] == [third["id"], second["id"]]
    rest = await run(alice.fetch_next, page)
    assert [s["id"] for s in rest] == [first["id"]]
    with http(srv, alice) as c:
        newer = c.get(f"/api/v1/statuses/{original['id']}/quotes", params={"min_id": first["id"]})
        assert [s["id"] for s in newer.json()] == [third["id"], second["id"]]
    with http(srv, bob) as c:  # only the quoted author lists them (Mastodon's check_owner!)
        answer = c.get(f"/api/v1/statuses/{original['id']}/quotes")
        assert (answer.status_code, answer.json()) == (403, {"error": "This action is not allowed"})
        answer = c.post(f"/api/v1/statuses/{original['id']}/quotes/{first['id']}/revoke")
        assert answer.status_code == 403
    with http(srv) as anon:
        assert anon.get(f"/api/v1/statuses/{original['id']}/quotes").status_code == 401

    revoked = await run(alice.status_quote_revoke, original["id"], second["id"])
    assert revoked["id"] == second["id"]
    assert revoked["quote"] == {"state": "revoked", "quoted_status": None}
    for reader in (bob, carol):  # it stops showing the quoted post, to everyone
        shown = await run(reader.status, second["id"])
        assert shown["quote"] == {"state": "revoked", "quoted_status": None}
    with http(srv) as anon:
        shown = anon.get(f"/api/v1/statuses/{second['id']}").json()
        assert shown["quote"] == {"state": "revoked", "quoted_status": None}
    assert (await run(carol.status, original["id"]))["quotes_count"] == 2
    listed = await run(alice.status_quotes, original["id"])
    assert [s["id"] for s in listed] == [third["id"], first["id"]]
    again = await run(alice.status_quote_revoke, original["id"], second["id"])  # idempotent
    assert again["quote"]["state"] == "revoked"
    with http(srv, alice) as c:  # a status that quotes something else: 404
        other = await run(alice.status_post, "another")
        answer = c.post(f"/api/v1/statuses/{other['id']}/quotes/{first['id']}/revoke")
        assert answer.status_code == 404


async def test_deleting_the_quoted_or_the_quoting_status(srv):
    alice, bob = await people(srv, 2)
    original = await run(alice.status_post, "short lived " + uuid.uuid4().hex[:6])
    quoting = await run(bob.status_post, "quoting it", quoted_status_id=original["id"])
    gone = await run(bob.status_post, "also quoting", quoted_status_id=original["id"])
    assert (await run(alice.status, original["id"]))["quotes_count"] == 2
    await run(bob.status_delete, gone["id"])  # the quoting one: uncounted, untold
    assert (await run(alice.status, original["id"]))["quotes_count"] == 1
    assert [n["status"]["id"] for n in notes_of(alice, "quote")] == [quoting["id"]]

    await run(alice.status_delete, original["id"])
    shown = await run(bob.status, quoting["id"])
    assert shown["quote"] == {"state": "deleted", "quoted_status": None}
    assert "short lived" not in str(shown)
    home = await run(bob.timeline_home)
    assert home[0]["quote"] == {"state": "deleted", "quoted_status": None}


async def test_an_edit_of_the_quoted_status_tells_those_who_quoted_it(srv):
    alice, bob, carol = await people(srv, 3)
    alice_me = await run(alice.me)
    original = await run(alice.status_post, "first version")
    await run(bob.status_post, "quoting", quoted_status_id=original["id"])
    await run(bob.status_post, "quoting twice", quoted_status_id=original["id"])
    await run(alice.status_update, original["id"], "second version")
    (note,) = notes_of(bob, "quoted_update")  # one per edit for each who quoted
    assert note["status"]["id"] == original["id"] and note["account"]["id"] == alice_me["id"]
    assert "second version" in note["status"]["content"]
    assert notes_of(carol, "quoted_update") == []
    quoting = (await run(bob.timeline_home))[0]
    assert "second version" in quoting["quote"]["quoted_status"]["content"]


async def test_the_interaction_policy_changes_who_may_quote(srv):
    alice, bob = await people(srv, 2)
    status = await run(alice.status_post, "open for now")
    changed = await run(alice.status_update_quote_approval_policy, status["id"], "nobody")
    assert changed["quote_approval"] == {
        "automatic": [],
        "manual": [],
        "current_user": "automatic",  # its author
    }
    assert (await run(bob.status, status["id"]))["quote_approval"]["current_user"] == "denied"
    answer = await run(post_quote, srv, bob, "too late", status["id"])
    assert (answer.status_code, answer.json()) == (404, REFUSED)
    with http(srv, bob) as c:  # another's status: 403
        answer = c.put(
            f"/api/v1/statuses/{status['id']}/interaction_policy",
            json={"quote_approval_policy": "public"},
        )
        assert answer.status_code == 403
    with http(srv, alice) as c:
        answer = c.put(
            f"/api/v1/statuses/{status['id']}/interaction_policy",
            json={"quote_approval_policy": "sometimes"},
        )
        assert answer.status_code == 422
    reopened = await run(alice.status_update_quote_approval_policy, status["id"], "public")
    assert reopened["quote_approval"]["automatic"] == ["public"]
    assert (await run(post_quote, srv, bob, "now", status["id"])).status_code == 200
    private = await run(alice.status_post, "mine", visibility="private")
    kept = await run(alice.status_update_quote_approval_policy, private["id"], "public")
    assert kept["quote_approval"]["automatic"] == []  # private: nobody, always


async def test_a_quote_its_author_may_not_see_is_left_out_of_their_notifications(srv, rp):
    """The ``quote`` notification's status is the quoting one: when the
    quoted author may not see it (followers-only, not a follower), the
    notification is not shown, and the page still answers."""
    alice, bob = await people(srv, 2)
    original = await run(alice.status_post, "quote me privately " + uuid.uuid4().hex[:6])
    quoted = await run(
        post_quote, srv, bob, "only my followers see this", original["id"], visibility="private"
    )
    assert quoted.status_code == 200, quoted.text
    await rp.drain()
    with http(srv, alice) as c:
        page = c.get("/api/v1/notifications")
        grouped = c.get("/api/v2/notifications")
    assert page.status_code == 200, page.text
    assert [n for n in page.json() if n["type"] == "quote"] == []
    assert grouped.status_code == 200, grouped.text
    assert all(g["type"] != "quote" for g in grouped.json()["notification_groups"])


async def test_the_quote_kinds_are_notification_types_one_may_ask_for(srv):
    """``types[]``/``exclude_types[]`` take (and /openapi.json documents)
    every kind of the one list, quote and quoted_update among them."""
    alice, bob = await people(srv, 2)
    original = await run(alice.status_post, "quote me " + uuid.uuid4().hex[:6])
    await run(alice.status_favourite, original["id"])  # one's own: no notification
    await run(bob.status_favourite, original["id"])
    quoting = await run(bob.status_post, "quoting", quoted_status_id=original["id"])
    only = await run(alice.notifications, types=["quote"])
    assert [(n["type"], n["status"]["id"]) for n in only] == [("quote", quoting["id"])]
    rest = await run(alice.notifications, exclude_types=["quote", "quoted_update"])
    assert [n["type"] for n in rest] == ["favourite"]
    with http(srv) as anon:
        doc = anon.get("/openapi.json").json()
    for path in ("/api/v1/notifications", "/api/v2/notifications"):
        params = {p["name"]: p["schema"] for p in doc["paths"][path]["get"]["parameters"]}
        for name in ("types[]", "exclude_types[]"):
            kinds = params[name]["items"]["enum"]
            assert "quote" in kinds and "quoted_update" in kinds, (path, name)
            assert set(kinds) == set(notification_kinds.TYPES) and len(kinds) == len(set(kinds))
