"""Statuses: creating, reading one or many, counting, own timelines."""

from __future__ import annotations

import pytest

from redpoll.core import keys
from redpoll.core.errors import StatusNotFound, UserNotFound
from redpoll.core.models import now_ms


async def test_post_and_read_back(rp):
    alice = await rp.accounts.sign_up("Alice")
    before = now_ms()
    status = await rp.statuses.post(
        alice.id, "Hello, wörld! 👋", {"location": " 52.520008 , 13.404954 ", "mood": "sunny"}
    )
    assert status.id > 0
    assert status.text == "Hello, wörld! 👋"
    assert (status.user_id, status.login) == (alice.id, "Alice")
    assert before <= status.created_at <= now_ms()
    assert status.extra == {"location": "52.520008,13.404954", "mood": "sunny"}
    assert await rp.statuses.get_status(status.id) == status
    assert await rp.statuses.get_status(str(status.id)) == status
    assert status.to_dict()["location"] == "52.520008,13.404954"


async def test_status_renders_without_its_user(rp):
    """The poster's login is copied into the status hash."""
    bob = await rp.accounts.sign_up("bob")
    status = await rp.statuses.post(bob.id, "mine")
    raw = await rp.store.client.hgetall(keys.status(status.id))
    assert raw[b"login"] == b"bob"
    assert int(raw[b"uid"]) == bob.id
    await rp.store.client.delete(keys.user(bob.id))
    assert (await rp.statuses.get_status(status.id)).login == "bob"


async def test_text_is_kept_exactly(rp):
    carol = await rp.accounts.sign_up("carol")
    texts = [
        "  padded  ",
        "multi\nline\ttext",
        "x" * 500,
        "emoji 🐦‍🔥 and ñ",
        "<b>not html</b>",
        "0",
        "nil",
    ]
    for text in texts:
        status = await rp.statuses.post(carol.id, text)
        assert (await rp.statuses.get_status(status.id)).text == text
    as_bytes = await rp.statuses.post(carol.id, "bytes ✓".encode())
    assert (await rp.statuses.get_status(as_bytes.id)).text == "bytes ✓"


async def test_ids_increase(rp):
    dave = await rp.accounts.sign_up("dave")
    ids = [(await rp.statuses.post(dave.id, f"n{i}")).id for i in range(5)]
    assert ids == sorted(ids) and len(set(ids)) == 5


async def test_get_statuses_keeps_order_and_skips_missing(rp):
    erin = await rp.accounts.sign_up("erin")
    s1, s2, s3, s4 = [await rp.statuses.post(erin.id, f"s{i}") for i in range(1, 5)]
    await rp.statuses.delete(s2.id, erin.id)
    found = await rp.statuses.get_statuses([s3.id, 999_999, s1.id, s2.id, str(s4.id), s3.id])
    assert [s.text for s in found] == ["s3", "s1", "s4", "s3"]
    assert found[1] == s1
    assert await rp.statuses.get_statuses([]) == []
    assert await rp.statuses.get_statuses([s2.id]) == []


async def test_get_status_unknown_and_deleted(rp):
    frank = await rp.accounts.sign_up("frank")
    status = await rp.statuses.post(frank.id, "soon gone")
    with pytest.raises(StatusNotFound):
        await rp.statuses.get_status(status.id + 1000)
    await rp.statuses.delete(status.id, frank.id)
    with pytest.raises(StatusNotFound) as info:
        await rp.statuses.get_status(status.id)
    assert info.value.status == 404


async def test_posts_counter(rp):
    grace = await rp.accounts.sign_up("grace")
    other = await rp.accounts.sign_up("other")
    for i in range(3):
        await rp.statuses.post(grace.id, f"post {i}")
    assert (await rp.accounts.get_user(grace.id)).posts == 3
    assert (await rp.accounts.get_user(other.id)).posts == 0
    assert (await rp.stats())["statuses"] == 3


async def test_own_status_in_own_home_and_profile(rp):
    heidi = await rp.accounts.sign_up("heidi")
    ivan = await rp.accounts.sign_up("ivan")
    mine = await rp.statuses.post(heidi.id, "mine")
    theirs = await rp.statuses.post(ivan.id, "theirs")
    assert [s.id for s in await rp.timelines.home(heidi.id)] == [mine.id]
    assert [s.id for s in await rp.timelines.profile(heidi.id)] == [mine.id]
    assert [s.id for s in await rp.timelines.home(ivan.id)] == [theirs.id]
    assert (await rp.timelines.home(heidi.id))[0] == mine


async def test_post_as_unknown_user(rp):
    judy = await rp.accounts.sign_up("judy")
    with pytest.raises(UserNotFound):
        await rp.statuses.post(judy.id + 100, "who am I")
    assert await rp.store.client.get(keys.STATUS_SEQ) is None  # no id taken
    assert (await rp.stats())["statuses"] == 0
    assert not await rp.store.client.exists(keys.profile(judy.id + 100), keys.home(judy.id + 100))
    # the next real post is status 1: nothing was half-created
    status = await rp.statuses.post(judy.id, "me")
    assert status.id == 1
    assert [s.id for s in await rp.timelines.profile(judy.id)] == [1]


async def test_post_after_user_record_vanished(rp):
    """A user deleted between requests: the post fails and leaves no status."""
    kim = await rp.accounts.sign_up("kim")
    await rp.store.client.delete(keys.user(kim.id))
    with pytest.raises(UserNotFound):
        await rp.statuses.post(kim.id, "ghost")
    assert await rp.store.client.get(keys.STATUS_SEQ) is None
