"""Links in public statuses: the URLs a status's text carries, counted at
post time in each link's history (redpoll.trends.history, kind ``link``)
by the accounts that posted them, as hashtags are. No preview is fetched
(nothing leaves the server): a link's title is its host and path.

Each link also keeps the ids of the statuses that carried it
(``keys.link_statuses``, the newest limits.LINK_STATUSES_KEPT): the link's
timeline (Mastodon 4.3's /api/v1/timelines/link) pages them, for a link
that trends; the reader shows each by the visibility decision."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ..core import keys, limits, validate
from ..core.models import Status
from ..storage.store import Store
from . import history

URL = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
TRAILING = ".,;:!?)]}*_"


def normalize(raw: str) -> str | None:
    """A link as counted: scheme and host lowercased, no fragment, no
    trailing punctuation; None when it is no web address or too long."""
    raw = raw.rstrip(TRAILING)
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme.lower() not in ("http", "https") or not host or "." not in host:
        return None
    url = f"{parts.scheme.lower()}://{host}{f':{port}' if port else ''}{parts.path or '/'}"
    if parts.query:
        url += "?" + parts.query
    return url if len(url) <= limits.TRENDS_LINK_MAX_CHARS else None


def parse(text: str) -> list[str]:
    """The links of a text, in order, once each, at most limits.TRENDS_LINKS_PER_STATUS."""
    found = [u for u in (normalize(m) for m in URL.findall(text)) if u]
    return list(dict.fromkeys(found))[: limits.TRENDS_LINKS_PER_STATUS]


def title(url: str) -> str:
    """What stands for a page's title: its host and path."""
    parts = urlsplit(url)
    return (parts.hostname or "") + (parts.path if parts.path != "/" else "")


async def count_post(store: Store, status: Status) -> None:
    """Count the links of a new public status (not a boost). Idempotent:
    runs in the post's journal step and again in its replay."""
    if status.extra.get("visibility", "public") != "public" or status.reblog_of:
        return
    found = parse(status.text)
    if found:
        await history.count_use(store, "link", found, status.id, status.user_id, status.created_at)
        for url in found:  # each link's statuses (its slot: one MULTI; idempotent)
            key = keys.link_statuses(history.digest(url))
            pipe = store.pipeline(transaction=True)
            pipe.zadd(key, {str(status.id): status.id})
            pipe.zremrangebyrank(key, 0, -limits.LINK_STATUSES_KEPT - 1)
            await pipe.execute()


async def statuses(
    store: Store, url: str, *, max_id=None, since_id=None, min_id=None, limit=None
) -> list[int]:
    """A page of the ids of the statuses that carried ``url`` (as counted:
    :func:`normalize`), newest first (``min_id``: the oldest newer than it)."""
    size = validate.page_limit(limit, limits.PAGE_DEFAULT, limits.PAGE_MAX)
    key = keys.link_statuses(history.digest(url))
    top = f"({validate.an_id(max_id, 'max_id')}" if max_id else "+inf"
    if min_id:
        low = f"({validate.an_id(min_id, 'min_id')}"
        rows = await store.zrangebyscore(key, low, top, start=0, num=size)
        return [int(r) for r in reversed(rows)]
    low = f"({validate.an_id(since_id, 'since_id')}" if since_id else "-inf"
    rows = await store.zrevrangebyscore(key, top, low, start=0, num=size)
    return [int(r) for r in rows]
