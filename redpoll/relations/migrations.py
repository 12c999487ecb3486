"""The relations' changes of layout (redpoll.storage.migration).

3. ``muted-by-index``: each account's muters (keys.muted_by), for the mutes
   made before that index existed (every mute since indexes itself), so
   that a Move carries them over too.
"""

from __future__ import annotations

from ..core import keys, limits
from ..storage.migration import Migration
from ..storage.store import Store


async def index_mutes(store: Store, cursor: str, batch: int) -> tuple[str | None, int]:
    """Index the mutes of the users ``cursor`` .. ``cursor + batch - 1``
    (user ids, from 1). Idempotent (ZADD NX) and safe beside live mutes: an
    entry of a mute lifted meanwhile is a hint like any (its terms decide).
    How many mutes it indexed."""
    first = int(cursor or 1)
    last = int(await store.get(keys.USER_SEQ) or 0)
    uids = list(range(first, min(first + batch, last + 1)))
    if not uids:
        return None, 0
    rows = await store.batch([("ZRANGE", keys.muting(u), 0, -1, "WITHSCORES") for u in uids])
    done = 0
    for uid, row in zip(uids, rows):
        if row and not isinstance(row[0], (list, tuple)):  # RESP2: flat list
            row = list(zip(row[0::2], row[1::2]))
        if row:  # one round trip per user who mutes (at most MUTES_MAX entries)
            await store.batch(
                [
                    ("ZADD", keys.muted_by(int(member)), "NX", int(float(score)), uid)
                    for member, score in row
                ]
            )
            done += len(row)
    nxt = uids[-1] + 1
    return (str(nxt) if nxt <= last else None), done


MIGRATIONS = [
    Migration(
        number=3,
        name="muted-by-index",
        about="index each account's muters, for mutes from before that index",
        step=index_mutes,
        batch=limits.MUTED_BY_BACKFILL_BATCH,
        done_before=keys.MUTED_BY_BUILT,
    )
]
