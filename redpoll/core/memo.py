"""What a process keeps in memory, and the one rule that keeps it true.

THE RULE (for every record a process keeps decoded):

    A value kept under a key is served only to a request that has read, in
    its own round trip to Redis, the current *version* of the record the
    value was made from, and only if that version equals the version the
    value was kept with. Anything else is read and decoded again.

INVARIANT: a served value is exactly what decoding the record as this
request read it would give, so nothing served is staler than the request's
own read. (tests/test_memo.py checks it on real pages.)

Versions: a status hash carries ``v`` (1 when written; every change to the
record writes a new one, and the tombstone a delete leaves has none); a user
hash carries ``rev`` (every change to the record bumps it). A record without
a version field is never kept. Every version is also relative to the
database's epoch (keys.EPOCH, changed when the data is wiped and ids are
handed out again); since one process talks to one database, the epoch is
checked once per request for all entries (Store.memos_valid) and a change
empties every memo, which is the same test done in bulk.

What is not in a kept record is not covered: counters that change on every
favourite or boost are read per request and rendered on top of the record.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Bounded(Generic[V]):
    """A bounded in-process map for values that are cheap to lose: when
    full, the oldest entry goes. No recency bookkeeping on a hit, since the
    entries kept (records of recent pages) are read far more often than
    added. For values that need no version (e.g. a parsed base URL by its
    exact text); records use :class:`Memo`."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self._items: dict[Hashable, V] = {}
        #: the value for a key, or None (the dict's own C method)
        self.get = self._items.get

    def put(self, key: Hashable, value: V) -> None:
        items = self._items
        if key not in items and len(items) >= self.limit:
            del items[next(iter(items))]
        items[key] = value

    def clear(self) -> None:
        self._items.clear()

    def discard(self, key: Hashable) -> None:
        self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)


class Memo(Generic[V]):
    """Decoded records by key, each with the version it was decoded at; the
    rule above is :meth:`get`'s contract."""

    def __init__(self, limit: int):
        self._kept: Bounded[tuple[bytes, V]] = Bounded(limit)
        self._get = self._kept.get

    def get(self, key: Hashable, version: bytes | None) -> V | None:
        """The value kept for ``key`` if it was kept at ``version`` (which
        the caller read in this request), else None. (Kept versions are
        never None, so a None version never matches.)"""
        hit = self._get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        return None

    def kept_version(self, key: Hashable) -> bytes | None:
        """The version a value is kept at (to know what to read), or None."""
        hit = self._get(key)
        return None if hit is None else hit[0]

    def peek(self, key: Hashable) -> V | None:
        """The value kept for ``key`` whatever its version: NOT to be served
        (the rule), only to plan what to read (e.g. its author's version)."""
        hit = self._get(key)
        return None if hit is None else hit[1]

    def put(self, key: Hashable, version: bytes | None, value: V) -> None:
        if version is None:  # no version, no proof it is current: not kept
            self._kept.discard(key)
        else:
            self._kept.put(key, (version, value))

    def discard(self, key: Hashable) -> None:
        self._kept.discard(key)

    def clear(self) -> None:
        self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)
