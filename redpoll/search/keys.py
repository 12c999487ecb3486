"""The Redis keys of the full-text index of statuses (redpoll.search.index),
built here and nowhere else.

Posting lists are per term and per *family*: ``p`` holds the statuses anyone
may find (public, not a boost, by an account that allows it: ``indexable``),
``l`` every other original status (found only by the accounts whose library
holds it). A status is in exactly one family. Each posting list is a sorted
set of status ids scored by the id itself, as every timeline is (ids stay
below 2**53, exact as doubles: limits.MAX_ID). A term's keys hash by the whole
key: terms spread over the cluster's slots, and no command spans two terms.
"""

from __future__ import annotations

#: the two families of posting lists
PUBLIC = "p"
LIBRARY = "l"


def postings(family: str, term: str) -> str:
    """ZSET status id -> status id: the statuses of ``family`` holding ``term``."""
    return f"fts:{family}:{term}"


def indexed(sid: int) -> str:
    """String: the entries a status is in now, space-separated
    (``p:<term>``, ``l:<term>``: posting lists; ``L:<uid>:<sid>``: a
    library; redpoll.search.index.entry_key); in the status's slot, so
    fts_swap.lua checks it and the status together."""
    return f"fts:s:{{{sid}}}"


def library(uid: int) -> str:
    """ZSET status id -> status id: statuses in the user's library that no
    other set of the user's holds: those that mention the user, those the
    user replied to, those the user voted in (its own, favourited, boosted
    and bookmarked ones are in keys.profile/favourites/reblogs/bookmarks,
    same slot)."""
    return f"fts:lib:{{{uid}}}"
