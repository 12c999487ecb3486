"""Editing a status, as Mastodon's UpdateStatusService: its author changes
the text, the content warning, the sensitive flag, the language and the
poll (the same options keep its votes, others start afresh; its end is set
anew: redpoll.polls.edited) and the attachments (``media_ids``: those it
keeps, in their new order, and new uploads of the author's; one dropped
stays in the edit history, its file kept until the status goes); the
visibility and the reply stay.

The edit itself is one atomic step in the status's slot
(StatusWrites.edit_status, status_edit*.lua): the history (keys.status_edits:
the original, pushed by the first edit, then each edit), the record's new
fields, and a new version 'v', with which every kept decoding and rendering
of the status is made again (redpoll.core.memo). The step is refused with
nothing written when the status is gone or another's, when its history
holds limits.EDITS_MAX edits, or when the record changed since this edit
read it (another edit: read again and retried). So an edit cut short leaves
the old record or the new one, never a mix.

Mentions and hashtags are parsed from the new text as when posting, and the
record's mentions change in that same step: the one visibility decision
(redpoll.relations.visibility) reads them from the record whenever the
status is shown, so who may see a private or direct status changes exactly
when the text that names them does. What follows the step, all of it
idempotent, is journaled: the call holds an EditJob before the step and
releases it after the follow-ups, so a call cut short anywhere is finished
by a worker, which does the follow-ups if (and only if) the record holds
this edit: the new and the dropped mentions' homes and notifications, the
hashtag timelines (conversation.after_edit), the poll's end and the votes
of options left behind (polls.after_edit), the ``status.update`` stream
event (sent again by a replay: the same status), and an ``update``
notification to each account that boosted it (one per edit, keyed by it).
"""

from __future__ import annotations

import json
import logging

from ..bus import events
from ..bus.queue import JobQueue
from ..cards import cards
from ..conversations import conversation
from ..conversations.jobs import IndexJob
from ..core import keys, limits, validate
from ..core.errors import (
    Conflict,
    Forbidden,
    LimitReached,
    RedpollError,
    StatusNotFound,
    ValidationError,
)
from ..core.models import EXTRA_PREFIX, Status, now_ms
from ..media import entity as media_entity
from ..media import uploads
from ..notifications import notifications
from ..polls import polls
from ..quotes import quotes
from ..records import writes
from ..storage.store import Store
from .jobs import EditJob

log = logging.getLogger("redpoll.posting")

#: the notification kind boosters get (Mastodon's ``update``)
UPDATE_KIND = "update"
#: the record's fields an edit may set or remove (besides ``text``)
EDITED = ("spoiler_text", "sensitive", "language", "mentions", "tags", "edited_at", "poll", "media")
#: ``edit``'s ``poll`` when the caller says nothing of it: the poll stays as it is
KEEP = object()


def entry(status: Status, at: int) -> str:
    """One version of the history, as stored: what Mastodon's StatusEdit
    shows of it."""
    x = status.extra
    poll = polls.Poll.of(status)
    return json.dumps(
        {
            "text": status.text,
            "spoiler_text": x.get("spoiler_text", ""),
            "sensitive": x.get("sensitive") == "true",
            "media": x.get("media", ""),
            "mentions": x.get("mentions", ""),
            "at": at,
            **({"poll": list(poll.options)} if poll is not None else {}),
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


async def edit(
    store: Store,
    queue: JobQueue,
    uid,
    sid,
    text,
    *,
    spoiler_text: str = "",
    sensitive: bool = False,
    language: str | None = None,
    media=None,
    poll=KEEP,
    max_chars: int = limits.STATUS_MAX_CHARS,
    html: str | None = None,
) -> Status:
    """Edit ``uid``'s status ``sid``; the status as edited. ``media``:
    None keeps the attachments, else it must name the ones the status has.
    ``poll``: a polls.PollSpec (the same options keep the votes, others
    start afresh: polls.edited), None (no poll), or KEEP (as it is).
    ``max_chars``: a remote status's text is bounded by its server;
    ``html``: a remote status's new HTML, sanitized ("" for none; None
    keeps what it has).
    StatusNotFound (gone), Forbidden (another's), ValidationError (a boost,
    the input, a full history) with nothing written."""
    uid, sid = validate.an_id(uid, "user_id"), validate.an_id(sid, "status_id")
    spoiler_text = validate.text(
        spoiler_text or "", "spoiler_text", limits.SPOILER_TEXT_MAX_CHARS, allow_empty=True
    ).strip()
    for _ in range(3):
        raw = await store.hgetall(keys.status(sid))
        before = Status.from_hash(raw)
        if before is None:
            raise StatusNotFound(f"status {sid} does not exist")
        if before.user_id != uid:
            raise Forbidden(f"status {sid} belongs to another user")
        if before.reblog_of:
            raise ValidationError("id", "A boost cannot be edited")
        media_extra = await _attachments(store, uid, before, media)
        kept = media_entity.snapshot_items(media_extra)
        local = max_chars == limits.STATUS_MAX_CHARS  # counted as Mastodon counts: a link as 23
        body = validate.text(
            text if text is not None else "",
            "status",
            limits.STATUS_TEXT_MAX_CHARS if local else max_chars,
            allow_empty=bool(kept),
        )
        length = validate.status_length(body) if local else len(body)
        if length + len(spoiler_text) > max_chars:
            raise ValidationError(
                "spoiler_text",
                f"the text and the content warning together exceed {max_chars} characters",
            )
        conv = await conversation.prepare(store, uid, body)  # mentions and hashtags, as posting
        parsed = conv.to_extra()
        now = now_ms()
        extra = {k: v for k, v in before.extra.items() if k not in EDITED}
        extra |= {k: parsed[k] for k in ("mentions", "tags") if k in parsed}
        if spoiler_text:
            extra["spoiler_text"] = spoiler_text
        if sensitive or spoiler_text:  # a content warning hides the text (Mastodon)
            extra["sensitive"] = "true"
        language = language or before.extra.get("language")  # none named: the one it had
        if language:
            extra["language"] = language
        extra["edited_at"] = str(now)
        if media_extra:
            extra["media"] = media_extra
        if poll is KEEP:
            if polls.EXTRA in before.extra:
                extra[polls.EXTRA] = before.extra[polls.EXTRA]
        elif poll is not None:
            if kept:
                raise ValidationError("poll", "a status with attachments cannot have a poll")
            made = polls.edited(polls.Poll.of(before), poll, now)
            extra[polls.EXTRA] = made.to_extra()
        after = Status(
            id=before.id,
            text=body,
            created_at=before.created_at,
            user_id=before.user_id,
            login=before.login,
            extra=extra,
            html=before.html if html is None else html,
        )
        fields = {"text": body, **{EXTRA_PREFIX + k: extra[k] for k in EDITED if k in extra}}
        drop = [EXTRA_PREFIX + k for k in EDITED if k not in extra and k in before.extra]
        if after.html != before.html:
            if after.html:
                fields["html"] = after.html
            else:
                drop.append("html")
        version = (raw.get(b"v") or b"1").decode()
        job = EditJob(sid=sid, author=uid, old=before.to_hash(), new=after.to_hash(), at=now)
        held = await queue.hold(job)  # from here on, a worker finishes what the call does not
        try:
            await writes.of(store).edit_status(
                sid,
                uid,
                version,
                (entry(before, before.created_at), entry(after, now)),
                fields,
                drop,
            )
        except Conflict:  # edited meanwhile: edit what it is now
            await queue.release(held)
            continue
        except LimitReached:
            await queue.release(held)
            raise ValidationError(
                "id", f"a status can be edited at most {limits.EDITS_MAX} times"
            ) from None
        except RedpollError:  # refused by the script (nothing written): nothing to finish
            await queue.release(held)
            raise
        # (anything else, a cancel or a lost connection, may come after the write:
        # the journal stays held and a worker finishes the edit if it was made)
        break
    else:
        raise Conflict(f"status {sid} kept changing while it was edited; try again")
    await follow_up(store, before, after, now)
    await queue.release(held)
    return after


async def _attachments(store: Store, uid: int, before: Status, media) -> str | None:
    """The ``media`` extra the edit leaves: as it is (``media`` None), or the
    ids asked for, in that order: those the status has, and the author's
    uploads not attached anywhere (checked as when posting: uploads.for_post;
    attached by the edit's follow-up). ValidationError past
    limits.MEDIA_PER_STATUS, for an id given twice or an upload that cannot be."""
    if media is None:
        return before.extra.get("media")
    wanted = [validate.an_id(m, "media_ids") for m in media]
    if len(wanted) > limits.MEDIA_PER_STATUS or len(set(wanted)) != len(wanted):
        raise ValidationError(
            "media_ids", f"at most {limits.MEDIA_PER_STATUS} different attachments"
        )
    has = {int(i["id"]): i for i in media_entity.snapshot_items(before.extra.get("media"))}
    added = [m for m in wanted if m not in has]
    fresh = (
        {
            int(i["id"]): i
            for i in media_entity.snapshot_items(await uploads.for_post(store, uid, added))
        }
        if added
        else {}
    )
    chosen = [has.get(m) or fresh[m] for m in wanted]
    return json.dumps(chosen, separators=(",", ":")) if chosen else None


async def _attach_added(store: Store, before: Status, after: Status) -> None:
    """Attach the uploads an edit added (media_attach.lua: all or none; a
    replay finds them attached to this status already). An upload attached
    elsewhere since the edit checked it cannot be: logged, the edit stays."""
    had = {int(i["id"]) for i in media_entity.snapshot_items(before.extra.get("media"))}
    added = [
        i
        for i in media_entity.snapshot_items(after.extra.get("media"))
        if int(i["id"]) not in had and not i.get("remote")
    ]
    if added:
        try:
            await uploads.attach(
                store,
                Status(
                    after.id,
                    after.text,
                    after.created_at,
                    after.user_id,
                    after.login,
                    {"media": json.dumps(added)},
                ),
            )
        except ValidationError as exc:
            log.warning("an upload added by an edit of %s was not attached: %s", after.id, exc)


async def follow_up(store: Store, before: Status, after: Status, at: int) -> None:
    """What follows an edit (idempotent: a replay does it again)."""
    await _attach_added(store, before, after)
    await conversation.after_edit(store, before, after)
    await polls.after_edit(store, JobQueue(store), before, after)  # its end, dropped votes
    # full-text search: a job for now, in the due set (a worker moves it onto its stream
    # within limits.DUE_JOBS_POLL_S; queued again before that, it stays one)
    await JobQueue(store).enqueue_at(IndexJob(after.id, after.user_id), now_ms())
    await cards.after_edit(JobQueue(store), before, after)  # a new link's card
    await events.publish(store, events.status_update_event(after))
    await notify_boosters(store, after, at)
    await quotes.after_edit(store, after, at)  # quoted_update to those who quoted it


async def replay(store: Store, job: EditJob) -> None:
    """A worker's run of an edit's journal: the follow-ups, if the record
    holds this edit (its ``edited_at`` is the journal's); else the edit
    never happened (refused, or the call died before it) or a later one
    replaced it, whose own journal does what follows it."""
    current = await store.hget(keys.status(job.sid), EXTRA_PREFIX + "edited_at")
    if current is None or int(current) != job.at:
        return
    before, after = Status.from_hash(job.old), Status.from_hash(job.new)
    if before is not None and after is not None:
        await follow_up(store, before, after, job.at)


async def notify_boosters(store: Store, status: Status, at: int) -> None:
    """An ``update`` notification for each account that boosted ``status``
    (bounded); each edit makes its own, keyed by the edit's time ``at`` (so
    a replay of the same edit makes none more). Shown as every notification,
    by the visibility decision when it is read (redpoll.reading.notification_view)."""
    boosters = await store.zrange(
        keys.reblogged_by(status.id), 0, limits.EDIT_NOTIFIED_BOOSTERS_MAX - 1
    )
    for booster in boosters:
        await notifications.apply(
            store, int(booster), UPDATE_KIND, status.user_id, at, at, True, status=status.id
        )


async def history(store: Store, status: Status) -> list[dict]:
    """The versions of ``status`` (already shown to the reader), oldest
    first: the original and each edit; only the status as it is when it
    was never edited (Mastodon). Each: text, spoiler_text, sensitive,
    media (the extra), mentions (the extra), at (ms)."""
    rows = await store.lrange(keys.status_edits(status.id), 0, limits.EDITS_MAX)
    if not rows:
        return [json.loads(entry(status, status.created_at))]
    return [json.loads(row) for row in rows]
