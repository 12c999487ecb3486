"""What a status says to full-text search, and what a query asks of it.

A status's *searchable text* is Mastodon's: its text, its content warning,
its poll's options and its attachments' descriptions. Its *terms* are the
distinct words of that text (``\\w+`` runs of the folded text: NFKC,
case-folded, as account search folds), each at most
``limits.FTS_TERM_MAX_CHARS`` long, at most ``limits.FTS_TERMS_PER_STATUS``
of them. Its *properties* are Mastodon's ``searchable_properties``: media,
image, video, audio, poll, link (redpoll keeps no preview cards: a link in
the text), sensitive, reply.

A query is Mastodon's search syntax: words (all must be there), quoted
phrases (the words one after another), ``-`` before a word, a phrase or an
operator to exclude, and the operators ``from:`` (``@login``, ``login``,
``me``), ``has:``/``is:`` (the properties), ``language:``, ``before:``,
``after:``, ``during:`` (a day, ``YYYY-MM-DD``, UTC), ``in:library`` /
``in:public`` (``in:all``, the default, is both). An unknown operator is a
word, as the text it is. :func:`parse` reads it; :meth:`Parsed.matches`
decides whether a status as it is now matches (every hit is checked with it
when it is shown: the index only proposes).
"""

from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass, field

from ..accounts.account_index import fold
from ..core import limits
from ..core.models import Status

_WORD = re.compile(r"\w+")
_LINK = re.compile(r"https?://\S", re.IGNORECASE)
#: a clause: an optional sign, then a quoted phrase or an operator or a word
_CLAUSE = re.compile(r'([+-]?)(?:"([^"]*)"?|([a-z]+):("[^"]*"?|\S+)|(\S+))', re.IGNORECASE)
_QUOTES = str.maketrans({c: '"' for c in "\u201c\u201d\u201e\u201f\u00ab\u00bb\u300c\u300d"})
PROPERTIES = ("media", "image", "video", "audio", "poll", "link", "embed", "sensitive", "reply")
OPERATORS = ("from", "has", "is", "language", "before", "after", "during", "in")
SCOPES = ("all", "library", "public")
DAY_MS = 86_400_000


def words(text: str) -> list[str]:
    """The words of ``text`` in order, folded."""
    return _WORD.findall(fold(text))


def searchable_text(status: Status) -> str:
    """The text search reads of a status (see the module)."""
    parts = [status.text, status.extra.get("spoiler_text", "")]
    poll = status.extra.get("poll")
    if poll:
        try:
            parts.extend(str(o) for o in json.loads(poll).get("options", []))
        except (ValueError, AttributeError):
            pass
    media = status.extra.get("media")
    if media:
        try:
            parts.extend(str(item.get("desc") or "") for item in json.loads(media))
        except (ValueError, AttributeError):
            pass
    return "\n".join(p for p in parts if p)


def terms(status: Status) -> list[str]:
    """The index terms of a status (see the module), in first-seen order."""
    found = dict.fromkeys(
        w for w in words(searchable_text(status)) if len(w) <= limits.FTS_TERM_MAX_CHARS
    )
    return list(found)[: limits.FTS_TERMS_PER_STATUS]


def properties(status: Status) -> set[str]:
    """Mastodon's searchable properties of a status (see the module)."""
    out: set[str] = set()
    media = status.extra.get("media")
    if media:
        try:
            kinds = {item.get("t") or "image" for item in json.loads(media)}
        except (ValueError, AttributeError):
            kinds = set()
        if kinds:
            out |= {"media"} | (kinds & {"image", "video", "audio"})
    if status.extra.get("poll"):
        out.add("poll")
    if _LINK.search(status.text):
        out.add("link")
    if status.extra.get("sensitive") == "true" or status.extra.get("spoiler_text"):
        out.add("sensitive")
    if status.extra.get("in_reply_to_id"):
        out.add("reply")
    return out


@dataclass(frozen=True)
class Filter:
    """One operator clause: ``name`` (an operator), its value, ``negated``."""

    name: str
    value: str
    negated: bool = False


@dataclass
class Parsed:
    """A query read: ``must`` words (each a term), ``must_not`` words,
    ``phrases`` (lists of words), ``not_phrases``, operator ``filters``,
    the ``scope`` (in:), and the authors ``from:`` names (``from_logins``,
    resolved to ids by the reader: ``from_ids``)."""

    must: list[str] = field(default_factory=list)
    must_not: list[str] = field(default_factory=list)
    phrases: list[list[str]] = field(default_factory=list)
    not_phrases: list[list[str]] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    scope: str = "all"
    from_ids: dict[str, int | None] = field(default_factory=dict)

    @property
    def required(self) -> list[str]:
        """Every term a match must hold (the words, the phrases' words), the
        index's candidates come from these."""
        return list(dict.fromkeys([*self.must, *(w for p in self.phrases for w in p)]))

    def authors(self) -> tuple[set[int | None], set[int | None]]:
        """The author ids ``from:`` asks for and those ``-from:`` excludes
        (None: an account that does not exist)."""
        wanted = {
            self.from_ids.get(f.value) for f in self.filters if f.name == "from" and not f.negated
        }
        banned = {
            self.from_ids.get(f.value) for f in self.filters if f.name == "from" and f.negated
        }
        return wanted, banned

    def matches(self, status: Status) -> bool:
        """Whether ``status`` as it is now is what the query asks for (all
        but the scope, which the reader decides)."""
        said = words(searchable_text(status))
        have = set(said)
        if any(w not in have for w in self.must) or any(w in have for w in self.must_not):
            return False
        if any(not _holds(said, p) for p in self.phrases):
            return False
        if any(_holds(said, p) for p in self.not_phrases):
            return False
        props: set[str] | None = None
        for f in self.filters:
            if f.name == "from":
                ok = self.from_ids.get(f.value) == status.user_id
            elif f.name in ("has", "is"):
                props = properties(status) if props is None else props
                ok = f.value in props
            elif f.name == "language":
                ok = (status.extra.get("language") or "").lower().split("-")[0] == f.value
            elif f.name in ("before", "after", "during"):
                ok = _in_time(f, status.created_at)
            else:
                continue
            if ok == f.negated:
                return False
        return True


def _holds(said: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return n == 0 or any(said[i : i + n] == phrase for i in range(len(said) - n + 1))


def _day(value: str) -> int | None:
    """The first ms of a day (UTC) named ``YYYY-MM-DD`` (or an ISO time's day)."""
    try:
        day = datetime.date.fromisoformat(value.strip('"')[:10])
    except ValueError:
        return None
    return (
        int(datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC).timestamp()) * 1000
    )


def _in_time(f: Filter, at: int) -> bool:
    start = _day(f.value)
    if start is None:
        return True  # (refused by parse: never here)
    if f.name == "before":
        return at < start
    if f.name == "after":
        return at >= start + DAY_MS
    return start <= at < start + DAY_MS


def time_bounds(parsed: Parsed) -> tuple[int | None, int | None]:
    """The ms range (low inclusive, high exclusive) the time operators leave."""
    low: int | None = None
    high: int | None = None
    for f in parsed.filters:
        if f.negated or f.name not in ("before", "after", "during"):
            continue
        start = _day(f.value)
        if start is None:
            continue
        if f.name in ("before", "during"):
            end = start if f.name == "before" else start + DAY_MS
            high = end if high is None else min(high, end)
        if f.name in ("after", "during"):
            begin = start + DAY_MS if f.name == "after" else start
            low = begin if low is None else max(low, begin)
    return low, high


class QueryError(ValueError):
    """A query that cannot be asked (a bad date, an unknown property, too many
    terms): the search finds nothing, as Mastodon's answers a parse error."""


def parse(q: str) -> Parsed:
    """``q`` read (see the module); QueryError for what cannot be asked."""
    out = Parsed()
    for m in _CLAUSE.finditer(q.translate(_QUOTES)):
        sign, phrase, op, value, word = m.groups()
        negated = sign == "-"
        if phrase is not None:
            ws = words(phrase)
            if ws:
                (out.not_phrases if negated else out.phrases).append(ws)
            continue
        if op is not None and op.lower() in OPERATORS:
            _operator(out, op.lower(), value.strip('"'), negated)
            continue
        for w in words(m.group(0).lstrip("+-") if word is None else word):
            (out.must_not if negated else out.must).append(w)
    if len(out.required) + len(out.must_not) > limits.FTS_QUERY_TERMS_MAX:
        raise QueryError(f"at most {limits.FTS_QUERY_TERMS_MAX} words")
    if any(len(w) > limits.FTS_TERM_MAX_CHARS for w in out.required):
        raise QueryError("a word too long to be indexed")
    return out


def _operator(out: Parsed, op: str, value: str, negated: bool) -> None:
    value = fold(value)
    if op == "in":
        if value not in SCOPES:
            raise QueryError("in: takes all, library or public")
        out.scope = value
        return
    if op in ("has", "is") and value not in PROPERTIES:
        raise QueryError(f"{op}: takes one of " + ", ".join(PROPERTIES))
    if op in ("before", "after", "during") and _day(value) is None:
        raise QueryError(f"{op}: takes a day, YYYY-MM-DD")
    if op == "from":
        value = value.lstrip("@")
        out.from_ids.setdefault(value, None)
    if op == "language":
        value = value.split("-")[0].split("_")[0]
    out.filters.append(Filter(op, value, negated))
