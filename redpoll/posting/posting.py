"""Posting a status: its record (the poster's login copied in, the
poster's posts counted), its place in the poster's profile, and its
delivery to every follower's home and lists.

All or nothing, on one server and on a cluster, by a journal: the post is
first queued as a held job (``jobs.PostJob``, ``job_hold.lua``: one atomic
step) that carries the whole status; the call then runs the journal's first
step itself (:func:`apply_post`) and hands the rest of the fan-out on. If the
call is cut short anywhere after the journal exists, a worker replays the
journal after ``job_claim_ms``: every step of :func:`apply_post` is
idempotent (status_create.lua, record_post.lua, deliver.lua,
quote_record.lua), so the replay
finishes exactly the effect the call would have had. Cut short before the
journal, the call leaves nothing but a skipped status id.

The status is counted (``JobQueue.counts``) in the step that finishes the
journal (job_next.lua), once. The update event is published at least once:
a replay after a crash may publish it again.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bus import events
from ..bus.queue import Claimed, JobQueue
from ..cards import cards
from ..conversations import conversation
from ..conversations.jobs import IndexJob
from ..core import keys, limits, validate
from ..core.errors import StatusNotFound, UnexpectedMentions, UserNotFound, ValidationError
from ..core.models import Status, now_ms
from ..core.settings import Settings
from ..instance import activity
from ..media import uploads
from ..polls import polls
from ..quotes import quotes
from ..relations import visibility
from ..storage.store import Store
from ..timelines import fanout, home_rule
from ..timelines.jobs import FanoutJob
from ..trends import links
from .jobs import PostJob


@dataclass(frozen=True)
class Remote:
    """A status another server sent (redpoll.federation): its text bounded by
    that server (``max_chars``), and the accounts it mentions named by its
    tags (``mentions``, logins), never read from its text, where a short
    ``@name`` may be anyone's."""

    max_chars: int
    mentions: frozenset[str]
    #: its attachments as the ``media`` extra keeps them, pointing at its
    #: server (media.entity.remote_items); "" for none
    media: str = ""
    #: its HTML, sanitized (redpoll.federation.text.sanitize); "" for none
    html: str = ""


async def prepare(
    store: Store,
    queue: JobQueue,
    author_id,
    text,
    extra=None,
    in_reply_to=None,
    media=(),
    poll: polls.PollSpec | None = None,
    *,
    remote: Remote | None = None,
    allowed_mentions: frozenset[int] | None = None,
) -> Status:
    """Check the input and the author (and what the status replies to,
    mentions, tags, and the author's uploads it attaches: ``media``, ids;
    its ``poll``, checked by polls.spec) and draw an id: the status to post.
    Writes nothing but the id counter. A status with attachments may have
    no text; one with a poll has none (as Mastodon). ``remote``: a status
    another server sent (:class:`Remote`). ``allowed_mentions``: the
    accounts it may mention, if the poster named them; it mentions another:
    UnexpectedMentions, nothing written."""
    author_id = validate.an_id(author_id, "author_id")
    media = uploads.requested(media or ())
    if poll is not None and media:
        raise ValidationError("poll", "a status with a poll cannot have attachments")
    # (another server's status may be its attachments or its poll alone)
    if remote is not None:
        text = validate.text(
            text,
            "text",
            remote.max_chars,
            allow_empty=bool(media) or bool(remote.media) or poll is not None,
        )
    else:  # counted as Mastodon counts: a link as 23
        text = validate.status_body(text, "text", allow_empty=bool(media))
    extra = validate.extra_fields(extra)
    await queue.check_capacity()
    # Check the author before taking an id: a failed post writes nothing.
    login, privacy, qpol = await store.hmget(keys.user(author_id), ["login", "privacy", "qpol"])
    if login is None:
        raise UserNotFound(f"user {author_id} does not exist")
    if extra.get("visibility", visibility.PUBLIC) not in visibility.ALL:
        raise ValidationError("visibility", "must be one of " + ", ".join(visibility.ALL))
    if "visibility" not in extra and privacy and privacy != b"public":
        extra = {**extra, "visibility": privacy.decode()}  # the author's default
    if extra.get("visibility") == visibility.PUBLIC:  # public is the field's absence
        extra = {k: v for k, v in extra.items() if k != "visibility"}
    # replies, mentions, hashtags: read (and refused) before anything is written
    conv = await conversation.prepare(
        store, author_id, text, in_reply_to, only=remote.mentions if remote is not None else None
    )
    if allowed_mentions is not None:
        unexpected = [uid for uid, _ in conv.mentions if uid not in allowed_mentions]
        if unexpected:
            raise UnexpectedMentions(unexpected)
    extra = {**extra, **conv.to_extra()}
    if media:  # what the status shows of them, copied now (checked again when attached)
        extra["media"] = await uploads.for_post(
            store, author_id, media, extra.get(uploads.HELD_FOR, "")
        )
    if poll is not None:
        extra[polls.EXTRA] = polls.create(poll, now_ms()).to_extra()
    if remote is not None and remote.media:
        extra["media"] = remote.media
    if remote is None:  # its quote (checked: QuoteRefused) and who may quote it
        if quotes.POLICY_EXTRA not in extra and qpol:  # the author's default
            extra = {**extra, quotes.POLICY_EXTRA: qpol.decode()}
        extra = await _quote_extras(store, author_id, extra, {uid for uid, _ in conv.mentions})
    sid = await store.incr(keys.STATUS_SEQ)
    if extra.get("visibility") == visibility.DIRECT:  # its direct conversation
        extra["conv"] = str(conv.parent_conversation or conv.in_reply_to_id or sid)
    return Status(
        id=sid,
        text=text,
        created_at=now_ms(),
        user_id=author_id,
        login=login.decode(),
        extra=extra,
        html=remote.html if remote is not None else "",
    )


async def _quote_extras(store: Store, author_id: int, extra: dict, mentioned: set[int]) -> dict:
    """``extra`` with the status it quotes (``quote``: checked, a boost's
    original) and its own quote approval policy (``qpol``), both as
    redpoll.quotes decides; reads only."""
    vis = extra.get("visibility", visibility.PUBLIC)
    chosen = quotes.policy_param(extra.get(quotes.POLICY_EXTRA), vis)
    extra = {k: v for k, v in extra.items() if k != quotes.POLICY_EXTRA}
    if chosen != quotes.DEFAULT_POLICY and vis in visibility.OPEN:  # public: the absence
        extra[quotes.POLICY_EXTRA] = chosen
    if quotes.EXTRA in extra:
        target = await quotes.quotable(store, author_id, extra[quotes.EXTRA])
        quotes.check_mentions(target, author_id, vis, mentioned)
        extra[quotes.EXTRA] = str(target.id)
    return extra


def journal(status: Status) -> PostJob:
    return PostJob(sid=status.id, author=status.user_id, record=status.to_hash())


async def post(
    store: Store,
    queue: JobQueue,
    settings: Settings,
    author_id,
    text,
    extra=None,
    in_reply_to=None,
    media=(),
    poll=None,
    *,
    allowed_mentions: frozenset[int] | None = None,
) -> Status:
    """Create a status and deliver it (the first batch in the call, the rest
    in chained jobs)."""
    status = await prepare(
        store,
        queue,
        author_id,
        text,
        extra,
        in_reply_to,
        media,
        poll,
        allowed_mentions=allowed_mentions,
    )
    job = journal(status)
    held = await queue.hold(job)  # from here on, the post happens in full
    await finish(store, queue, settings, job, held)
    return status


async def finish(store: Store, queue: JobQueue, settings: Settings, job: PostJob, held) -> None:
    """Run the journal's first step in the call and release it."""
    try:
        next_job = await apply_post(store, settings, job)
    except (UserNotFound, ValidationError):
        # the author vanished (a wiped database), or an upload could not be
        # attached (attached elsewhere meanwhile): nothing posted
        await queue.release(held)
        raise
    await queue.release(held, next_job, count="statuses")


async def create(store: Store, job: PostJob) -> bool:
    """The status hash, its uploads attached, and the author's profile and
    counter (idempotent); False if the status was deleted meanwhile.
    ValidationError, the status hash taken back, when an upload cannot be
    attached (all or none: media_attach.lua; a replay finds them attached
    to this status already)."""
    created = await store.run(
        "status_create", [keys.status(job.sid)], [x for pair in job.record.items() for x in pair]
    )
    if created == -1:
        return False
    try:
        await uploads.attach(store, Status.from_hash(job.record))
    except ValidationError:  # (in no timeline, profile nor count yet)
        await store.delete(keys.status(job.sid))
        raise
    try:
        # what the home rule reads of it, beside the profile, if it needs a look
        ruled = home_rule.Candidate.of(Status.from_hash(job.record))
        recorded = await store.run(
            "record_post",
            [
                keys.profile(job.author),
                keys.user(job.author),
                keys.deleted_by(job.author),
                keys.ruled_posts(job.author),
            ],
            [job.sid, ruled.member() if ruled.ruled else ""],
        )
    except UserNotFound:  # the author vanished (a wiped database)
        await store.delete(keys.status(job.sid))
        raise
    return recorded != -1


async def apply_post(store: Store, settings: Settings, job: PostJob) -> FanoutJob | None:
    """The journal's first step: create the status, deliver it to the
    author's home, the public timeline and the first batch of followers,
    publish the update event; link it into its conversation (thread,
    mentions, hashtags: conversation.after_post). Idempotent; returns the
    continuation."""
    if not await create(store, job):
        return None  # deleted meanwhile: its delete journal cleans up
    status = Status.from_hash(job.record)
    # the author's latest status, for the directory's order=active (only raised: idempotent)
    await store.batch([("ZADD", keys.ACTIVE_ACCOUNTS, "GT", status.created_at, status.user_id)])
    if "uri" not in status.extra:  # a local status (another server's has its uri)
        await activity.count(store, "statuses", status.id, status.created_at)
    elif "@" in status.login:  # its server's statuses of the day
        domain = status.login.rsplit("@", 1)[1].lower()
        await activity.came_from(store, domain, status.id, status.created_at)
    if status.extra.get("in_reply_to_id"):  # a reply: one of the day's interactions
        await activity.count(store, "interactions", f"r{status.id}", status.created_at)
    await conversation.after_post(store, status)
    await quotes.record(store, status)  # its quote accepted, the quoted told (idempotent)
    await links.count_post(store, status)  # its links' histories (idempotent)
    await cards.queue_for(JobQueue(store), settings, status)  # its card's job (idempotent)
    await polls.schedule(JobQueue(store), status)  # its poll's end, if it has one (idempotent)
    # full-text search: a job for now, in the due set (a worker moves it onto its stream
    # within limits.DUE_JOBS_POLL_S; queued again before that, it stays one)
    await JobQueue(store).enqueue_at(IndexJob(status.id, status.user_id), now_ms())
    first = FanoutJob(
        job.sid,
        job.author,
        listed=status.listed,  # unlisted, private, direct: not on the public timeline
        only_following=status.replies_to_other,
        audience=visibility.of(status),
    )
    step = await fanout.advance(store, settings, first)
    if step.taken_back:
        return None  # deleted while this batch was delivered
    await events.publish(store, events.update_event(status))
    return step.next


async def post_claimed(
    store: Store,
    queue: JobQueue,
    settings: Settings,
    author_id,
    claim_key: str,
    shard: int,
    text,
    extra=None,
    in_reply_to=None,
    media=(),
    poll=None,
    *,
    remote: Remote | None = None,
    allowed_mentions: frozenset[int] | None = None,
) -> Status:
    """:func:`post`, at most once per ``claim_key``: the key is claimed in the
    step that holds the journal (job_hold_once.lua). If it was claimed
    before (a retry, after a crash or not), the status posted under it is
    returned; if its journal is still waiting to be replayed, its first step
    is run here (idempotent), so the status exists when this returns."""
    value = await store.get(claim_key)  # a retry: no id drawn for it
    if value is None:
        status = await prepare(
            store,
            queue,
            author_id,
            text,
            extra,
            in_reply_to,
            media,
            poll,
            remote=remote,
            allowed_mentions=allowed_mentions,
        )
        job = journal(status)
        held = await queue.hold_once(
            job, shard, claim_key, f"{status.id}:%s", limits.IDEMPOTENCY_WINDOW_S
        )
        if not isinstance(held, Claimed):
            await finish(store, queue, settings, job, held)
            return status
        value = held.value  # claimed meanwhile by a concurrent request
    sid, entry_id = value.split(b":", 1)
    first = await queue.entry(keys.held_job_stream(shard), entry_id)
    if isinstance(first, PostJob) and first.sid == int(sid):
        await create(store, first)  # its journal is still held: make it exist now
    raw = await store.hgetall(keys.status(int(sid)))
    found = Status.from_hash(raw)
    if found is None:
        raise StatusNotFound(f"status {int(sid)} posted under this key was deleted")
    return found
