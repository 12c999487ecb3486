"""redpoll.memo.Bounded: a bounded map that drops its oldest entry."""
from __future__ import annotations

import pytest

from redpoll.memo import Bounded


def test_keeps_at_most_its_limit_dropping_the_oldest():
    kept = Bounded(3)
    for k in "abcd":
        kept.put(k, k.upper())
    assert len(kept) == 3
    assert kept.get("a") is None
    assert [kept.get(k) for k in "bcd"] == ["B", "C", "D"]


def test_replacing_a_key_does_not_evict():
    kept = Bounded(2)
    kept.put("a", 1)
    kept.put("b", 2)
    kept.put("a", 3)
    assert (kept.get("a"), kept.get("b"), len(kept)) == (3, 2, 2)


def test_discard_and_a_refused_limit():
    kept = Bounded(2)
    kept.put("a", 1)
    kept.discard("a")
    kept.discard("never there")
    assert kept.get("a") is None and len(kept) == 0
    with pytest.raises(ValueError):
        Bounded(0)
