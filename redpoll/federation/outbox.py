"""What local accounts do, sent to the servers that should know.

Posts, edits, deletes and boosts are read from the event log (the capped
stream every such change is appended to, bus.events) by the consumer group
keys.OUTBOX_GROUP, so posting never knows about federation and a post is
sent even if the call that made it was cut short (its journal's replay
appends the event): each event becomes one activity per inbox of the
author's remote followers (a shared inbox once, however many followers are
behind it), queued as delivery jobs, and the entry is acknowledged after.
At least once: an entry whose handling was cut short is claimed again after
job_claim_ms, and receivers drop an activity id they already took.

Follows of remote accounts and their undoing are sent by the calls that
make them (:func:`follow`).

Polls: a local status with a poll goes out as a Question with its counts.
Votes change them without an event: a vote queues the poll's next Update
for the end of its window (:func:`schedule_poll_update`, a job for later:
the votes of one window make one Update), and the poll's end sends a last
one (:func:`poll_update`), to where its posts go and to the servers of its
remote voters. A local account's vote in a remote poll is sent to the
poll's author (:func:`after_vote`, journaled by the vote: jobs.PollVoteJob)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from redis.exceptions import ResponseError

from ..bus import events
from ..bus.queue import JobQueue
from ..conversations.conversation import Conversation
from ..core import keys as core_keys
from ..core import limits
from ..core.errors import RedpollError, UserNotFound
from ..core.markup import html_text
from ..core.models import Status, now_ms
from ..core.settings import Settings
from ..media import entity as media_entity
from ..polls import polls
from ..records import statuses, users
from ..relations import domain_blocks
from ..storage.store import Store
from . import delivery, documents, keys, quoting, relays, remote
from .jobs import PollUpdateJob

log = logging.getLogger("redpoll.federation")


async def ensure_group(store: Store) -> None:
    try:
        await store.xgroup_create(core_keys.EVENT_LOG, keys.OUTBOX_GROUP, id="$", mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


async def inboxes(store: Store, uid: int) -> list[str]:
    """Where ``uid``'s posts go: one inbox per remote server (its shared
    inbox) or per remote follower without one."""
    return [k.decode() for k in await store.hkeys(keys.inboxes(uid))]


def visibility_of(status: Status) -> str:
    return status.extra.get("visibility", "public")


def _object_uri(base: str, status: Status) -> str:
    return status.extra.get("uri") or documents.note_id(base, status.login, status.id)


async def mentioned(store: Store, base: str, status: Status) -> list[tuple[str, str, str]]:
    """(actor id, ``@name@host``, inbox or "") of each account ``status``
    mentions: remote ones with their inbox, local ones without."""
    host = base.split("://", 1)[1]
    out = []
    for uid, login in Conversation.of(status).mentions:
        if "@" in login:
            details = await remote.details(store, uid)
            if details.get("uri"):
                out.append(
                    (
                        details["uri"],
                        f"@{login}",
                        details.get("shared_inbox") or details.get("inbox", ""),
                    )
                )
        else:
            out.append((documents.actor_id(base, login), f"@{login}@{host}", ""))
    return out


async def note_of(store: Store, base: str, status: Status) -> dict:
    """The Note of a local status."""
    reply = status.extra.get("in_reply_to_id")
    in_reply_to = None
    if reply:
        try:
            parent = await statuses.get_status(store, int(reply))
            in_reply_to = _object_uri(base, parent)
        except Exception:  # a parent deleted since: the note says nothing of it
            in_reply_to = None
    mentions = [(uri, name) for uri, name, _ in await mentioned(store, base, status)]
    return documents.note(
        status,
        base,
        html_text(status.text) if status.text else "",
        in_reply_to,
        mentions,
        media_entity.attachments(status.extra.get("media"), base),
        await poll_view(store, status),
        await quoting.note_fields(store, base, status),
    )


async def poll_view(store: Store, status: Status) -> documents.PollView | None:
    """The poll of a local status with its counts now (none for a status
    without one; a poll that hides its totals shows none until it ends)."""
    poll = polls.Poll.of(status)
    if poll is None:
        return None
    commands, parse = polls.state_reads(None, [status])
    votes = parse(await store.batch(commands))[status.id]
    closed = poll.expired()
    counts = (votes.counts + (0,) * len(poll.options))[: len(poll.options)]
    if poll.hide_totals and not closed:
        counts = (0,) * len(poll.options)
    return documents.PollView(
        poll.options, counts, votes.voters, poll.multiple, poll.expires_at, closed
    )


async def _targets(store: Store, status: Status, named: list[tuple[str, str, str]]) -> list[str]:
    """The inboxes a local status goes to: its author's remote followers'
    (not for a direct status), and those of the remote accounts it names;
    none on a domain its author blocks (redpoll.relations.domain_blocks);
    a public original also to the accepted relays (redpoll.federation.relays)."""
    direct = status.extra.get("visibility", "public") == "direct"
    targets = [] if direct else await inboxes(store, status.user_id)
    targets += [inbox for _, _, inbox in named if inbox and inbox not in targets]
    quoted = await quoting.quoted_inbox(store, status)
    if quoted is not None and not direct:  # the quoted author's server hears of it (Mastodon's)
        inbox = quoted[1].get("shared_inbox") or quoted[1].get("inbox", "")
        if inbox and inbox not in targets:
            targets.append(inbox)
    if status.reblog_of is None and visibility_of(status) == "public":  # and to the relays
        targets += [r for r in await relays.enabled_inboxes(store) if r not in targets]
    blocked = await domain_blocks.blocked(store, status.user_id)
    return [t for t in targets if remote.host_of(t) not in blocked] if blocked else targets


async def handle(store: Store, queue: JobQueue, base: str, payload: bytes) -> int:
    """Send what one event-log entry says, if anything; activities queued."""
    try:
        event = events.StatusEvent.parse(payload)
    except ValueError:
        return 0  # not a status event (notifications, relations, ...)
    data = dict(event.status)
    reblog = data.pop("reblog", None)
    deleted = data.pop("deleted", False)
    status = Status.from_dict(data)
    if status.extra.get("uri"):
        return 0  # a remote status: its own server sends it
    named = await mentioned(store, base, status)
    targets = await _targets(store, status, named)
    if not targets and not (reblog and reblog.get("uri")):
        return 0  # no other server to tell
    me = documents.actor_id(base, status.login)
    note_uri = documents.note_id(base, status.login, status.id)
    to, cc = documents.addressing(status, base, [uri for uri, _, _ in named])
    activity: dict[str, Any]
    if status.reblog_of is not None and reblog is not None:
        original = Status.from_dict({k: v for k, v in reblog.items() if k != "reblog"})
        obj = _object_uri(base, original)
        if original.extra.get("uri"):  # a remote status: its author's server hears of it
            details = await remote.details(store, original.user_id)
            inbox = details.get("shared_inbox") or details.get("inbox", "")
            if inbox and inbox not in targets:
                targets.append(inbox)
        if deleted:
            announce = documents.activity("Announce", f"{note_uri}/activity", me, obj, to=to, cc=cc)
            activity = documents.activity("Undo", f"{note_uri}#undo", me, announce, to=to, cc=cc)
        else:
            activity = documents.activity("Announce", f"{note_uri}/activity", me, obj, to=to, cc=cc)
    elif deleted:
        activity = documents.activity(
            "Delete", f"{note_uri}#delete", me, {"id": note_uri, "type": "Tombstone"}, to=to, cc=cc
        )
    elif event.kind == events.STATUS_UPDATE:
        activity = documents.activity(
            "Update",
            f"{note_uri}#updates/{now_ms()}",
            me,
            await note_of(store, base, status),
            to=to,
            cc=cc,
        )
    else:
        activity = documents.activity(
            "Create", f"{note_uri}/activity", me, await note_of(store, base, status), to=to, cc=cc
        )
    for inbox in targets:
        await delivery.send(store, queue, status.user_id, inbox, activity)
    if activity["type"] == "Create":  # a quote of a remote status: its author's approval asked
        await quoting.request(store, queue, base, status)
    return len(targets)


async def resend(store: Store, queue: JobQueue, base: str, status: Status) -> int:
    """Send a local status again as an Update of its Note, where it went
    (its quote accepted or refused since: quoting.answered)."""
    return await handle(store, queue, base, events.status_update_event(status).encode())


def _fresh() -> str:
    """A part that makes an activity's id new."""
    return uuid.uuid4().hex


async def follow(
    store: Store,
    queue: JobQueue,
    settings: Settings,
    uid: int,
    target: int,
    on: bool,
    kind: str = "Follow",
) -> bool:
    """Tell a remote account that local ``uid`` follows it now (``on``) or
    stopped (``kind`` "Block": blocks it, or no longer); False if
    ``target`` is not a remote account."""
    details = await remote.details(store, target)
    if not details or not settings.public_url:
        return False
    base = settings.public_url.rstrip("/")
    try:
        login = (await users.get_user(store, uid)).login
    except UserNotFound:
        return False
    me = documents.actor_id(base, login)
    # each send its own id, as Mastodon's (a random one per follow): servers
    # drop an id they have seen, so a follow or block again soon after its
    # Undo would be lost under the same one; an Undo names what it undoes by
    # its type, actor and object, and taking it again is idempotent
    follow_id = f"{me}#{kind.lower()}s/{target}/{_fresh()}"
    activity = documents.activity(kind, follow_id, me, details["uri"])
    if not on:
        activity = documents.activity("Undo", f"{follow_id}/undo", me, activity)
    await delivery.send(store, queue, uid, details.get("inbox", ""), activity)
    return True


async def like(
    store: Store, queue: JobQueue, settings: Settings, uid: int, sid: int, on: bool
) -> bool:
    """Tell the server of a remote status that local ``uid`` favourited it
    (``on``) or took it back; False if it is not a remote status."""
    if not settings.public_url:
        return False
    try:
        status = await statuses.get_status(store, sid)
        if not status.extra.get("uri"):
            return False  # a local status: nothing more read
        login = (await users.get_user(store, uid)).login
    except RedpollError:
        return False
    details = await remote.details(store, status.user_id)
    base = settings.public_url.rstrip("/")
    me = documents.actor_id(base, login)
    like_id = f"{me}#likes/{sid}/{_fresh()}"  # its own id each time (see follow)
    activity = documents.activity("Like", like_id, me, status.extra["uri"])
    if not on:
        activity = documents.activity("Undo", f"{like_id}/undo", me, activity)
    await delivery.send(store, queue, uid, details.get("inbox", ""), activity)
    return True


async def schedule_poll_update(queue: JobQueue, status: Status, now: int | None = None) -> bool:
    """Queue the job for later that sends the counts of the local poll of
    ``status`` at the end of the window ``now`` falls in (queued again in
    the same window: the same one entry); none when the poll ends first
    (its end sends the last counts). Whether one was queued."""
    poll = polls.Poll.of(status)
    if poll is None or status.extra.get("uri"):
        return False
    every = limits.FED_POLL_UPDATE_EVERY_S * 1000
    at = ((now_ms() if now is None else now) // every + 1) * every
    if at >= poll.expires_at:
        return False
    await queue.enqueue_at(PollUpdateJob(sid=status.id, author=status.user_id, at=at), at)
    return True


async def poll_update(store: Store, queue: JobQueue, settings: Settings, sid: int, tag: str) -> int:
    """Send an Update of the Question of local status ``sid`` (its counts
    now; closed once it ended) to where the status went and to the servers
    of its remote voters; ``tag`` makes the activity's id (the same for a
    run of the same job again: receivers drop it). How many inboxes."""
    if not settings.public_url:
        return 0
    base = settings.public_url.rstrip("/")
    status = await statuses.get_status_or_none(store, sid)
    poll = polls.Poll.of(status) if status is not None else None
    if poll is None or status.extra.get("uri"):
        return 0  # gone, no poll any more, or another server's
    named = await mentioned(store, base, status)
    targets = await _targets(store, status, named)
    targets += [i for i in await polls.voter_inboxes(store, sid, poll) if i not in targets]
    if not targets:
        return 0
    me = documents.actor_id(base, status.login)
    to, cc = documents.addressing(status, base, [uri for uri, _, _ in named])
    activity = documents.activity(
        "Update",
        f"{documents.note_id(base, status.login, sid)}#updates/poll/{tag}",
        me,
        await note_of(store, base, status),
        to=to,
        cc=cc,
    )
    for inbox in targets:
        await delivery.send(store, queue, status.user_id, inbox, activity)
    return len(targets)


async def after_vote(store: Store, queue: JobQueue, settings: Settings, uid: int, sid: int) -> int:
    """What follows local account ``uid``'s vote in the poll of status
    ``sid`` (idempotent: the journal's replay does it again). A remote
    poll: each option the votes hash holds for ``uid`` is sent to the
    poll's author, as a Note naming it (ids fixed by the poll, its options'
    generation and the option: a second send is dropped there). A local
    one: its next Update is queued. How many votes were sent."""
    if not settings.public_url:
        return 0
    status = await statuses.get_status_or_none(store, sid)
    poll = polls.Poll.of(status) if status is not None else None
    if poll is None:
        return 0
    if not status.extra.get("uri"):
        await schedule_poll_update(queue, status)
        return 0
    chosen = await polls.choices(store, uid, sid, poll)
    details = await remote.details(store, status.user_id)
    if not chosen or not details.get("uri"):
        return 0
    try:
        login = (await users.get_user(store, uid)).login
    except UserNotFound:
        return 0
    me = documents.actor_id(settings.public_url.rstrip("/"), login)
    inbox = details.get("inbox") or details.get("shared_inbox", "")
    for index in chosen:
        vote = documents.vote(
            me,
            f"{me}#votes/{sid}/{poll.gen}/{index}",
            status.extra["uri"],
            details["uri"],
            poll.options[index],
        )
        await delivery.send(store, queue, uid, inbox, vote)
    return len(chosen)
