"""Search: accounts by login or display-name prefix, statuses by full text
(redpoll.search.index: the viewer's library and the public statuses of
accounts that allow it, in Mastodon's search syntax), hashtags by prefix.

Accounts are found through one sorted set of ``<term>\\0<uid>`` entries, all
scored 0 and read by prefix with ZRANGE BYLEX (``keys.SEARCH_ACCOUNTS``).
The index is written by redpoll.accounts.account_index (on sign-up and every
profile change); it may lag a change by one, so reads here check every hit
against the user record as it is now: a lagging entry never gives a wrong
answer, it can only miss a renamed user until the next profile change (the
login, which never changes, still finds it).

Suspended accounts (redpoll.moderation.moderation) are never found: each hit's record,
read anyway, says whether it is.

Nothing here contacts another host: ``@login@elsewhere`` finds nothing, at
once, whatever ``resolve`` says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..accounts.account_index import account_terms, fold
from ..conversations import conversation
from ..conversations.tags import Tag, with_history
from ..core import keys, limits, validate
from ..core.errors import NotFound, ValidationError
from ..core.models import Status, User
from ..records import statuses, users
from ..storage.store import Store
from . import fulltext, index

TYPES = ("accounts", "hashtags", "statuses")
_ACCT = re.compile(r"@?([A-Za-z0-9_]+)(?:@([^@\s/]+))?")
_PROFILE_PATH = re.compile(r"/@([A-Za-z0-9_]+)(?:/([0-9]{1,16}))?/?")


@dataclass(frozen=True)
class Query:
    """What a search asks for; ``hosts`` are the names this server answers
    to (``@login@host`` and URLs on them are local)."""

    q: str
    viewer: int | None = None
    type: str | None = None  # one of TYPES, or None for all
    limit: int = limits.PAGE_DEFAULT
    offset: int = 0
    resolve: bool = False
    following: bool = False
    account_id: int | None = None
    max_id: int | None = None
    min_id: int | None = None
    hosts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Results:
    accounts: list[User] = field(default_factory=list)
    statuses: list[Status] = field(default_factory=list)
    hashtags: list[Tag] = field(default_factory=list)


# --- reading -------------------------------------------------------------------------
def _check(query: Query) -> Query:
    q = validate.text(query.q, "q", limits.SEARCH_QUERY_MAX_CHARS, allow_empty=True)
    if query.type is not None and query.type not in TYPES:
        raise ValidationError("type", "must be one of " + ", ".join(TYPES))
    if isinstance(query.limit, bool) or not isinstance(query.limit, int) or query.limit < 1:
        raise ValidationError("limit", "must be a positive integer")
    if isinstance(query.offset, bool) or not isinstance(query.offset, int) or query.offset < 0:
        raise ValidationError("offset", "must be a non-negative integer")
    return Query(**{**query.__dict__, "q": q, "limit": min(query.limit, limits.PAGE_MAX)})


async def search(store: Store, query: Query) -> Results:
    """Accounts, statuses and hashtags matching ``query.q`` (see the module)."""
    query = _check(query)
    q = query.q.strip()
    if not q or query.offset + query.limit > limits.SEARCH_WINDOW:
        return Results()

    def wants(kind: str) -> bool:
        return query.type in (None, kind)

    url = await _by_url(store, q, query)
    if url is not None:
        return url
    found_accounts = await _accounts(store, q, query) if wants("accounts") else []
    found_statuses = await _statuses(store, q, query) if wants("statuses") else []
    found_tags = await _hashtags(store, q, query) if wants("hashtags") else []
    return Results(accounts=found_accounts, statuses=found_statuses, hashtags=found_tags)


async def _hashtags(store: Store, q: str, query: Query) -> list[Tag]:
    """Hashtags ever used whose name starts with ``q`` ('#' optional), in name
    order (the hashtag index of conversation.py), with whether the viewer
    follows each."""
    names = _page(await conversation.search_tags(store, q, query.offset + query.limit), query)
    if not names:
        return []
    following = [None] * len(names)
    if query.viewer is not None:
        following = await store.zmscore(keys.followed_tags(query.viewer), names)
    return await with_history(
        store, [Tag(name, score is not None, True) for name, score in zip(names, following)]
    )


async def _by_url(store: Store, q: str, query: Query) -> Results | None:
    """A URL on this server (``/@login``, ``/@login/:id``) names one thing."""
    if not q.startswith(("http://", "https://")):
        return None
    parts = urlsplit(q)
    local = (parts.hostname or "").lower() in query.hosts or parts.netloc.lower() in query.hosts
    match = _PROFILE_PATH.fullmatch(parts.path) if local else None
    if match is None:
        return Results()  # another host, or not a page: nothing, never a fetch
    try:
        user = await users.lookup(store, match.group(1))
        if user.suspended:  # left out of search, as Mastodon
            return Results()
        if match.group(2) is None:
            return Results(accounts=[user] if query.type in (None, "accounts") else [])
        status = await statuses.get_status(store, match.group(2))
    except (NotFound, ValidationError):
        return Results()
    if status.user_id != user.id or query.type not in (None, "statuses"):
        return Results()
    return Results(statuses=[status])


async def _accounts(store: Store, q: str, query: Query) -> list[User]:
    acct = _ACCT.fullmatch(q)
    exact: list[User] = []
    if acct is not None:
        name, host = acct.group(1), acct.group(2)
        if host is not None and host.lower() not in query.hosts:
            return []  # a remote account: redpoll federates with no one
        try:
            exact = [u for u in [await users.lookup(store, name)] if not u.suspended]
        except (NotFound, ValidationError):
            exact = []
        if host is not None:  # login@host names one account
            return _page(await _only_followed(store, exact, query), query)
    prefix = fold(q.lstrip("@"))
    if not prefix:
        return []
    wanted = query.offset + query.limit
    scan = min(limits.SEARCH_SCAN, wanted * (limits.SEARCH_NAME_WORDS + 1))
    # (a batch of one: the multiplexed connection on a cluster too, see
    # timelines.fanout._scored_after)
    [entries] = await store.batch(
        [
            (
                "ZRANGE",
                keys.SEARCH_ACCOUNTS,
                b"[" + prefix.encode(),
                b"[" + prefix.encode() + b"\xff",
                "BYLEX",
                "LIMIT",
                0,
                scan,
            )
        ]
    )
    uids = list(
        dict.fromkeys([u.id for u in exact] + [int(e.rsplit(b"\0", 1)[1]) for e in entries])
    )
    found: list[User] = []
    # read the records a page needs, more only if some entries were stale or
    # not followed: the index may lag a rename (see the module), so each
    # hit is checked against the record as it is now
    while uids and len(found) < wanted:
        chunk, uids = uids[: wanted - len(found)], uids[wanted - len(found) :]
        fresh = [
            u
            for u in await users.get_users(store, chunk)
            if not u.suspended
            and any(t.startswith(prefix) for t in account_terms(u.login, u.display_name))
        ]
        found.extend(await _only_followed(store, fresh, query))
    return _page(found, query)


async def _only_followed(store: Store, found: list[User], query: Query) -> list[User]:
    if not query.following or not found:
        return found
    if query.viewer is None:
        return []
    scores = await store.zmscore(keys.following(query.viewer), [u.id for u in found])
    return [u for u, score in zip(found, scores) if score is not None]


def _page(items: list, query: Query) -> list:
    return items[query.offset : query.offset + query.limit]


async def _statuses(store: Store, q: str, query: Query) -> list[Status]:
    """Statuses matching ``q`` in Mastodon's search syntax
    (redpoll.search.fulltext), newest first, from the full-text index
    (redpoll.search.index): the viewer's library (its own, those it
    favourited, boosted, bookmarked, replied to, voted in or was mentioned
    in) and the public statuses of accounts that allow it (``indexable``).
    Nothing for no viewer, as Mastodon; nothing for a query that cannot be
    asked (a bad date, an unknown property)."""
    if query.viewer is None:
        return []
    try:
        parsed = fulltext.parse(q)
    except fulltext.QueryError:
        return []
    ask = index.Ask(
        parsed,
        query.viewer,
        query.offset + query.limit,
        max_id=query.max_id,
        min_id=query.min_id,
        account_id=query.account_id,
    )
    return _page(await index.find(store, ask), query)
