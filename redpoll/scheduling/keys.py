"""The Redis keys of scheduled statuses (redpoll.scheduling), built here and
nowhere else.

Every key of one account's scheduled statuses is tagged with the job shard
its jobs go to (``{<shard>}``, the shard of ``ScheduledStatusJob``'s subject
``user:<uid>``), so that a scheduled status and its job in the shard's due
set (keys.due_jobs) are written, moved and removed by one script in one
slot, on a cluster too.
"""

from __future__ import annotations

from ..core import keys as base_keys
from .jobs import ScheduledStatusJob

#: Counter the scheduled statuses draw their ids from.
SEQ = "seq:sched"


def shard(uid: int) -> int:
    """The job shard of ``uid``'s scheduled statuses' jobs."""
    return ScheduledStatusJob(uid=uid, id=0).shard()


def index(uid: int) -> str:
    """ZSET id -> id: ``uid``'s scheduled statuses, for pages by id."""
    return f"sched:{{{shard(uid)}}}:{uid}"


def times(uid: int) -> str:
    """ZSET id -> ms: when each is to be posted (the limits per day read it)."""
    return f"sched:{{{shard(uid)}}}:{uid}:at"


def records(uid: int) -> str:
    """Hash id -> JSON: what each posts (``params`` as Mastodon shows them,
    ``extra`` as the engine posts them, ``media`` the uploads' snapshot)."""
    return f"sched:{{{shard(uid)}}}:{uid}:r"


def jobs(uid: int) -> str:
    """Hash id -> the JSON of its job (the member of the due set)."""
    return f"sched:{{{shard(uid)}}}:{uid}:j"


def due_set(uid: int) -> str:
    """The due set of the shard ``uid``'s scheduled statuses' jobs go to."""
    return base_keys.due_jobs(shard(uid))
