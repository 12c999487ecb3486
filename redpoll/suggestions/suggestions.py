"""Who to follow, as Mastodon's ``/api/v2/suggestions``.

Two sources, in this order:

- **friends of friends**: the accounts followed by the accounts one
  follows, ranked by how many of those follow them (ties: the one found
  through the more recent follow first). Bounded: the
  limits.SUGGESTIONS_FOLLOWEES_READ most recently followed accounts, and of
  each its limits.SUGGESTIONS_PER_FOLLOWEE most recent follows.
- **global**: the most followed local accounts (``keys.POPULAR_ACCOUNTS``,
  the limits.SUGGESTIONS_POPULAR_READ first).

Never suggested: oneself, an account one follows or asked to follow, one
blocked either way or muted (an expired mute too, until it is taken back),
a suspended or not discoverable account, a dismissed one (:func:`dismiss`).

The popular index is set by :func:`note_followers` after each follow and
unfollow (the follow's notification job, replayed with it): the followers
count read then (keep_ranked.lua; setting the same count again is a no-op,
so it is idempotent, and a later call sets the later count).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..core import keys, limits, validate
from ..core.models import User, now_ms
from ..records.users import get_users
from ..storage.store import Store

FRIENDS = "friends_of_friends"
GLOBAL = "most_followed"
#: the legacy ``source`` of each (Mastodon's mapping)
LEGACY = {FRIENDS: "past_interactions", GLOBAL: "global"}


@dataclass(frozen=True, slots=True)
class Suggestion:
    user: User
    sources: tuple[str, ...]  # FRIENDS and/or GLOBAL

    @property
    def source(self) -> str:
        return LEGACY[self.sources[0]]


async def note_followers(store: Store, uid: int) -> None:
    """``uid``'s place among the most followed local accounts, from its
    followers count now. Idempotent."""
    count, uri, disc = await store.hmget(keys.user(uid), ["followers", "uri", "disc"])
    if count is None and uri is None and disc is None:
        return  # no such user (any more)
    score = 0 if uri else int(count or 0)  # remote accounts are not kept
    await store.run(
        "keep_ranked", [keys.POPULAR_ACCOUNTS], [uid, score, limits.SUGGESTIONS_POPULAR_KEPT]
    )


async def dismiss(store: Store, uid, target) -> None:
    """``uid`` never wants ``target`` suggested again (the newest
    limits.SUGGESTIONS_DISMISSED_MAX dismissals kept). Idempotent."""
    uid = validate.an_id(uid, "user_id")
    target = validate.an_id(target, "account_id")
    await store.run(
        "keep_ranked",
        [keys.suggestions_dismissed(uid)],
        [target, now_ms(), limits.SUGGESTIONS_DISMISSED_MAX],
    )


async def suggestions(store: Store, uid, *, limit=None) -> list[Suggestion]:
    """What ``uid`` is suggested to follow, best first (see the module)."""
    uid = validate.an_id(uid, "user_id")
    size = validate.page_limit(limit, limits.SUGGESTIONS_DEFAULT, limits.SUGGESTIONS_MAX)
    followees = [
        int(m)
        for m in await store.zrevrange(
            keys.following(uid), 0, limits.SUGGESTIONS_FOLLOWEES_READ - 1
        )
    ]
    rows = await store.batch(
        [
            ("ZREVRANGE", keys.following(f), 0, limits.SUGGESTIONS_PER_FOLLOWEE - 1)
            for f in followees
        ]
        + [("ZREVRANGE", keys.POPULAR_ACCOUNTS, 0, limits.SUGGESTIONS_POPULAR_READ - 1)]
    )
    popular = [int(m) for m in rows.pop()]
    friends = Counter(int(m) for row in rows for m in row)
    # equals keep the order found: through the most recent follow first (a stable sort)
    ranked = [a for a, _ in sorted(friends.items(), key=lambda kv: -kv[1])]
    sources: dict[int, list[str]] = {}
    for a in ranked:
        sources.setdefault(a, []).append(FRIENDS)
    for a in popular:
        sources.setdefault(a, []).append(GLOBAL)
    candidates = [a for a in sources if a != uid]
    if not candidates:
        return []
    excluded = await store.batch(
        [
            ("ZMSCORE", key, *candidates)
            for key in (
                keys.following(uid),
                keys.follow_requested(uid),
                keys.blocking(uid),
                keys.blocked_by(uid),
                keys.muting(uid),
                keys.suggestions_dismissed(uid),
            )
        ]
    )
    candidates = [a for i, a in enumerate(candidates) if all(row[i] is None for row in excluded)]
    out: list[Suggestion] = []
    for first in range(0, len(candidates), 2 * size):  # users read until the page is full
        for user in await get_users(store, candidates[first : first + 2 * size]):
            if user.suspended or not user.discoverable:
                continue
            out.append(Suggestion(user, tuple(sources[user.id])))
            if len(out) == size:
                return out
    return out
