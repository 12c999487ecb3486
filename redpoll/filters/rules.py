"""Which of a viewer's filters a status meets: the one rule every read path
and stream asks (:meth:`Active.apply`), as Mastodon's CustomFilter applies
them.

- A keyword matches case-insensitively anywhere in the status's searchable
  text: its content warning, its text, its poll's options (when it has a
  poll) and its media descriptions; ``whole_word`` puts word boundaries
  around it (on a side that begins or ends with a word character). A
  boost is matched by the status it boosts (Mastodon's ``proper``); a status
  filter matches the status or the one it boosts.
- An expired filter does nothing. A filter applies in its contexts: a read
  in a context (home, notifications, public, thread, account) meets only
  those; a read in none (a status by id, favourites, search) meets every
  one, as Mastodon's ``filtered`` lists them, and hides nothing.
- ``warn`` and ``blur``: the status carries ``filtered`` (FilterResult
  entities; a client blurs the media of a ``blur`` one, as Mastodon 4.4's);
  ``hide``: it is left out, except a status of the viewer's own (as
  Mastodon's clients, where hiding happens there, never hide one's own).

The viewer's filters are read once per request or stream (one HGET of
their version, which a page batches with its other reads) and compiled
once per version per process (:data:`_kept`, the memo rule: used only at
the version the request read): all keywords in one regular expression
tried first, each filter's own only on a hit.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from ..core import keys, limits
from ..core.memo import Bounded
from ..core.models import Status, now_ms
from ..storage.store import Store
from .filters import Filter, Keyword, read_all


def iso_ms(ms: int) -> str:
    """An instant (ms) as the API writes times (render.entities.iso)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def keyword_pattern(k: Keyword) -> str:
    """A keyword as a regular expression (Mastodon's CustomFilterKeyword#to_regex)."""
    expr = re.escape(k.keyword)
    if k.whole_word:
        if re.match(r"\w", k.keyword):
            expr = r"\b" + expr
        if re.search(r"\w$", k.keyword):
            expr += r"\b"
    return expr


def entity(f: Filter, *, rules: bool = False) -> dict:
    """The Filter entity (``rules``: with its keywords and statuses, as the
    filter endpoints show it; a FilterResult's filter has neither)."""
    out: dict[str, Any] = {
        "id": str(f.id),
        "title": f.title,
        "context": list(f.context),
        "expires_at": iso_ms(f.expires_at) if f.expires_at else None,
        "filter_action": f.action,
    }
    if rules:
        out["keywords"] = [keyword_entity(k) for k in f.keywords]
        out["statuses"] = [{"id": str(s.id), "status_id": str(s.status_id)} for s in f.statuses]
    return out


def keyword_entity(k: Keyword) -> dict:
    return {"id": str(k.id), "keyword": k.keyword, "whole_word": k.whole_word}


def searchable_text(s: Status) -> str:
    """What keywords are matched against (Mastodon's Status#searchable_text)."""
    extra = s.extra
    parts = [extra.get("spoiler_text") or "", s.text or ""]
    poll = extra.get("poll")
    if poll:
        parts += _poll_options(poll)
    media = extra.get("media")
    if media:
        try:
            parts += [
                item.get("desc") or "" for item in json.loads(media) if isinstance(item, dict)
            ]
        except (ValueError, TypeError):
            pass
    return "\n\n".join(p for p in parts if p)


def _poll_options(poll) -> list[str]:
    try:
        data = json.loads(poll) if isinstance(poll, (str, bytes)) else poll
    except ValueError:
        return []
    options = data.get("options") if isinstance(data, dict) else data
    if not isinstance(options, list):
        return []
    return [
        o if isinstance(o, str) else str(o.get("title", "")) if isinstance(o, dict) else ""
        for o in options
    ]


@dataclass(frozen=True)
class Rule:
    filter: Filter
    regex: re.Pattern | None
    status_ids: frozenset[int]
    #: the FilterResult's ``filter``, rendered once
    entity: bytes


@dataclass(frozen=True)
class Result:
    """What one status meets: (rule, keyword matches, status matches) each,
    and whether it is left out."""

    matches: tuple
    hidden: bool

    def json(self) -> bytes:
        """The ``filtered`` array (FilterResult entities)."""
        return (
            b"["
            + b",".join(
                b'{"filter":%s,"keyword_matches":%s,"status_matches":%s}'
                % (
                    rule.entity,
                    json.dumps(words, ensure_ascii=False).encode() if words else b"null",
                    json.dumps([str(i) for i in ids]).encode() if ids else b"null",
                )
                for rule, words, ids in self.matches
            )
            + b"]"
        )


class Active:
    """A viewer's filters, compiled."""

    def __init__(self, filters: list[Filter]):
        self.rules = tuple(
            Rule(
                f,
                re.compile("|".join(keyword_pattern(k) for k in f.keywords), re.IGNORECASE)
                if f.keywords
                else None,
                frozenset(s.status_id for s in f.statuses),
                json.dumps(entity(f), ensure_ascii=False, separators=(",", ":")).encode(),
            )
            for f in filters
        )
        words = [keyword_pattern(k) for f in filters for k in f.keywords]
        self.any_word = re.compile("|".join(words), re.IGNORECASE) if words else None
        self.status_ids = frozenset().union(*(r.status_ids for r in self.rules))

    def __bool__(self) -> bool:
        return bool(self.rules)

    def apply(
        self,
        status: Status,
        original: Status | None = None,
        *,
        context: str | None = None,
        viewer: int | None = None,
        now: int | None = None,
    ) -> Result | None:
        """What ``status`` (a boost: with ``original``, the status it
        boosts) meets in ``context``; None when nothing."""
        if not self.rules:
            return None
        proper = original if original is not None else status
        ids = {status.id, proper.id}
        text = None
        if self.any_word is not None:
            text = searchable_text(proper)
            if self.any_word.search(text) is None:
                text = None
        if text is None and not (ids & self.status_ids):
            return None
        now = now or now_ms()
        matches = []
        for rule in self.rules:
            f = rule.filter
            if (context is not None and context not in f.context) or f.expired(now):
                continue
            hit = rule.regex.search(text) if text is not None and rule.regex is not None else None
            found = sorted(ids & rule.status_ids)
            if hit is not None or found:
                matches.append((rule, [hit.group()] if hit is not None else [], found))
        if not matches:
            return None
        hidden = (
            context is not None
            and proper.user_id != viewer
            and any(rule.filter.action == "hide" for rule, _, _ in matches)
        )
        return Result(tuple(matches), hidden)


NONE = Active([])
#: user id -> (version, Active): compiled filters, used at their version only
_kept: Bounded[tuple[str, Active]] = Bounded(limits.FILTERS_KEPT)


def version_command(uid: int) -> tuple:
    """The read of ``uid``'s filters' version, for a caller's batch."""
    return ("HGET", keys.filters(uid), "v")


async def active_at(store: Store, uid: int, version) -> Active:
    """``uid``'s filters, compiled, at ``version`` (as a batch read it:
    :func:`version_command`): the kept ones when their version is that,
    else read whole (one HGETALL) and kept."""
    if version is None:
        return NONE
    version = version.decode() if isinstance(version, bytes) else str(version)
    kept = _kept.get(uid)
    if kept is not None and kept[0] == version:
        return kept[1]
    found, now_version = await read_all(store, uid)
    active = Active([found[fid][0] for fid in sorted(found)]) if found else NONE
    if now_version is not None:
        _kept.put(uid, (now_version, active))
    return active


async def active(store: Store, uid: int | None) -> Active:
    """``uid``'s filters, compiled (one HGET when kept)."""
    if uid is None:
        return NONE
    return await active_at(store, uid, await store.hget(*version_command(uid)[1:]))
