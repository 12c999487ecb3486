"""Polls driven by Mastodon.py (``make_poll``, ``status_post(poll=...)``,
``poll``, ``poll_vote``) and by plain form-encoded requests against a real
``redpoll serve``, in both topologies: the Poll entity on the status, in
timelines, in a boost and on the streams; one vote per account and
Mastodon's refusals (nothing written); hide_totals; the one visibility
decision; the end's ``poll`` notifications; edits that keep or reset the
votes; a deleted status takes its poll along."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mastodon import MastodonAPIError, MastodonNotFoundError
from support.mastodon import Listener, accounts, wait_for  # noqa: F401

from redpoll.polls import polls

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]


def run(fn, *args, **kwargs):
    return asyncio.to_thread(fn, *args, **kwargs)


def refused(fn, *args, **kwargs) -> tuple[int, str]:
    with pytest.raises(MastodonAPIError) as caught:
        fn(*args, **kwargs)
    return caught.value.args[1], str(caught.value.args[-1])


def http(srv, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=srv.base, timeout=30, headers=headers)


async def test_a_poll_posted_as_json_and_voted_in_shows_everywhere_as_mastodon(srv, rp):
    alice, bob, cat = await run(accounts, srv.base, 3)
    me = await run(alice.me)
    await run(bob.account_follow, me["id"])
    listener = Listener()
    handle = await run(bob.stream_user, listener, run_async=True)
    try:
        await srv.wait_subscribers(1)
        poll = alice.make_poll(["tea", "coffee", "water"], expires_in=3600)
        status = await run(alice.status_post, "what do you drink?", poll=poll)
        p = status["poll"]
        assert p["id"] == status["id"] and p["expired"] is False and p["multiple"] is False
        assert [o["title"] for o in p["options"]] == ["tea", "coffee", "water"]
        assert [o["votes_count"] for o in p["options"]] == [0, 0, 0]
        assert p["votes_count"] == 0 and p["voters_count"] == 0 and p["emojis"] == []
        assert p["voted"] is True and p["own_votes"] == []  # the author, as Mastodon says
        # the follower's stream carries the poll
        await wait_for(lambda: any(u["id"] == status["id"] for u in listener.updates), "update")
        streamed = [u for u in listener.updates if u["id"] == status["id"]][0]
        assert [o["title"] for o in streamed["poll"]["options"]] == ["tea", "coffee", "water"]
    finally:
        handle.close()

    before = await run(bob.poll, status["id"])
    assert before["voted"] is False and before["own_votes"] == []
    voted = await run(bob.poll_vote, status["id"], [1])
    assert voted["voted"] is True and voted["own_votes"] == [1]
    assert [o["votes_count"] for o in voted["options"]] == [0, 1, 0]
    assert voted["votes_count"] == 1 and voted["voters_count"] == 1
    # the status everywhere it renders follows the vote (nothing baked into a kept rendering)
    shown = await run(cat.status, status["id"])
    assert [o["votes_count"] for o in shown["poll"]["options"]] == [0, 1, 0]
    assert shown["poll"]["voted"] is False
    await run(cat.poll_vote, status["id"], 1)
    home = await run(bob.timeline_home)
    mine = [s for s in home if s["id"] == status["id"]][0]["poll"]
    assert [o["votes_count"] for o in mine["options"]] == [0, 2, 0] and mine["own_votes"] == [1]
    # a boost wraps it: the poll is the original's, with the booster's own votes
    boost = await run(cat.status_reblog, status["id"])
    assert boost["poll"] is None and boost["reblog"]["poll"]["own_votes"] == [1]
    with http(srv) as anon:
        seen = anon.get(f"/api/v1/statuses/{boost['id']}").json()
        assert seen["reblog"]["poll"]["votes_count"] == 2
        assert "voted" not in seen["reblog"]["poll"]  # no viewer, no own votes
        assert "voted" not in anon.get(f"/api/v1/polls/{status['id']}").json()

    # Mastodon's refusals, each a 422 with nothing counted
    code, message = await run(refused, bob.poll_vote, status["id"], [0])
    assert code == 422 and "You have already voted" in message
    code, message = await run(refused, alice.poll_vote, status["id"], [0])
    assert code == 422 and "own" in message
    (dan,) = await run(accounts, srv.base, 1)
    for choices in ([3], [0, 1]):
        code, _ = await run(refused, dan.poll_vote, status["id"], choices)
        assert code == 422
    after = await run(dan.poll, status["id"])
    assert after["votes_count"] == 2 and after["voters_count"] == 2 and after["voted"] is False


async def test_a_form_encoded_poll_and_vote_are_read_as_json_ones(srv, rp):
    alice, bob = await run(accounts, srv.base, 2)
    with http(srv, alice.access_token) as c:
        r = c.post(
            "/api/v1/statuses",
            data={
                "status": "form poll",
                "poll[options][]": ["one", "two", "three", "four"],
                "poll[expires_in]": "300",
                "poll[multiple]": "true",
                "poll[hide_totals]": "true",
            },
        )
        assert r.status_code == 200, r.text
        p = r.json()["poll"]
        assert [o["title"] for o in p["options"]] == ["one", "two", "three", "four"]
        assert p["multiple"] is True
    with http(srv, bob.access_token) as c:
        r = c.post(f"/api/v1/polls/{p['id']}/votes", data={"choices[]": ["0", "3"]})
        assert r.status_code == 200, r.text
        voted = r.json()
        assert voted["own_votes"] == [0, 3] and voted["votes_count"] == 2
        assert voted["voters_count"] == 1
        # hide_totals: no per-option counts before the end, but for the author
        assert [o["votes_count"] for o in voted["options"]] == [None] * 4
        r = c.post(f"/api/v1/polls/{p['id']}/votes", json={"choices": [1]})
        assert r.status_code == 422 and "You have already voted" in r.json()["error"]
    author_view = await run(alice.poll, p["id"])
    assert [o["votes_count"] for o in author_view["options"]] == [1, 0, 0, 1]


@pytest.mark.parametrize(
    "poll",
    [
        {"options": ["only"], "expires_in": 600},
        {"options": ["a", "b", "c", "d", "e"], "expires_in": 600},
        {"options": ["a", "a"], "expires_in": 600},
        {"options": ["a", "b" * 51], "expires_in": 600},
        {"options": ["a", "b"], "expires_in": 299},
        {"options": ["a", "b"], "expires_in": 2_629_747},
        {"options": ["a", "b"]},
        "not an object",
    ],
)
async def test_a_bad_poll_is_a_422_and_posts_nothing(srv, rp, poll):
    (alice,) = await run(accounts, srv.base, 1)
    with http(srv, alice.access_token) as c:
        r = c.post("/api/v1/statuses", json={"status": "bad poll", "poll": poll})
        assert r.status_code == 422 and "poll" in r.json()["error"], r.text
        me = c.get("/api/v1/accounts/verify_credentials").json()
        assert me["statuses_count"] == 0


async def test_a_poll_with_media_is_refused(srv, rp):
    (alice,) = await run(accounts, srv.base, 1)
    with http(srv, alice.access_token) as c:
        r = c.post(
            "/api/v1/statuses",
            json={
                "status": "both",
                "media_ids": ["1"],
                "poll": {"options": ["a", "b"], "expires_in": 600},
            },
        )
        assert r.status_code == 422 and "poll" in r.json()["error"]
        assert c.get("/api/v1/accounts/verify_credentials").json()["statuses_count"] == 0


async def test_a_poll_is_shown_and_voted_in_only_by_who_may_see_its_status(srv, rp):
    alice, follower, stranger = await run(accounts, srv.base, 3)
    me = await run(alice.me)
    await run(follower.account_follow, me["id"])
    private = await run(
        alice.status_post,
        "followers only",
        poll=alice.make_poll(["a", "b"], expires_in=600),
        visibility="private",
    )
    assert (await run(follower.poll, private["id"]))["id"] == private["id"]
    await run(follower.poll_vote, private["id"], [0])
    for fn, args in ((stranger.poll, ()), (stranger.poll_vote, ([0],))):
        with pytest.raises(MastodonNotFoundError):
            await run(fn, private["id"], *args)
    with http(srv) as anon:
        assert anon.get(f"/api/v1/polls/{private['id']}").status_code == 404
    assert (await run(alice.poll, private["id"]))["voters_count"] == 1
    plain = await run(alice.status_post, "no poll")
    with pytest.raises(MastodonNotFoundError):
        await run(follower.poll, plain["id"])


async def test_the_end_notifies_voters_and_the_author_and_a_delete_takes_the_poll(srv, rp):
    alice, bob, cat = await run(accounts, srv.base, 3)
    status = await run(
        alice.status_post, "ends soon", poll=alice.make_poll(["x", "y"], expires_in=300)
    )
    await run(bob.poll_vote, status["id"], [0])
    # the end's job runs when due: driven past the poll's end here
    record = await rp.statuses.get_status(int(status["id"]))
    end = polls.Poll.of(record).expires_at
    await rp.queue.promote_due()  # what is due now (the status's index job)
    assert await rp.queue.promote_due(end) == 1
    await rp.drain()
    for who in (alice, bob):
        notes = await run(who.notifications)
        assert [(n["type"], n["status"]["id"], n["account"]["id"]) for n in notes] == [
            ("poll", status["id"], (await run(alice.me))["id"])
        ]
        assert notes[0]["status"]["poll"]["voters_count"] == 1  # the poll, with its votes
    assert await run(cat.notifications) == []

    await run(alice.status_delete, status["id"])
    await rp.drain()
    with pytest.raises(MastodonNotFoundError):
        await run(bob.poll, status["id"])


async def test_an_edit_keeps_the_votes_of_unchanged_options_and_resets_changed_ones(srv, rp):
    alice, bob = await run(accounts, srv.base, 2)
    status = await run(
        alice.status_post, "edit me", poll=alice.make_poll(["a", "b"], expires_in=600)
    )
    await run(bob.poll_vote, status["id"], [1])
    same = await run(
        alice.status_update,
        status["id"],
        "edit me, edited",
        poll=alice.make_poll(["a", "b"], expires_in=900),
    )
    assert [o["votes_count"] for o in same["poll"]["options"]] == [0, 1]
    assert same["poll"]["expires_at"] > status["poll"]["expires_at"]
    changed = await run(
        alice.status_update,
        status["id"],
        "new options",
        poll=alice.make_poll(["c", "d", "e"], expires_in=900),
    )
    assert [o["votes_count"] for o in changed["poll"]["options"]] == [0, 0, 0]
    assert (await run(bob.poll, status["id"]))["voted"] is False
    await run(bob.poll_vote, status["id"], [2])
    history = await run(bob.status_history, status["id"])
    assert [[o["title"] for o in v["poll"]["options"]] for v in history] == [
        ["a", "b"],
        ["a", "b"],
        ["c", "d", "e"],
    ]
    # as Mastodon: an edit without a poll removes it
    gone = await run(alice.status_update, status["id"], "no poll any more")
    assert gone["poll"] is None
    with pytest.raises(MastodonNotFoundError):
        await run(bob.poll, status["id"])


async def test_the_instance_states_the_poll_bounds(srv, rp):
    with http(srv) as anon:
        for path in ("/api/v1/instance", "/api/v2/instance"):
            config = anon.get(path).json()["configuration"]["polls"]
            assert config == {
                "max_options": 4,
                "max_characters_per_option": 50,
                "min_expiration": 300,
                "max_expiration": 2_629_746,
            }, path
