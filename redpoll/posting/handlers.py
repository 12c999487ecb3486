"""The posting package's job handlers (records: jobs.py), merged into the
worker's table (redpoll.engine.worker)."""

from __future__ import annotations

from ..bus.queue import Done, Handler
from ..core.errors import UserNotFound, ValidationError
from ..core.settings import Settings
from ..storage.store import Store
from . import boosts, deleting, editing, posting
from .jobs import BoostJob, DeleteJob, EditJob, PostJob


async def post(store: Store, settings: Settings, job: PostJob, entry_id: bytes) -> Done:
    try:
        return Done(await posting.apply_post(store, settings, job), "statuses")
    except UserNotFound:
        return Done()  # the author vanished (a wiped database): nothing to post
    except ValidationError:
        return Done()  # an upload could not be attached: the post never happened


async def delete(store: Store, settings: Settings, job: DeleteJob, entry_id: bytes) -> Done:
    cleanup, mine = await deleting.apply_delete(store, job, entry_id)
    return Done(cleanup, "deleted" if mine else "")


async def edit(store: Store, settings: Settings, job: EditJob, entry_id: bytes) -> Done:
    await editing.replay(store, job)
    return Done()


async def boost(store: Store, settings: Settings, job: BoostJob, entry_id: bytes) -> Done:
    return Done(await boosts.replay(store, settings, job))


TABLE: dict[type, Handler] = {PostJob: post, DeleteJob: delete, EditJob: edit, BoostJob: boost}
