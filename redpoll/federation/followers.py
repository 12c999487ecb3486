"""Remote accounts that follow local ones: the follow's start and end
here (fed_follow.lua), its notification, and the followers' list that
shows them with the local ones (:func:`listed`)."""

from __future__ import annotations

from ..core import keys as core_keys
from ..core import validate
from ..core.models import User, now_us
from ..notifications import notifications
from ..records.users import get_users
from ..storage.store import Store
from . import keys

#: A remote follow's score below this is in ms: recorded before they were
#: in unique µs (as a local follow's), and read as its ms times 1,000.
MS_SCORES_BELOW = 10**14


async def end_remote_follow(store: Store, local: int, remote_uid: int) -> bool:
    """A remote account no longer follows local ``local`` (a block): out of
    its remote followers and their inbox counts (fed_follow.lua; again:
    nothing)."""
    if await fed_follow(store, local, remote_uid, "", False):
        await notify_follow(store, local, remote_uid, False)
        return True
    return False


async def fed_follow(store: Store, local: int, remote_uid: int, inbox: str, on: bool) -> bool:
    """Start (``on``) or end a remote account's follow of local ``local``:
    its membership, the count behind its inbox and the follower count in
    one script (fed_follow.lua: atomic; again: no change). Whether it changed."""
    return (
        await store.run(
            "fed_follow",
            [
                keys.remote_followers(local),
                keys.inboxes(local),
                core_keys.user(local),
                keys.follower_inbox(local),
            ],
            [remote_uid, inbox, now_us(), "1" if on else "0"],
        )
        == 1
    )


async def notify_follow(store, local: int, remote_uid: int, on: bool) -> None:
    [op] = await store.batch([("INCR", core_keys.INTERACTION_SEQ)])
    await notifications.apply(store, local, "follow", remote_uid, local, int(op), on)


async def listed(store: Store, uid, *, max_score=None, limit=None) -> tuple[list[User], int | None]:
    """``uid``'s followers, local (keys.followers) and remote
    (keys.remote_followers) together, newest follow first, and the cursor
    of the next page. The cursor is a follow's time in µs times two, plus
    one for a remote follower: a local and a remote follow of the same µs
    are told apart (the remote first). One round trip: a page of each set
    below the cursor (a remote follow kept in ms read in its own range),
    merged."""
    uid = validate.an_id(uid, "user_id")
    size = validate.page_limit(limit)
    cursor = validate.optional_id(max_score, "max_id")
    top = cursor // 2 if cursor else None
    local_top = "+inf" if top is None else (f"{top}" if cursor % 2 else f"({top}")
    remote_top = "+inf" if top is None else f"({top}"
    legacy_top = f"({MS_SCORES_BELOW}" if top is None else f"({top / 1000}"
    page = ("LIMIT", 0, size, "WITHSCORES")
    local, remote, legacy = await store.batch(
        [
            ("ZREVRANGEBYSCORE", core_keys.followers(uid), local_top, "-inf", *page),
            ("ZREVRANGEBYSCORE", keys.remote_followers(uid), remote_top, MS_SCORES_BELOW, *page),
            ("ZREVRANGEBYSCORE", keys.remote_followers(uid), legacy_top, "-inf", *page),
        ]
    )
    rows = [(int(float(s)) * 2, int(m)) for m, s in _pairs(local)]
    rows += [(int(float(s)) * 2 + 1, int(m)) for m, s in _pairs(remote)]
    rows += [(int(float(s)) * 1000 * 2 + 1, int(m)) for m, s in _pairs(legacy)]
    rows = sorted(rows, reverse=True)[:size]
    users = await get_users(store, [m for _, m in rows])
    return users, (rows[-1][0] if rows else None)


def _pairs(reply) -> list:
    """A WITHSCORES reply as (member, score) pairs (RESP3 pairs or a RESP2 flat list)."""
    if reply and not isinstance(reply[0], (list, tuple)):
        return list(zip(reply[0::2], reply[1::2]))
    return [tuple(r) for r in reply]
