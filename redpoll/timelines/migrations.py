"""The timelines package's changes of layout (redpoll.storage.migration).

9. ``ruled-posts-key``: a user's ruled posts (the statuses the home rule
   must look at before they enter a timeline) are kept under ``ruled:{uid}``,
   a name that says what they hold, no longer ``profdm:{uid}`` (from when
   they were only direct statuses). Each user's old key is merged into the
   new one and dropped (ruled_rename.lua: one slot, atomic; run again, it
   finds nothing to move), beside what the running code writes there.
"""

from __future__ import annotations

from ..core import keys
from ..storage.migration import Migration
from ..storage.store import Store

#: Users looked at per step.
BATCH = 500


async def rename_ruled(store: Store, cursor: str, batch: int) -> tuple[str | None, int]:
    """Users ``cursor`` .. ``cursor + batch - 1`` (ids, from 1): each one's
    old ruled-posts key moved into the new one. How many had one."""
    first = int(cursor or 1)
    last = int(await store.get(keys.USER_SEQ) or 0)
    uids = list(range(first, min(first + batch, last + 1)))
    if not uids:
        return None, 0
    there = await store.batch([("EXISTS", keys.ruled_posts_before(u)) for u in uids])
    moved = 0
    for uid, exists in zip(uids, there):
        if exists:
            moved += int(
                await store.run(
                    "ruled_rename", [keys.ruled_posts_before(uid), keys.ruled_posts(uid)]
                )
            )
    nxt = uids[-1] + 1
    return (str(nxt) if nxt <= last else None), moved


MIGRATIONS = [
    Migration(
        number=9,
        name="ruled-posts-key",
        about="keep each user's ruled posts under ruled:{uid}, not profdm:{uid}",
        step=rename_ruled,
        batch=BATCH,
    ),
]
