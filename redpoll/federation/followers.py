"""Remote accounts that follow local ones: the follow's start and end
here (fed_follow.lua) and its notification."""

from __future__ import annotations

from ..core import keys as core_keys
from ..core.models import now_ms
from ..notifications import notifications
from ..storage.store import Store
from . import keys


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
            [remote_uid, inbox, now_ms(), "1" if on else "0"],
        )
        == 1
    )


async def notify_follow(store, local: int, remote_uid: int, on: bool) -> None:
    [op] = await store.batch([("INCR", core_keys.INTERACTION_SEQ)])
    await notifications.apply(store, local, "follow", remote_uid, local, int(op), on)
