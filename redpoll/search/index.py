"""The full-text index of statuses: our own inverted index in Redis (see
docs/decisions.md, "Full-text search: our own index"), and its reads.

Keys (redpoll/search/keys.py): per term and family a posting list (``p``:
anyone may find it; ``l``: only the accounts whose library holds it), per
status the entries it is in now (``fts:s:{sid}``, beside the status), per
user the library entries no other set of theirs holds (``fts:lib:{uid}``).

Invariants:

* A status is in the posting lists of its terms of one family, ``p`` if it
  is public, not a boost, and its author is ``indexable``; ``l`` otherwise
  (a boost is in none: its original is what is found). Its record names
  every entry it is in, posting lists and library entries alike.
* The index only proposes: every hit is checked when it is shown against
  the status as it is now (it exists, it matches the query, it is in the
  scope asked for) and the one visibility decision
  (redpoll.relations.visibility, with mutes and domain blocks as timelines
  apply them). A stale entry (a run cut short, a lost race) costs a read,
  never a wrong answer; a missing one (an ``indexable`` change racing a
  post) is a miss until the status is indexed again.

Writes: :func:`index_status` is idempotent and retried (IndexJob, whose
record is redpoll.conversations.jobs', handled by this package: queued by
posting on post, edit and delete for now in the due set, so a worker runs
it within about limits.DUE_JOBS_POLL_S; and ReindexAuthorJob, queued on an
``indexable`` change): it reads the status and its record, adds the entries it should
be in, removes those it should not, then records them with fts_swap.lua
(atomic over the status and its record, one slot) if neither changed
meanwhile; else it starts again from what is there, taking out what it
added for the state it lost. Posting lists of different terms are in
different slots: each ZADD/ZREM is its own command, safe to repeat.

Reads (:func:`find`): per family, the rarest required term's postings are
read newest first from the page's bound (a first step of what the page
needs, doubled while it stays short, at most limits.FTS_BATCH); the
other terms are checked with ZMSCORE, the library (for ``l``, and for
``in:library``) with ZMSCORE on the viewer's sets (one slot); at most
limits.FTS_POSTINGS_SCANNED postings per family. The families' hits are
merged newest first. A ``from:`` author's statuses or the library of
``in:library``, when they hold at most that many, are read instead (their
members checked against the terms with ZMSCORE before any status is read).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..core import keys, limits
from ..core.errors import NotFound, ValidationError
from ..core.models import PUBLIC, Status, User
from ..records import statuses, users
from ..relations import visibility
from ..storage.store import Store
from . import fulltext
from . import keys as fts_keys
from .fulltext import Parsed

#: tries of one run against concurrent changes before it leaves the rest to a retry
SWAP_TRIES = 5


# --- writes ----------------------------------------------------------------------------
def pairs(row: list) -> dict[bytes, bytes]:
    return dict(zip(row[::2], row[1::2]))


def swap_state(raw: dict[bytes, bytes]) -> str:
    """The status's state as fts_swap.lua reads it."""
    if not raw:
        return "|"
    v = (raw.get(b"v") or b"").decode()
    return v + "|" + ("d" if b"deleted" in raw else "")


def wanted_entries(status: Status | None, indexable: bool) -> set[str]:
    """The entries a status should be in now, as its record names them:
    ``<family>:<term>`` (the posting list of that term, member the status)
    or ``L:<uid>:<sid>`` (that user's library, member that status)."""
    if status is None or status.reblog_of:
        return set()
    public = indexable and visibility.of(status) == PUBLIC
    family = fts_keys.PUBLIC if public else fts_keys.LIBRARY
    out = {f"{family}:{t}" for t in fulltext.terms(status)}
    for uid in visibility.mentioned_ids(status.extra.get("mentions", "")):
        if uid != status.user_id:
            out.add(f"L:{uid}:{status.id}")
    parent = status.extra.get("in_reply_to_id")
    if parent and str(parent).isdigit():
        out.add(f"L:{status.user_id}:{int(parent)}")
    return out


def entry_key(sid: int, entry: str) -> tuple[str, int]:
    """The key and member an entry of status ``sid`` names."""
    kind, _, rest = entry.partition(":")
    if kind == "L":
        uid, _, member = rest.partition(":")
        return fts_keys.library(int(uid)), int(member)
    return fts_keys.postings(kind, rest), sid


def _commands(op: str, sid: int, entries: Iterable[str]) -> list[tuple]:
    out: list[tuple] = []
    for entry in entries:
        key, member = entry_key(sid, entry)
        out.append(("ZADD", key, member, member) if op == "ZADD" else ("ZREM", key, member))
    return out


async def _indexable(store: Store, uid: int) -> bool:
    return (await store.hget(keys.user(uid), "idx")) == b"1"


async def index_status(store: Store, sid: int) -> bool:
    """Bring the index of status ``sid`` to the status as it is now (see the
    module); False if it kept changing (the job's retry finishes)."""
    added: set[str] = set()
    for _ in range(SWAP_TRIES):
        row, record = await store.batch(
            [("HGETALL", keys.status(sid)), ("GET", fts_keys.indexed(sid))]
        )
        raw = pairs(row)
        status = Status.from_hash(raw)
        indexable = status is not None and await _indexable(store, status.user_id)
        wanted = wanted_entries(status, indexable)
        old_record = record.decode() if record else ""
        had = set(old_record.split(" ")) - {""}
        gone = (had | added) - wanted
        new = wanted - had
        commands = _commands("ZADD", sid, new) + _commands("ZREM", sid, gone)
        for start in range(0, len(commands), 500):
            await store.batch(commands[start : start + 500])
        added |= new
        record_out = " ".join(sorted(wanted))
        if await store.run(
            "fts_swap",
            [keys.status(sid), fts_keys.indexed(sid)],
            [swap_state(raw), old_record, record_out],
        ):
            return True
    return False


async def add_to_library(store: Store, uid: int, sid: int) -> None:
    """Put status ``sid`` in ``uid``'s library (a vote; idempotent)."""
    await store.zadd(fts_keys.library(uid), {str(sid): sid})


# --- reads -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Ask:
    """One status search: the query read, who asks, the page."""

    parsed: Parsed
    viewer: int
    wanted: int  # offset + limit
    max_id: int | None = None
    min_id: int | None = None
    account_id: int | None = None


def library_keys(uid: int) -> list[str]:
    """Every set of a user's library (one slot): its statuses, favourites,
    boosts, bookmarks, and the rest (mentions, replies, votes)."""
    return [
        keys.profile(uid),
        keys.favourites(uid),
        keys.reblogs(uid),
        keys.bookmarks(uid),
        fts_keys.library(uid),
    ]


async def _in_library(store: Store, viewer: int, ids: list[int]) -> set[int]:
    if not ids:
        return set()
    replies = await store.batch([("ZMSCORE", k, *ids) for k in library_keys(viewer)])
    return {sid for i, sid in enumerate(ids) if any(r[i] is not None for r in replies)}


async def resolve_authors(store: Store, parsed: Parsed, viewer: int) -> None:
    """The ids of the accounts ``from:`` names (None: no such account)."""
    for login in list(parsed.from_ids):
        if login == "me":
            parsed.from_ids[login] = viewer
            continue
        try:
            parsed.from_ids[login] = (await users.lookup(store, login)).id
        except (NotFound, ValidationError):
            parsed.from_ids[login] = None


async def _checked(
    store: Store, ask: Ask, ids: list[int], family: str | None, library: set[int] | None
) -> list[Status]:
    """Of candidates ``ids`` those that are hits now: each status as it is
    now matches the query, is in the scope (``family`` ``p``: public, not a
    boost, by an indexable author; ``library``: ids the viewer's library
    holds, None: no such need) and the viewer may see it."""
    low, high = fulltext.time_bounds(ask.parsed)
    # the query first (no read), then the authors of what matches
    found = [
        s
        for s in await statuses.get_statuses(store, ids)
        if not s.reblog_of
        and (ask.account_id is None or s.user_id == ask.account_id)
        and (low is None or s.created_at >= low)
        and (high is None or s.created_at < high)
        and ask.parsed.matches(s)
    ]
    if not found:
        return []
    authors: dict[int, User] = {
        u.id: u for u in await users.get_users(store, list({s.user_id for s in found}))
    }
    keep = []
    for s in found:
        author = authors.get(s.user_id)
        if author is None or author.suspended:
            continue
        if family == fts_keys.PUBLIC and not (author.indexable and visibility.of(s) == PUBLIC):
            if library is None or s.id not in library:
                continue
        if library is not None and family != fts_keys.PUBLIC and s.id not in library:
            continue
        keep.append(s)
    return await visibility.visible(store, ask.viewer, keep, muted=True)


def _bounds(ask: Ask) -> tuple[str, str]:
    high = f"({ask.max_id}" if ask.max_id else "+inf"
    low = f"({ask.min_id}" if ask.min_id else "-inf"
    return high, low


async def _scan_family(store: Store, ask: Ask, family: str, need_library: bool) -> list[Status]:
    """Hits of one family, newest first, at most ``ask.wanted`` of them."""
    terms = ask.parsed.required
    posting_keys = [fts_keys.postings(family, t) for t in terms]
    sizes = await store.batch([("ZCARD", k) for k in posting_keys])
    if not sizes or min(sizes) == 0:
        return []
    rarest = posting_keys[sizes.index(min(sizes))]
    others = [k for k in posting_keys if k != rarest]
    high, low = _bounds(ask)
    hits: list[Status] = []
    scanned = 0
    # a first step of about what the page needs, doubled while it stays short
    step = max(2 * ask.wanted, 40)
    while len(hits) < ask.wanted and scanned < limits.FTS_POSTINGS_SCANNED:
        step = min(step, limits.FTS_BATCH, limits.FTS_POSTINGS_SCANNED - scanned)
        [page] = await store.batch(
            [("ZRANGE", rarest, high, low, "BYSCORE", "REV", "LIMIT", 0, step)]
        )
        if not page:
            break
        scanned += len(page)
        ids = [int(i) for i in page]
        high = f"({ids[-1]}"
        if others:
            replies = await store.batch([("ZMSCORE", k, *ids) for k in others])
            ids = [sid for i, sid in enumerate(ids) if all(r[i] is not None for r in replies)]
        library = await _in_library(store, ask.viewer, ids) if need_library else None
        if library is not None:
            ids = [sid for sid in ids if sid in library]
        if ids:
            # the library's hits need its membership only; the public family's
            # the status public and its author indexable, now
            hits.extend(await _checked(store, ask, ids, None if need_library else family, library))
        if len(page) < step:
            break
        step *= 2
    return hits[: ask.wanted]


async def _scan_sets(store: Store, ask: Ask, sources: list[str]) -> list[Status]:
    """Hits among the newest members of ``sources`` (the ``from:`` author's
    statuses, or the viewer's library: a query of operators alone, or one
    whose sources are smaller than the terms' postings)."""
    n = limits.FTS_POSTINGS_SCANNED
    replies = await store.batch([("ZRANGE", k, 0, n - 1, "REV") for k in sources])
    ids = sorted({int(i) for r in replies for i in r}, reverse=True)
    ids = [
        i
        for i in ids
        if (ask.max_id is None or i < ask.max_id) and (ask.min_id is None or i > ask.min_id)
    ]
    scope = ask.parsed.scope
    terms = ask.parsed.required
    families = (fts_keys.PUBLIC, fts_keys.LIBRARY)
    hits: list[Status] = []
    for start in range(0, len(ids), limits.FTS_BATCH):
        chunk = ids[start : start + limits.FTS_BATCH]
        if terms:  # only those holding every term (in either family), before any read
            replies = await store.batch(
                [("ZMSCORE", fts_keys.postings(f, t), *chunk) for t in terms for f in families]
            )
            chunk = [
                sid
                for i, sid in enumerate(chunk)
                if all(
                    replies[2 * n][i] is not None or replies[2 * n + 1][i] is not None
                    for n in range(len(terms))
                )
            ]
            if not chunk:
                continue
        library = await _in_library(store, ask.viewer, chunk)
        if scope == "library":
            hits.extend(await _checked(store, ask, [i for i in chunk if i in library], None, None))
        elif scope == "public":
            hits.extend(await _checked(store, ask, chunk, fts_keys.PUBLIC, None))
        else:
            hits.extend(await _checked(store, ask, chunk, fts_keys.PUBLIC, library))
        if len(hits) >= ask.wanted:
            break
    return hits[: ask.wanted]


async def find(store: Store, ask: Ask) -> list[Status]:
    """Statuses matching ``ask``, newest first, at most ``ask.wanted``."""
    parsed = ask.parsed
    await resolve_authors(store, parsed, ask.viewer)
    wanted_authors, _ = parsed.authors()
    if None in wanted_authors or len(wanted_authors) > 1:
        return []  # from: an account that does not exist, or two authors at once
    found: list[Status] = []
    # a from: author's statuses, or the library of in:library, read whole
    # when they are few: fewer reads than the terms' postings, and complete
    sources = (
        [keys.profile(a) for a in wanted_authors if a is not None]
        or (library_keys(ask.viewer) if parsed.scope == "library" else [])
        if parsed.required
        else []
    )
    if sources:
        sizes = await store.batch([("ZCARD", k) for k in sources])
        if sum(sizes) > limits.FTS_POSTINGS_SCANNED:
            sources = []
    if sources:
        found = await _scan_sets(store, ask, sources)
    elif parsed.required:
        if parsed.scope in ("all", "public"):
            found += await _scan_family(store, ask, fts_keys.PUBLIC, False)
        if parsed.scope in ("all", "library"):
            found += await _scan_family(store, ask, fts_keys.LIBRARY, True)
            if parsed.scope == "library":
                found += await _scan_family(store, ask, fts_keys.PUBLIC, True)
    elif wanted_authors:
        [author] = wanted_authors
        assert author is not None
        found = await _scan_sets(store, ask, [keys.profile(author)])
    elif parsed.filters or parsed.scope != "all":
        found = await _scan_sets(store, ask, library_keys(ask.viewer))
    unique = {s.id: s for s in found}
    return sorted(unique.values(), key=lambda s: s.id, reverse=True)[: ask.wanted]


async def reindex_author(store: Store, uid: int, before: int) -> int:
    """Index again the newest limits.FTS_REINDEX_BATCH statuses of ``uid``
    older than ``before`` (0: the newest); the oldest one done, 0 when none
    is left (the ReindexAuthorJob's step: idempotent)."""
    high = f"({before}" if before else "+inf"
    [page] = await store.batch(
        [
            (
                "ZRANGE",
                keys.profile(uid),
                high,
                "-inf",
                "BYSCORE",
                "REV",
                "LIMIT",
                0,
                limits.FTS_REINDEX_BATCH,
            )
        ]
    )
    ids = [int(i) for i in page]
    for sid in ids:
        await index_status(store, sid)
    return ids[-1] if len(ids) == limits.FTS_REINDEX_BATCH else 0
