"""Remote polls in the inbox, in process: a Question kept with its server's
counts, an Update of its counts that is no edit, one that changes its
options that is, the bounds of a Question, and a vote from another server
as the one script counts it."""

from __future__ import annotations

import json
import time

import pytest
from support.federation import fed  # noqa: F401

from redpoll.core.errors import Conflict
from redpoll.federation import documents, inbox, remote, signing
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import InboxJob
from redpoll.polls import polls

PAIR = signing.KeyPair.generate()
HOST = "polls.example"


async def someone(fed, name: str, host: str = HOST):
    return await remote.keep(
        fed.store,
        remote.parse_actor(
            {
                "id": f"https://{host}/users/{name}",
                "type": "Person",
                "preferredUsername": name,
                "inbox": f"https://{host}/users/{name}/inbox",
                "publicKey": {
                    "id": f"https://{host}/users/{name}#main-key",
                    "publicKeyPem": PAIR.public_pem,
                },
            }
        ),
    )


def question(
    who,
    note_id: str,
    options,
    totals,
    *,
    multiple=False,
    end="2099-01-01T00:00:00Z",
    text="which?",
    **extra,
) -> dict:
    return {
        "id": note_id,
        "type": "Question",
        "attributedTo": who.uri,
        "content": f"<p>{text}</p>",
        "to": [documents.PUBLIC],
        "cc": [],
        "anyOf" if multiple else "oneOf": [
            {"type": "Note", "name": o, "replies": {"type": "Collection", "totalItems": n}}
            for o, n in zip(options, totals)
        ],
        "endTime": end,
        **extra,
    }


async def take(fed, who, kind: str, obj: dict) -> None:
    activity = {
        "id": f"{obj['id']}#{kind}/{time.time_ns()}",
        "type": kind,
        "actor": who.uri,
        "object": obj,
    }
    await inbox.process(
        fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(activity))
    )


async def shown(fed, note_id: str):
    sid = int(await fed.store.get(fed_keys.note(note_id)))
    status = await fed.statuses.get_status(sid)
    return status, polls.Poll.of(status), (await fed.statuses.poll_states([status])).get(sid)


async def test_a_question_is_kept_with_its_counts_and_an_update_of_them_is_no_edit(fed):
    who = await someone(fed, "quinn")
    note_id = f"{who.uri}/statuses/{time.time_ns()}"
    await take(fed, who, "Create", question(who, note_id, ["yes", "no"], [3, 1], votersCount=4))
    status, poll, votes = await shown(fed, note_id)
    assert poll.options == ("yes", "no") and not poll.multiple
    assert votes.counts == (3, 1) and votes.voters == 4
    assert poll.expires_at == 4070908800000  # its endTime

    await take(fed, who, "Update", question(who, note_id, ["yes", "no"], [5, 2], votersCount=7))
    after, same, votes = await shown(fed, note_id)
    assert votes.counts == (5, 2) and votes.voters == 7
    assert "edited_at" not in after.extra and same.gen == poll.gen

    # new options: an edit, and the counts start from what its server says
    await take(
        fed,
        who,
        "Update",
        question(who, note_id, ["a", "b", "c"], [0, 1, 0], multiple=True, votersCount=1),
    )
    edited, changed, votes = await shown(fed, note_id)
    assert edited.extra.get("edited_at") and changed.options == ("a", "b", "c")
    assert changed.multiple and changed.gen != poll.gen and votes.counts == (0, 1, 0)

    # another host's actor changes nothing of it
    other = await someone(fed, "mallory", "elsewhere.example")
    await take(fed, other, "Update", question(who, note_id, ["a", "b", "c"], [9, 9, 9]))
    assert (await shown(fed, note_id))[2].counts == (0, 1, 0)


async def test_a_question_past_the_bounds_is_kept_without_its_poll(fed):
    who = await someone(fed, "rita")
    note_id = f"{who.uri}/statuses/{time.time_ns()}"
    await take(fed, who, "Create", question(who, note_id, [str(i) for i in range(11)], [0] * 11))
    status, poll, _ = await shown(fed, note_id)
    assert poll is None and status.text == "which?"


async def test_a_remote_vote_counts_once_per_option(fed):
    ada = await fed.accounts.sign_up("pollster")
    who = await someone(fed, "voter")
    status = await fed.statuses.post(ada.id, "pick", poll=polls.spec(["x", "y", "z"], 600, True))
    inbox_url = f"https://{HOST}/inbox"
    await polls.vote_one(fed.store, who.id, status.id, "x", inbox_url)
    await polls.vote_one(fed.store, who.id, status.id, "z", inbox_url)
    with pytest.raises(Conflict):
        await polls.vote_one(fed.store, who.id, status.id, "x", inbox_url)
    poll = polls.Poll.of(status)
    votes = (await fed.statuses.poll_states([status]))[status.id]
    assert votes.counts == (1, 0, 1) and votes.voters == 1
    assert await polls.choices(fed.store, who.id, status.id, poll) == (0, 2)
    assert await polls.voter_inboxes(fed.store, status.id, poll) == [inbox_url]
    with pytest.raises(polls.PollNotFound):
        await polls.vote_one(fed.store, who.id, status.id, "nope", inbox_url)


async def test_a_question_its_server_closed_early_ends_here_with_its_final_counts(fed):
    """An Update of a Question with ``closed`` before its ``endTime`` ends
    the poll here (as Mastodon: its end becomes the closed time): no vote is
    taken any more, it shows expired with the counts its server sent, a
    voter here is notified once, and the same Update again changes
    nothing."""
    who = await someone(fed, "closer")
    voter = await fed.accounts.sign_up("early_voter")
    note_id = f"{who.uri}/statuses/{time.time_ns()}"
    await take(fed, who, "Create", question(who, note_id, ["yes", "no"], [1, 0], votersCount=1))
    status, poll, _ = await shown(fed, note_id)
    await fed.statuses.vote(voter.id, status.id, [1])
    late = await fed.accounts.sign_up("late_voter")
    closed = question(
        who, note_id, ["yes", "no"], [4, 2], votersCount=6, closed="2020-01-01T00:00:00Z"
    )
    await take(fed, who, "Update", closed)
    after, ended, votes = await shown(fed, note_id)
    assert ended.expired() and ended.gen == poll.gen and ended.options == poll.options
    assert "edited_at" not in after.extra  # closing is no edit
    assert votes.counts == (4, 2) and votes.voters == 6
    with pytest.raises(Conflict, match="ended"):
        await fed.statuses.vote(late.id, status.id, [0])
    await fed.drain()
    ends = [n for n in await fed.notifications.listed(voter.id) if n.type == "poll"]
    assert len(ends) == 1
    await take(fed, who, "Update", closed)  # again: nothing new
    await fed.drain()
    again, same, _ = await shown(fed, note_id)
    assert same == ended
    assert len([n for n in await fed.notifications.listed(voter.id) if n.type == "poll"]) == 1


async def test_closed_true_ends_a_running_remote_poll_now(fed):
    who = await someone(fed, "shutter")
    note_id = f"{who.uri}/statuses/{time.time_ns()}"
    await take(fed, who, "Create", question(who, note_id, ["a", "b"], [0, 0]))
    before = time.time() * 1000
    await take(fed, who, "Update", question(who, note_id, ["a", "b"], [2, 3], closed=True))
    _, poll, votes = await shown(fed, note_id)
    assert poll.expired() and before - 1000 <= poll.expires_at <= time.time() * 1000
    assert votes.counts == (2, 3)
