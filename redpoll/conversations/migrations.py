"""The conversations' changes of layout (redpoll.storage.migration).

2. ``reply-counts``: a status's reply count counts its public and unlisted
   replies only (the rule of conversation.counts_as_reply); counts kept
   from when every reply was counted are recounted, and each status's set
   of counted replies (keys.replies_counted) is made.
5. ``featured-tag-counts``: the statuses posted before the sets that
   featured tags count (keys.tag_posts, keys.tags_used) existed go into
   them (every status linked since puts itself there).
"""

from __future__ import annotations

from ..core import keys, limits
from ..core.models import EXTRA_PREFIX
from ..records.statuses import read_statuses
from ..relations import visibility
from ..storage.migration import Migration
from ..storage.store import Store
from .conversation import tag_posts

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


async def count_tagged(store: Store, cursor: str, batch: int) -> tuple[str | None, int]:
    """Put the live statuses ``cursor`` .. ``cursor + batch - 1`` (status
    ids, from 1) into their authors' sets of their hashtags (conversation.
    tag_posts: one idempotent script on the author's slot; public and
    unlisted statuses only). Safe beside deletes: a status found deleted
    after it went in is taken out again (a delete after that read takes it
    out itself). How many statuses it put in."""
    first = int(cursor or 1)
    last = int(await store.get(keys.STATUS_SEQ) or 0)
    sids = list(range(first, min(first + batch, last + 1)))
    if not sids:
        return None, 0
    tagged = [
        s
        for s in await read_statuses(store, sids)
        if s.extra.get("tags") and visibility.of(s) in visibility.OPEN
    ]
    for status in tagged:
        await tag_posts(store, status, True)
    gone = await store.batch([("HEXISTS", keys.status(s.id), "deleted") for s in tagged])
    for status, deleted in zip(tagged, gone):
        if deleted:
            await tag_posts(store, status, False)
    nxt = sids[-1] + 1
    return (str(nxt) if nxt <= last else None), len(tagged)


MIGRATIONS = [
    Migration(
        number=2,
        name="reply-counts",
        about="recount replies: public and unlisted ones only",
        step=recount_replies,
        batch=limits.REPLY_RECOUNT_BATCH,
        done_before=keys.REPLY_COUNTS_DONE,
    ),
    Migration(
        number=5,
        name="featured-tag-counts",
        about="count the statuses from before featured tags in their authors' tags",
        step=count_tagged,
        batch=limits.REPLY_RECOUNT_BATCH,
    ),
]
