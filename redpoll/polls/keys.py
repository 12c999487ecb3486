"""The Redis keys of polls (redpoll.polls), built here and nowhere else.

A poll lives in its status's slot (``{sid}``, as every key of one status in
redpoll/core/keys.py): its record ``st:{sid}`` holds the poll's definition
(the ``x:poll`` extra), and the votes sit beside it, so that a vote (the
check of the record and the counts) is one script in one slot. The votes
are kept per *generation* of the options (the ms they were set at): an
edit that changes the options starts a new generation with no votes.
"""

from __future__ import annotations


def counts(sid: int, gen: int) -> str:
    """Hash: the votes of a poll's generation ``gen``: ``<option index>`` ->
    votes for it, ``n`` -> accounts that voted, ``op`` -> the operation id
    of the end's notifications (set once, redpoll.polls.polls.end)."""
    return f"poll:{{{sid}}}:{gen}"


def votes(sid: int, gen: int) -> str:
    """Hash: account id -> its choices (option indexes, comma-separated),
    one entry per account that voted in generation ``gen``."""
    return f"pvote:{{{sid}}}:{gen}"


def voter_inboxes(sid: int, gen: int) -> str:
    """Set: the inboxes of the accounts of other servers that voted in
    generation ``gen`` (told of the poll's counts: redpoll.federation)."""
    return f"pinbox:{{{sid}}}:{gen}"
