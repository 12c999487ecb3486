"""Featured hashtags through Mastodon.py against a real ``redpoll serve``
(one server and the cluster): featuring by name and by the tag's route,
counts and last use of one's public and unlisted statuses with the tag
(a followers-only one not counted, a deleted or edited-away one taken out),
the ten-tag cap and a tag featured twice refused with 422 and nothing
written, suggestions of recently used tags, and another's featured tags on
their profile, anonymously too."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from mastodon import MastodonAPIError
from support.mastodon import accounts  # noqa: F401

from redpoll.core import limits

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]


def by_name(tags) -> dict[str, dict]:
    return {t["name"]: t for t in tags}


async def test_featured_tags_count_ones_public_statuses_and_follow_their_edits(srv):
    me, other = await asyncio.to_thread(accounts, srv.base, 2)
    me.status_post("first #Birds")
    gone = me.status_post("second #birds #cats")
    me.status_post("quiet #birds", visibility="unlisted")
    me.status_post("followers only #birds", visibility="private")
    other.status_post("someone else's #birds")
    featured = me.featured_tag_create("Birds")
    assert featured["name"] == "Birds"
    assert featured["statuses_count"] == "3"  # public and unlisted, as Mastodon
    assert featured["last_status_at"].strftime("%Y-%m-%d") == time.strftime(
        "%Y-%m-%d", time.gmtime()
    )
    assert featured["url"].endswith(f"/@{me.me()['username']}/tagged/Birds")
    me.status_delete(gone["id"])
    edited = me.status_post("will lose it #birds")
    me.status_update(edited["id"], "lost it")
    assert by_name(me.featured_tags())["Birds"]["statuses_count"] == "2"
    # twice, an invalid name: 422, nothing kept
    for name in ("birds", "not a tag!"):
        with pytest.raises(MastodonAPIError) as refused:
            me.featured_tag_create(name)
        assert refused.value.args[1] == 422
    assert list(by_name(me.featured_tags())) == ["Birds"]
    # the tag's own routes, and the Tag's featuring flag
    assert me.tag_feature("cats")["featuring"] is True
    assert me.tag("cats")["featuring"] is True
    assert other.tag("cats")["featuring"] is False
    shown = httpx.get(f"{srv.base}/api/v1/accounts/{me.me()['id']}/featured_tags").json()
    assert [t["name"] for t in shown] == ["Birds", "cats"]  # most used first
    assert shown[0]["last_status_at"] == time.strftime("%Y-%m-%d", time.gmtime())  # a date
    assert me.tag_unfeature("cats")["featuring"] is False
    me.featured_tag_delete(featured["id"])
    assert me.featured_tags() == []
    with pytest.raises(MastodonAPIError) as missing:
        me.featured_tag_delete(featured["id"])
    assert missing.value.args[1] == 404


async def test_at_most_ten_featured_and_suggestions_are_recent_unfeatured_tags(srv):
    (me,) = await asyncio.to_thread(accounts, srv.base, 1)
    for n in range(3):
        me.status_post(f"#used{n}")
    assert [t["name"] for t in me.featured_tag_suggestions()] == ["used2", "used1", "used0"]
    me.featured_tag_create("used1")
    assert [t["name"] for t in me.featured_tag_suggestions()] == ["used2", "used0"]
    for n in range(limits.FEATURED_TAGS_MAX - 1):
        me.featured_tag_create(f"more{n}")
    with pytest.raises(MastodonAPIError) as full:
        me.featured_tag_create("onetoomany")
    assert full.value.args[1] == 422
    assert len(me.featured_tags()) == limits.FEATURED_TAGS_MAX
    assert "onetoomany" not in by_name(me.featured_tags())


async def test_an_accounts_statuses_tagged_with_a_hashtag_page_newest_first(srv):
    """``tagged=`` on an account's statuses (what a featured tag links to):
    its public and unlisted statuses with the tag, any case, newest first,
    paged by the Link header; another's, a followers-only one, a deleted
    one left out; a name no hashtag can have gives an empty page."""
    me, other = await asyncio.to_thread(accounts, srv.base, 2)
    posted = [me.status_post(f"bird {i} #Birds") for i in range(3)]
    me.status_post("quiet #birds", visibility="unlisted")
    me.status_post("followers only #birds", visibility="private")
    me.status_post("no tag here")
    other.status_post("someone else's #birds")
    gone = me.status_post("gone #birds")
    me.status_delete(gone["id"])
    uid = me.me()["id"]
    url = f"{srv.base}/api/v1/accounts/{uid}/statuses"
    shown = httpx.get(url, params={"tagged": "BIRDS"}).json()
    assert [s["content"] for s in shown][0].startswith("<p>quiet")
    assert len(shown) == 4 and [s["id"] for s in shown[1:]] == [p["id"] for p in reversed(posted)]
    first = httpx.get(url, params={"tagged": "birds", "limit": 2})
    assert [s["id"] for s in first.json()] == [shown[0]["id"], shown[1]["id"]]
    rest = httpx.get(first.links["next"]["url"]).json()
    assert [s["id"] for s in rest] == [shown[2]["id"], shown[3]["id"]]
    assert httpx.get(url, params={"tagged": "not a tag!"}).json() == []
    assert httpx.get(url, params={"tagged": "cats"}).json() == []
