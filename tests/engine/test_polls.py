"""Polls in the engine (redpoll.polls), on the real database in both
topologies: the definition kept with the status, votes counted once per
account in one script, the refusals writing nothing, the end as a job for
later that notifies the voters and the author once however often it runs,
a delete that takes the poll and its job along, an edit that keeps or
resets the votes."""

from __future__ import annotations

import asyncio

import pytest

from redpoll.core import keys, limits
from redpoll.core.errors import Conflict, NotFound, ValidationError
from redpoll.core.models import now_ms
from redpoll.polls import keys as poll_keys
from redpoll.polls import polls


def spec(options=("yes", "no"), expires_in=600, multiple=False, hide_totals=False):
    return polls.spec(list(options), expires_in, multiple, hide_totals)


async def votes_of(rp, viewer, sid):
    shown = await rp.statuses.poll(viewer, sid)
    return shown.states[sid].poll


async def test_votes_are_counted_once_per_account_and_refusals_write_nothing(rp):
    alice, bob, cat, dan = [await rp.accounts.sign_up(n) for n in ("alice", "bob", "cat", "dan")]
    status = await rp.statuses.post(alice.id, "which?", poll=spec(("a", "b", "c")))
    await rp.statuses.vote(bob.id, status.id, [1])
    await rp.statuses.vote(cat.id, status.id, ["1"])
    state = await votes_of(rp, bob.id, status.id)
    assert state.counts == (0, 2, 0) and state.voters == 2 and state.own == (1,)
    assert (await votes_of(rp, dan.id, status.id)).own is None  # dan has not voted

    with pytest.raises(Conflict, match="already voted"):
        await rp.statuses.vote(bob.id, status.id, [0])
    with pytest.raises(Conflict, match="your own"):
        await rp.statuses.vote(alice.id, status.id, [0])
    for bad in ([3], [-1], [], ["x"], [0, 1]):  # out of range, none, not an index, two in one
        with pytest.raises(ValidationError):
            await rp.statuses.vote(dan.id, status.id, bad)
    state = await votes_of(rp, dan.id, status.id)
    assert state.counts == (0, 2, 0) and state.voters == 2 and state.own is None

    # racing votes of one account: one counted
    eve = await rp.accounts.sign_up("eve")
    results = await asyncio.gather(
        *(rp.statuses.vote(eve.id, status.id, [i % 3]) for i in range(6)), return_exceptions=True
    )
    assert sum(not isinstance(r, Exception) for r in results) == 1
    state = await votes_of(rp, eve.id, status.id)
    assert sum(state.counts) == 3 and state.voters == 3

    plain = await rp.statuses.post(alice.id, "no poll here")
    with pytest.raises(NotFound):
        await rp.statuses.vote(bob.id, plain.id, [0])


async def test_multiple_choice_counts_each_choice_and_one_voter(rp):
    alice, bob = await rp.accounts.sign_up("alice"), await rp.accounts.sign_up("bob")
    status = await rp.statuses.post(
        alice.id, "pick any", poll=spec(("a", "b", "c", "d"), multiple=True)
    )
    await rp.statuses.vote(bob.id, status.id, [0, 3, 3])
    state = await votes_of(rp, bob.id, status.id)
    assert state.counts == (1, 0, 0, 1) and state.voters == 1 and state.own == (0, 3)


@pytest.mark.parametrize(
    "asked",
    [
        dict(options=["only one"]),
        dict(options=["a", "b", "c", "d", "e"]),
        dict(options=["a", "a"]),
        dict(options=["a", "x" * (limits.POLL_OPTION_MAX_CHARS + 1)]),
        dict(expires_in=limits.POLL_EXPIRES_MIN_S - 1),
        dict(expires_in=limits.POLL_EXPIRES_MAX_S + 1),
        dict(expires_in=None),
        dict(options="a,b"),
    ],
)
async def test_a_bad_poll_is_refused_before_anything_is_written(rp, asked):
    alice = await rp.accounts.sign_up("alice")
    args = {"options": ["a", "b"], "expires_in": 600, **asked}
    with pytest.raises(ValidationError):
        await rp.statuses.post(
            alice.id, "bad", poll=polls.spec(args["options"], args["expires_in"])
        )
    assert (await rp.accounts.get_user(alice.id)).posts == 0


async def test_the_end_notifies_voters_and_author_once_and_a_delete_takes_the_poll(rp):
    alice, bob, cat, dan = [await rp.accounts.sign_up(n) for n in ("alice", "bob", "cat", "dan")]
    status = await rp.statuses.post(alice.id, "ends", poll=spec(expires_in=300))
    poll = polls.Poll.of(status)
    job = polls.end_job(status, poll)
    assert await rp.queue.due_at(job) == poll.expires_at  # queued for its end by the post
    await rp.statuses.vote(bob.id, status.id, [0])
    await rp.statuses.vote(cat.id, status.id, [1])

    await rp.queue.promote_due()  # what is due now (the status's index job)
    assert await rp.queue.promote_due(poll.expires_at - 1) == 0  # not yet
    assert await rp.queue.promote_due(poll.expires_at) == 1
    await rp.drain()
    # run again (at least once): nobody is told twice
    assert await polls.end(rp.store, job) == 2
    for uid in (alice.id, bob.id, cat.id):
        notes = await rp.notifications.listed(uid)
        assert [(n.type, n.status, n.actor) for n in notes] == [("poll", status.id, alice.id)]
    assert await rp.notifications.listed(dan.id) == []

    other = await rp.statuses.post(alice.id, "gone soon", poll=spec())
    other_job = polls.end_job(other, polls.Poll.of(other))
    await rp.statuses.vote(bob.id, other.id, [0])
    assert await rp.queue.due_at(other_job) is not None
    await rp.statuses.delete(other.id, alice.id)
    await rp.drain()
    assert await rp.queue.due_at(other_job) is None  # its end is taken back
    gen = polls.Poll.of(other).gen
    assert not await rp.store.exists(
        poll_keys.counts(other.id, gen), poll_keys.votes(other.id, gen)
    )
    assert await polls.end(rp.store, other_job) == 0  # a late run finds no poll


async def test_an_edit_keeps_the_votes_of_the_same_options_and_resets_changed_ones(rp):
    alice, bob = await rp.accounts.sign_up("alice"), await rp.accounts.sign_up("bob")
    status = await rp.statuses.post(alice.id, "vote", poll=spec(("a", "b")))
    first = polls.Poll.of(status)
    await rp.statuses.vote(bob.id, status.id, [1])

    same = await rp.statuses.edit(alice.id, status.id, "vote, edited", poll=spec(("a", "b"), 3600))
    kept = polls.Poll.of(same)
    assert kept.gen == first.gen and kept.expires_at > first.expires_at
    state = await votes_of(rp, bob.id, status.id)
    assert state.counts == (0, 1) and state.own == (1,)
    await rp.drain()
    # the end moved with it
    assert await rp.queue.due_at(polls.end_job(status, first)) is None
    assert await rp.queue.due_at(polls.end_job(same, kept)) == kept.expires_at

    changed = await rp.statuses.edit(alice.id, status.id, "vote again", poll=spec(("c", "d", "e")))
    await rp.drain()
    state = await votes_of(rp, bob.id, status.id)
    assert state.counts == (0, 0, 0) and state.voters == 0 and state.own is None
    await rp.statuses.vote(bob.id, status.id, [2])  # a new poll: bob votes again
    assert not await rp.store.exists(poll_keys.votes(status.id, first.gen))

    await rp.statuses.edit(alice.id, status.id, "no poll now", poll=None)
    await rp.drain()
    with pytest.raises(NotFound):
        await rp.statuses.poll(bob.id, status.id)
    assert await rp.queue.due_at(polls.end_job(changed, polls.Poll.of(changed))) is None


async def test_a_vote_in_an_ended_poll_is_refused(rp):
    alice, bob = await rp.accounts.sign_up("alice"), await rp.accounts.sign_up("bob")
    status = await rp.statuses.post(alice.id, "short", poll=spec())
    # the poll's end moved into the past, as the record would hold it then
    ended = polls.Poll.of(status)
    past = polls.Poll(ended.options, now_ms() - 1, False, False, ended.gen)
    await rp.store.hset(keys.status(status.id), mapping={"x:poll": past.to_extra()})
    with pytest.raises(Conflict, match="ended"):
        await rp.statuses.vote(bob.id, status.id, [0])
    assert (await votes_of(rp, bob.id, status.id)).voters == 0
