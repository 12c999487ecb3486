"""A bounded in-process map for values that are cheap to lose: when full,
the oldest entry goes. No recency bookkeeping on a hit, since the entries
kept here (statuses of recent pages) are read far more often than added."""
from __future__ import annotations

from typing import Generic, Hashable, TypeVar

V = TypeVar("V")


class Bounded(Generic[V]):
    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self._items: dict[Hashable, V] = {}
        #: the value for a key, or None (the dict's own C method: pages call
        #: this for every status they show)
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
