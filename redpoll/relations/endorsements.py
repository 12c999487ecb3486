"""Endorsements (Mastodon's account pins, "featured profiles"): the
accounts one features on one's profile.

Only an account one follows can be endorsed, checked atomically with the
add (edge_set.lua with the following set as its guard, on the endorser's
slot); when the follow ends the endorsement goes with it, as Mastodon's
Follow#remove_endorsements: :func:`drop_unfollowed`, an idempotent step
that redpoll.relations.unlisting runs wherever a follow ends (an unfollow,
a block either way), retried with it. A list of endorsements is shown
through relations.shown_accounts: suspended accounts, and accounts hidden
from the viewer by a block either way, are left out when it is read.
"""

from __future__ import annotations

from ..core import keys, limits, validate
from ..core.errors import NotFollowed, UserNotFound, ValidationError
from ..core.models import User, now_us
from ..records.users import get_users
from ..storage.store import Store

#: What Mastodon answers for an endorsement of an account one does not follow.
NOT_FOLLOWING = "You must be already following the person you want to endorse"


async def endorse(store: Store, uid: int, target: int, on: bool = True) -> bool:
    """``uid`` endorses (``on``) or stops endorsing ``target``; whether it
    changed. ValidationError (422) when ``uid`` does not follow ``target``
    or is it; LimitReached past limits.ENDORSEMENTS_MAX. One script call
    (atomic)."""
    if uid == target:
        raise ValidationError("id", "you cannot endorse yourself")
    if not (await get_users(store, [target])):
        raise UserNotFound(f"user {target} does not exist")
    try:
        changed = await store.run(
            "edge_set",
            [keys.endorsed(uid), keys.user(uid), keys.following(uid)],
            [target, int(on), "id", "", now_us(), limits.ENDORSEMENTS_MAX],
        )
    except NotFollowed:
        raise ValidationError("id", NOT_FOLLOWING) from None
    return changed == 1


async def drop_unfollowed(store: Store, uid: int, target: int) -> bool:
    """``target`` is no longer endorsed by ``uid`` unless ``uid`` follows it
    (read with the removal in one script: a follow and endorsement made
    again meanwhile stay). Idempotent; whether it removed one."""
    return (
        await store.run("endorsement_drop", [keys.endorsed(uid), keys.following(uid)], [target])
        == 1
    )


async def is_endorsed(store: Store, uid: int, target: int) -> bool:
    return await store.zscore(keys.endorsed(uid), target) is not None


async def endorsements(
    store: Store, uid: int, *, max_score=None, limit=None
) -> tuple[list[User], int | None]:
    """The accounts ``uid`` endorses, newest first, and the cursor of the
    next page (None: none); shown through relations.shown_accounts."""
    limit = validate.page_limit(limit, limits.ACCOUNTS_PAGE_DEFAULT, limits.ACCOUNTS_PAGE_MAX)
    top = f"({int(max_score)}" if max_score else "+inf"
    rows = await store.zrevrangebyscore(
        keys.endorsed(uid), top, "-inf", start=0, num=limit, withscores=True
    )
    users = await get_users(store, [int(m) for m, _ in rows])
    cursor = int(rows[-1][1]) if len(rows) == limit else None
    return users, cursor
