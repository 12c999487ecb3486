"""Two Redpoll servers on loopback, each with its own database and public
URL, federating over ActivityPub: discovery, signed deliveries both ways,
follows, posts, replies and deletes, seen through Mastodon.py on each side.
(REDPOLL_FEDERATION_LOOPBACK lets them talk http to 127.0.0.1; without it
both refuse, which test_safety checks.)"""

from __future__ import annotations

import json
import uuid
from datetime import datetime

import httpx
import pytest
from PIL import Image
from support.federation import Instance, Peer, eventually  # noqa: F401
from support.mastodon import LOOSE_LIMITS  # noqa: F401
from support.names import unique  # noqa: F401

from redpoll.federation import documents

pytestmark = pytest.mark.timeout(300)
#: how long the polls of these tests run (s): the shortest poll is lowered
#: to a second on these servers (REDPOLL_POLL_EXPIRES_MIN_S)
POLL_S = 12


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fed")
    a, b = Instance(tmp, "a"), Instance(tmp, "b")
    with a.proc, b.proc:
        yield a, b
        for one in (a, b):
            assert one.proc.process.poll() is None, one.proc.logs()[-3000:]


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def test_discovery_documents(pair):
    a, _ = pair
    login = unique("dis")
    a.person(login)
    finger = httpx.get(
        f"{a.url}/.well-known/webfinger", params={"resource": f"acct:{login}@{a.host}"}
    )
    assert finger.status_code == 200
    assert finger.headers["content-type"].startswith("application/jrd+json")
    self_link = [x for x in finger.json()["links"] if x["rel"] == "self"][0]
    assert self_link["href"] == f"{a.url}/users/{login}"
    actor = httpx.get(self_link["href"], headers={"Accept": "application/activity+json"})
    assert actor.headers["content-type"].startswith("application/activity+json")
    doc = actor.json()
    assert doc["id"] == f"{a.url}/users/{login}" and doc["type"] == "Person"
    assert doc["preferredUsername"] == login
    assert doc["publicKey"]["id"] == f"{a.url}/users/{login}#main-key"
    assert "BEGIN PUBLIC KEY" in doc["publicKey"]["publicKeyPem"]
    assert doc["endpoints"]["sharedInbox"] == f"{a.url}/inbox"
    # the same key every time (kept, not made per request)
    again = httpx.get(self_link["href"], headers={"Accept": "application/activity+json"}).json()
    assert again["publicKey"]["publicKeyPem"] == doc["publicKey"]["publicKeyPem"]
    # a browser is sent to the page
    page = httpx.get(self_link["href"], headers={"Accept": "text/html"})
    assert page.status_code == 302 and page.headers["location"] == f"/@{login}"
    # an account of another host, or none: 404
    assert (
        httpx.get(
            f"{a.url}/.well-known/webfinger", params={"resource": f"acct:{login}@elsewhere.example"}
        ).status_code
        == 404
    )
    assert httpx.get(f"{a.url}/users/nobody{uuid.uuid4().hex[:6]}").status_code == 404
    # a note is served only for what anyone may see; its replies list only those too
    owner = a.person(unique("vis"))
    seen = owner.status_post("for everyone")
    for visibility in ("private", "direct"):
        hidden = owner.status_post(
            f"not for everyone ({visibility})", visibility=visibility, in_reply_to_id=seen["id"]
        )
        note = httpx.get(hidden["uri"], headers={"Accept": "application/activity+json"})
        assert note.status_code == 404, visibility
    shown = owner.status_post("a public reply", in_reply_to_id=seen["id"])
    replies = httpx.get(
        f"{seen['uri']}/replies", headers={"Accept": "application/activity+json"}
    ).json()
    assert replies["first"]["items"] == [shown["uri"]]
    assert httpx.get(f"{a.url}/nodeinfo/2.1").json()["protocols"] == ["activitypub"]
    meta = httpx.get(f"{a.url}/.well-known/host-meta")
    assert f"{a.url}/.well-known/webfinger?resource={{uri}}" in meta.text


def test_unsigned_or_tampered_activities_are_refused(pair):
    a, b = pair
    login = unique("sig")
    a.person(login)
    body = json.dumps(
        {
            "id": f"{b.url}/x/{uuid.uuid4()}",
            "type": "Follow",
            "actor": f"{b.url}/users/someone",
            "object": f"{a.url}/users/{login}",
        }
    )
    unsigned = httpx.post(
        f"{a.url}/inbox", content=body, headers={"Content-Type": "application/activity+json"}
    )
    assert unsigned.status_code == 401
    forged = httpx.post(
        f"{a.url}/inbox",
        content=body,
        headers={
            "Content-Type": "application/activity+json",
            "Date": "Thu, 01 Jan 2026 00:00:00 GMT",
            "Signature": f'keyId="{b.url}/users/someone#main-key",algorithm="rsa-sha256",'
            'headers="(request-target) host date digest",signature="AAAA"',
        },
    )
    assert forged.status_code == 401
    assert a.person(unique("chk")).account_verify_credentials()  # still serving


def test_follow_post_reply_and_delete_across_servers(pair):
    a, b = pair
    ada_login, bob_login = unique("ada"), unique("bob")
    ada, bob = a.person(ada_login), b.person(bob_login)

    # bob finds ada on the other server and follows her
    found = bob.search_v2(f"@{ada_login}@{a.host}", resolve=True)["accounts"]
    assert [x["acct"] for x in found] == [f"{ada_login}@{a.host}"]
    remote_ada = found[0]
    assert remote_ada["username"] == ada_login
    assert remote_ada["url"] == f"{a.url}/@{ada_login}"
    rel = bob.account_follow(remote_ada["id"])
    assert rel["following"] or rel["requested"]
    me_on_a = ada.me()
    eventually(
        lambda: ada.account(me_on_a["id"])["followers_count"] == 1,
        what="ada's follower count on her server",
    )
    notes = eventually(
        lambda: [n for n in ada.notifications() if n["type"] == "follow"],
        what="ada's follow notification",
    )
    assert notes[0]["account"]["acct"] == f"{bob_login}@{b.host}"

    # ada posts: it reaches bob's home on the other server
    status = ada.status_post("hello from server A\n\nsecond paragraph")
    home = eventually(
        lambda: [s for s in bob.timeline_home() if s["uri"] == status["uri"]],
        what="the post in bob's home",
    )
    theirs = home[0]
    assert theirs["account"]["acct"] == f"{ada_login}@{a.host}"
    assert "hello from server A" in theirs["content"]
    assert "second paragraph" in theirs["content"]
    assert theirs["url"] == status["url"]
    # on bob's server it is in the public timeline as a remote status
    remote_only = bob.timeline_public(remote=True, limit=40)
    local_only = bob.timeline_public(local=True, limit=40)
    assert status["uri"] in [s["uri"] for s in remote_only]
    assert status["uri"] not in [s["uri"] for s in local_only]
    assert all(s["account"]["acct"].count("@") == 1 for s in remote_only)
    own = bob.status_post("a local post on B")
    assert own["id"] in [s["id"] for s in bob.timeline_public(local=True, limit=40)]
    assert own["id"] not in [s["id"] for s in bob.timeline_public(remote=True, limit=40)]

    # bob replies on his server: the reply reaches ada's thread on hers
    ada_followed = eventually(
        lambda: ada.search_v2(f"@{bob_login}@{b.host}", resolve=True)["accounts"],
        what="bob resolved from A",
    )
    ada.account_follow(ada_followed[0]["id"])
    eventually(lambda: bob.me()["followers_count"] == 1, what="ada following bob")
    reply = bob.status_post(f"@{ada_login}@{a.host} welcome", in_reply_to_id=theirs["id"])
    thread = eventually(
        lambda: ada.status_context(status["id"])["descendants"], what="bob's reply in ada's thread"
    )
    assert thread[0]["uri"] == reply["uri"]
    assert thread[0]["account"]["acct"] == f"{bob_login}@{b.host}"

    # ada deletes her post: it leaves bob's home
    ada.status_delete(status["id"])
    eventually(
        lambda: not [s for s in bob.timeline_home() if s["uri"] == status["uri"]],
        what="the delete reaching bob",
    )

    # bob unfollows: ada's count on her server drops back
    bob.account_unfollow(remote_ada["id"])
    eventually(
        lambda: ada.account(me_on_a["id"])["followers_count"] == 0, what="the unfollow reaching A"
    )


def test_mentions_direct_messages_favourites_and_boosts_across_servers(pair):
    a, b = pair
    ann_login, ben_login, amy_login = unique("ann"), unique("ben"), unique("amy")
    ann, ben = a.person(ann_login), b.person(ben_login)
    amy = a.person(amy_login)  # on ann's server, mentioned by nobody
    ben_on_a = eventually(
        lambda: ann.search_v2(f"@{ben_login}@{b.host}", resolve=True)["accounts"],
        what="ben resolved from A",
    )[0]
    ann_on_b = eventually(
        lambda: ben.search_v2(f"@{ann_login}@{a.host}", resolve=True)["accounts"],
        what="ann resolved from B",
    )[0]

    # ann mentions ben (who does not follow her): he is notified on his server
    hello = ann.status_post(f"hello @{ben_login}@{b.host}, and @{amy_login}")
    assert [m["acct"] for m in hello["mentions"]] == [f"{ben_login}@{b.host}", amy_login]
    note = eventually(
        lambda: [n for n in ben.notifications() if n["type"] == "mention"],
        what="ben's mention notification",
    )[0]
    assert note["status"]["uri"] == hello["uri"]
    assert note["account"]["acct"] == f"{ann_login}@{a.host}"
    assert [m["acct"] for m in note["status"]["mentions"]] == [ben_login]

    # ben replies with a direct message to ann: only she sees it on her server
    # (a private mention answering her public post: Mastodon 4.3's default
    # policy filters it; ann accepts private mentions)
    ann.update_notifications_policy(for_private_mentions="accept")
    dm = ben.status_post(
        f"@{ann_login}@{a.host} just between us",
        visibility="direct",
        in_reply_to_id=note["status"]["id"],
    )
    got = eventually(
        lambda: [n for n in ann.notifications() if n["type"] == "mention"],
        what="ann's mention from the DM",
    )[0]
    assert got["status"]["uri"] == dm["uri"] and got["status"]["visibility"] == "direct"
    assert got["status"]["in_reply_to_id"] == hello["id"]
    convs = eventually(lambda: ann.conversations(), what="the DM in ann's conversations")
    assert convs[0]["last_status"]["uri"] == dm["uri"]
    assert dm["uri"] not in [s["uri"] for s in amy.timeline_public(limit=40)]
    assert not [
        n for n in amy.notifications() if n["type"] == "mention" and n["status"]["uri"] == dm["uri"]
    ]

    # ben favourites and boosts ann's post on his server: she hears of both
    theirs = eventually(
        lambda: (
            ben.search_v2(hello["uri"], resolve=False)["statuses"]
            or [n["status"] for n in ben.notifications() if n["type"] == "mention"]
        ),
        what="ann's post on B",
    )[0]
    ben.status_favourite(theirs["id"])
    ben.status_reblog(theirs["id"])
    kinds = eventually(
        lambda: (lambda k: k if {"favourite", "reblog"} <= k else None)(
            {
                n["type"]
                for n in ann.notifications()
                if n["account"]["acct"] == f"{ben_login}@{b.host}"
            }
        ),
        what="ann notified",
    )
    assert {"favourite", "reblog"} <= kinds
    eventually(
        lambda: (lambda s: s["favourites_count"] == 1 and s["reblogs_count"] == 1)(
            ann.status(hello["id"])
        ),
        what="the counts on A",
    )
    ben.status_unfavourite(theirs["id"])
    eventually(lambda: ann.status(hello["id"])["favourites_count"] == 0, what="the Undo Like")
    assert ann_on_b["acct"] == f"{ann_login}@{a.host}" and ben_on_a["id"]


def test_a_locked_account_decides_on_follow_requests_from_another_server(pair):
    a, b = pair
    lee_login = unique("lee")
    lee = a.person(lee_login)
    lee.account_update_credentials(locked=True)
    bob, cat = b.person(unique("bob")), b.person(unique("cat"))
    lee_on_b = bob.search_v2(f"@{lee_login}@{a.host}", resolve=True)["accounts"][0]
    assert lee_on_b["locked"] is True
    assert bob.account_follow(lee_on_b["id"])["requested"] is True
    cat.account_follow(lee_on_b["id"])
    requests = eventually(
        lambda: (lambda r: r if len(r) == 2 else None)(lee.follow_requests()),
        what="two follow requests on A",
    )
    by_acct = {r["acct"].split("@")[0]: r for r in requests}
    assert lee.me()["followers_count"] == 0
    assert {n["type"] for n in lee.notifications()} == {"follow_request"}
    lee.follow_request_authorize(by_acct[bob.me()["username"]]["id"])
    lee.follow_request_reject(by_acct[cat.me()["username"]]["id"])
    assert lee.follow_requests() == []
    assert lee.me()["followers_count"] == 1
    # on B the follows were requests until lee decided
    # cat's server hears of the Reject; bob's of the Accept
    eventually(
        lambda: (lambda r: not r["following"] and not r["requested"])(
            cat.account_relationships([lee_on_b["id"]])[0]
        ),
        what="the Reject reaching B",
    )
    eventually(
        lambda: (lambda r: r["following"] and not r["requested"])(
            bob.account_relationships([lee_on_b["id"]])[0]
        ),
        what="the Accept reaching B",
    )
    # bob's follow holds: lee's followers-only post reaches him, not cat
    private = lee.status_post("for my followers", visibility="private")
    eventually(
        lambda: private["uri"] in [s["uri"] for s in bob.timeline_home()],
        what="the private post in bob's home",
    )
    assert private["uri"] not in [s["uri"] for s in cat.timeline_home()]


def test_images_cross_servers_with_their_descriptions(pair, tmp_path):
    a, b = pair
    pia_login = unique("pia")
    pia, rob = a.person(pia_login), b.person(unique("rob"))
    face, banner = tmp_path / "face.png", tmp_path / "banner.png"
    Image.new("RGB", (500, 500), (20, 90, 200)).save(face)
    Image.new("RGB", (1600, 500), (200, 90, 20)).save(banner)
    pia.account_update_credentials(avatar=str(face), header=str(banner))
    pia_on_b = rob.search_v2(f"@{pia_login}@{a.host}", resolve=True)["accounts"][0]
    # her avatar and header are kept on B and served from there (as Mastodon)
    kept = ("avatar", "avatar_static", "header", "header_static")
    images = eventually(
        lambda: (
            lambda acc: (
                acc if all(acc[f].startswith(f"{b.url}/system/media/") for f in kept) else None
            )
        )(rob.account(pia_on_b["id"])),
        what="pia's avatar and header kept on B",
    )
    for field in kept:
        assert images[field].startswith(f"{b.url}/system/media/"), images
        assert httpx.get(images[field]).headers["content-type"].startswith("image/")
    rob.account_follow(pia_on_b["id"])
    eventually(lambda: pia.me()["followers_count"] == 1, what="rob following pia")
    path = tmp_path / "red.png"
    Image.new("RGB", (320, 200), (200, 30, 30)).save(path)
    media = pia.media_post(str(path), description="a red rectangle", synchronous=True)
    posted = pia.status_post("", media_ids=[media["id"]])
    theirs = eventually(
        lambda: [s for s in rob.timeline_home() if s["uri"] == posted["uri"]],
        what="the image post on B",
    )[0]
    [shown] = theirs["media_attachments"]
    assert shown["description"] == "a red rectangle"
    # kept on B and served from there (as Mastodon): A's URL is its remote_url
    assert shown["remote_url"] == posted["media_attachments"][0]["url"]
    assert theirs["content"] == ""

    def kept_on_b():
        [one] = rob.status(theirs["id"])["media_attachments"]
        return one if one["url"].startswith(f"{b.url}/system/media/") else None

    kept = eventually(kept_on_b, what="the image kept on B")
    assert kept["blurhash"] and kept["meta"]["original"]["width"] == 320
    assert httpx.get(kept["url"]).headers["content-type"].startswith("image/")


def test_authorized_fetch_answers_only_signed_fetches(pair, tmp_path):
    _, b = pair
    c = Instance(tmp_path, "c", REDPOLL_AUTHORIZED_FETCH="1")
    with c.proc:
        login = unique("sec")
        c.person(login)
        actor = f"{c.url}/users/{login}"
        accept = {"Accept": "application/activity+json"}
        assert httpx.get(actor, headers=accept).status_code == 401
        assert httpx.get(f"{actor}/followers", headers=accept).status_code == 401
        assert httpx.get(f"{c.url}/actor", headers=accept).status_code == 200  # always open
        assert (
            httpx.get(
                f"{c.url}/.well-known/webfinger", params={"resource": f"acct:{login}@{c.host}"}
            ).status_code
            == 200
        )
        # another server's fetch is signed (by its own actor): it is answered
        bob = b.person(unique("bob"))
        found = bob.search_v2(f"@{login}@{c.host}", resolve=True)["accounts"]
        assert [a["acct"] for a in found] == [f"{login}@{c.host}"]


def test_a_thread_is_fetched_from_its_server_when_asked(pair):
    a, b = pair
    ava_login = unique("ava")
    ava, cal = a.person(ava_login), a.person(unique("cal"))
    bea = b.person(unique("bea"))
    ava_on_b = bea.search_v2(f"@{ava_login}@{a.host}", resolve=True)["accounts"][0]
    bea.account_follow(ava_on_b["id"])
    eventually(lambda: ava.me()["followers_count"] == 1, what="bea following ava")
    root = ava.status_post("a thread starts here")
    reply = cal.status_post("a reply nobody on B follows", in_reply_to_id=root["id"])
    # the note lists its replies
    doc = httpx.get(root["uri"], headers={"Accept": "application/activity+json"}).json()
    assert doc["replies"]["first"]["items"] == [reply["uri"]]
    theirs = eventually(
        lambda: [s for s in bea.timeline_home() if s["uri"] == root["uri"]], what="the root on B"
    )[0]
    assert bea.status_context(theirs["id"])["descendants"] == []  # not known on B yet
    found = eventually(
        lambda: bea.status_context(theirs["id"])["descendants"], what="the reply fetched from A"
    )
    assert [s["uri"] for s in found] == [reply["uri"]]
    assert found[0]["account"]["acct"].endswith(f"@{a.host}")


def test_edits_boosts_of_others_pins_and_blocks_across_servers(pair):
    a, b = pair
    ada_login, bob_login = unique("ada"), unique("bob")
    ada, bob, fay, cal = (
        a.person(ada_login),
        b.person(bob_login),
        b.person(unique("fay")),
        b.person(unique("cal")),
    )
    ada_on_b = bob.search_v2(f"@{ada_login}@{a.host}", resolve=True)["accounts"][0]
    bob.account_follow(ada_on_b["id"])
    cal.account_follow(ada_on_b["id"])
    bob_on_a = ada.search_v2(f"@{bob_login}@{b.host}", resolve=True)["accounts"][0]
    ada.account_follow(bob_on_a["id"])
    eventually(
        lambda: ada.me()["followers_count"] == 2 and bob.me()["followers_count"] == 1,
        what="the follows counted",
    )

    # an edit reaches the other server
    post = ada.status_post("first version")
    eventually(
        lambda: [s for s in bob.timeline_home() if s["uri"] == post["uri"]], what="the post on B"
    )
    ada.status_update(post["id"], "second version")
    edited = eventually(
        lambda: [
            s
            for s in bob.timeline_home()
            if s["uri"] == post["uri"] and "second version" in s["content"]
        ],
        what="the edit on B",
    )[0]
    assert edited["edited_at"]

    # bob boosts fay's post (unknown on A): A fetches it from B and shows the boost
    note = fay.status_post("fay's own words")
    bob.status_reblog(note["id"])
    boost = eventually(
        lambda: [
            s for s in ada.timeline_home() if s["reblog"] and s["reblog"]["uri"] == note["uri"]
        ],
        what="the boost on A",
    )[0]
    assert boost["account"]["acct"] == f"{bob_login}@{b.host}"
    assert boost["reblog"]["account"]["acct"].endswith(f"@{b.host}")

    # pins are the actor's featured collection
    ada.status_pin(post["id"])
    featured = httpx.get(
        f"{a.url}/users/{ada_login}/collections/featured",
        headers={"Accept": "application/activity+json"},
    ).json()
    assert [n["id"] for n in featured["orderedItems"]] == [post["uri"]]

    # ada blocks cal: his follow ends on both servers
    cal_on_a = ada.search_v2(f"@{cal.me()['username']}@{b.host}", resolve=True)["accounts"][0]
    ada.account_block(cal_on_a["id"])
    assert ada.me()["followers_count"] == 1
    eventually(
        lambda: not cal.account_relationships([ada_on_b["id"]])[0]["following"],
        what="the Block reaching B",
    )
    later = ada.status_post("after the block")
    eventually(
        lambda: [s for s in bob.timeline_home() if s["uri"] == later["uri"]],
        what="the next post on B (to bob)",
    )
    assert later["uri"] not in [s["uri"] for s in cal.timeline_home()]

    # bob blocks ada: on A she no longer follows him
    bob.account_block(ada_on_b["id"])
    eventually(
        lambda: not ada.account_relationships([bob_on_a["id"]])[0]["following"],
        what="bob's Block reaching A",
    )


def when(value) -> float:
    """A time as ActivityStreams (ISO 8601) or Mastodon.py (a datetime) gives it."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value.timestamp()


def counts(poll: dict) -> list:
    return [o["votes_count"] for o in poll["options"]]


def test_a_poll_crosses_servers_and_its_votes_and_end_come_back(pair):
    a, b = pair
    ada_login = unique("ada")
    ada, amy = a.person(ada_login), a.person(unique("amy"))
    bob, bea = b.person(unique("bob")), b.person(unique("bea"))
    ada_on_b = bob.search_v2(f"@{ada_login}@{a.host}", resolve=True)["accounts"][0]
    bob.account_follow(ada_on_b["id"])
    eventually(lambda: ada.me()["followers_count"] == 1, what="bob following ada")

    posted = ada.status_post(
        "tea or coffee?", poll=ada.make_poll(["tea", "coffee", "water"], expires_in=POLL_S)
    )
    # served as a Question, with its options and counts
    doc = httpx.get(posted["uri"], headers={"Accept": "application/activity+json"}).json()
    assert doc["type"] == "Question" and "anyOf" not in doc and "closed" not in doc
    assert [(o["type"], o["name"], o["replies"]["totalItems"]) for o in doc["oneOf"]] == [
        ("Note", "tea", 0),
        ("Note", "coffee", 0),
        ("Note", "water", 0),
    ]
    assert doc["votersCount"] == 0
    assert abs(when(doc["endTime"]) - when(posted["poll"]["expires_at"])) < 1

    # on B: a status with the same poll, as Mastodon's entity
    theirs = eventually(
        lambda: [s for s in bob.timeline_home() if s["uri"] == posted["uri"]], what="the poll on B"
    )[0]
    poll = theirs["poll"]
    assert [o["title"] for o in poll["options"]] == ["tea", "coffee", "water"]
    assert poll["multiple"] is False and poll["expired"] is False and counts(poll) == [0, 0, 0]
    assert abs(when(poll["expires_at"]) - when(posted["poll"]["expires_at"])) < 1
    assert poll["voted"] is False

    # bob and bea vote on B: their server counts them, and so does A
    voted = bob.poll_vote(theirs["id"], [1])
    assert voted["voted"] is True and voted["own_votes"] == [1] and counts(voted) == [0, 1, 0]
    bea.poll_vote(theirs["id"], [2])
    with pytest.raises(Exception, match="already voted"):
        bob.poll_vote(theirs["id"], [0])
    eventually(
        lambda: (lambda p: counts(p) == [0, 1, 1] and p["voters_count"] == 2)(
            ada.poll(posted["id"])
        ),
        what="B's votes counted on A",
    )
    amy.poll_vote(posted["id"], [1])  # a vote B knows nothing of, but from A
    assert counts(ada.poll(posted["id"])) == [0, 2, 1]

    # the poll ends on A: B gets its final counts, closed
    final = eventually(
        lambda: (lambda p: p if p["expired"] and counts(p) == [0, 2, 1] else None)(
            bob.poll(theirs["id"])
        ),
        timeout=POLL_S + 30,
        what="the final counts on B",
    )
    assert final["voters_count"] == 3 and final["own_votes"] == [1]
    assert bob.status(theirs["id"])["edited_at"] is None  # new counts are no edit
    # (B's copy ends at A's end to the second: A's may close a moment later)
    doc = eventually(
        lambda: (lambda d: d if d.get("closed") else None)(
            httpx.get(posted["uri"], headers={"Accept": "application/activity+json"}).json()
        ),
        what="the Question closed on A",
    )
    assert [o["replies"]["totalItems"] for o in doc["oneOf"]] == [0, 2, 1]
    # bob, who voted there, is told on B that it ended
    eventually(
        lambda: [
            n
            for n in bob.notifications()
            if n["type"] == "poll" and n["status"]["id"] == theirs["id"]
        ],
        what="bob's poll notification",
    )


def test_a_poll_on_b_is_voted_in_from_a(pair):
    a, b = pair
    cal_login = unique("cal")
    cal, ann = b.person(cal_login), a.person(unique("ann"))
    cal_on_a = ann.search_v2(f"@{cal_login}@{b.host}", resolve=True)["accounts"][0]
    ann.account_follow(cal_on_a["id"])
    eventually(lambda: cal.me()["followers_count"] == 1, what="ann following cal")
    posted = cal.status_post(
        "pick any", poll=cal.make_poll(["red", "green", "blue"], expires_in=600, multiple=True)
    )
    theirs = eventually(
        lambda: [s for s in ann.timeline_home() if s["uri"] == posted["uri"]],
        what="cal's poll on A",
    )[0]
    assert theirs["poll"]["multiple"] is True
    voted = ann.poll_vote(theirs["id"], [0, 2])
    assert voted["own_votes"] == [0, 2] and counts(voted) == [1, 0, 1]
    eventually(
        lambda: (lambda p: counts(p) == [1, 0, 1] and p["voters_count"] == 1)(
            cal.poll(posted["id"])
        ),
        what="ann's vote counted on B",
    )
    # the vote is no reply: nothing in the thread on either side
    assert cal.status(posted["id"])["replies_count"] == 0
    assert cal.status_context(posted["id"])["descendants"] == []


def test_a_remote_vote_counts_once_and_never_as_a_reply(pair):
    a, _ = pair
    ada_login = unique("ada")
    ada = a.person(ada_login)
    ada_uri = f"{a.url}/users/{ada_login}"
    peer = Peer()
    try:
        carl, dan = peer.actor("carl"), peer.actor("dan")
        short = ada.status_post(
            "one choice", poll=ada.make_poll(["tea", "coffee"], expires_in=POLL_S)
        )
        many = ada.status_post(
            "several", poll=ada.make_poll(["a", "b", "c"], expires_in=600, multiple=True)
        )
        inbox = f"{a.url}/inbox"
        assert peer.vote(inbox, carl, short["uri"], ada_uri, "tea") == 202
        eventually(lambda: counts(ada.poll(short["id"])) == [1, 0], what="carl's vote counted")
        # again, for the same option or another: refused (one vote per account)
        assert peer.vote(inbox, carl, short["uri"], ada_uri, "tea") == 202
        assert peer.vote(inbox, carl, short["uri"], ada_uri, "coffee") == 202
        # several choices: once per option
        for title in ("a", "c", "a"):
            assert peer.vote(inbox, carl, many["uri"], ada_uri, title) == 202
        # a vote attributed to another actor, or naming no option: nothing
        assert peer.vote(inbox, carl, many["uri"], ada_uri, "b", attributedTo=dan) == 202
        assert peer.vote(inbox, dan, many["uri"], ada_uri, "zzz") == 202
        a.settle()
        poll = ada.poll(short["id"])
        assert counts(poll) == [1, 0] and poll["voters_count"] == 1
        poll = ada.poll(many["id"])
        assert counts(poll) == [1, 0, 1] and poll["voters_count"] == 1
        for status in (short, many):  # votes are never replies
            assert ada.status(status["id"])["replies_count"] == 0
            assert ada.status_context(status["id"])["descendants"] == []

        # after its end: refused; carl's server is told the final counts
        updates = eventually(
            lambda: [
                x
                for x in peer.received
                if x.get("type") == "Update"
                and x["object"].get("id") == short["uri"]
                and x["object"].get("closed")
            ],
            timeout=POLL_S + 30,
            what="the closed poll at carl's server",
        )
        question = updates[-1]["object"]
        assert updates[-1]["actor"] == ada_uri and question["type"] == "Question"
        assert [(o["name"], o["replies"]["totalItems"]) for o in question["oneOf"]] == [
            ("tea", 1),
            ("coffee", 0),
        ]
        assert question["votersCount"] == 1
        assert peer.vote(inbox, dan, short["uri"], ada_uri, "coffee") == 202
        a.settle()
        assert counts(ada.poll(short["id"])) == [1, 0]
    finally:
        peer.close()


def test_remote_video_and_audio_are_shown_through_the_media_proxy(pair):
    a, _ = pair
    ada_login = unique("ada")
    ada = a.person(ada_login)
    ada_uri = f"{a.url}/users/{ada_login}"
    peer = Peer()
    try:
        eve = peer.actor("eve")
        note_id = f"{eve}/statuses/{uuid.uuid4().hex}"
        media = [
            {
                "type": "Document",
                "mediaType": "video/mp4",
                "url": f"{peer.base}/m/clip.mp4",
                "name": "a short clip",
                "width": 640,
                "height": 360,
                "icon": {"type": "Image", "url": f"{peer.base}/m/clip.jpg"},
            },
            {"type": "Audio", "url": f"{peer.base}/m/song.ogg", "name": "a song"},
            {"type": "Document", "mediaType": "image/png", "url": f"{peer.base}/m/pic.png"},
            {"type": "Document", "mediaType": "application/pdf", "url": f"{peer.base}/m/x.pdf"},
        ]
        note = {
            "id": note_id,
            "type": "Note",
            "attributedTo": eve,
            "content": f"<p>for @{ada_login}</p>",
            "to": [documents.PUBLIC],
            "cc": [ada_uri],
            "tag": [{"type": "Mention", "href": ada_uri, "name": f"@{ada_login}"}],
            "attachment": media,
        }
        assert (
            peer.post(
                f"{a.url}/inbox",
                {"id": f"{note_id}/activity", "type": "Create", "actor": eve, "object": note},
            )
            == 202
        )
        status = eventually(
            lambda: [n["status"] for n in ada.notifications() if n["type"] == "mention"],
            what="eve's note on A",
        )[0]
        shown = [
            (m["type"], m["url"], m["remote_url"], m["description"])
            for m in status["media_attachments"]
        ]
        # (an image is kept here: until then, and here as its peer answers
        # 404 for it, it is shown through this server's media proxy)
        # a video and a sound too (kept here as images are)
        video, sound, image = status["media_attachments"][:3]
        for one in (video, sound, image):
            assert one["url"].startswith(f"{a.url}/media_proxy/")
        assert shown == [
            ("video", video["url"], f"{peer.base}/m/clip.mp4", "a short clip"),
            ("audio", sound["url"], f"{peer.base}/m/song.ogg", "a song"),
            ("image", image["url"], f"{peer.base}/m/pic.png", None),
        ]
        video = status["media_attachments"][0]
        # its preview is kept here once fetched (this peer answers 404 for it)
        assert video["preview_remote_url"] == f"{peer.base}/m/clip.jpg"
        assert video["preview_url"].startswith(f"{a.url}/media_proxy/")
        assert video["meta"]["original"]["width"] == 640
    finally:
        peer.close()


def test_follow_favourite_and_block_again_after_taking_them_back(pair):
    """Favouriting, following or blocking again soon after taking it back
    reaches the other server: each is a new activity (a server drops an
    activity id it has seen in the last days)."""
    a, b = pair
    ada_login, bob_login = unique("ada"), unique("bob")
    ada, bob = a.person(ada_login), b.person(bob_login)
    remote_ada = bob.search_v2(f"@{ada_login}@{a.host}", resolve=True)["accounts"][0]
    me_on_a = ada.me()
    bob.account_follow(remote_ada["id"])
    eventually(lambda: ada.account(me_on_a["id"])["followers_count"] == 1, what="bob following ada")
    status = ada.status_post("favourite me twice")
    remote_status = eventually(
        lambda: [s for s in bob.timeline_home() if s["uri"] == status["uri"]],
        what="ada's status in bob's home",
    )[0]
    for round_ in range(2):
        bob.status_favourite(remote_status["id"])
        eventually(
            lambda: ada.status(status["id"])["favourites_count"] == 1,
            what=f"bob's favourite on A (round {round_})",
        )
        bob.status_unfavourite(remote_status["id"])
        eventually(
            lambda: ada.status(status["id"])["favourites_count"] == 0,
            what=f"bob's unfavourite on A (round {round_})",
        )
    for round_ in range(2):
        bob.account_unfollow(remote_ada["id"])
        eventually(
            lambda: ada.account(me_on_a["id"])["followers_count"] == 0,
            what=f"bob's unfollow on A (round {round_})",
        )
        bob.account_follow(remote_ada["id"])
        eventually(
            lambda: ada.account(me_on_a["id"])["followers_count"] == 1,
            what=f"bob following ada again (round {round_})",
        )
    bob_on_a = ada.search_v2(f"@{bob_login}@{b.host}", resolve=True)["accounts"][0]
    for round_ in range(2):
        bob.account_block(remote_ada["id"])
        eventually(
            lambda: ada.account_relationships([bob_on_a["id"]])[0]["blocked_by"],
            what=f"bob's block on A (round {round_})",
        )
        bob.account_unblock(remote_ada["id"])
        eventually(
            lambda: not ada.account_relationships([bob_on_a["id"]])[0]["blocked_by"],
            what=f"bob's unblock on A (round {round_})",
        )
