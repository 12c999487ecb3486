"""The federation package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import Job, MalformedJob, StatusJob


@dataclass(frozen=True)
class InboxJob(Job):
    """An activity another server sent (redpoll.federation.inbox), its
    signature checked: ``uid`` is the signer's account, ``activity`` the
    body as received. In the ingress lane."""

    kind: ClassVar[str] = "inbox"
    lane: ClassVar[str] = "ingress"
    uid: int
    activity: str

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class MoveJob(Job):
    """Remote account ``old`` moved to ``new`` (redpoll.federation.moves):
    one step of carrying its local blockers, muters and followers over, in
    ``phase`` ("blocks", "mutes", "follows") after the score ``after`` of
    the last one done; each step queues the next (job_next.lua)."""

    kind: ClassVar[str] = "move"
    time_limit_s: ClassVar[float] = 300.0
    #: the phases in their order
    PHASES: ClassVar[tuple[str, ...]] = ("blocks", "mutes", "follows")
    old: int
    new: int
    phase: str = "blocks"
    after: int = 0

    def subject(self) -> str:
        return f"user:{self.old}"

    def check(self) -> None:
        if self.phase not in self.PHASES:
            raise MalformedJob(f"phase must be one of {', '.join(self.PHASES)}")


@dataclass(frozen=True)
class DeliverJob(Job):
    """POST ``body`` (an activity) to ``inbox``, signed by local account
    ``sender`` (0: the server's actor); ``attempt`` counts tries before
    (redpoll.federation.delivery)."""

    kind: ClassVar[str] = "deliver"
    time_limit_s: ClassVar[float] = 30.0
    max_attempts: ClassVar[int] = 3  # its own retries are jobs for later
    sender: int
    inbox: str
    body: str
    attempt: int = 0

    def subject(self) -> str:
        return f"inbox:{self.inbox}"


@dataclass(frozen=True)
class ContextJob(Job):
    """Fetch the thread of remote status ``sid`` from its server
    (redpoll.federation.threads). In the ingress lane."""

    kind: ClassVar[str] = "context"
    lane: ClassVar[str] = "ingress"
    sid: int

    def subject(self) -> str:
        return f"status:{self.sid}"


@dataclass(frozen=True)
class PollUpdateJob(StatusJob):
    """Tell other servers a local poll's counts (redpoll.federation: an
    Update of its Question), queued with ``JobQueue.enqueue_at`` for the
    end of the window ``at`` (ms) a vote fell in: the votes of one window
    make one Update (the same job queued again is one entry)."""

    kind: ClassVar[str] = "poll_update"
    at: int = 0


@dataclass(frozen=True)
class PollVoteJob(StatusJob):
    """The journal of local account ``uid``'s vote in the poll of status
    ``sid`` while federation is on: held before the vote, released after
    what follows it for other servers (redpoll.federation.outbox.after_vote:
    the vote sent to the poll's server, or the poll's next Update queued),
    which a worker does if the call was cut short (idempotent: it sends
    what the votes hash holds, under the same activity ids)."""

    kind: ClassVar[str] = "poll_vote"
    uid: int = 0


@dataclass(frozen=True)
class DomainBlockJob(Job):
    """The journal of member ``uid``'s block of ``domain``
    (redpoll.federation.member_blocks): held while the block and its
    cleanup run in the call; replayed, the cleanup runs again (each of its
    steps idempotent), if the domain is blocked still."""

    kind: ClassVar[str] = "domain_block"
    time_limit_s: ClassVar[float] = 300.0
    uid: int
    domain: str

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class RemoteMediaJob(Job):
    """Fetch and keep here the images, videos and sounds of remote status
    ``sid`` not kept yet (redpoll.federation.remote_media;
    redpoll.media.remote). In the ingress lane: it waits on other servers.
    Its time covers 4 videos with their previews, each under its deadlines
    (limits.REMOTE_MEDIA_AV_FETCH_TIMEOUT_S + REMOTE_MEDIA_FETCH_TIMEOUT_S);
    a run cut short keeps what it kept, the retry goes on."""

    kind: ClassVar[str] = "remote_media"
    lane: ClassVar[str] = "ingress"
    time_limit_s: ClassVar[float] = 400.0
    max_attempts: ClassVar[int] = 3
    sid: int

    def subject(self) -> str:
        return f"status:{self.sid}"


@dataclass(frozen=True)
class RemoteImagesJob(Job):
    """Fetch and keep here remote account ``uid``'s avatar and header if
    they are not kept yet (as RemoteMediaJob). In the ingress lane."""

    kind: ClassVar[str] = "remote_images"
    lane: ClassVar[str] = "ingress"
    time_limit_s: ClassVar[float] = 120.0
    max_attempts: ClassVar[int] = 3
    uid: int

    def subject(self) -> str:
        return f"user:{self.uid}"


@dataclass(frozen=True)
class RemoteEmojiJob(Job):
    """Fetch and keep here the images of server ``host``'s custom emoji
    ``codes`` (space-separated) not kept yet (redpoll.federation.emoji).
    Idempotent; in the ingress lane."""

    kind: ClassVar[str] = "remote_emoji"
    lane: ClassVar[str] = "ingress"
    time_limit_s: ClassVar[float] = 120.0
    max_attempts: ClassVar[int] = 3
    host: str
    codes: str

    def subject(self) -> str:
        return f"emoji:{self.host}"
