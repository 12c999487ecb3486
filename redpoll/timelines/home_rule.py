"""The home rule: which status belongs in a follower's home. Fan-out puts a
status into the homes of its author's followers unless

- it is direct (only the mentioned see it, and their homes get it from the
  conversation: redpoll.conversations.conversation);
- it is a reply to another account, and the follower does not follow that
  account too (Mastodon's rule; Status.replies_to_other);
- it is a boost by an account whose boosts the follower hides
  (``follow(reblogs=false)``: keys.hidden_reblogs);

and a boost is left out where the home already holds its original or
another boost of it among the newest entries (Mastodon's recent window,
applied where the boost is written: deliver_boost.lua, the catch-ups).

:func:`accepted` is the rule for a batch of statuses and one follower, used
by the cluster's catch-up and the idle rebuild (redpoll.timelines.hybrid,
redpoll.timelines.refill). Fan-out decides the same per batch of followers
(redpoll.timelines.delivery, deliver_boost.lua), and the single server's catch-up
inside its one-round-trip script (catch_up_listed.lua).
"""
from __future__ import annotations

from ..core import keys
from ..relations import visibility
from ..core.models import Status
from ..storage.store import Store


def followed_only(status: Status, follows: dict[int, bool]) -> bool:
    """A reply reaches the followers who also follow the account replied to
    (Status.replies_to_other): whether this viewer does."""
    other = status.replies_to_other
    return other is None or follows.get(other, False)


async def accepted(store: Store, uid: int, statuses: list[Status], hidden_boosters: set[int]
                   ) -> list[Status]:
    """Of statuses from the profiles of large accounts ``uid`` follows, the
    ones fan-out would have put into uid's home: not direct (the mentioned
    get those in their home anyway), a reply only if uid also follows the
    account replied to, a boost only if uid shows that booster's boosts."""
    statuses = [s for s in statuses if visibility.fans_out(visibility.of(s))
                and not (s.reblog_of and s.user_id in hidden_boosters)]
    if not any("in_reply_to_id" in s.extra for s in statuses):
        return statuses  # no replies: nothing more to check
    others = list(dict.fromkeys(s.replies_to_other for s in statuses
                                 if s.replies_to_other is not None))
    follows: dict[int, bool] = {}
    if others:
        found = await store.batch([("ZMSCORE", keys.following(uid), *others)])
        follows = {o: score is not None for o, score in zip(others, found[0])}
    return [s for s in statuses if followed_only(s, follows)]
