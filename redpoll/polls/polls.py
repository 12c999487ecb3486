"""Polls, as Mastodon's: a status may carry a poll of 2-4 options that
runs for a while (five minutes to a month), single or multiple choice,
its totals hidden until it ends if asked; each account votes once; when it
ends, its voters and its author get a ``poll`` notification.

The poll's id is its status's. Its definition (options, end, flags, and
the *generation* of the options: when they were set) is the status
record's ``x:poll`` extra, so it is part of the record and of every kept
rendering of it, versioned like the rest (redpoll.core.memo). The votes
change all the time: they are kept beside the record in its slot
(redpoll.polls.keys) and read per request with the status's other counts
(:func:`state_reads`, into ``records.state.PollState``), never kept.

Voting is one script (poll_vote.lua, atomic over the record and the
votes): the record must still be the one the vote was checked against, the
poll open, the account not yet a voter; then its choices and the counts
are written together. An account of another server votes one choice at a
time (poll_vote_one.lua: once per poll, or once per option of a
multiple-choice one). A poll of another server is counted there: its
counts here are the ones its server sends (poll_tally.lua), with the votes
of accounts here added as they vote. The end is a job for later (``jobs.PollEndJob``,
``JobQueue.enqueue_at``), queued by the post's journal (idempotent: the
same job queued again is one entry); its handler (:func:`end`) is
idempotent: each notification is keyed by the poll and made once.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..bus.queue import JobQueue
from ..core import keys, limits, validate
from ..core.errors import (
    AlreadyVoted,
    Conflict,
    NotFound,
    PollEnded,
    StatusNotFound,
    ValidationError,
)
from ..core.models import EXTRA_PREFIX, Status, now_ms
from ..notifications import notifications
from ..records import writes
from ..records.state import PollState
from ..storage.store import Store
from . import keys as poll_keys
from .jobs import PollEndJob

#: the notification kind of a poll's end (Mastodon's ``poll``)
KIND = "poll"
#: the status extra that holds a poll's definition
EXTRA = "poll"
#: the status record's field that holds it
EXTRA_FIELD = EXTRA_PREFIX + EXTRA


class PollNotFound(NotFound):
    pass


@dataclass(frozen=True)
class PollSpec:
    """A poll as a client asks for it (checked: :func:`spec`)."""

    options: tuple[str, ...]
    expires_in: int
    multiple: bool = False
    hide_totals: bool = False
    #: when it ends (ms), for a poll of another server (its ``endTime``);
    #: None: ``expires_in`` from now
    ends_at: int | None = None

    def end(self, now: int) -> int:
        return self.ends_at if self.ends_at is not None else now + self.expires_in * 1000


@dataclass(frozen=True)
class Poll:
    """A poll's definition, as its status's record holds it."""

    options: tuple[str, ...]
    expires_at: int  # ms
    multiple: bool
    hide_totals: bool
    #: when its options were set (ms): the votes are kept per generation
    gen: int

    def to_extra(self) -> str:
        return json.dumps(
            {
                "options": list(self.options),
                "expires_at": self.expires_at,
                "multiple": self.multiple,
                "hide_totals": self.hide_totals,
                "gen": self.gen,
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )

    def expired(self, now: int | None = None) -> bool:
        return (now_ms() if now is None else now) >= self.expires_at

    @staticmethod
    def of(status: Status) -> Poll | None:
        """The poll of ``status``, or None."""
        raw = status.extra.get(EXTRA)
        return _parse(raw) if raw else None


@functools.lru_cache(maxsize=4096)
def _parse(raw: str) -> Poll | None:
    """A definition from the record (kept by its text: the same text is
    the same poll)."""
    try:
        d = json.loads(raw)
        return Poll(
            tuple(str(o) for o in d["options"]),
            int(d["expires_at"]),
            bool(d.get("multiple")),
            bool(d.get("hide_totals")),
            int(d["gen"]),
        )
    except (ValueError, KeyError, TypeError):
        return None


def _flag(value: Any, name: str) -> bool:
    if value in (None, ""):
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "on", "false", "0", "off"):
        return value.lower() in ("true", "1", "on")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValidationError(f"poll[{name}]", "must be a boolean")


def spec(
    options: Any,
    expires_in: Any,
    multiple: Any = False,
    hide_totals: Any = False,
    min_s: int = limits.POLL_EXPIRES_MIN_S,
) -> PollSpec:
    """A poll as asked for, checked as Mastodon's PollValidator does
    (ValidationError naming the field); ``min_s``: the shortest it may run
    (a setting may lower it: Settings.poll_expires_min_s)."""
    if not isinstance(options, (list, tuple)) or not all(isinstance(o, str) for o in options):
        raise ValidationError("poll[options]", "must be a list of strings")
    options = tuple(o.strip() for o in options)
    if len(options) < limits.POLL_OPTIONS_MIN:
        raise ValidationError("poll[options]", "must have more than one item")
    if len(options) > limits.POLL_OPTIONS_MAX:
        raise ValidationError(
            "poll[options]", f"cannot contain more than {limits.POLL_OPTIONS_MAX} items"
        )
    for option in options:
        validate.text(option, "poll[options]", limits.POLL_OPTION_MAX_CHARS, allow_empty=False)
    if len(set(options)) < len(options):
        raise ValidationError("poll[options]", "contain duplicate items")
    if isinstance(expires_in, bool) or expires_in in (None, ""):
        raise ValidationError("poll[expires_in]", "is missing")
    try:
        seconds = int(str(expires_in).strip())
    except ValueError:
        raise ValidationError("poll[expires_in]", "must be a number of seconds") from None
    if seconds < min_s:
        raise ValidationError("poll[expires_in]", f"is too soon (at least {min_s} seconds)")
    if seconds > limits.POLL_EXPIRES_MAX_S:
        raise ValidationError(
            "poll[expires_in]",
            f"is too far into the future (at most {limits.POLL_EXPIRES_MAX_S} seconds)",
        )
    return PollSpec(
        options, seconds, _flag(multiple, "multiple"), _flag(hide_totals, "hide_totals")
    )


def create(asked: PollSpec, now: int) -> Poll:
    return Poll(asked.options, asked.end(now), asked.multiple, asked.hide_totals, now)


def edited(before: Poll | None, asked: PollSpec | None, now: int) -> Poll | None:
    """The poll an edit makes, as Mastodon's UpdateStatusService: none asked
    for, none; the same options and choice kind keep the generation (and so
    the votes); others start a new one. The end is set anew either way."""
    if asked is None:
        return None
    same = (
        before is not None and before.options == asked.options and before.multiple == asked.multiple
    )
    return Poll(
        asked.options,
        asked.end(now),
        asked.multiple,
        asked.hide_totals,
        before.gen if same else now,
    )


def end_job(status: Status, poll: Poll) -> PollEndJob:
    return PollEndJob(sid=status.id, author=status.user_id, gen=poll.gen, at=poll.expires_at)


async def schedule(queue: JobQueue, status: Status) -> None:
    """Queue the end of the poll of ``status`` (if any) for its time
    (idempotent: the same job queued again stays one entry)."""
    poll = Poll.of(status)
    if poll is not None:
        await queue.enqueue_at(end_job(status, poll), poll.expires_at)


async def close(store: Store, queue: JobQueue, status: Status, at: int) -> bool:
    """The poll of ``status`` (another server's) ends at ``at`` (ms, not
    after now), sooner than it was to: its server closed it. False if it
    ends no sooner, or ended here already. Its end job for ``at`` is queued
    first (it does nothing unless the poll ends at ``at``), then the
    definition is rewritten in one script that checks it is still the one
    read (StatusWrites.update_status: atomic; the new version makes every
    kept rendering follow): a run cut short is run again whole, and a run
    after the rewrite finds the poll ended and changes nothing."""
    poll = Poll.of(status)
    if poll is None or poll.expired() or at >= poll.expires_at:
        return False
    closed = Poll(poll.options, at, poll.multiple, poll.hide_totals, poll.gen)
    await queue.enqueue_at(end_job(status, closed), at)
    try:
        await writes.of(store).update_status(
            status.id, {EXTRA_FIELD: closed.to_extra()}, only_if=(EXTRA_FIELD, status.extra[EXTRA])
        )
    except (Conflict, StatusNotFound):
        return False  # edited or deleted meanwhile: that change stands
    return True


async def forget(store: Store, queue: JobQueue, status: Status) -> None:
    """``status`` is being deleted: its votes go and its end is taken back
    (idempotent)."""
    poll = Poll.of(status)
    if poll is None:
        return
    await queue.cancel_at(end_job(status, poll))
    await store.delete(*_vote_keys(status.id, poll.gen))


def _vote_keys(sid: int, gen: int) -> tuple[str, str, str]:
    return (
        poll_keys.counts(sid, gen),
        poll_keys.votes(sid, gen),
        poll_keys.voter_inboxes(sid, gen),
    )


async def after_edit(store: Store, queue: JobQueue, before: Status, after: Status) -> None:
    """What follows an edit of a poll (idempotent): the old end taken back
    and the new one queued; the votes of a generation left behind dropped."""
    old, new = Poll.of(before), Poll.of(after)
    if old == new:
        return
    if old is not None:
        await queue.cancel_at(end_job(before, old))
        if new is None or new.gen != old.gen:
            await store.delete(*_vote_keys(before.id, old.gen))
    await schedule(queue, after)


def state_reads(
    viewer: int | None, statuses: list[Status]
) -> tuple[list[tuple], Callable[[list], dict[int, PollState]]]:
    """The reads of the votes of the polls among ``statuses`` as ``viewer``
    is shown them (for a caller's batch) and what to make of their replies:
    each poll's :class:`~redpoll.records.state.PollState` by status id."""
    polled = [(s, p) for s in statuses if EXTRA in s.extra and (p := Poll.of(s)) is not None]
    commands: list[tuple] = []
    for s, p in polled:
        commands.append(
            ("HMGET", poll_keys.counts(s.id, p.gen), *map(str, range(len(p.options))), "n")
        )
        if viewer is not None:
            commands.append(("HGET", poll_keys.votes(s.id, p.gen), viewer))

    def parse(replies: list) -> dict[int, PollState]:
        out, at = {}, 0
        for s, _ in polled:
            *counts, voters = replies[at]
            own_raw = replies[at + 1] if viewer is not None else None
            at += 2 if viewer is not None else 1
            own = (
                tuple(int(c) for c in own_raw.decode().split(",") if c)
                if own_raw is not None
                else None
            )
            out[s.id] = PollState(
                tuple(int(c or 0) for c in counts), int(voters or 0), own, viewer == s.user_id
            )
        return out

    return commands, parse


def choices_of(raw: Any, poll: Poll) -> list[int]:
    """The chosen option indexes, checked against ``poll`` (Mastodon's
    VoteValidator)."""
    items = raw if isinstance(raw, list) else ([] if raw in (None, "") else [raw])
    if not items:
        raise ValidationError("choices", "is missing")
    chosen = []
    for item in items:
        if isinstance(item, bool):
            raise ValidationError("choices", "must be option indexes")
        try:
            index = int(str(item).strip())
        except ValueError:
            raise ValidationError("choices", "must be option indexes") from None
        if not 0 <= index < len(poll.options):
            raise ValidationError("choices", "The chosen vote option does not exist")
        if index not in chosen:
            chosen.append(index)
    if len(chosen) > 1 and not poll.multiple:
        raise ValidationError("choices", "This poll allows one choice only")
    return sorted(chosen)


async def vote(store: Store, uid, sid, choices: Any) -> None:
    """``uid`` votes ``choices`` in the poll of status ``sid`` (which the
    caller checked they may see). Refused with nothing written: no such
    poll (PollNotFound), the author's own poll, an ended poll, a second
    vote (Conflict: 422), choices out of range or several in a single-choice
    poll (ValidationError)."""
    uid, sid = validate.an_id(uid, "user_id"), validate.an_id(sid, "id")
    for _ in range(3):
        raw = await store.hgetall(keys.status(sid))
        status = Status.from_hash(raw)
        poll = Poll.of(status) if status is not None else None
        if poll is None:
            raise PollNotFound(f"poll {sid} does not exist")
        chosen = choices_of(choices, poll)
        if status.user_id == uid:
            raise Conflict("You cannot vote in your own polls")
        if poll.expired():
            raise Conflict("The poll has already ended")
        if await _counted(
            store,
            sid,
            "poll_vote",
            [keys.status(sid), poll_keys.counts(sid, poll.gen), poll_keys.votes(sid, poll.gen)],
            [
                (raw.get(b"v") or b"").decode(),
                uid,
                poll.expires_at,
                ",".join(map(str, chosen)),
                *chosen,
            ],
            "You have already voted on this poll",
        ):
            return
    raise Conflict(f"poll {sid} kept changing while the vote was counted; try again")


async def _counted(
    store: Store, sid: int, script: str, keys_: list, args: list, already: str
) -> bool:
    """Run a vote script (atomic: checked and counted in one call): True
    once counted; False when the status record changed since the caller
    read it (an edit), so the caller reads it again. Its refusals as the
    API words them (``already``: a vote given before)."""
    try:
        await store.run(script, keys_, args)
        return True
    except AlreadyVoted:
        raise Conflict(already) from None
    except PollEnded:
        raise Conflict("The poll has already ended") from None
    except StatusNotFound:
        raise PollNotFound(f"poll {sid} does not exist") from None
    except Conflict:  # the record changed since it was read
        return False


async def vote_one(store: Store, uid: int, sid: int, title: str, inbox: str) -> None:
    """An account of another server (``uid``, the caller checked it may see
    the status) chooses the option titled ``title`` in the local poll of
    status ``sid``; ``inbox``: where its server hears of the poll's counts.
    Refused with nothing written: no such poll or option (PollNotFound),
    the author's own poll, an ended poll, a second vote in a single-choice
    poll or the same option again (Conflict)."""
    for _ in range(3):
        raw = await store.hgetall(keys.status(sid))
        status = Status.from_hash(raw)
        poll = Poll.of(status) if status is not None else None
        if poll is None or title not in poll.options:
            raise PollNotFound(f"poll {sid} has no option {title[:60]!r}")
        if status.user_id == uid:
            raise Conflict("You cannot vote in your own polls")
        if await _counted(
            store,
            sid,
            "poll_vote_one",
            [keys.status(sid), *_vote_keys(sid, poll.gen)],
            [
                (raw.get(b"v") or b"").decode(),
                uid,
                poll.expires_at,
                poll.options.index(title),
                "1" if poll.multiple else "0",
                inbox,
            ],
            "already voted on this poll (or for this option)",
        ):
            return
    raise Conflict(f"poll {sid} kept changing while the vote was counted; try again")


async def tally(store: Store, sid: int, gen: int, counts: list[int], voters: int) -> bool:
    """The counts of a poll of another server as its server sends them,
    for generation ``gen`` of its options (poll_tally.lua: written only
    while the record holds that generation); whether written."""
    pairs: list[Any] = []
    for i, count in enumerate(counts):
        pairs += [i, max(int(count), 0)]
    return (
        await store.run(
            "poll_tally",
            [keys.status(sid), poll_keys.counts(sid, gen)],
            [gen, *pairs, "n", max(int(voters), 0)],
        )
        == 1
    )


async def choices(store: Store, uid: int, sid: int, poll: Poll) -> tuple[int, ...]:
    """The options ``uid`` chose in the poll of status ``sid`` (none: ())."""
    raw = await store.hget(poll_keys.votes(sid, poll.gen), uid)
    return tuple(int(c) for c in raw.decode().split(",") if c) if raw else ()


async def voter_inboxes(store: Store, sid: int, poll: Poll) -> list[str]:
    """The inboxes of the other servers' accounts that voted in it."""
    return sorted(m.decode() for m in await store.smembers(poll_keys.voter_inboxes(sid, poll.gen)))


async def end(store: Store, job: PollEndJob) -> int:
    """A poll's end (a worker's run of its job, at least once): a ``poll``
    notification to each voter and to the author, each made once however
    often this runs (keyed by the poll, under one operation id drawn once
    and kept in the counts hash: HSETNX, then read back). Nothing for a
    poll deleted or edited to another end meanwhile. How many voters."""
    raw = await store.hgetall(keys.status(job.sid))
    status = Status.from_hash(raw)
    poll = Poll.of(status) if status is not None else None
    if poll is None or poll.gen != job.gen or poll.expires_at != job.at:
        return 0
    counts = poll_keys.counts(job.sid, poll.gen)
    await store.hsetnx(counts, "op", await store.incr(keys.INTERACTION_SEQ))
    op = int(await store.hget(counts, "op"))
    voters = sorted(int(uid) for uid in await store.hkeys(poll_keys.votes(job.sid, poll.gen)))
    voters = voters[: limits.POLL_NOTIFIED_MAX]
    # (the author of a poll of another server is told there)
    for owner in [*voters, *([] if status.extra.get("uri") else [status.user_id])]:
        await notifications.apply(
            store, owner, KIND, status.user_id, job.sid, op, True, status=job.sid, own=True
        )
    return len(voters)
