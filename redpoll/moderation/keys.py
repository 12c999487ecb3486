"""The keys of strikes and appeals (Mastodon's AccountWarning and Appeal);
reports are core's (redpoll/core/keys.py)."""

from __future__ import annotations

#: String: the last warning id given
WARNING_SEQ = "aw:seq"
#: HASH warning id -> the id of the account it is about (so a moderator's
#: call by warning id finds the account's slot)
WARNING_OWNERS = "aw:owners"
#: ZSET ``<account id>:<warning id>`` -> warning id: the warnings appealed
#: (or about to be: a member whose record shows no appeal is skipped)
APPEALS = "aw:appeals"


def warnings(uid: int) -> str:
    """HASH warning id -> the warning's JSON (with its appeal), in the
    account's slot."""
    return f"aw:{{{uid}}}"
