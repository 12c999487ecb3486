"""What changes on a status after it is written, read per request: its
counts (favourites, reblogs, replies) and the viewer's own flags
(favourited, bookmarked, reblogged), and a poll's votes (read beside them by
redpoll.reading.pages with redpoll.polls.state_reads).

These are never part of a kept status record or rendering (render/rendered.py
keeps the entity without them): a page reads them for all its statuses in
one batch, one HMGET per status plus one ZMSCORE per flag for the viewer.
A boost's counts and flags are its original's (the API reads those).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..core import keys
from ..storage.store import Store


class PollState(NamedTuple):
    """A poll's votes as one viewer is shown them: ``counts`` per option,
    ``voters`` the accounts that voted, ``own`` the viewer's choices (None:
    not voted, or no viewer), ``author``: the viewer wrote the poll."""

    counts: tuple[int, ...] = ()
    voters: int = 0
    own: tuple[int, ...] | None = None
    author: bool = False


class StatusState(NamedTuple):
    """Immutable and hashable; a tuple rather than a frozen dataclass because
    a page builds one per status per request (a third of the cost)."""

    favourites: int = 0
    reblogs: int = 0
    replies: int = 0
    favourited: bool = False
    bookmarked: bool = False
    reblogged: bool = False
    #: pinned to the viewer's profile (their own statuses only can be: redpoll.pins)
    pinned: bool = False
    #: a poll's votes (redpoll.polls), None for a status without one
    poll: PollState | None = None
    #: the viewer's filters this status meets: the ``filtered`` array as JSON
    #: (redpoll.filters.rules.Result.json), empty when none (``[]``)
    filtered: bytes = b""
    #: its thread muted by the viewer (redpoll.conversations.thread_mutes)
    muted: bool = False
    #: its accepted quotes (Mastodon's quotes_count; redpoll.quotes)
    quotes: int = 0
    #: how it may be quoted (public, followers, nobody) and whether the
    #: viewer may quote it (QuoteApproval's automatic and current_user)
    quote_policy: str = "nobody"
    quote_approval: str = "denied"
    #: the status it quotes (0: none) and that quote's state as this viewer
    #: is shown it (accepted, revoked, deleted, unauthorized; "" for none)
    quoted: int = 0
    quote_state: str = ""


NONE = StatusState()
NO_COUNTS = (0, 0, 0)
#: the HMGET reply for a status without counts
ABSENT = [None, None, None]


def _count(raw) -> int:
    return max(int(raw), 0) if raw is not None else 0


def state_check(
    viewer: int | None, sids: list[int], counts: dict[int, list] | None = None
) -> tuple[list[tuple], Callable[[list], list[StatusState]]]:
    """The reads :func:`states` makes and what to do with their replies,
    for callers that batch them with their own (a timeline page).
    ``counts``: the counts of some of ``sids`` (``HMGET status_counts f r p``
    replies by id) that the caller read in this request already (a page
    script reads them with the page): those are not read again."""
    if not sids:
        return [], lambda replies: []
    known = counts or {}
    unknown = [sid for sid in sids if sid not in known]
    commands: list[tuple] = [("HMGET", keys.status_counts(sid), "f", "r", "p") for sid in unknown]
    if viewer is not None:
        commands += [
            ("ZMSCORE", keys.favourites(viewer), *sids),
            ("ZMSCORE", keys.bookmarks(viewer), *sids),
            ("ZMSCORE", keys.reblogs(viewer), *sids),
            ("ZMSCORE", keys.pins(viewer), *sids),
        ]

    def parse(replies: list) -> list[StatusState]:
        read = replies[: len(unknown)]
        if known:
            fresh = dict(zip(unknown, read))
            read = [known[sid] if sid in known else fresh[sid] for sid in sids]
        # a status nobody touched has no counts at all: one shared zero state
        counts = [
            NO_COUNTS if c == ABSENT else (_count(c[0]), _count(c[1]), _count(c[2])) for c in read
        ]
        if viewer is None:
            return [StatusState(*c) for c in counts]
        favs, marks, boosts, pins = replies[len(unknown) :]
        return [
            StatusState(*c, fav is not None, mark is not None, boost is not None, pin is not None)
            for c, fav, mark, boost, pin in zip(counts, favs, marks, boosts, pins)
        ]

    return commands, parse


async def states(store: Store, viewer: int | None, sids: list[int]) -> list[StatusState]:
    """The state of each status in ``sids`` as ``viewer`` (None: anonymous,
    no flags) sees it, in one round trip."""
    commands, parse = state_check(viewer, sids)
    return parse(await store.batch(commands)) if commands else []
