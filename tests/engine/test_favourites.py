"""Favourites and bookmarks in the engine: idempotent, counted
exactly under races, per-viewer flags, the favourite notification and its
undo."""

from __future__ import annotations

import asyncio

import pytest

from redpoll.core import keys
from redpoll.core.errors import StatusNotFound, ValidationError
from redpoll.notifications import notifications


async def users(rp, prefix, n):
    return [await rp.accounts.sign_up(f"{prefix}{i}") for i in range(n)]


async def favourite_notes(rp, uid) -> list:
    return [n for n in await rp.notifications.listed(uid, limit=80) if n.type == "favourite"]


async def test_favourite_twice_is_once_and_unfavourite_undoes_everything(rp):
    [ann, bob] = await users(rp, "u", 2)
    status = await rp.statuses.post(ann.id, "hello")
    assert await rp.statuses.favourite(bob.id, status.id) is True
    assert await rp.statuses.favourite(bob.id, status.id) is False
    [state] = await rp.statuses.states(bob.id, [status.id])
    assert state.favourites == 1 and state.favourited and not state.bookmarked
    [anon] = await rp.statuses.states(None, [status.id])
    assert anon.favourites == 1 and not anon.favourited
    [note] = await favourite_notes(rp, ann.id)
    assert (note.actor, note.status) == (bob.id, status.id)

    assert await rp.statuses.unfavourite(bob.id, status.id) is True
    assert await rp.statuses.unfavourite(bob.id, status.id) is False
    [state] = await rp.statuses.states(bob.id, [status.id])
    assert state.favourites == 0 and not state.favourited
    assert await favourite_notes(rp, ann.id) == []  # undo removed the notification
    assert await rp.store.client.zcard(keys.favourites(bob.id)) == 0


async def test_own_favourite_counts_but_does_not_notify(rp):
    [ann] = await users(rp, "ann", 1)
    status = await rp.statuses.post(ann.id, "me")
    await rp.statuses.favourite(ann.id, status.id)
    [state] = await rp.statuses.states(ann.id, [status.id])
    assert state.favourites == 1 and state.favourited
    assert await favourite_notes(rp, ann.id) == []


async def test_bad_input_writes_nothing(rp):
    [ann] = await users(rp, "ann", 1)
    status = await rp.statuses.post(ann.id, "x")
    before = await rp.store.client.get(keys.INTERACTION_SEQ)
    with pytest.raises(StatusNotFound):
        await rp.statuses.favourite(ann.id, status.id + 100)
    with pytest.raises(StatusNotFound):
        await rp.statuses.bookmark(ann.id, status.id + 100)
    with pytest.raises(ValidationError):
        await rp.statuses.favourite(ann.id, "nope")
    with pytest.raises(ValidationError):
        await rp.statuses.favourite(ann.id, 2**60)
    assert await rp.store.client.get(keys.INTERACTION_SEQ) == before
    assert await rp.store.client.exists(keys.favourites(ann.id), keys.bookmarks(ann.id)) == 0


async def test_a_deleted_status_cannot_be_favourited(rp):
    [ann, bob] = await users(rp, "u", 2)
    status = await rp.statuses.post(ann.id, "soon gone")
    await rp.statuses.delete(status.id, ann.id)
    with pytest.raises(StatusNotFound):
        await rp.statuses.favourite(bob.id, status.id)


async def test_fifty_concurrent_favourites_count_fifty_and_notify_fifty(rp):
    [author] = await users(rp, "author", 1)
    fans = await users(rp, "fan", 50)
    status = await rp.statuses.post(author.id, "like me")
    await asyncio.gather(*(rp.statuses.favourite(f.id, status.id) for f in fans))
    [state] = await rp.statuses.states(None, [status.id])
    assert state.favourites == 50
    assert await rp.store.client.zcard(keys.favourited_by(status.id)) == 50
    notes = await rp.notifications.listed(author.id, limit=80)
    assert len(notes) == 50 and {n.actor for n in notes} == {f.id for f in fans}
    assert all(n.type == "favourite" and n.status == status.id for n in notes)


async def test_favourite_unfavourite_storm_ends_with_count_equal_to_set(rp):
    [author] = await users(rp, "author", 1)
    fans = await users(rp, "fan", 12)
    status = await rp.statuses.post(author.id, "storm")

    async def storm(fan, rounds):
        for i in range(rounds):
            await (rp.statuses.favourite if i % 2 == 0 else rp.statuses.unfavourite)(
                fan.id, status.id
            )

    # the same user clicking concurrently too: each fan runs two storms at once
    await asyncio.gather(
        *(storm(f, 7 + i % 3) for i, f in enumerate(fans)),
        *(storm(f, 4 + i % 2) for i, f in enumerate(fans)),
    )
    members = {int(m) for m in await rp.store.client.zrange(keys.favourited_by(status.id), 0, -1)}
    [state] = await rp.statuses.states(None, [status.id])
    assert state.favourites == len(members)
    notes = {n.actor for n in await favourite_notes(rp, author.id)}
    assert notes == members  # a notification exactly for each standing favourite
    for fan in fans:  # each fan's own flag agrees with the status's set
        [mine] = await rp.statuses.states(fan.id, [status.id])
        assert mine.favourited == (fan.id in members)


async def test_a_late_replay_of_an_older_operation_changes_nothing(rp):
    """A journal replayed after a newer click (a crashed call's job) must
    not undo the newer choice in any of the three records."""
    from redpoll.interactions import favourites
    from redpoll.interactions.jobs import FavouriteJob

    [ann, bob] = await users(rp, "u", 2)
    status = await rp.statuses.post(ann.id, "x")
    await rp.statuses.favourite(bob.id, status.id)
    old = int(await rp.store.client.get(keys.INTERACTION_SEQ))
    await rp.statuses.unfavourite(bob.id, status.id)
    await favourites.apply(rp.store, FavouriteJob(bob.id, status.id, old, True))
    [state] = await rp.statuses.states(bob.id, [status.id])
    assert state.favourites == 0 and not state.favourited
    assert await favourite_notes(rp, ann.id) == []


async def test_bookmarks_are_private_and_idempotent(rp):
    [ann, bob] = await users(rp, "u", 2)
    status = await rp.statuses.post(ann.id, "keep")
    assert await rp.statuses.bookmark(bob.id, status.id) is True
    assert await rp.statuses.bookmark(bob.id, status.id) is False
    [mine] = await rp.statuses.states(bob.id, [status.id])
    [theirs] = await rp.statuses.states(ann.id, [status.id])
    assert mine.bookmarked and not theirs.bookmarked
    assert await rp.notifications.listed(ann.id) == []
    assert await rp.statuses.unbookmark(bob.id, status.id) is True
    assert await rp.statuses.unbookmark(bob.id, status.id) is False
    [mine] = await rp.statuses.states(bob.id, [status.id])
    assert not mine.bookmarked


async def test_notification_filters_and_bound(rp, monkeypatch):
    from redpoll.core import limits

    monkeypatch.setattr(limits, "NOTIFICATIONS_MAX", 5)
    [author] = await users(rp, "author", 1)
    fans = await users(rp, "fan", 8)
    status = await rp.statuses.post(author.id, "x")
    for fan in fans:
        await rp.statuses.favourite(fan.id, status.id)
    notes = await rp.notifications.listed(author.id)
    assert [n.actor for n in notes] == [f.id for f in reversed(fans)][:5]  # newest kept
    assert await rp.store.client.hlen(keys.notification_index(author.id)) == 5
    # the group index of grouped notifications is trimmed with them
    assert await rp.store.client.zcard(keys.notification_group_index(author.id)) == 5
    [group] = await notifications.group_page(rp.store, author.id)
    assert group.count == 5 and group.sample_account_ids == [f.id for f in reversed(fans)][:5]
    assert await rp.notifications.listed(author.id, types=["mention"]) == []
    assert len(await rp.notifications.listed(author.id, exclude_types=["mention"])) == 5
    [one] = await rp.notifications.listed(author.id, account_id=fans[-2].id)
    assert one.actor == fans[-2].id
    older = await rp.notifications.listed(author.id, max_id=notes[1].id, limit=2)
    assert [n.id for n in older] == [n.id for n in notes[2:4]]
    newer = await rp.notifications.listed(author.id, min_id=notes[3].id, limit=2)
    assert [n.id for n in newer] == [n.id for n in notes[1:3]]
    with pytest.raises(ValidationError):
        await rp.notifications.listed(author.id, types=["nonsense"])
    await notifications.dismiss(rp.store, author.id, notes[0].id)
    assert await rp.store.client.zcard(keys.notification_group_index(author.id)) == 4
    with pytest.raises(notifications.NotificationNotFound):
        await notifications.dismiss(rp.store, author.id, notes[0].id)
    # a repeated favourite does not bring a dismissed notification back
    await rp.statuses.favourite(fans[-1].id, status.id)
    assert notes[0].id not in {n.id for n in await rp.notifications.listed(author.id)}
