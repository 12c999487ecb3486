"""The search package's changes of layout (redpoll.storage.migration).

8. ``fts-index``: the statuses a database holds from before the full-text
   index existed go into it: each account that has posted gets a
   ReindexAuthorJob (its statuses indexed by the workers, a batch a run;
   every post, edit and delete since indexes itself). A step only queues
   jobs, so a large database opens as fast as a small one; its statuses are
   found once the jobs have run.
"""

from __future__ import annotations

from ..bus.queue import add
from ..core import keys, limits
from ..storage.migration import Migration
from ..storage.store import Store
from .jobs import ReindexAuthorJob


async def queue_reindex(store: Store, cursor: str, batch: int) -> tuple[str | None, int]:
    """Queue the reindex of users ``cursor`` .. ``cursor + batch - 1`` (user
    ids, from 1) that have posted. Idempotent: a job queued twice indexes
    the same statuses again, to the same entries."""
    first = int(cursor or 1)
    last = int(await store.get(keys.USER_SEQ) or 0)
    uids = list(range(first, min(first + batch, last + 1)))
    if not uids:
        return None, 0
    sizes = await store.batch([("ZCARD", keys.profile(u)) for u in uids])
    done = 0
    for uid, size in zip(uids, sizes):
        if size:
            await add(store, ReindexAuthorJob(uid))
            done += 1
    nxt = uids[-1] + 1
    return (str(nxt) if nxt <= last else None), done


MIGRATIONS = [
    Migration(
        number=8,
        name="fts-index",
        about="queue the full-text indexing of the statuses from before the index",
        step=queue_reindex,
        batch=limits.SEARCH_BACKFILL_BATCH,
    ),
]
