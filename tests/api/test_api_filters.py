"""Content filters, driven by Mastodon.py (and plain HTTP for form bodies)
against a real ``redpoll serve``, in both topologies: the v2 filters with
their keywords and statuses, the v1 filters mapped onto them, Mastodon's
refusals (nothing half-written), owner-only access, and the filters applied
on every read path by context: ``hide`` leaves a status out, ``warn`` adds
``filtered``; whole words, expiry, boosts, one's own statuses."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from mastodon import Mastodon, MastodonAPIError, MastodonNotFoundError
from support.mastodon import accounts  # noqa: F401

from redpoll.core import limits

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]


def ids(statuses) -> list:
    return [s["id"] for s in statuses]


def run(fn, *args, **kwargs):
    return asyncio.to_thread(fn, *args, **kwargs)


async def test_a_v2_filter_is_created_read_changed_and_deleted_by_its_owner_only(srv, rp):
    alice, bob = await run(accounts, srv.base, 2)
    f = await run(
        alice.create_filter_v2,
        "Spoilers",
        ["home", "public"],
        filter_action="warn",
        keywords_attributes=[
            {"keyword": "finale", "whole_word": True},
            {"keyword": "ending", "whole_word": False},
        ],
    )
    assert f["title"] == "Spoilers" and f["context"] == ["home", "public"]
    assert f["filter_action"] == "warn" and f["expires_at"] is None
    assert [(k["keyword"], k["whole_word"]) for k in f["keywords"]] == [
        ("finale", True),
        ("ending", False),
    ]
    assert f["statuses"] == []
    assert [x["id"] for x in await run(alice.filters_v2)] == [f["id"]]
    assert (await run(alice.filter_v2, f["id"]))["title"] == "Spoilers"

    finale, ending = f["keywords"]
    changed = await run(
        alice.update_filter_v2,
        f["id"],
        title="Plot",
        filter_action="hide",
        keywords_attributes=[
            {"id": finale["id"], "keyword": "FINALE"},
            {"id": ending["id"], "_destroy": True},
            {"keyword": "twist"},
        ],
    )
    assert changed["title"] == "Plot" and changed["filter_action"] == "hide"
    assert changed["context"] == ["home", "public"]  # not sent: kept
    assert [k["keyword"] for k in changed["keywords"]] == ["FINALE", "twist"]
    assert changed["keywords"][0]["id"] == finale["id"]
    assert changed["keywords"][1]["whole_word"] is True  # Mastodon's default

    added = await run(alice.add_filter_keyword_v2, f["id"], "reveal", whole_word=False)
    keywords = await run(alice.filter_keywords_v2, f["id"])
    assert [k["keyword"] for k in keywords] == ["FINALE", "twist", "reveal"]
    await run(alice.delete_filter_keyword_v2, added["id"])
    assert [k["keyword"] for k in await run(alice.filter_keywords_v2, f["id"])] == [
        "FINALE",
        "twist",
    ]

    post = await run(bob.status_post, "a status to filter")
    fs = await run(alice.add_filter_status_v2, f["id"], post["id"])
    assert fs["status_id"] == post["id"]
    assert (await run(alice.filter_status_v2, fs["id"]))["status_id"] == post["id"]
    assert [s["status_id"] for s in await run(alice.filter_statuses_v2, f["id"])] == [post["id"]]

    # another account sees none of it: every id answers 404
    assert await run(bob.filters_v2) == []
    for call, arg in (
        (bob.filter_v2, f["id"]),
        (bob.filter_keywords_v2, f["id"]),
        (bob.delete_filter_v2, f["id"]),
        (bob.filter_status_v2, fs["id"]),
        (bob.delete_filter_keyword_v2, finale["id"]),
    ):
        with pytest.raises(MastodonNotFoundError):
            await run(call, arg)
    with httpx.Client(
        base_url=srv.base, timeout=30, headers={"Authorization": f"Bearer {bob.access_token}"}
    ) as http:
        assert http.get(f"/api/v2/filters/keywords/{finale['id']}").status_code == 404
        assert http.put(f"/api/v2/filters/{f['id']}", json={"title": "x"}).status_code == 404
    with httpx.Client(
        base_url=srv.base, timeout=30, headers={"Authorization": f"Bearer {alice.access_token}"}
    ) as http:
        got = http.get(f"/api/v2/filter_keywords/{finale['id']}").json()
        assert got == {"id": finale["id"], "keyword": "FINALE", "whole_word": True}
        assert (
            http.put(f"/api/v2/filter_keywords/{finale['id']}", json={"whole_word": False}).json()[
                "whole_word"
            ]
            is False
        )
        assert http.delete(f"/api/v2/filter_statuses/{fs['id']}").status_code == 200
    assert await run(alice.filter_statuses_v2, f["id"]) == []

    await run(alice.delete_filter_v2, f["id"])
    assert await run(alice.filters_v2) == []
    with pytest.raises(MastodonNotFoundError):
        await run(alice.filter_v2, f["id"])


async def test_bad_input_is_refused_whole_with_a_422(srv, rp):
    (alice,) = await run(accounts, srv.base, 1)
    with httpx.Client(
        base_url=srv.base, timeout=30, headers={"Authorization": f"Bearer {alice.access_token}"}
    ) as http:
        good = {"title": "t", "context": ["home"], "keywords_attributes": [{"keyword": "k"}]}
        for bad in (
            {"context": ["home"]},
            {**good, "title": "  "},
            {**good, "context": []},
            {**good, "context": ["home", "everywhere"]},
            {**good, "filter_action": "explode"},
            {**good, "expires_in": "soon"},
            {
                **good,
                "keywords_attributes": [{"keyword": "x" * (limits.FILTER_KEYWORD_MAX_CHARS + 1)}],
            },
            {
                **good,
                "keywords_attributes": [
                    {"keyword": f"k{i}"} for i in range(limits.FILTER_KEYWORDS_MAX + 1)
                ],
            },
            {**good, "keywords_attributes": "k"},
        ):
            r = http.post("/api/v2/filters", json=bad)
            assert r.status_code == 422, (bad, r.text)
            assert r.json()["error"].startswith("Validation failed")
        assert http.get("/api/v2/filters").json() == []  # nothing half-written

        made = http.post("/api/v2/filters", json=good).json()
        # a change that fails on one keyword changes nothing at all
        r = http.put(
            f"/api/v2/filters/{made['id']}",
            json={
                "title": "renamed",
                "keywords_attributes": [{"keyword": "new"}, {"id": "999999999", "keyword": "x"}],
            },
        )
        assert r.status_code == 422
        again = http.get(f"/api/v2/filters/{made['id']}").json()
        assert again["title"] == "t" and [k["keyword"] for k in again["keywords"]] == ["k"]
        r = http.post(f"/api/v2/filters/{made['id']}/keywords", json={"keyword": ""})
        assert r.status_code == 422
        r = http.post(f"/api/v2/filters/{made['id']}/statuses", json={"status_id": "424242"})
        assert r.status_code == 404  # a status the caller cannot see


async def test_form_bodies_with_nested_keywords_attributes(srv, rp):
    (alice,) = await run(accounts, srv.base, 1)
    with httpx.Client(
        base_url=srv.base, timeout=30, headers={"Authorization": f"Bearer {alice.access_token}"}
    ) as http:
        r = http.post(
            "/api/v2/filters",
            content=(
                "title=Form&context[]=home&context[]=thread&filter_action=hide&expires_in=3600"
                "&keywords_attributes[][keyword]=one&keywords_attributes[][whole_word]=false"
                "&keywords_attributes[][keyword]=two"
            ),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert r.status_code == 200, r.text
        f = r.json()
        assert f["context"] == ["home", "thread"] and f["filter_action"] == "hide"
        assert f["expires_at"] is not None
        assert [(k["keyword"], k["whole_word"]) for k in f["keywords"]] == [
            ("one", False),
            ("two", True),
        ]
        r = http.put(
            f"/api/v2/filters/{f['id']}",
            data={
                "keywords_attributes[0][id]": f["keywords"][0]["id"],
                "keywords_attributes[0][_destroy]": "true",
                "keywords_attributes[1][keyword]": "three",
            },
        )
        assert [k["keyword"] for k in r.json()["keywords"]] == ["two", "three"]


async def test_v1_filters_are_keywords_of_v2_filters(srv, rp):
    (alice,) = await run(accounts, srv.base, 1)
    v1 = await run(
        alice.filter_create,
        "spoiler",
        ["home", "notifications"],
        irreversible=True,
        whole_word=False,
    )
    assert v1["phrase"] == "spoiler" and v1["irreversible"] is True
    assert v1["whole_word"] is False and v1["context"] == ["home", "notifications"]
    (v2,) = await run(alice.filters_v2)
    assert v2["title"] == "spoiler" and v2["filter_action"] == "hide"
    assert v2["keywords"][0]["id"] == v1["id"]
    assert (await run(alice.filter, v1["id"]))["phrase"] == "spoiler"

    changed = await run(alice.filter_update, v1["id"], phrase="spoilers", irreversible=False)
    assert changed["phrase"] == "spoilers" and changed["irreversible"] is False
    assert (await run(alice.filter_v2, v2["id"]))["filter_action"] == "warn"

    # a v2 filter of two keywords is two v1 filters, which v1 may not reshape
    await run(alice.add_filter_keyword_v2, v2["id"], "leak")
    listed = await run(alice.filters)
    assert sorted(x["phrase"] for x in listed) == ["leak", "spoilers"]
    with pytest.raises(MastodonAPIError) as refused:
        await run(alice.filter_update, v1["id"], context=["public"])
    assert refused.value.args[1] == 422
    assert (await run(alice.filter_v2, v2["id"]))["context"] == ["home", "notifications"]

    await run(alice.filter_delete, v1["id"])
    assert [x["phrase"] for x in await run(alice.filters)] == ["leak"]


def _home(m: Mastodon) -> list:
    return m.timeline_home(limit=40)


async def test_hide_leaves_a_status_out_of_every_read_in_its_contexts(srv, rp):
    alice, bob, carol, dave = await run(accounts, srv.base, 4)
    me = await run(alice.me)
    bob_id = (await run(bob.me))["id"]
    await run(alice.account_follow, bob_id)
    plain = await run(bob.status_post, "a plain day #weather")
    bad = await run(bob.status_post, "Broccoli again #weather")
    reply = await run(bob.status_post, "more BROCCOLI here", in_reply_to_id=plain["id"])
    mention = await run(bob.status_post, f"@{me['acct']} broccoli for you")
    daves = await run(dave.status_post, "broccoli soup")
    boost = await run(carol.status_reblog, daves["id"])
    mine = await run(alice.status_post, "my own broccoli")
    await rp.drain()

    # carol's filters never apply to alice
    await run(
        carol.create_filter_v2,
        "plain",
        ["home", "public", "thread", "account", "notifications"],
        filter_action="hide",
        keywords_attributes=[{"keyword": "plain"}],
    )
    await run(alice.account_follow, (await run(carol.me))["id"])
    await rp.drain()
    home = ids(await run(_home, alice))
    assert bad["id"] in home and plain["id"] in home and boost["id"] in home

    await run(
        alice.create_filter_v2,
        "veg",
        ["home", "notifications", "public", "thread", "account"],
        filter_action="hide",
        keywords_attributes=[{"keyword": "broccoli"}],
    )
    home = ids(await run(_home, alice))
    assert plain["id"] in home
    assert bad["id"] not in home and reply["id"] not in home
    assert boost["id"] not in home  # a boost of a filtered status is filtered
    assert mine["id"] in home  # one's own statuses are never hidden
    public = ids(await run(alice.timeline_public, limit=40))
    assert plain["id"] in public and bad["id"] not in public
    tag = ids(await run(alice.timeline_hashtag, "weather"))
    assert tag == [plain["id"]]
    profile = ids(await run(alice.account_statuses, bob_id, limit=40))
    assert plain["id"] in profile and bad["id"] not in profile
    thread = await run(alice.status_context, plain["id"])
    assert reply["id"] not in ids(thread["descendants"])
    notes = await run(alice.notifications)
    assert mention["id"] not in [n["status"]["id"] for n in notes if n.get("status")]
    # the same reads by another viewer still show it all
    assert bad["id"] in ids(await run(carol.timeline_public, limit=40))
    assert reply["id"] in ids((await run(carol.status_context, plain["id"]))["descendants"])

    # a status asked for by id is not hidden: it carries what it meets
    shown = await run(alice.status, bad["id"])
    assert shown["filtered"][0]["filter"]["title"] == "veg"
    assert shown["filtered"][0]["keyword_matches"] == ["Broccoli"]


async def test_warn_marks_the_status_with_filtered_and_contexts_hold(srv, rp):
    alice, bob = await run(accounts, srv.base, 2)
    bob_id = (await run(bob.me))["id"]
    await run(alice.account_follow, bob_id)
    post = await run(bob.status_post, "the Finale was great", spoiler_text="tv")
    other = await run(bob.status_post, "nothing to see")
    boost = await run(bob.status_reblog, post["id"])
    await rp.drain()
    f = await run(
        alice.create_filter_v2,
        "tv",
        ["home", "account"],
        filter_action="warn",
        keywords_attributes=[{"keyword": "finale"}],
    )
    home = {s["id"]: s for s in await run(_home, alice)}
    profile = {s["id"]: s for s in await run(alice.account_statuses, bob_id)}
    assert home[other["id"]]["filtered"] == []
    (result,) = home[post["id"]]["filtered"]
    assert result["filter"]["id"] == f["id"] and result["filter"]["filter_action"] == "warn"
    assert result["keyword_matches"] == ["Finale"] and result["status_matches"] is None
    assert profile[boost["id"]]["filtered"][0]["filter"]["id"] == f["id"]
    assert profile[boost["id"]]["reblog"]["filtered"][0]["filter"]["id"] == f["id"]
    # public is not one of its contexts; bob (the author) has no filters
    public = {s["id"]: s for s in await run(alice.timeline_public, limit=40)}
    assert public[post["id"]]["filtered"] == []
    assert (await run(bob.status, post["id"]))["filtered"] == []
    # the rendering is shared: the next viewer gets it without alice's mark
    with httpx.Client(base_url=srv.base, timeout=30) as http:
        anon = http.get(f"/api/v1/statuses/{post['id']}").json()
    assert "filtered" not in anon

    # a status filter matches the status and boosts of it
    await run(alice.add_filter_status_v2, f["id"], other["id"])
    home = {s["id"]: s for s in await run(_home, alice)}
    assert home[other["id"]]["filtered"][0]["status_matches"] == [other["id"]]


async def test_whole_word_and_expiry(srv, rp):
    alice, bob = await run(accounts, srv.base, 2)
    await run(alice.account_follow, (await run(bob.me))["id"])
    cat = await run(bob.status_post, "a cat, sleeping")
    concat = await run(bob.status_post, "concatenate the strings")
    await rp.drain()
    whole = await run(
        alice.create_filter_v2,
        "cats",
        ["home"],
        filter_action="hide",
        keywords_attributes=[{"keyword": "cat", "whole_word": True}],
    )
    home = ids(await run(_home, alice))
    assert cat["id"] not in home and concat["id"] in home
    await run(
        alice.update_filter_v2,
        whole["id"],
        keywords_attributes=[{"id": whole["keywords"][0]["id"], "whole_word": False}],
    )
    home = ids(await run(_home, alice))
    assert cat["id"] not in home and concat["id"] not in home

    await run(alice.update_filter_v2, whole["id"], expires_in=1)
    await asyncio.sleep(1.5)
    home = ids(await run(_home, alice))
    assert cat["id"] in home and concat["id"] in home  # expired: does nothing
    assert (await run(alice.filter_v2, whole["id"]))["expires_at"] is not None  # still listed


async def test_media_descriptions_are_matched(srv, rp, tmp_path):
    alice, bob = await run(accounts, srv.base, 2)
    await run(alice.account_follow, (await run(bob.me))["id"])
    from PIL import Image

    path = tmp_path / "p.png"
    Image.new("RGB", (8, 8), "red").save(path)
    media = await run(
        bob.media_post, str(path), description="a photo of a spider", synchronous=True
    )
    post = await run(bob.status_post, "look", media_ids=[media["id"]])
    await rp.drain()
    await run(
        alice.create_filter_v2,
        "bugs",
        ["home"],
        filter_action="hide",
        keywords_attributes=[{"keyword": "spider"}],
    )
    deadline = time.monotonic() + 10
    while post["id"] in ids(await run(_home, alice)) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert post["id"] not in ids(await run(_home, alice))
