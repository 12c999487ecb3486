"""redpoll.core.memo.Bounded: a bounded map that drops its oldest entry."""

from __future__ import annotations

import pytest

from redpoll.core.memo import Bounded
from redpoll.records import writes


def test_keeps_at_most_its_limit_dropping_the_oldest():
    kept = Bounded(3)
    for k in "abcd":
        kept.put(k, k.upper())
    assert len(kept) == 3
    assert kept.get("a") is None
    assert [kept.get(k) for k in "bcd"] == ["B", "C", "D"]


def test_replacing_a_key_does_not_evict():
    kept = Bounded(2)
    kept.put("a", 1)
    kept.put("b", 2)
    kept.put("a", 3)
    assert (kept.get("a"), kept.get("b"), len(kept)) == (3, 2, 2)


def test_discard_and_a_refused_limit():
    kept = Bounded(2)
    kept.put("a", 1)
    kept.discard("a")
    kept.discard("never there")
    assert kept.get("a") is None and len(kept) == 0
    with pytest.raises(ValueError):
        Bounded(0)


# --- the one caching rule, on real pages ---------------------------------------------


async def test_a_kept_status_is_not_served_after_its_id_left_the_deleted_set(rp, monkeypatch):
    """A process keeps a status; the status is deleted and its
    cleanup job is still queued (or parked), so its id still sits in a
    follower's home; the id leaves the log of deleted statuses pages check
    (on a single server; pushed out by size here). The page must not show
    the status again."""
    from redpoll.core import keys, limits

    author = await rp.accounts.sign_up("author")
    reader = await rp.accounts.sign_up("reader")
    await rp.relations.follow(reader.id, author.id)
    doomed = await rp.statuses.post(author.id, "soon gone")
    page = await rp.timelines.home(reader.id)
    assert [s.id for s in page] == [doomed.id]  # this process has read it now
    monkeypatch.setattr(limits, "CHANGED_STATUSES_MAX", 1)
    await rp.statuses.delete(doomed.id, author.id)  # its cleanup job stays queued
    other = await rp.statuses.post(author.id, "pushes the first id out of the deleted set")
    await rp.statuses.delete(other.id, author.id)
    assert doomed.id in [int(x) for x in await rp.store.client.lrange(keys.home(reader.id), 0, -1)]
    assert await rp.store.client.zscore(keys.CHANGED_STATUSES, doomed.id) is None
    assert [s.id for s in await rp.timelines.home(reader.id)] == []
    assert await rp.statuses.get_statuses([doomed.id]) == []
    await rp.drain()


async def test_a_changed_status_is_read_again_and_an_unchanged_one_is_reused(rp):
    """The rule is the same for any change to a status record (an edit, once
    there are edits: Topology.update_status): every change gives the record a
    new version ``v``, and a kept record is served only at the version the
    request just read."""
    author = await rp.accounts.sign_up("author")
    first = await rp.statuses.post(author.id, "first words")
    one = (await rp.timelines.home(author.id))[0]
    again = (await rp.timelines.home(author.id))[0]
    assert again is one  # unchanged: the kept record itself
    assert await writes.of(rp.store).update_status(first.id, {"text": "second thoughts"}) == 2
    for read in (
        rp.timelines.home(author.id),
        rp.timelines.profile(author.id),
        rp.timelines.public(),
    ):
        assert [s.text for s in await read] == ["second thoughts"]
    assert [s.text for s in await rp.statuses.get_statuses([first.id])] == ["second thoughts"]
    assert [s.text for s in await rp.statuses.get_statuses([first.id])] == ["second thoughts"]
    await rp.statuses.delete(first.id, author.id)
    from redpoll.core.errors import StatusNotFound

    with pytest.raises(StatusNotFound):  # a deleted status cannot change
        await writes.of(rp.store).update_status(first.id, {"text": "third"})
    assert await rp.timelines.home(author.id) == []


async def test_statuses_merged_from_a_large_account_follow_the_rule(settings):
    """A home catches up with a large account's statuses when it is read
    (redpoll.timelines.hybrid.catch_up); from then on they are read with the home's
    page, at their versions. Kept records of them are served only at those
    versions: an edit, a rename of the author and a delete each show on the
    next page."""
    from redpoll import Redpoll
    from redpoll.core import keys

    rp = await Redpoll.open(settings.with_(fanout_threshold=1))
    try:
        big = await rp.accounts.sign_up("bigauthor")
        reader = await rp.accounts.sign_up("mreader")
        other = await rp.accounts.sign_up("mother")
        await rp.relations.follow(other.id, big.id)
        await rp.relations.follow(reader.id, big.id)  # 2 followers > 1: caught up with at read time
        await rp.drain()
        first = await rp.statuses.post(big.id, "first words")
        second = await rp.statuses.post(big.id, "second words")
        await rp.drain()
        assert await rp.store.client.smembers(keys.large_following(reader.id)) == {
            str(big.id).encode()
        }
        home = [int(i) for i in await rp.store.client.lrange(keys.home(reader.id), 0, -1)]
        assert second.id not in home  # caught up with at read time, not fanned out

        async def page():
            return await rp.timelines.home(reader.id, limit=20)

        one = await page()
        assert [s.text for s in one][:2] == ["second words", "first words"]
        again = await page()
        assert again[0] is one[0]  # unchanged: the kept record itself
        assert await writes.of(rp.store).update_status(second.id, {"text": "edited"}) == 2
        assert [s.text for s in await page()][:2] == ["edited", "first words"]
        await rp.accounts.update_profile(big.id, display_name="Renamed")
        shown = await page()
        assert shown[0].user_id == big.id
        # what a caller does (Page's contract): a record the page brought,
        # else its own read; a stale kept author would show the old name
        author = shown.authors.get(big.id) or await rp.accounts.get_user(big.id)
        assert author.display_name == "Renamed"
        await rp.statuses.delete(second.id, big.id)
        assert [s.id for s in await page()][:1] == [first.id]
        await rp.drain()
    finally:
        await rp.close()
