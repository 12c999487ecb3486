"""The federation package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker); also the handler of a poll's end
(its record is the polls package's, redpoll.polls.jobs, which queues it;
what follows the end includes telling other servers) and of a revoked quote
(redpoll.quotes.jobs.QuoteRevokedJob: the Delete of its authorization).

An incoming activity refused in a way that would fail every rerun the same
(:func:`refusal`) finishes its job with a log line instead of a retry."""

from __future__ import annotations

import logging

from ..bus.queue import Done, Handler, JobQueue
from ..core.errors import UserNotFound
from ..core.settings import Settings
from ..net import safety
from ..net.http import FetchFailed
from ..polls import polls
from ..polls.jobs import PollEndJob
from ..quotes.jobs import QuoteRevokedJob
from ..relations import domain_blocks
from ..storage.store import Store
from . import (
    client,
    delivery,
    emoji,
    inbox,
    member_blocks,
    moves,
    outbox,
    quoting,
    remote,
    remote_media,
    threads,
)
from .jobs import (
    ContextJob,
    DeliverJob,
    DomainBlockJob,
    InboxJob,
    MoveJob,
    PollUpdateJob,
    PollVoteJob,
    RemoteEmojiJob,
    RemoteImagesJob,
    RemoteMediaJob,
)

log = logging.getLogger("redpoll.worker")


def refusal(exc: BaseException) -> bool:
    """Whether an incoming activity's job failed in a way every rerun would
    fail again: the signer gone, the activity refused (inbox.Refused), an
    actor document not kept (remote.BadActor), an address the fetch guard
    refuses (safety.Refused), a peer answering 4xx (but 429, too many
    requests: it may answer later) or a document that is not the one asked
    for (client.WrongDocument: another id, another media type). Timeouts,
    5xx, connection errors and database outages are passing: the job is
    retried."""
    if isinstance(exc, client.WrongDocument):
        return True
    if isinstance(exc, FetchFailed):
        return 400 <= exc.status < 500 and exc.status != 429
    return isinstance(exc, (UserNotFound, inbox.Refused, remote.BadActor, safety.Refused))


async def incoming(store: Store, settings: Settings, job: InboxJob, entry_id: bytes) -> Done:
    try:
        await inbox.process(store, JobQueue(store), settings, job)
    except Exception as exc:
        if not refusal(exc):
            raise  # passing: left pending, retried
        log.info("activity from account %s dropped (%s): %s", job.uid, type(exc).__name__, exc)
    return Done()


async def move(store: Store, settings: Settings, job: MoveJob, entry_id: bytes) -> Done:
    # one step of a Move (idempotent, retried); the next step is queued as its job's next
    return Done(await moves.step(store, JobQueue(store), settings, job))


async def context(store: Store, settings: Settings, job: ContextJob, entry_id: bytes) -> Done:
    await threads.fetch(store, JobQueue(store), settings, job.sid)
    return Done()


async def deliver(store: Store, settings: Settings, job: DeliverJob, entry_id: bytes) -> Done:
    await delivery.deliver(store, JobQueue(store), settings, job)
    return Done()


async def poll_end(store: Store, settings: Settings, job: PollEndJob, entry_id: bytes) -> Done:
    await polls.end(store, job)
    # other servers get its last counts (a local poll: an Update of its Question, closed)
    await outbox.poll_update(store, JobQueue(store), settings, job.sid, f"end/{job.gen}/{job.at}")
    return Done()


async def poll_update(
    store: Store, settings: Settings, job: PollUpdateJob, entry_id: bytes
) -> Done:
    await outbox.poll_update(store, JobQueue(store), settings, job.sid, str(job.at))
    return Done()


async def poll_vote(store: Store, settings: Settings, job: PollVoteJob, entry_id: bytes) -> Done:
    # a vote's journal taken over: what follows it, if it was counted (idempotent)
    await outbox.after_vote(store, JobQueue(store), settings, job.uid, job.sid)
    return Done()


async def domain_block(
    store: Store, settings: Settings, job: DomainBlockJob, entry_id: bytes
) -> Done:
    # a block whose call was cut short: its cleanup again, if it still stands
    if job.domain in await domain_blocks.blocked(store, job.uid):
        await member_blocks.cleanup(store, JobQueue(store), settings, job.uid, job.domain)
    return Done()


async def remote_media_job(
    store: Store, settings: Settings, job: RemoteMediaJob, entry_id: bytes
) -> Done:
    # idempotent: keeps what is not kept; a passing failure is retried
    await remote_media.fetch_attachments(store, settings, job.sid)
    return Done()


async def remote_images(
    store: Store, settings: Settings, job: RemoteImagesJob, entry_id: bytes
) -> Done:
    await remote_media.fetch_profile_images(store, settings, job.uid)
    return Done()


async def remote_emoji(
    store: Store, settings: Settings, job: RemoteEmojiJob, entry_id: bytes
) -> Done:
    # idempotent: keeps what is not kept; a passing failure is retried
    await emoji.fetch(store, settings, job.host, job.codes)
    return Done()


async def quote_revoked(
    store: Store, settings: Settings, job: QuoteRevokedJob, entry_id: bytes
) -> Done:
    # the Delete of the authorization (a rerun sends the same activity id: dropped there)
    if settings.public_url:
        await quoting.send_revocation(
            store, JobQueue(store), settings.public_url.rstrip("/"), job.sid
        )
    return Done()


TABLE: dict[type, Handler] = {
    InboxJob: incoming,
    MoveJob: move,
    ContextJob: context,
    DeliverJob: deliver,
    PollEndJob: poll_end,
    PollUpdateJob: poll_update,
    PollVoteJob: poll_vote,
    DomainBlockJob: domain_block,
    RemoteMediaJob: remote_media_job,
    RemoteImagesJob: remote_images,
    RemoteEmojiJob: remote_emoji,
    QuoteRevokedJob: quote_revoked,
}
