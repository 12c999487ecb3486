"""The conversations' changes of layout (redpoll.storage.migration).

2. ``reply-counts``: a status's reply count counts its public and unlisted
   replies only (the rule of conversation.counts_as_reply); counts kept
   from when every reply was counted are recounted, and each status's set
   of counted replies (keys.replies_counted) is made.
"""

from __future__ import annotations

from ..core import keys, limits
from ..core.models import EXTRA_PREFIX
from ..relations import visibility
from ..storage.migration import Migration
from ..storage.store import Store

#: Replies of one status handed to one reply_recount.lua call at most.
IDS_PER_CALL = 1000


async def recount_replies(store: Store, cursor: str, batch: int) -> tuple[str | None, int]:
    """Recount the replies of the statuses ``cursor`` .. ``cursor + batch -
    1`` (status ids, from 1) that have some. Each parent is recounted by
    reply_recount.lua on its slot: atomic, idempotent, safe beside replies
    being posted and deleted (one deleted meanwhile has left the replies set
    and is not put back; one posted meanwhile linked itself), so a step run
    twice leaves what one run leaves. A parent with more replies than
    IDS_PER_CALL is recounted in several calls, each leaving the count at
    the size of the counted set so far: the last one's is the whole."""
    first = int(cursor or 1)
    last = int(await store.get(keys.STATUS_SEQ) or 0)
    sids = list(range(first, min(first + batch, last + 1)))
    if not sids:
        return None, 0
    rows = await store.batch([("ZRANGE", keys.replies(p), 0, -1) for p in sids])
    parents = [(p, [int(r) for r in row]) for p, row in zip(sids, rows) if row]
    found = await store.batch(
        [
            ("HMGET", keys.status(r), "uid", "deleted", f"{EXTRA_PREFIX}visibility")
            for _, ids in parents
            for r in ids
        ]
    )
    at = 0
    for parent, ids in parents:
        counted = []
        for rid in ids:
            uid, deleted, vis = found[at]
            at += 1
            if (
                uid is not None
                and deleted is None
                and (vis is None or vis.decode() in visibility.OPEN)
            ):
                counted.append(rid)
        for start in range(0, max(len(counted), 1), IDS_PER_CALL):
            await store.run(
                "reply_recount",
                [keys.replies(parent), keys.replies_counted(parent), keys.status_counts(parent)],
                counted[start : start + IDS_PER_CALL],
            )
    nxt = sids[-1] + 1
    return (str(nxt) if nxt <= last else None), len(parents)


MIGRATIONS = [
    Migration(
        number=2,
        name="reply-counts",
        about="recount replies: public and unlisted ones only",
        step=recount_replies,
        batch=limits.REPLY_RECOUNT_BATCH,
        done_before=keys.REPLY_COUNTS_DONE,
    )
]
