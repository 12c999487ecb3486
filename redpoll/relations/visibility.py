"""Who may see a status: the one visibility decision.

Every read path asks this module, never decides by itself: status by id,
context, the timelines (home, list, profile, public, tag), favourited_by /
reblogged_by, notifications, search, and the streams (SSE, WebSocket, v1.1,
through :func:`can_see` on each event).

The rule (Mastodon's), for a viewer V and a status S by author A:

* ``public``   - everyone, anonymous included; on every public place.
* ``unlisted`` - everyone who asks for it (by id, on A's profile), but never
  on the public or tag timelines, nor the public, hashtag, sample or
  filter streams (``listed`` is False).
* ``private``  - A, A's followers and the accounts S mentions.
* ``direct``   - A and the accounts S mentions, nobody else.

Invariant: a viewer sees a status only if :func:`can_see` says so for that
viewer at read time; caches (redpoll.core.memo, render/rendered.py) keep renderings
per status, never per viewer, so this check runs after any cache and on
every request. A follow that ends takes a private status away at once
(the check reads the follow now), whatever a timeline still holds.

Delivery writes to follower timelines by the home rule
(redpoll.timelines.home_rule), which lets in nothing its owner may not see
(no direct status; a private one in a list only where the owner follows
its author); reads check anyway (defence in depth, and follows change).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ..core import keys
from ..core.errors import StatusNotFound
from ..core.models import DIRECT, PRIVATE, PUBLIC, UNLISTED, Status, User  # noqa: F401 - DIRECT handed on
from ..core.models import VISIBILITIES as ALL  # noqa: F401 - the names, handed on
from . import domain_blocks, relations

#: seen by anyone who can see the author at all (can_see's first answer)
OPEN = frozenset((PUBLIC, UNLISTED))


def of(status: Status) -> str:
    """The status's visibility (statuses written before visibility existed are public)."""
    return status.extra.get("visibility", PUBLIC)


def mentioned_ids(mentions: str) -> frozenset[int]:
    """User ids of a status's ``mentions`` extra ("uid:login uid:login")."""
    return frozenset(int(item.partition(":")[0]) for item in mentions.split() if item)


def can_see(
    viewer: int | None,
    author: int,
    visibility: str,
    mentioned: frozenset[int],
    follows_author: bool,
) -> bool:
    """The decision itself (pure). ``follows_author``: the viewer follows the
    author now (only read for ``private``)."""
    if visibility in OPEN:
        return True
    if viewer is None:
        return False
    if viewer == author or viewer in mentioned:
        return True
    return visibility == PRIVATE and follows_author


def listed(visibility: str) -> bool:
    """Shown in public places (public/tag timelines, public/hashtag/sample/filter streams)."""
    return visibility == PUBLIC


def can_boost(booster: int, status: Status) -> bool:
    """Mastodon's rule: private and direct statuses cannot be boosted, except
    a private one by its own author."""
    vis = of(status)
    return vis in (PUBLIC, UNLISTED) or (vis == PRIVATE and status.user_id == booster)


def _undecided(viewer: int | None, status: Status) -> bool:
    """Whether the decision needs to know if the viewer follows the author."""
    return (
        viewer is not None
        and status.extra.get("visibility") == PRIVATE
        and viewer != status.user_id
        and viewer not in mentioned_ids(status.extra.get("mentions", ""))
    )


def check(
    viewer: int | None,
    statuses: list[Status],
    *,
    muted: bool = False,
    authors: Mapping[int, User] | None = None,
    followed: frozenset[int] = frozenset(),
) -> tuple[list[tuple], Callable[[list], list[Status]]]:
    """The reads the decision needs for ``statuses`` and what to do with
    their replies: ``(commands, decide)``; ``decide(replies)`` gives the
    statuses the viewer may see, in order. For callers that batch these
    reads with their own in one round trip (a timeline page with its
    counts); :func:`visible` is the plain form. The rule: :func:`can_see`,
    none by a suspended account (redpoll.moderation.moderation), none by an account
    blocked either way (redpoll.relations.relations), nor, where ``muted`` (timelines,
    not a profile or a status asked for by id), by one the viewer mutes or
    of a domain the viewer blocks (redpoll.relations.domain_blocks).
    ``authors``: author records this request read (a page's, current at the
    'rev' read with it: a suspension bumps it), whose ``suspended`` is then
    used instead of reading the flag again. ``followed``: authors the
    viewer follows in a way its follows do not hold (a remote account's
    follow of a local one, kept by federation)."""
    if not statuses:
        return [], lambda replies: []
    known = authors or {}
    everyone = list(dict.fromkeys(s.user_id for s in statuses))
    # suspended authors (redpoll.moderation.moderation) are hidden from everyone
    unknown = [a for a in everyone if a not in known]
    suspended_known = {a for a in everyone if a in known and known[a].suspended}
    commands = [("HGET", keys.user(a), "susp") for a in unknown]

    def suspended(replies: list) -> set[int]:
        return suspended_known | {a for a, flag in zip(unknown, replies) if flag}

    if viewer is None:

        def decide_anonymous(replies: list) -> list[Status]:
            hidden = suspended(replies)
            return [
                s
                for s in statuses
                if s.user_id not in hidden and can_see(None, s.user_id, of(s), frozenset(), False)
            ]

        return commands, decide_anonymous
    ask = list(dict.fromkeys(s.user_id for s in statuses if _undecided(viewer, s)))
    others = [a for a in everyone if a != viewer]
    commands += [("ZSCORE", keys.following(viewer), a) for a in ask]
    if others:
        commands += relations.hidden_commands(viewer, others)
    # the viewer's blocked domains, where mutes apply and a remote author is among them
    domains_asked = muted and any("@" in s.login for s in statuses)
    if domains_asked:
        commands.append(domain_blocks.read(viewer))

    def decide(replies: list) -> list[Status]:
        hidden = suspended(replies)
        replies = replies[len(unknown) :]
        follows = {a for a, score in zip(ask, replies) if score is not None} | followed
        if others:
            hidden |= relations.hidden_from(others, replies[len(ask) : len(ask) + 3], muted=muted)
        blocked = domain_blocks.parse(replies[-1]) if domains_asked else frozenset()
        out = []
        for s in statuses:
            if s.user_id in hidden or (blocked and domain_blocks.blocked_in(blocked, s.login)):
                continue
            vis = s.extra.get("visibility", PUBLIC)
            # most statuses are public: the rule needs no mentions for those
            if vis in OPEN or can_see(
                viewer,
                s.user_id,
                vis,
                mentioned_ids(s.extra.get("mentions", "")),
                s.user_id in follows,
            ):
                out.append(s)
        return out

    return commands, decide


async def visible(
    store,
    viewer: int | None,
    statuses: Iterable[Status],
    *,
    muted: bool = False,
    followed: frozenset[int] = frozenset(),
) -> list[Status]:
    """``statuses`` the viewer may see, in order (:func:`check`'s rule), in
    one round trip."""
    commands, decide = check(viewer, list(statuses), muted=muted, followed=followed)
    return decide(await store.batch(commands)) if commands else []


async def require(store, viewer: int | None, status: Status) -> Status:
    """``status`` if the viewer may see it; StatusNotFound otherwise (a
    status one may not see does not exist for them: 404, as Mastodon)."""
    if not await visible(store, viewer, [status]):
        raise StatusNotFound(f"status {status.id} does not exist")
    return status
