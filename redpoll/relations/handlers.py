"""The relations package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.settings import Settings
from ..notifications import notifications
from ..storage.store import Store
from ..suggestions import suggestions
from ..timelines import hybrid
from . import follows, relations, unlisting
from .jobs import BlockJob, FollowNoteJob


async def follow_note(
    store: Store, settings: Settings, job: FollowNoteJob, entry_id: bytes
) -> Done:
    if not await follows.note_due(store, job):
        return Done()  # a follow that was there already: its own job saw to it
    # a follow or unfollow cut short between its two sides: the far side
    # made to agree with the follow side (idempotent; a no-op once they do)
    await follows.mend_edge(store, job.uid, job.target)
    await notifications.replay_follow(store, settings, job)
    await hybrid.sync_follow(store, job.uid, job.target)  # a large account's merge
    await unlisting.unlist(store, job.uid, job.target)  # an unfollow's lists' step, retried
    await suggestions.note_followers(store, job.target)  # the most followed (idempotent)
    return Done()


async def block(store: Store, settings: Settings, job: BlockJob, entry_id: bytes) -> Done:
    await relations.apply_block(store, job)
    return Done()


TABLE: dict[type, Handler] = {FollowNoteJob: follow_note, BlockJob: block}
