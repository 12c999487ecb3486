"""Scheduled statuses (Mastodon's ScheduledStatus): what a status will be,
and when; posted by its job at that time, once.

Where each write is atomic:

* scheduling (:func:`schedule`): the record and its job for later are one
  script in one slot (sched_create.lua; keys.py says why one slot). With
  uploads, two steps come first, ordered so that a call cut short leaves
  nothing visible and nothing held for good: the job is queued for
  limits.SCHEDULED_SETTLE_MS from now (JobQueue.enqueue_at), then the
  uploads are held for the id (media_hold.lua: atomic, all or none); the
  script then moves the job to the status's time. Cut short before the
  script, the job runs soon, finds no record and releases the uploads.
* rescheduling (:func:`reschedule`): the record's time and the job's, one
  script (sched_move.lua).
* cancelling (:func:`cancel`): record and job, one script
  (sched_remove.lua), then the uploads released (idempotent; the job, moved
  to now when there are uploads, releases them again if the call is cut
  short).
* posting (:func:`publish`, the job's handler, run at-least-once): the
  status is posted under the Idempotency-Key ``scheduled:<id>``
  (posting.idempotency: at most one status per key), then the record is
  removed (sched_remove.lua). A run cut short anywhere is run again and
  finds the status posted under the key (or, after the removal, no record):
  posted exactly once.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from ..bus.queue import JobQueue
from ..core import limits, validate
from ..core.errors import NotFound, RedpollError, StatusNotFound, UserNotFound, ValidationError
from ..core.models import now_ms
from ..core.settings import Settings
from ..media import uploads
from ..posting import idempotency
from ..quotes import quotes
from ..records import statuses, users
from ..storage.store import Store
from . import keys
from .jobs import ScheduledStatusJob

log = logging.getLogger("redpoll.scheduling")

DAY_MS = 86_400_000


class ScheduleRefused(ValidationError):
    """A 422 in Mastodon's words (the whole message, no field prefix)."""

    def __init__(self, message: str):
        RedpollError.__init__(self, message)
        self.field = "scheduled_at"


@dataclass(frozen=True)
class Scheduled:
    id: int
    uid: int
    at: int  # when it is to be posted (ms)
    params: dict  # as Mastodon shows them (ScheduledStatus.params)
    extra: dict  # the status's extras as the engine posts them
    media: str  # the held uploads' snapshot (the media extra), '' for none

    @property
    def media_ids(self) -> list[int]:
        return [int(m) for m in self.params.get("media_ids") or ()]

    def job(self) -> ScheduledStatusJob:
        return ScheduledStatusJob(uid=self.uid, id=self.id, media=tuple(self.media_ids))


class NotScheduled(NotFound):
    pass


def parse_time(value) -> int:
    """An ISO 8601 date-time (a naive one is UTC) as ms since the epoch."""
    if not isinstance(value, str):
        raise ValidationError("scheduled_at", "must be an ISO 8601 date-time")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationError("scheduled_at", "must be an ISO 8601 date-time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1000)


def _check_time(at: int, now: int) -> None:
    if at < now + limits.SCHEDULED_MIN_LEAD_S * 1000:
        raise ScheduleRefused("Scheduled at must be at least 5 minutes in the future")


def _day(at: int) -> tuple[int, int]:
    start = at - at % DAY_MS  # UTC days, as Mastodon counts them
    return start, start + DAY_MS


def _keys(uid: int) -> list[str]:
    return [keys.index(uid), keys.times(uid), keys.records(uid), keys.jobs(uid), keys.due_set(uid)]


async def schedule(
    store: Store,
    queue: JobQueue,
    uid,
    at: int,
    text,
    extra=None,
    in_reply_to=None,
    media=(),
    poll=None,
    idempotency_key=None,
) -> Scheduled:
    """Schedule a status of ``uid`` for ``at`` (ms; at least
    limits.SCHEDULED_MIN_LEAD_S ahead), posting ``text`` with ``extra``
    (the engine's extras), replying to ``in_reply_to``, attaching ``media``
    (the uploads are held for it until it is posted or cancelled). ``poll``
    is kept as the client sent it. See the module for the order of writes."""
    uid = validate.an_id(uid, "user_id")
    now = now_ms()
    _check_time(at, now)
    media = uploads.requested(media or ())
    text = validate.status_body(text, "text", allow_empty=bool(media))
    extra = validate.extra_fields(extra)
    user = await users.get_user(store, uid)
    if quotes.EXTRA in extra:  # what it quotes, checked now as when posting (QuoteRefused)
        quoted = await quotes.quotable(store, uid, extra[quotes.EXTRA])
        extra = {**extra, quotes.EXTRA: str(quoted.id)}
    if quotes.POLICY_EXTRA in extra:  # (a 422 now rather than a dropped post)
        quotes.policy_param(extra[quotes.POLICY_EXTRA], extra.get("visibility", "public"))
    sid = await store.incr(keys.SEQ)
    snapshot = await uploads.for_post(store, uid, media, str(sid)) if media else ""
    params = {
        "text": text,
        "visibility": extra.get("visibility", user.privacy or "public"),
        "spoiler_text": extra.get("spoiler_text") or None,
        "sensitive": extra.get("sensitive") == "true",
        "in_reply_to_id": str(in_reply_to) if in_reply_to is not None else None,
        "media_ids": [str(m) for m in media] or None,
        "language": extra.get("language"),
        "poll": poll,
        "idempotency": idempotency_key,
        "application_id": None,
        "with_rate_limit": False,
        "scheduled_at": None,
    }
    record = Scheduled(sid, uid, at, params, extra, snapshot)
    job = record.job()
    if media:
        await queue.enqueue_at(job, now + limits.SCHEDULED_SETTLE_MS)
        try:
            await uploads.hold(store, uid, media, sid)
        except ValidationError:
            await queue.cancel_at(job)
            raise
    day = _day(at)
    answer = await store.run(
        "sched_create",
        _keys(uid),
        [
            sid,
            at,
            _encode(record),
            job.to_json(),
            limits.SCHEDULED_STATUSES_MAX,
            limits.SCHEDULED_STATUSES_PER_DAY,
            *day,
        ],
    )
    answer = answer.decode() if isinstance(answer, bytes) else answer
    if answer != "ok":
        if media:
            await uploads.release(store, uid, media, sid)
            await queue.cancel_at(job)
        if answer == "total":
            raise ScheduleRefused(
                f"You have exceeded the limit of {limits.SCHEDULED_STATUSES_MAX} scheduled posts"
            )
        raise ScheduleRefused(
            "You have exceeded the limit of "
            f"{limits.SCHEDULED_STATUSES_PER_DAY} scheduled posts for today"
        )
    return record


def _encode(record: Scheduled) -> str:
    return json.dumps(
        {"params": record.params, "extra": record.extra, "media": record.media},
        separators=(",", ":"),
    )


def _decode(uid: int, sid: int, raw, at) -> Scheduled:
    data = json.loads(raw)
    return Scheduled(sid, uid, int(float(at)), data["params"], data["extra"], data["media"])


async def get(store: Store, uid, sid) -> Scheduled:
    """``uid``'s scheduled status ``sid``; NotScheduled if there is none
    (another's included: only the owner sees them)."""
    uid, sid = validate.an_id(uid, "user_id"), validate.an_id(sid, "id")
    raw, at = await store.batch(
        [("HGET", keys.records(uid), sid), ("ZSCORE", keys.times(uid), sid)]
    )
    if raw is None or at is None:
        raise NotScheduled(f"scheduled status {sid} does not exist")
    return _decode(uid, sid, raw, at)


async def page(
    store: Store, uid, *, max_id=None, since_id=None, min_id=None, limit=None
) -> list[Scheduled]:
    """A page of ``uid``'s scheduled statuses, newest id first, by Mastodon's
    cursors (``min_id``: the ones just after it)."""
    uid = validate.an_id(uid, "user_id")
    limit = validate.page_limit(limit)
    if min_id is not None:
        rows = await store.zrangebyscore(
            keys.index(uid), f"({validate.an_id(min_id, 'min_id')}", "+inf", start=0, num=limit
        )
        rows = rows[::-1]
    else:
        high = f"({validate.an_id(max_id, 'max_id')}" if max_id is not None else "+inf"
        low = f"({validate.an_id(since_id, 'since_id')}" if since_id is not None else "-inf"
        rows = await store.zrevrangebyscore(keys.index(uid), high, low, start=0, num=limit)
    ids = [int(r) for r in rows]
    if not ids:
        return []
    replies = await store.batch(
        [("HGET", keys.records(uid), i) for i in ids]
        + [("ZSCORE", keys.times(uid), i) for i in ids]
    )
    out = []
    for i, raw, at in zip(ids, replies[: len(ids)], replies[len(ids) :]):
        if raw is not None and at is not None:
            out.append(_decode(uid, i, raw, at))
    return out


async def reschedule(store: Store, uid, sid, at: int) -> Scheduled:
    """Move ``uid``'s scheduled status ``sid`` to ``at`` (the same rules as
    scheduling), its job with it."""
    _check_time(at, now_ms())
    found = await get(store, uid, sid)
    answer = await store.run(
        "sched_move", _keys(found.uid), [found.id, at, limits.SCHEDULED_STATUSES_PER_DAY, *_day(at)]
    )
    answer = answer.decode() if isinstance(answer, bytes) else answer
    if answer == "missing":
        raise NotScheduled(f"scheduled status {sid} does not exist")
    if answer == "posting":
        raise ScheduleRefused("The scheduled post is being posted now")
    if answer == "daily":
        raise ScheduleRefused(
            "You have exceeded the limit of "
            f"{limits.SCHEDULED_STATUSES_PER_DAY} scheduled posts for today"
        )
    return Scheduled(found.id, found.uid, at, found.params, found.extra, found.media)


async def cancel(store: Store, uid, sid) -> None:
    """Cancel ``uid``'s scheduled status ``sid``: record and job go at once
    (sched_remove.lua), then its uploads are released (unattached again)."""
    found = await get(store, uid, sid)
    raw = await store.run("sched_remove", _keys(found.uid), [found.id, "cancel", now_ms()])
    if raw is None:
        raise NotScheduled(f"scheduled status {sid} does not exist")
    await uploads.release(store, found.uid, found.media_ids, found.id)


async def publish(
    store: Store, queue: JobQueue, settings: Settings, job: ScheduledStatusJob
) -> int | None:
    """The job's run: post the scheduled status (once: see the module) and
    remove it; the status's id, or None when nothing was posted (cancelled,
    its author gone or suspended, or what it attaches gone)."""
    try:
        found = await get(store, job.uid, job.id)
    except NotScheduled:  # cancelled (or posted by an earlier run)
        await uploads.release(store, job.uid, job.media, job.id)
        return None
    try:
        author = await users.get_user(store, job.uid)
    except UserNotFound:
        author = None
    if author is None or author.suspended:
        log.info("scheduled status %s not posted: its author is gone or suspended", job.id)
        await _drop(store, found)
        return None
    reply_to = found.params.get("in_reply_to_id")
    if reply_to is not None:
        try:
            await statuses.get_status(store, int(reply_to))
        except StatusNotFound:  # deleted meanwhile: posted as no reply (Mastodon)
            reply_to = None
    extra = dict(found.extra)
    if found.media:
        extra[uploads.HELD_FOR] = str(found.id)  # its held uploads may be attached
    sid = None
    try:
        status = await idempotency.post_once(
            store,
            queue,
            settings,
            found.uid,
            f"scheduled:{found.id}",
            found.params["text"],
            extra,
            reply_to,
            found.media_ids,
        )
        sid = status.id
    except quotes.QuoteRefused as exc:  # what it quotes is gone, or may be quoted no more
        log.warning("scheduled status %s could not be posted: %s", found.id, exc)
        await _drop(store, found)
        return None
    except StatusNotFound:
        pass  # posted by an earlier run, and deleted since by its author
    except ValidationError as exc:
        log.warning("scheduled status %s could not be posted: %s", found.id, exc)
        await _drop(store, found)
        return None
    await store.run("sched_remove", _keys(found.uid), [found.id, "posted", now_ms()])
    return sid


async def _drop(store: Store, found: Scheduled) -> None:
    await store.run("sched_remove", _keys(found.uid), [found.id, "posted", now_ms()])
    await uploads.release(store, found.uid, found.media_ids, found.id)
