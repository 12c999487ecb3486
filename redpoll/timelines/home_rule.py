"""The home rule: whether a status belongs in a viewer's home, or in a
list's timeline. Decided here and nowhere else, by two pure functions
(:func:`in_home`, :func:`in_list`) over plain facts read before
(:class:`Facts`); every way a status enters a home or a list asks them:
push (redpoll.timelines.fanout, for posts and boosts), the catch-up with
large accounts at read (redpoll.timelines.hybrid, one algorithm on both
topologies), the idle rebuild, the refill after an unfollow and the
backfill of a follow or a list member (redpoll.timelines.refill,
redpoll.relations.edges). Lua only writes what was decided.

A status is offered to a home for a reason (:attr:`Candidate.reason`):
V follows its author (:data:`FOLLOWED`: push, catch-up, refills and
backfills), V is mentioned in it (:data:`MENTION`) or V follows one of its
hashtags (:data:`TAG`): the last two from its conversation
(redpoll.conversations.conversation, through
redpoll.timelines.fanout.offer). Mastodon's rule (FeedManager#filter_from_home,
#filter_from_list and the recent-window part of #add_to_feed), for viewer V
and status S by A:

- V's own statuses pass the filters;
- nothing enters across a block, either way (a follow ends with one; a
  mention or a hashtag asks ``Facts.blocks``);
- a mention reaches the mentioned, whatever its visibility (a direct status
  enters the homes of those it mentions, and no other);
- a followed hashtag brings public statuses only, and no boost;
- a direct status never enters a home for following its author;
- a reply to another account only if V follows that account or is it;
- a boost not if V hides A's boosts (``follow(reblogs=false)``);
- a boost not where the timeline already shows its original, or another
  boost of it, among the limits.REBLOG_WINDOW entries just below it (for a
  status pushed now: the timeline's newest entries).

A list of owner O (replies policy "list", the one Redpoll has) takes what
O's home would take of its members, and: a private status only if O
follows A (a list may hold accounts O has only asked to follow); a reply to another
account only if it replies to O, or to a member of the list whom O
follows. Blocks end follows both ways, so nothing is pushed across one;
mutes are applied when a page is read (redpoll.relations.visibility).

What the rule reads of a status is a :class:`Candidate`: from the status
itself (push), or from its author's profile and keys.ruled_posts, which
names the few statuses that need a look (a merge reads no status record).
The facts about the viewer are read for a whole batch in one round trip,
and only where a candidate needs them (a plain post needs none): the
commands and their parsing are below (``*_reads`` / ``*_facts``).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..core import keys, limits
from ..core.models import DIRECT, PRIVATE, PUBLIC, Status
from ..storage.store import Store

#: Why a status is offered to a home (Candidate.reason).
FOLLOWED, MENTION, TAG = "followed", "mention", "tag"

WINDOW = limits.REBLOG_WINDOW
#: Boosts of one original read as facts of the window (keys.reblogged_by).
BOOSTS_READ = limits.CATCH_UP_BOOSTS_READ


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the rule reads of a status."""

    id: int
    author: int
    visibility: str = PUBLIC
    #: the account it replies to, when not its author's own
    replies_to: int | None = None
    #: the original, for a boost
    reblog_of: int | None = None
    #: why it is offered: FOLLOWED, MENTION or TAG
    reason: str = FOLLOWED

    @classmethod
    def of(cls, status: Status, reason: str = FOLLOWED) -> Candidate:
        return cls(
            status.id,
            status.user_id,
            status.extra.get("visibility", PUBLIC),
            status.replies_to_other,
            status.reblog_of,
            reason,
        )

    @property
    def ruled(self) -> bool:
        """Whether the rule may say no to it for someone (else it is plain:
        not in keys.ruled_posts)."""
        return (
            self.visibility in (DIRECT, PRIVATE)
            or self.replies_to is not None
            or self.reblog_of is not None
        )

    @property
    def needs_push_facts(self) -> bool:
        """Whether pushing it asks anything of the followers (a plain status
        gets one answer for all: :func:`homes_taking`)."""
        return self.replies_to is not None or self.reblog_of is not None

    def member(self) -> str:
        """Its member of keys.ruled_posts (record_post.lua)."""
        return f"{self.id}:{self.visibility}:{self.replies_to or ''}:{self.reblog_of or ''}"

    @classmethod
    def parse(cls, author: int, member: bytes | str) -> Candidate:
        text = member.decode() if isinstance(member, bytes) else member
        sid, _, rest = text.partition(":")
        if not rest:  # an older record: direct statuses only
            return cls(int(sid), author, DIRECT)
        visibility, other, original = rest.split(":")
        return cls(
            int(sid),
            author,
            visibility,
            int(other) if other else None,
            int(original) if original else None,
        )


@dataclass(frozen=True, slots=True)
class Facts:
    """What the rule knows of the viewer and the timeline (empty: nothing
    asked, nothing known)."""

    #: accounts the viewer (a list's owner) follows, among those asked
    follows: frozenset[int] = frozenset()
    #: boosters whose boosts the viewer hides, among those asked
    hidden: frozenset[int] = frozenset()
    #: a list's members, among those asked
    members: frozenset[int] = frozenset()
    #: boost id -> the ids the timeline holds within the window below it
    window: Mapping[int, frozenset[int]] = field(default_factory=dict)
    #: original id -> ids of boosts of it known
    boosts_of: Mapping[int, frozenset[int]] = field(default_factory=dict)
    #: accounts with a block between them and the viewer (either way), among
    #: those asked (the authors of statuses offered for a mention or a hashtag)
    blocks: frozenset[int] = frozenset()


EMPTY = Facts()


def shown_already(c: Candidate, facts: Facts) -> bool:
    """The rule's window: a boost whose original, or another boost of it,
    is within the window below it (asked also of a boost a home holds when
    its original comes in later: redpoll.timelines.hybrid.catch_up)."""
    if c.reblog_of is None:
        return False
    below = facts.window.get(c.id)
    if not below:
        return False
    return c.reblog_of in below or any(
        b != c.id and b in below for b in facts.boosts_of.get(c.reblog_of, ())
    )


def in_home(c: Candidate, viewer: int, facts: Facts) -> bool:
    """Whether ``c`` belongs in ``viewer``'s home (the module's rule)."""
    if c.author != viewer:
        if c.author in facts.blocks:
            return False
        if c.reason == MENTION:
            return c.reblog_of is None
        if c.reason == TAG:
            return c.visibility == PUBLIC and c.reblog_of is None
        if c.visibility == DIRECT:
            return False
        other = c.replies_to
        if other is not None and other != viewer and other not in facts.follows:
            return False
        if c.reblog_of is not None and c.author in facts.hidden:
            return False
    return not shown_already(c, facts)


def in_list(c: Candidate, owner: int, facts: Facts) -> bool:
    """Whether ``c`` belongs in a list of ``owner``'s (the module's rule)."""
    if c.visibility == DIRECT:
        return False
    other = c.replies_to
    if other is not None and other != owner and other not in facts.members:
        return False
    if c.author != owner and c.visibility == PRIVATE and c.author not in facts.follows:
        return False
    return in_home(c, owner, facts)


def reaches_followers(c: Candidate) -> bool:
    """Whether any follower's home or list could take ``c``, whatever the
    facts (a direct status: none; fan-out then serves its author only)."""
    known = Facts(
        follows=frozenset(a for a in (c.replies_to, c.author) if a is not None),
        members=frozenset(a for a in (c.replies_to,) if a is not None),
    )
    return in_home(c, 0, known) or in_list(c, 0, known)


def rule(lid: int | None):
    """The rule of a home (``lid`` None) or of a list."""
    return in_home if lid is None else in_list


# --- what a batch of candidates needs ---------------------------------------------------
def asked_follows(cs: Sequence[Candidate], viewer: int, lid: int | None) -> list[int]:
    """The accounts whose follow by ``viewer`` the rule may ask about."""
    out = {
        c.replies_to
        for c in cs
        if c.replies_to is not None and c.replies_to != viewer and c.author != viewer
    }
    if lid is not None:  # a list's private statuses: does its owner follow the author
        out.update(c.author for c in cs if c.visibility == PRIVATE and c.author != viewer)
    return sorted(out)


def asked_hidden(cs: Sequence[Candidate], viewer: int) -> list[int]:
    return sorted({c.author for c in cs if c.reblog_of is not None and c.author != viewer})


def asked_members(cs: Sequence[Candidate], viewer: int, lid: int | None) -> list[int]:
    if lid is None:
        return []
    return sorted({c.replies_to for c in cs if c.replies_to is not None and c.replies_to != viewer})


def timeline_key(viewer: int, lid: int | None) -> str:
    return keys.home(viewer) if lid is None else keys.list_timeline(viewer, lid)


def boost_record(viewer: int, lid: int | None) -> str | None:
    """Where a merge records the boosts it puts in (a home's; a list keeps
    none)."""
    return keys.home_reblogs(viewer) if lid is None else None


def boost_pairs(cs: Sequence[Candidate]) -> list[tuple[int, int]]:
    """(boost, original) of the boosts among ``cs``, for that record."""
    return [(c.id, c.reblog_of) for c in cs if c.reblog_of is not None]


@dataclass(slots=True)
class Batch:
    """Candidates read from profiles (:func:`profile_reads`): their ids,
    newest first, each with its author, and what the rule reads of the
    ruled ones (keys.ruled_posts). An id not among those is plain: the rule
    gives every plain status of one author the same answer, so none is
    made a Candidate (a backfill takes a thousand). ``ids`` may be the
    raw replies of the profile read (bytes): a backfill whose candidates
    are all plain and all taken hands them on to its merge unconverted."""

    ids: list = field(default_factory=list)
    authors: list[int] = field(default_factory=list)
    ruled: dict[int, Candidate] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def int_ids(self) -> list[int]:
        return [int(i) for i in self.ids]

    def only(self, keep) -> Batch:
        """The candidates whose id ``keep`` accepts, in order."""
        out = Batch()
        for sid, author in zip(self.int_ids(), self.authors):
            if keep(sid):
                out.ids.append(sid)
                out.authors.append(author)
                if sid in self.ruled:
                    out.ruled[sid] = self.ruled[sid]
        return out

    @classmethod
    def newest(cls, batches: Sequence[Batch], count: int) -> Batch:
        """The newest ``count`` candidates of all ``batches``, each once."""
        merged = heapq.merge(*(zip(b.int_ids(), b.authors) for b in batches), reverse=True)
        out = cls()
        ruled = {sid: c for b in batches for sid, c in b.ruled.items()}
        for sid, author in merged:
            if out.ids and out.ids[-1] == sid:
                continue
            out.ids.append(sid)
            out.authors.append(author)
            if sid in ruled:
                out.ruled[sid] = ruled[sid]
            if len(out.ids) == count:
                break
        return out


# --- facts of a viewer, for a batch of candidates into one timeline ----------------------
def viewer_reads(
    cs: Sequence[Candidate], viewer: int, lid: int | None = None, hidden_known: bool = False
) -> list[tuple]:
    """The commands (one slot: the viewer's) that read what the rule asks of
    ``viewer`` about ``cs`` (:func:`viewer_facts` parses their replies);
    none when no candidate needs anything. ``hidden_known``: the caller has
    the viewer's hidden boosters already."""
    follows = asked_follows(cs, viewer, lid)
    hidden = [] if hidden_known else asked_hidden(cs, viewer)
    members = asked_members(cs, viewer, lid)
    out: list[tuple] = []
    if follows:
        out.append(("ZMSCORE", keys.following(viewer), *follows))
    if hidden:
        out.append(("SMISMEMBER", keys.hidden_reblogs(viewer), *hidden))
    if members and lid is not None:  # (members are asked only of a list)
        out.append(("ZMSCORE", keys.list_members(viewer, lid), *members))
    return out


def viewer_facts(
    cs: Sequence[Candidate],
    viewer: int,
    lid: int | None,
    replies: list,
    hidden: frozenset[int] | None = None,
) -> Facts:
    """:func:`viewer_reads`' replies (in order) as facts; ``hidden``: the
    hidden boosters known already (then not read)."""
    follows = asked_follows(cs, viewer, lid)
    asked = [] if hidden is not None else asked_hidden(cs, viewer)
    members = asked_members(cs, viewer, lid)
    replies = list(replies)
    found: frozenset[int] = frozenset()
    if follows:
        found = frozenset(a for a, s in zip(follows, replies.pop(0)) if s is not None)
    if asked:
        hidden = frozenset(a for a, x in zip(asked, replies.pop(0)) if x)
    in_list_: frozenset[int] = frozenset()
    if members:
        in_list_ = frozenset(a for a, s in zip(members, replies.pop(0)) if s is not None)
    return Facts(follows=found, hidden=hidden or frozenset(), members=in_list_)


# --- blocks, for a status offered to many homes by its conversation ---------------------
def block_reads(author: int, viewers: Sequence[int]) -> list[tuple]:
    """The commands (one slot: the author's) that read which of ``viewers``
    have a block between them and ``author``, either way (the two sides of
    a block: redpoll.relations.relations); :func:`block_facts` parses them."""
    if not viewers:
        return []
    return [
        ("ZMSCORE", keys.blocking(author), *viewers),
        ("ZMSCORE", keys.blocked_by(author), *viewers),
    ]


def block_facts(author: int, viewers: Sequence[int], replies: list) -> dict[int, Facts]:
    """:func:`block_reads`' replies as each viewer's facts."""
    if not viewers:
        return {}
    blocking, blocked_by = replies
    return {
        v: Facts(blocks=frozenset((author,))) if x is not None or y is not None else EMPTY
        for v, x, y in zip(viewers, blocking, blocked_by)
    }


# --- the window, for candidates merged at their place ------------------------------------
def window_reads(cs: Sequence[Candidate], timeline: str | None) -> list[tuple]:
    """For the boosts among ``cs``: the timeline (unless ``timeline`` is
    None: the caller read it) and each boost's other boosts of its original
    below it (keys.reblogged_by, the original's slot)."""
    boosts = [(c, c.reblog_of) for c in cs if c.reblog_of is not None]
    if not boosts:
        return []
    out: list[tuple] = [("LRANGE", timeline, 0, -1)] if timeline is not None else []
    out += [
        (
            "ZRANGE",
            keys.reblogged_by(original),
            f"({c.id}",
            "-inf",
            "BYSCORE",
            "REV",
            "LIMIT",
            0,
            BOOSTS_READ,
            "WITHSCORES",
        )
        for c, original in boosts
    ]
    return out


def boost_ids(rows) -> frozenset[int]:
    """The boost ids of a WITHSCORES read of keys.reblogged_by."""
    if rows and not isinstance(rows[0], (list, tuple)):  # RESP2: flat list
        rows = list(zip(rows[0::2], rows[1::2]))
    return frozenset(int(float(score)) for _, score in rows)


def below(view: list[int], sid: int) -> frozenset[int]:
    """The WINDOW entries just below ``sid`` in ``view`` (ascending ids)."""
    at = bisect.bisect_left(view, sid)
    return frozenset(view[max(0, at - WINDOW) : at])


def decide(
    batch: Batch,
    viewer: int,
    lid: int | None,
    facts: Facts,
    held: Sequence[int] = (),
    others: Mapping[int, frozenset[int]] | None = None,
) -> tuple[list[int], list[Candidate]]:
    """The candidates of ``batch`` that enter ``viewer``'s home (``lid``
    None) or list: each asked of the rule with ``facts`` (a plain one once
    per author); a boost, by age, also with the window below its place in
    what the timeline will hold (``held``, the timeline as read, and what
    goes in before it); ``others``: boost id -> the other boosts of its
    original known. Their ids, newest first (as the batch holds them when
    all are taken), and the boosts taken."""
    ask = rule(lid)
    # the answer for a plain status of each author (its id plays no part)
    plain = {a: ask(Candidate(0, a), viewer, facts) for a in set(batch.authors)}
    taken: list[int] = []
    boosts: list[Candidate] = []
    if not batch.ruled and all(plain.values()):  # the common case: all plain, all in
        taken = list(batch.ids)
    else:
        for sid, author in zip(batch.int_ids(), batch.authors):
            c = batch.ruled.get(sid)
            if c is None:
                if plain[author]:
                    taken.append(sid)
            elif c.reblog_of is not None:
                boosts.append(c)  # (each with its reblog_of)
            elif ask(c, viewer, facts):
                taken.append(sid)
    took: list[Candidate] = []
    if boosts:
        view = sorted({*map(int, held), *taken})
        others = others or {}
        for c in sorted(boosts, key=lambda c: c.id):
            seen = replace(
                facts,
                window={c.id: below(view, c.id)},
                boosts_of={int(c.reblog_of or 0): others.get(c.id, frozenset())},
            )
            if ask(c, viewer, seen):
                took.append(c)
                bisect.insort(view, c.id)
        taken = sorted([*taken, *(c.id for c in took)], reverse=True)
    return taken, took


def boosts_to_drop(
    home: Sequence[int],
    record: Mapping[int, int],
    taken: Sequence[int],
    took: Sequence[Candidate],
    came: Mapping[int, int] | None = None,
) -> list[int]:
    """The rule's window asked of boosts a home holds already when their
    original comes in (a catch-up, redpoll.timelines.hybrid): of ``home``
    (its ids), the boosts whose original is among ``taken`` (the ids going
    in, the boosts ``took`` among them) or ``came`` (original -> boost, put
    in before) and now sits within the window below them; ``record`` is the
    home's boost record (original -> the boost it holds). Those boosts leave
    the home."""
    take = set(taken)
    view = sorted(set(home) | take)
    held = set(home)
    boosted = {c.id for c in took}
    arriving = {sid: record.get(sid) for sid in taken if sid not in boosted}
    arriving.update(came or {})
    out: list[int] = []
    for sid, boost in arriving.items():
        if boost in held and shown_already(
            Candidate(boost, 0, reblog_of=sid), Facts(window={boost: below(view, boost)})
        ):
            out.append(boost)
    return out


async def take(
    store: Store,
    batch: Batch,
    viewer: int,
    lid: int | None = None,
    hidden: frozenset[int] | None = None,
) -> tuple[list[int], list[Candidate]]:
    """:func:`decide` with the facts it needs read first, in one round trip
    (none when no candidate needs any): the merges' way (backfill, refill,
    rebuild). ``hidden``: the viewer's hidden boosters, if known."""
    ruled = list(batch.ruled.values())
    commands = viewer_reads(ruled, viewer, lid, hidden is not None)
    n = len(commands)
    commands += window_reads(ruled, timeline_key(viewer, lid))
    replies = await store.batch(commands) if commands else []
    facts = viewer_facts(ruled, viewer, lid, replies[:n], hidden)
    held: list = []
    others: dict[int, frozenset[int]] = {}
    if len(replies) > n:
        held = replies[n]
        boosts = [c for c in ruled if c.reblog_of is not None]
        others = {c.id: boost_ids(rows) for c, rows in zip(boosts, replies[n + 1 :])}
    return decide(batch, viewer, lid, facts, held, others)


# --- candidates read from profiles --------------------------------------------------------
def profile_reads(uid: int, top, count: int, bottom="-inf") -> list[tuple]:
    """The two reads (one slot: uid's) of :func:`profile_batch`, for a
    caller's batch: the newest ``count`` profile ids between ``top`` and
    ``bottom`` (score bounds: '+inf', '(123') and the ruled ones among as
    many."""
    return [
        ("ZRANGE", keys.profile(uid), top, bottom, "BYSCORE", "REV", "LIMIT", 0, count),
        ("ZRANGE", keys.ruled_posts(uid), top, bottom, "BYSCORE", "REV", "LIMIT", 0, count),
    ]


def plain_taken(author: int, viewer: int, lid: int | None = None) -> bool:
    """The rule's answer for every plain status of ``author``."""
    return rule(lid)(Candidate(0, author), viewer, EMPTY)


def ruled_read(uid: int, count: int) -> tuple:
    """The newest ``count`` of uid's ruled statuses (:func:`ruled_batch`)."""
    return ("ZRANGE", keys.ruled_posts(uid), "+inf", "-inf", "BYSCORE", "REV", "LIMIT", 0, count)


def ruled_batch(uid: int, ruled: list, lowest: int) -> Batch:
    """The reply to :func:`ruled_read` as candidates, those from ``lowest``
    up (the plain ones went in another way: merge_profile.lua)."""
    found = sorted(
        (c for c in (Candidate.parse(uid, m) for m in ruled) if c.id >= lowest),
        key=lambda c: c.id,
        reverse=True,
    )
    return Batch([c.id for c in found], [uid] * len(found), {c.id: c for c in found})


def profile_batch(uid: int, ids: list, ruled: list, raw: bool = False) -> Batch:
    """The replies to :func:`profile_reads` as candidates. The ruled read
    covers every ruled id of the profile read, as it takes as many of the
    newest below the same top (those below the profile read's are left
    out); an id not in it is plain. ``raw``: the ids are kept as read (see
    Batch)."""
    lowest = int(ids[-1]) if ids else 0
    return Batch(
        list(ids) if raw else [int(i) for i in ids],
        [uid] * len(ids),
        {c.id: c for c in (Candidate.parse(uid, m) for m in ruled) if c.id >= lowest},
    )


# --- facts for a status pushed to many homes ----------------------------------------------
def push_reads(c: Candidate, viewers: Sequence[int]) -> list[tuple]:
    """What the rule asks of each of ``viewers`` (followers whose homes
    fan-out serves) about the status ``c`` pushed now; none for a plain
    status. Each in its viewer's slot; :func:`push_facts` parses."""
    out: list[tuple] = []
    if c.replies_to is not None:
        out += [("ZSCORE", keys.following(v), c.replies_to) for v in viewers]
    if c.reblog_of is not None:
        out += [("SISMEMBER", keys.hidden_reblogs(v), c.author) for v in viewers]
        out += [("LPOS", keys.home(v), c.reblog_of, "MAXLEN", WINDOW) for v in viewers]
        out += [("ZSCORE", keys.home_reblogs(v), c.reblog_of) for v in viewers]
    return out


def push_recorded(c: Candidate, viewers: Sequence[int], replies: list) -> dict[int, int]:
    """Of :func:`push_reads`' replies, the boost of the same original each
    home recorded last (keys.home_reblogs), where there is one (not ``c``):
    its place is read next (:func:`recorded_reads`)."""
    if c.reblog_of is None:
        return {}
    n = len(viewers)
    start = n if c.replies_to is not None else 0
    recorded = replies[start + 2 * n : start + 3 * n]
    return {
        v: int(float(r))
        for v, r in zip(viewers, recorded)
        if r is not None and int(float(r)) != c.id
    }


def recorded_reads(recorded: Mapping[int, int]) -> list[tuple]:
    return [("LPOS", keys.home(v), boost, "MAXLEN", WINDOW) for v, boost in recorded.items()]


def push_facts(
    c: Candidate, viewers: Sequence[int], replies: list, recorded: Mapping[int, int], places: list
) -> list[Facts]:
    """Each viewer's facts about ``c`` from :func:`push_reads`' replies and
    (for the recorded boosts) :func:`recorded_reads`'."""
    n = len(viewers)
    at = 0
    follows: list | None = None
    hidden: list | None = None
    originals: list = []
    if c.replies_to is not None:
        follows, at = replies[:n], n
    if c.reblog_of is not None:
        hidden, originals = replies[at : at + n], replies[at + n : at + 2 * n]
    near = {v for v, place in zip(recorded, places) if place is not None}
    out = []
    for k, v in enumerate(viewers):
        facts = EMPTY
        if follows is not None and follows[k] is not None and c.replies_to is not None:
            facts = replace(facts, follows=frozenset((c.replies_to,)))
        if hidden is not None and c.reblog_of is not None:
            window: set[int] = set()
            if originals[k] is not None:
                window.add(c.reblog_of)
            other = recorded.get(v)
            if v in near and other is not None:
                window.add(other)
            facts = replace(
                facts,
                hidden=frozenset((c.author,)) if hidden[k] else frozenset(),
                window={c.id: frozenset(window)},
                boosts_of={c.reblog_of: frozenset((other,) if other else ())},
            )
        out.append(facts)
    return out


def homes_taking(c: Candidate, viewers: Sequence[int], facts: Sequence[Facts] | None) -> list[int]:
    """The viewers whose homes take ``c``. Without facts (a plain status:
    nothing to ask), the rule's answer differs only for the author, so it
    is asked once for everyone else."""
    if facts is None:
        others = in_home(c, 0, EMPTY)  # 0: no account, so neither author nor replied to
        return [v for v in viewers if (in_home(c, v, EMPTY) if v == c.author else others)]
    return [v for v, f in zip(viewers, facts) if in_home(c, v, f)]


def list_push_reads(c: Candidate, lists: Sequence[tuple[int, int]]) -> list[tuple]:
    """What the rule asks of each list (owner, lid) about ``c`` pushed now:
    its owner's facts (:func:`viewer_reads`) and, for a boost, the list's
    newest WINDOW entries, then once the other boosts of the original."""
    out: list[tuple] = []
    for owner, lid in lists:
        out += viewer_reads([c], owner, lid)
        if c.reblog_of is not None:
            out.append(("LRANGE", keys.list_timeline(owner, lid), 0, WINDOW - 1))
    if c.reblog_of is not None and lists:
        out += window_reads([c], None)
    return out


def list_push_facts(c: Candidate, lists: Sequence[tuple[int, int]], replies: list) -> list[Facts]:
    replies = list(replies)
    others = boost_ids(replies.pop()) if c.reblog_of is not None and lists else frozenset()
    out = []
    for owner, lid in lists:
        n = len(viewer_reads([c], owner, lid))
        facts = viewer_facts([c], owner, lid, replies[:n])
        replies = replies[n:]
        if c.reblog_of is not None:
            head = frozenset(int(i) for i in replies.pop(0))
            facts = replace(facts, window={c.id: head}, boosts_of={c.reblog_of: others})
        out.append(facts)
    return out
