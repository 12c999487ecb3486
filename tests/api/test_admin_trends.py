"""The trends review of Mastodon's admin API through Mastodon.py against a
real ``redpoll serve``: a moderator lists what trends with
``requires_review``, approves and rejects hashtags, links and statuses, and
that decides what /api/v1/trends/* shows, on a server that lets unreviewed
items trend and on one that asks for review first (REDPOLL_TRENDS_REVIEW);
a member is given the public trends and refused the decisions."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from mastodon import Mastodon, MastodonAPIError, MastodonNotFoundError
from support.mastodon import LOOSE  # noqa: F401
from support.streams import StreamProc  # noqa: F401

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]

SCOPES = ["read", "write", "follow", "admin:read", "admin:write"]
LINK = "https://example.org/story?id=7"


def people(base: str, n: int) -> list[tuple[Mastodon, str]]:
    cid, secret = Mastodon.create_app("trends-review", api_base_url=base, scopes=SCOPES)
    out = []
    for _ in range(n):
        login = "u" + uuid.uuid4().hex[:10]
        m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
        m.create_account(
            login, "correct horse battery", f"{login}@example.com", agreement=True, scopes=SCOPES
        )
        out.append((m, login))
    return out


def call(m: Mastodon, name: str, *args, **kwargs):
    return asyncio.to_thread(getattr(m, name), *args, **kwargs)


def names(tags) -> list[str]:
    return [t["name"] for t in tags]


async def trending(m: Mastodon):
    tags, links, statuses = await asyncio.gather(
        call(m, "trending_tags"), call(m, "trending_links"), call(m, "trending_statuses")
    )
    return names(tags), [link["url"] for link in links], [s["id"] for s in statuses]


async def test_a_moderator_reviews_what_trends_and_the_public_trends_follow(srv, rp):
    (mod, mod_login), (ann, _), (bob, _) = await asyncio.to_thread(people, srv.base, 3)
    await rp.admin.set_role(None, mod_login, "moderator")
    await call(ann, "status_post", f"reading #news at {LINK}")
    await call(bob, "status_post", "about #cats")
    liked = await call(bob, "status_post", "liked a lot")
    await call(ann, "status_favourite", liked["id"])

    # unreviewed: they trend, and the moderator sees them as needing review
    assert await trending(bob) == (["cats", "news"], [LINK], [liked["id"]])
    tags = await call(mod, "admin_trending_tags")
    assert names(tags) == ["cats", "news"]
    assert all(t["requires_review"] and t["trendable"] and t["id"] == t["name"] for t in tags)
    [link] = await call(mod, "admin_trending_links")
    assert link["url"] == LINK and link["requires_review"] is True
    [status] = await call(mod, "admin_trending_statuses")
    assert status["id"] == liked["id"] and status["requires_review"] is True

    # a member's token with admin scopes: the public trends, and no decision
    assert names(await call(ann, "admin_trending_tags")) == ["cats", "news"]
    assert (await call(ann, "admin_trending_tags"))[0]["requires_review"] is None  # not sent
    for name, item in (
        ("admin_reject_trending_tag", "news"),
        ("admin_reject_trending_link", link["id"]),
        ("admin_reject_trending_status", liked["id"]),
    ):
        with pytest.raises(MastodonAPIError) as refused:
            await call(ann, name, item)
        assert refused.value.args[1] == 403
    assert await trending(bob) == (["cats", "news"], [LINK], [liked["id"]])

    # rejected: gone from the public trends at once, still listed for review
    rejected = await call(mod, "admin_reject_trending_tag", "news")
    assert (rejected["trendable"], rejected["requires_review"]) == (False, False)
    assert rejected["history"][0]["accounts"] == "1"
    assert (await call(mod, "admin_reject_trending_link", link["id"]))["requires_review"] is False
    assert (await call(mod, "admin_reject_trending_status", liked["id"]))["id"] == liked["id"]
    assert await trending(bob) == (["cats"], [], [])
    assert names(await call(mod, "admin_trending_tags")) == ["cats", "news"]
    assert [t["requires_review"] for t in await call(mod, "admin_trending_tags")] == [True, False]

    # approved again: back
    assert (await call(mod, "admin_approve_trending_tag", "News"))["trendable"] is True
    await call(mod, "admin_approve_trending_link", link["id"])
    await call(mod, "admin_approve_trending_status", liked["id"])
    assert await trending(bob) == (["cats", "news"], [LINK], [liked["id"]])

    # what does not exist is 404, and nothing is decided for it
    for name, item in (
        ("admin_approve_trending_tag", "nosuchtag"),
        ("admin_approve_trending_link", "0" * 24),
        ("admin_approve_trending_status", "999999999"),
    ):
        with pytest.raises(MastodonNotFoundError):
            await call(mod, name, item)
    assert names(await call(mod, "admin_trending_tags")) == ["cats", "news"]

    # every decision is in the audit log
    log = [(e.action, e.type, e.name) for e in await rp.admin.audit_log()]
    for entry in (
        ("reject", "Tag", "news"),
        ("approve", "Tag", "news"),
        ("reject", "PreviewCard", LINK),
        ("approve", "Status", liked["id"]),
    ):
        assert entry in log


async def test_with_review_first_only_what_was_approved_trends(srv, rp, tmp_path):
    url, cluster = srv.redis_url, srv.cluster
    first = StreamProc(url, cluster, tmp_path, REDPOLL_TRENDS_REVIEW="1", **LOOSE).start()
    try:
        (mod, mod_login), (ann, _), (bob, _) = await asyncio.to_thread(people, first.base, 3)
        await rp.admin.set_role(None, mod_login, "admin")
        await call(ann, "status_post", f"#fresh news at {LINK}")
        liked = await call(bob, "status_post", "liked")
        await call(ann, "status_favourite", liked["id"])
        assert await trending(bob) == ([], [], [])
        [tag] = await call(mod, "admin_trending_tags")
        assert (tag["name"], tag["trendable"], tag["requires_review"]) == ("fresh", False, True)

        await call(mod, "admin_approve_trending_tag", "fresh")
        [link] = await call(mod, "admin_trending_links")
        await call(mod, "admin_approve_trending_link", link["id"])
        await call(mod, "admin_approve_trending_status", liked["id"])
        assert await trending(bob) == (["fresh"], [LINK], [liked["id"]])
        # the same database read by a server that lets unreviewed items trend
        assert names(await asyncio.to_thread(Mastodon(api_base_url=srv.base).trending_tags)) == [
            "fresh"
        ]
    finally:
        first.stop()
