"""Trends and suggestions through Mastodon.py against a real ``redpoll
serve``: trending hashtags, links and statuses as Mastodon's entities, with
offset paging, the viewer's blocks applied, open to anonymous readers; who
to follow (v2 and v1), dismissing a suggestion."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mastodon import Mastodon
from support.mastodon import accounts  # noqa: F401

pytestmark = [pytest.mark.timeout(240)]


def call(m: Mastodon, name: str, *args, **kwargs):
    return asyncio.to_thread(getattr(m, name), *args, **kwargs)


async def test_trending_tags_and_links_as_mastodon_shows_them(srv, rp):
    ann, bob, cat = await asyncio.to_thread(accounts, srv.base, 3)
    for m in (ann, bob):
        await call(m, "status_post", "reading #RedpollNews at https://example.org/story?id=7.")
    await call(cat, "status_post", "alone with #quiet")
    await call(
        cat, "status_post", "not listed #hidden https://hidden.example/", visibility="unlisted"
    )

    tags = await call(ann, "trending_tags")
    assert [t["name"] for t in tags] == ["redpollnews", "quiet"]
    today = tags[0]["history"][0]
    assert (today["uses"], today["accounts"]) == ("2", "2") and len(tags[0]["history"]) == 7
    assert tags[0]["url"].endswith("/tags/redpollnews") and tags[0]["following"] is False
    assert [t["name"] for t in await call(ann, "trending_tags", limit=1, offset=1)] == ["quiet"]

    [link] = await call(bob, "trending_links")
    assert link["url"] == "https://example.org/story?id=7"
    assert (link["title"], link["type"], link["description"]) == ("example.org/story", "link", "")
    assert int(link["history"][0]["accounts"]) == 2

    with httpx.Client(base_url=srv.base, timeout=30) as http:  # no token needed
        anon = http.get("/api/v1/trends/tags", params={"limit": 1})
        assert anon.status_code == 200 and [t["name"] for t in anon.json()] == ["redpollnews"]
        assert "offset=1" in anon.headers["link"] and "following" not in anon.json()[0]
        assert http.get("/api/v1/trends").json() == http.get("/api/v1/trends/tags").json()
        assert http.get("/api/v1/trends/links", params={"offset": "x"}).status_code == 422


async def test_trending_statuses_rank_by_interactions_and_hide_what_the_viewer_blocks(srv, rp):
    ann, bob, cat, dan = await asyncio.to_thread(accounts, srv.base, 4)
    liked = await call(ann, "status_post", "liked a lot")
    boosted = await call(bob, "status_post", "boosted once")
    await call(cat, "status_post", "ignored")
    private = await call(cat, "status_post", "mine only", visibility="private")
    for m in (bob, cat, dan):
        await call(m, "status_favourite", liked["id"])
    await call(dan, "status_reblog", boosted["id"])
    await call(cat, "status_favourite", private["id"])  # its author may

    shown = await call(cat, "trending_statuses")
    assert [s["id"] for s in shown] == [liked["id"], boosted["id"]]
    assert shown[0]["favourites_count"] == 3 and shown[0]["favourited"] is True
    assert shown[1]["reblogs_count"] == 1
    assert [s["id"] for s in await call(cat, "trending_statuses", limit=1, offset=1)] == [
        boosted["id"]
    ]
    ann_id = (await call(ann, "me"))["id"]
    await call(dan, "account_block", ann_id)
    assert [s["id"] for s in await call(dan, "trending_statuses")] == [boosted["id"]]
    with httpx.Client(base_url=srv.base, timeout=30) as http:
        anon = http.get("/api/v1/trends/statuses", params={"limit": 1})
        assert [s["id"] for s in anon.json()] == [liked["id"]]
        assert "offset=1" in anon.headers["link"]


async def test_suggestions_v2_v1_and_dismissing_one(srv, rp):
    me, friend, theirs, star, fan = await asyncio.to_thread(accounts, srv.base, 5)
    ids = {}
    for name, m in (("friend", friend), ("theirs", theirs), ("star", star), ("fan", fan)):
        ids[name] = (await call(m, "me"))["id"]
    await call(me, "account_follow", ids["friend"])
    await call(friend, "account_follow", ids["theirs"])
    await call(fan, "account_follow", ids["star"])
    await call(theirs, "account_follow", ids["star"])
    await rp.drain()  # the follows' jobs: the most followed

    found = await call(me, "suggestions_v2")
    assert [(s["account"]["id"], s["source"], s["sources"]) for s in found[:2]] == [
        (ids["theirs"], "past_interactions", ["friends_of_friends", "most_followed"]),
        (ids["star"], "global", ["most_followed"]),
    ]
    assert ids["friend"] not in [s["account"]["id"] for s in found]
    assert [a["id"] for a in await call(me, "suggestions_v1")][:2] == [ids["theirs"], ids["star"]]

    await call(me, "suggestion_delete", ids["theirs"])
    assert ids["theirs"] not in [s["account"]["id"] for s in await call(me, "suggestions_v2")]
    await call(me, "account_follow", ids["star"])
    assert ids["star"] not in [a["id"] for a in await call(me, "suggestions_v1")]
    with httpx.Client(base_url=srv.base, timeout=30) as http:
        assert http.get("/api/v2/suggestions").status_code == 401


async def test_a_trending_links_timeline(srv, rp):
    """GET /api/v1/timelines/link (Mastodon 4.3's LinkFeed): the public
    statuses of discoverable accounts that carried a trending link, newest
    first and paged; what the viewer may not see left out; 404 for a link
    that does not trend."""
    ann, bob, cat, dan = await asyncio.to_thread(accounts, srv.base, 4)
    url = "https://example.org/news/1"
    first = await call(ann, "status_post", f"read {url}")
    await call(bob, "status_post", f"quietly {url}", visibility="unlisted")  # not public
    await call(dan, "status_post", f"friends only {url}", visibility="private")
    await call(cat, "account_update_credentials", discoverable=False)
    await call(cat, "status_post", f"undiscoverable {url}")
    second = await call(bob, "status_post", f"again {url}.")
    assert [link["url"] for link in await call(dan, "trending_links")] == [url]

    found = await call(dan, "timeline_link", url)
    assert [s["id"] for s in found] == [second["id"], first["id"]]
    with httpx.Client(base_url=srv.base, timeout=30) as http:  # no token needed
        page = http.get("/api/v1/timelines/link", params={"url": url, "limit": 1})
        assert [s["id"] for s in page.json()] == [str(second["id"])]
        assert f"max_id={second['id']}" in page.headers["link"]
        older = http.get("/api/v1/timelines/link", params={"url": url, "max_id": str(second["id"])})
        assert [s["id"] for s in older.json()] == [str(first["id"])]
        newer = http.get("/api/v1/timelines/link", params={"url": url, "min_id": str(first["id"])})
        assert [s["id"] for s in newer.json()] == [str(second["id"])]
        for missing in ({"url": "https://example.org/not-trending"}, {}):
            gone = http.get("/api/v1/timelines/link", params=missing)
            assert (gone.status_code, gone.json()) == (404, {"error": "Record not found"})
    # the viewer's blocks and mutes apply, as on every timeline
    await call(dan, "account_block", (await call(ann, "me"))["id"])
    assert [s["id"] for s in await call(dan, "timeline_link", url)] == [second["id"]]
