"""The polls package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in handlers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import StatusJob


@dataclass(frozen=True)
class PollEndJob(StatusJob):
    """A poll's end (redpoll.polls), queued for its time (``at``, ms) with
    ``JobQueue.enqueue_at``: its voters and author get a ``poll``
    notification. ``gen``: the generation of its options; a job whose poll
    was edited (another time or generation) or deleted meanwhile does
    nothing."""

    kind: ClassVar[str] = "poll_end"
    time_limit_s: ClassVar[float] = 300.0
    gen: int = 0
    at: int = 0
