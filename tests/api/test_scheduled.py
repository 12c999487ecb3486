"""Scheduled statuses through a real ``redpoll serve``, driven by Mastodon.py
(``status_post(scheduled_at=...)``, ``scheduled_statuses``,
``scheduled_status_update``, ``scheduled_status_delete``) and raw HTTP, in
both topologies: the entity, the 5-minute rule's 422, owner-only 404s,
paging with Link headers, and the status posted by the job (the test moves
due jobs with ``promote_due`` given a later time, then drains)."""

from __future__ import annotations

import asyncio
import io
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from mastodon import MastodonAPIError, MastodonNotFoundError
from PIL import Image
from support.mastodon import accounts  # noqa: F401

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]


def ahead(minutes: float) -> datetime:
    return datetime.now(UTC) + timedelta(minutes=minutes)


def later_ms(minutes: float) -> int:
    return int((time.time() + minutes * 60) * 1000)


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (20, 20), (200, 20, 20)).save(out, "PNG")
    return out.getvalue()


async def test_mastodon_py_schedules_lists_moves_and_the_job_posts_it(srv, rp):
    alice, bob = await asyncio.to_thread(accounts, srv.base, 2)
    me = await asyncio.to_thread(alice.me)
    when = ahead(30).replace(microsecond=0)
    s = await asyncio.to_thread(
        alice.status_post,
        "see you later",
        scheduled_at=when,
        spoiler_text="soon",
        visibility="unlisted",
        language="en",
    )
    assert "scheduled_at" in s and "params" in s and "content" not in s
    assert s["scheduled_at"] == when
    params = s["params"]
    assert params["text"] == "see you later" and params["visibility"] == "unlisted"
    assert params["spoiler_text"] == "soon" and params["language"] == "en"
    assert params["poll"] is None and params["media_ids"] is None
    assert s["media_attachments"] == []
    listed = await asyncio.to_thread(alice.scheduled_statuses)
    assert [x["id"] for x in listed] == [s["id"]]
    assert (await asyncio.to_thread(alice.scheduled_status, s["id"]))["id"] == s["id"]
    # nothing posted yet
    assert await asyncio.to_thread(alice.account_statuses, me["id"]) == []
    # another account sees none of it
    assert await asyncio.to_thread(bob.scheduled_statuses) == []
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(bob.scheduled_status, s["id"])
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(bob.scheduled_status_update, s["id"], ahead(60))
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(bob.scheduled_status_delete, s["id"])

    moved_to = ahead(90).replace(microsecond=0)
    moved = await asyncio.to_thread(alice.scheduled_status_update, s["id"], moved_to)
    assert moved["scheduled_at"] == moved_to
    assert (await asyncio.to_thread(alice.scheduled_status, s["id"]))["scheduled_at"] == moved_to
    await rp.queue.promote_due(later_ms(60))  # the old time: nothing due
    await rp.drain()
    assert await asyncio.to_thread(alice.account_statuses, me["id"]) == []

    await rp.queue.promote_due(later_ms(91))
    await rp.drain()
    posted = await asyncio.to_thread(alice.account_statuses, me["id"])
    assert [p["spoiler_text"] for p in posted] == ["soon"]
    assert posted[0]["visibility"] == "unlisted" and "see you later" in posted[0]["content"]
    assert await asyncio.to_thread(alice.scheduled_statuses) == []
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(alice.scheduled_status, s["id"])


async def test_too_soon_is_a_422_in_mastodons_words_and_nothing_is_scheduled(srv, rp):
    (alice,) = await asyncio.to_thread(accounts, srv.base, 1)
    for when in (ahead(4), ahead(-10)):
        with pytest.raises(MastodonAPIError) as refused:
            await asyncio.to_thread(alice.status_post, "too soon", scheduled_at=when)
        assert refused.value.args[1] == 422
        assert "Scheduled at must be at least 5 minutes in the future" in str(refused.value)
    s = await asyncio.to_thread(alice.status_post, "ok", scheduled_at=ahead(10))
    with pytest.raises(MastodonAPIError) as refused:
        await asyncio.to_thread(alice.scheduled_status_update, s["id"], ahead(2))
    assert refused.value.args[1] == 422
    assert [x["id"] for x in await asyncio.to_thread(alice.scheduled_statuses)] == [s["id"]]
    token = alice.access_token
    with httpx.Client(
        base_url=srv.base, timeout=30, headers={"Authorization": f"Bearer {token}"}
    ) as http:
        r = http.post("/api/v1/statuses", data={"status": "x", "scheduled_at": "not a date"})
        assert r.status_code == 422


async def test_cancel_releases_the_uploads_and_pages_carry_link_headers(srv, rp):
    (alice,) = await asyncio.to_thread(accounts, srv.base, 1)
    media = await asyncio.to_thread(alice.media_post, png(), "image/png", synchronous=True)
    s = await asyncio.to_thread(
        alice.status_post, "", media_ids=[media["id"]], scheduled_at=ahead(20)
    )
    assert s["params"]["media_ids"] == [str(media["id"])]
    assert [m["id"] for m in s["media_attachments"]] == [str(media["id"])]
    with pytest.raises(MastodonAPIError):  # held: not attachable elsewhere
        await asyncio.to_thread(alice.status_post, "steal", media_ids=[media["id"]])
    assert await asyncio.to_thread(alice.scheduled_status_delete, s["id"]) in ({}, None)
    assert await asyncio.to_thread(alice.scheduled_statuses) == []
    # released: attachable again
    posted = await asyncio.to_thread(alice.status_post, "now", media_ids=[media["id"]])
    assert [m["id"] for m in posted["media_attachments"]] == [str(media["id"])]

    made = [
        await asyncio.to_thread(alice.status_post, f"p{i}", scheduled_at=ahead(20 + i))
        for i in range(3)
    ]
    with httpx.Client(
        base_url=srv.base, timeout=30, headers={"Authorization": f"Bearer {alice.access_token}"}
    ) as http:
        r = http.get("/api/v1/scheduled_statuses", params={"limit": 2})
        assert [x["id"] for x in r.json()] == [made[2]["id"], made[1]["id"]]
        assert 'rel="next"' in r.headers["link"]
        nxt = r.headers["link"].split(">")[0].lstrip("<")
        assert [x["id"] for x in http.get(nxt).json()] == [made[0]["id"]]
        assert http.delete(f"/api/v1/scheduled_statuses/{made[0]['id']}").json() == {}
        assert http.delete(f"/api/v1/scheduled_statuses/{made[0]['id']}").status_code == 404
