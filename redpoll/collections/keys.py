"""The Redis keys of collections (redpoll.collections), built here and
nowhere else.

A collection lives in its owner's slot (``{uid}``, as every key of one user
in redpoll/core/keys.py): the owner's set of collections, each collection's
record, its items and which account each item is, so that every change the
owner makes (create, update, delete, add, remove) and a featured account's
revocation is one script in one slot. Two indexes live elsewhere and are
written as idempotent steps around that script (redpoll.collections.collections
says in which order): the collection id's owner (routes name a collection by
its id only) and, in each featured account's slot, the collections it is in.
"""

from __future__ import annotations

#: the sequences of collection ids and of item ids
SEQ = "seq:coll"
ITEM_SEQ = "seq:collitem"


def collections(uid: int) -> str:
    """ZSET: the owner's collection ids -> ms created."""
    return f"colls:{{{uid}}}"


def record(uid: int, cid: int) -> str:
    """Hash: a collection's fields (name, desc, lang, tag, sens, disc, ca, ua)."""
    return f"coll:{{{uid}}}:{cid}"


def items(uid: int, cid: int) -> str:
    """Hash: item id -> ``<account id>|<state>|<ms added>``."""
    return f"colli:{{{uid}}}:{cid}"


def item_accounts(uid: int, cid: int) -> str:
    """Hash: account id -> its item id (an account is in a collection once)."""
    return f"colla:{{{uid}}}:{cid}"


def owner_of(cid: int) -> str:
    """String: the owner of collection ``cid`` (written before the
    collection, removed after it: one naming nothing reads as unknown)."""
    return f"collof:{{c{cid}}}"


def featured_in(uid: int) -> str:
    """ZSET: ``<owner>:<collection id>`` -> ms, the collections account
    ``uid`` was added to (checked against the owner's items when read)."""
    return f"incoll:{{{uid}}}"
