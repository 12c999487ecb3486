"""Hashtags: a tag's timeline is fed at post time
(conversation.after_post); following a tag puts its new statuses in the
follower's home.

Following a tag changes two slots (the user's followed tags, the tag's
followers): journaled like a follow (held job around the change, replayed by
a worker if the call is cut short; the replay syncs the tag's side to the
user's, which is written first and is the truth).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bus.queue import JobQueue
from ..core import keys, limits
from ..core.errors import Conflict, LimitReached
from ..core.models import now_us
from ..storage.store import Store
from ..trends import ranking, review
from . import tag_history
from .conversation import tag_name
from .jobs import TagFollowJob

JOB = "tag_follow"


@dataclass(frozen=True, slots=True)
class Tag:
    name: str
    following: bool
    used: bool  # has any status carried it
    #: uses and accounts per day, today first (tag_history), when read
    history: tuple[tag_history.TagDay, ...] = ()
    #: featured on the viewer's profile (redpoll.conversations.featured_tags)
    featuring: bool = False


async def get_tag(store: Store, uid: int | None, name) -> Tag:
    name = tag_name(name)
    commands = [("ZSCORE", keys.TAG_NAMES, name)]
    if uid is not None:
        commands.append(("ZSCORE", keys.followed_tags(uid), name))
        commands.append(("HEXISTS", keys.featured_tags(uid), name))
    used, *mine = await store.batch(commands)
    history = (await tag_history.histories(store, [name]))[name]
    following = bool(mine and mine[0] is not None)
    return Tag(name, following, used is not None, history, bool(mine and mine[1]))


async def with_history(store: Store, found: list[Tag]) -> list[Tag]:
    """The same tags with their histories read (one batch)."""
    days = await tag_history.histories(store, [t.name for t in found])
    return [Tag(t.name, t.following, t.used, days[t.name], t.featuring) for t in found]


async def set_following(store: Store, queue: JobQueue, uid: int, name, on: bool) -> Tag:
    """Follow (``on``) or unfollow a hashtag; twice is once. Conflict (nothing
    written) past limits.FOLLOWED_TAGS_MAX followed tags."""
    name = tag_name(name)
    held = await queue.hold(TagFollowJob(uid, name))
    if on:
        try:  # the cap's check and the add in one script (tag_follow.lua): racing
            # follows never pass it
            await store.run(
                "tag_follow", [keys.followed_tags(uid)], [name, now_us(), limits.FOLLOWED_TAGS_MAX]
            )
        except LimitReached:
            await queue.release(held)  # nothing was written
            raise Conflict(f"at most {limits.FOLLOWED_TAGS_MAX} followed hashtags") from None
    else:
        await store.zrem(keys.followed_tags(uid), name)
    await sync(store, uid, name)
    await queue.release(held)
    return await get_tag(store, uid, name)


async def sync(store: Store, uid: int, name: str) -> None:
    """Make the tag's followers agree with the user's followed tags (idempotent)."""
    if await store.zscore(keys.followed_tags(uid), name) is not None:
        await store.sadd(keys.tag_followers(name), uid)
    else:
        await store.srem(keys.tag_followers(name), uid)


async def replay(store: Store, settings, job: TagFollowJob) -> None:
    await sync(store, job.uid, job.tag)
    return None


async def followed(store: Store, uid: int) -> list[str]:
    return [
        n.decode()
        for n in await store.zrevrange(keys.followed_tags(uid), 0, limits.FOLLOWED_TAGS_MAX - 1)
    ]


async def trending(
    store: Store,
    uid: int | None,
    *,
    offset=None,
    limit=None,
    now: int | None = None,
    audience: review.Audience = review.Audience.PUBLIC,
) -> list[Tag]:
    """The trending hashtags ``audience`` is shown (redpoll.trends.ranking),
    best first, with whether ``uid`` follows each; ``now`` (ms): the clock."""
    found = await ranking.trending(
        store, "tag", offset=offset, limit=limit, now=now, audience=audience
    )
    mine = [None] * len(found)
    if uid is not None and found:
        (mine,) = await store.batch(
            [("ZMSCORE", keys.followed_tags(uid), *(t.item for t in found))]
        )
    return [Tag(t.item, m is not None, True, t.history) for t, m in zip(found, mine)]
