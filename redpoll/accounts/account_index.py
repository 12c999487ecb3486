"""The account search index: one sorted set of ``<term>\\0<uid>`` entries,
all scored 0, read by prefix with ZRANGE BYLEX (``keys.SEARCH_ACCOUNTS``;
redpoll.search.search reads it).

The terms of a user are its login and its display name from each word on,
case-folded. :func:`index_account` puts a user's terms there; it is one
script on the index's slot (``index_account.lua``) that applies a user's
terms only if they come from a newer revision of the user record than the
terms already there, so calls racing or arriving late never bring back an
old name. It runs after the record is written (another slot): if the call is
cut short in between, the index lags by that one change.
"""

from __future__ import annotations

import unicodedata

from ..core import keys, limits
from ..storage.store import Store


def fold(text: str) -> str:
    """How terms and queries are compared: NFKC, case-folded, trimmed."""
    return unicodedata.normalize("NFKC", text).casefold().strip()


def account_terms(login: str, display_name: str) -> list[str]:
    """The index terms of a user: the login, and the display name from each
    of its first words on ("ann lee", "lee"), so any word or run of words
    of the name is a prefix of some term."""
    terms = [fold(login)]
    words = fold(display_name).split()
    terms.extend(" ".join(words[i:]) for i in range(min(len(words), limits.SEARCH_NAME_WORDS)))
    return list(dict.fromkeys(t for t in terms if t))


async def index_account(store: Store, uid: int, rev: int, login: str, display_name: str) -> bool:
    """Make the index hold exactly these terms for ``uid``, unless it already
    holds terms of revision ``rev`` or newer. Atomic (one script, one slot)
    and idempotent: callers re-run it freely. True if it changed the index."""
    return bool(
        await store.run(
            "index_account",
            [keys.SEARCH_ACCOUNTS, keys.SEARCH_INDEXED],
            [uid, rev, *account_terms(login, display_name)],
        )
    )
