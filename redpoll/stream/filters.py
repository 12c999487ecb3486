"""Stream filters (Twitter v1.1's sample and filter, combined as it did) and the
events they judge.

Pure code, no I/O: :func:`parse_filter` turns request parameters into a
:class:`Filter` (raising :class:`ParamError` with the HTTP status Twitter used:
406 malformed, 413 too many), and :meth:`Filter.matches` decides one
:class:`Event`. The hub uses an index built from the same fields
(``index.py``); this module is the reference it is tested against.

Kinds, ORed when several are given:

* ``track``: comma = OR of phrases, space = AND of words, case-insensitive;
  punctuation around a status's words is ignored, a term's own punctuation is
  kept ("hello." does not match "hello"); ``#tag`` and ``@name`` in a status
  count as the word ``tag`` / ``name``; a URL counts as its words.
* ``follow``: all-digit entries are user ids (statuses posted by that user, as
  Twitter); other entries are logins (posted by, or mentioning ``@login``).
* ``locations`` (or ``location``, singular, taken too): boxes of
  ``min_lon,min_lat,max_lon,max_lat``; a status whose ``location``
  ("lat,lon") lies inside any box.
* sample ``percent``: ``id mod 100`` in a set of N residues chosen by a RNG
  seeded with the client identifier; 100 is the firehose.
* (Mastodon) ``tags``: statuses carrying ``#tag``; ``authors``: statuses
  posted by one of a set of user ids (home and list streams).

And what narrows the Mastodon public and hashtag streams (ANDed): ``origin``
(this server's statuses or other servers') and ``only_media``, decided by
the rules of the REST public timeline (redpoll.reading.pages).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from typing import Any

from ..bus import events
from ..core import limits
from ..core.models import Status
from ..gateway.errors import WebError
from ..reading import pages
from ..relations import domain_blocks, visibility

_PUNCT = (
    "".join(chr(c) for c in range(0x21, 0x7F) if not chr(c).isalnum() and chr(c) != "_")
    + "\u2018\u2019\u201c\u201d\u2026\u00ab\u00bb\u00bf\u00a1"
)
_NAME = re.compile(r"\w+")
_URL_WORD = re.compile(r"[^\W_]+|_+")
_LOGIN_OK = re.compile(r"[A-Za-z0-9_]+")


class ParamError(WebError):
    """A bad stream request: ``status`` is the HTTP answer (406, 413, 416)."""

    def __init__(self, status: int, param: str, message: str):
        super().__init__(status, f"Parameter {param} {message}")
        self.param = param


# --- the status side ------------------------------------------------------------------
def words(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(track tokens, mentioned logins, hashtags) of a status text, lowercased."""
    tokens: set[str] = set()
    mentions: set[str] = set()
    tags: set[str] = set()
    for raw in text.lower().split():
        word = raw.strip(_PUNCT)
        if not word:
            continue
        lead = raw.lstrip(_PUNCT)
        sigil = raw[len(raw) - len(lead) - 1] if len(lead) < len(raw) else ""
        if sigil in ("@", "#"):
            name = _NAME.match(lead)
            if name:
                tokens.add(name.group())
                (mentions if sigil == "@" else tags).add(name.group())
            continue
        tokens.add(word)
        if "://" in word or word.startswith("www."):
            url = word.split("://", 1)[-1]
            if url.startswith("www."):
                url = url[4:]
            tokens.add(url)
            tokens.update(_URL_WORD.findall(url))
    return frozenset(tokens), frozenset(mentions), frozenset(tags)


def parse_point(location: str | None) -> tuple[float, float] | None:
    """``"lat,lon"`` -> (lon, lat), or None when absent or unreadable."""
    if not location:
        return None
    try:
        lat, lon = (float(p) for p in location.split(","))
    except ValueError:
        return None
    if not (math.isfinite(lat) and math.isfinite(lon)):
        return None
    return lon, lat


class Event:
    """One entry of the event log, decoded once and shared by every client."""

    __slots__ = (
        "id",
        "kind",
        "status",
        "sid",
        "uid",
        "login",
        "text",
        "boosted_text",
        "_words",
        "_tokens",
        "point",
        "rendered",
        "listed",
        "owner",
        "notification",
        "visibility",
        "mentioned",
        "boosted_uid",
        "boosted_login",
        "boost",
        "_statuses",
    )

    def __init__(self, entry_id: str, kind: str, status: dict):
        self.id = entry_id
        self.kind = kind  # "update" or "delete"
        self.status = status
        self.sid = int(status["id"])
        self.uid = int(status["user_id"])
        self.login = str(status.get("login", "")).lower()
        self.text = str(status.get("text", ""))
        #: a boost's own text is empty: ``track`` matches it by the text of
        #: the status it boosts, as Twitter matched a retweet by its
        #: retweeted_status (hashtag streams and mentions stay the boost's own)
        reblog = status.get("reblog")
        self.boosted_text = str(reblog.get("text", "")) if isinstance(reblog, dict) else ""
        self.boosted_uid = int(reblog.get("user_id", 0)) if isinstance(reblog, dict) else 0
        self.boosted_login = (
            str(reblog.get("login", "")).lower() if isinstance(reblog, dict) else ""
        )
        #: a boost (its deletion carries ``reblog_of`` only): never on
        #: Mastodon's public and hashtag streams (Filter.boosts)
        self.boost = isinstance(reblog, dict) or "reblog_of" in status
        self._words = None
        self._tokens = None
        self.point = parse_point(status.get("location"))
        #: who may see it (redpoll.relations.visibility): a status that is not public
        #: reaches only the Mastodon user/list streams of those who may see
        #: it, never the public places nor the v1.1 streams
        self.visibility = str(status.get("visibility", visibility.PUBLIC))
        #: a boost is listed only with its original (a boost of an unlisted
        #: status is public itself, the status it carries is not)
        self.listed = visibility.listed(self.visibility) and not (
            isinstance(reblog, dict)
            and not visibility.listed(str(reblog.get("visibility", visibility.PUBLIC)))
        )
        self.mentioned = visibility.mentioned_ids(str(status.get("mentions", "")))
        #: format name -> bytes, filled by the renderers (one rendering per event)
        self.rendered: dict = {}
        #: a ``notification`` event: the one user it is for, and its record
        self.owner: int | None = None
        self.notification: dict | None = None
        self._statuses = None

    @classmethod
    def from_json(cls, entry_id: str, payload: str | bytes) -> Event:
        """ValueError if the payload is not a status event (its schema is
        redpoll.bus.events.StatusEvent's) nor a notification event."""
        event = events.parse(payload)
        if isinstance(event, events.NotificationEvent):
            return cls.for_notification(entry_id, event)
        if isinstance(event, events.EndEvent):
            raise ValueError("an end event is not a status event")
        return cls(entry_id, event.kind, event.status)

    @classmethod
    def for_notification(cls, entry_id: str, event) -> Event:
        """A notification event (redpoll.bus.events.NotificationEvent): matched
        only by its owner's user streams (Filter.owner)."""
        note = event.notification
        ev = cls(entry_id, "notification", {"id": note["id"], "user_id": note["actor"]})
        ev.owner, ev.notification, ev.listed = event.owner, note, False
        return ev

    @property
    def deleted(self) -> bool:
        return self.kind == "delete"

    def statuses(self) -> tuple[Status, Status | None]:
        """The status as a record, and the one it boosts (or None)."""
        if self._statuses is None:
            reblog = self.status.get("reblog")
            self._statuses = (
                status_of(self.status),
                status_of(reblog) if isinstance(reblog, dict) else None,
            )
        return self._statuses

    def _split(self):
        if self._words is None:
            self._words = words(self.text)
        return self._words

    @property
    def tokens(self) -> frozenset[str]:
        """What ``track`` phrases match: the text's words, hashtags and
        mentions, and for a boost its original's."""
        if self._tokens is None:
            own = self._split()[0]
            self._tokens = own | words(self.boosted_text)[0] if self.boosted_text else own
        return self._tokens

    @property
    def mentions(self) -> frozenset[str]:
        return self._split()[1]

    @property
    def tags(self) -> frozenset[str]:
        return self._split()[2]


def status_of(raw: dict) -> Status:
    """A status of the event log (redpoll.bus.events.StatusEvent) as a record."""
    return Status.from_dict(raw)


# --- the client side ------------------------------------------------------------------
def residues(identifier: str, percent: int) -> frozenset[int]:
    """The ``percent`` residues of ``id mod 100`` a client samples: the same ones for the same
    identifier, so that a reconnecting client sees the same sample (and its
    deletions)."""
    order = list(range(100))
    random.Random(identifier).shuffle(order)
    return frozenset(order[:percent])


#: One empty set for every filter's empty fields: CPython makes each
#: ``frozenset()`` a new 216-byte object the GC walks, and a v1.1 filter had
#: six of them (memory per connection, and full collections'
#: length at 10,000 streams).
EMPTY: frozenset = frozenset()
#: origin -> the REST public timeline's rule for it (local / remote)
_ORIGIN = {origin: pages.of_origin_rule(origin) for origin in ("local", "remote")}
#: every residue: the Mastodon public stream's sample, shared likewise
ALL_RESIDUES: frozenset[int] = frozenset(range(100))
_SET_FIELDS = ("user_ids", "logins", "tags", "authors", "followed", "hidden", "domains")


@dataclass(slots=True)  # one per stream: no instance dict (memory per connection)
class Filter:
    #: phrases, each a tuple of lowercased words (AND); the list is an OR
    phrases: tuple[tuple[str, ...], ...] = ()
    user_ids: frozenset[int] = frozenset()
    logins: frozenset[str] = frozenset()
    #: (min_lon, min_lat, max_lon, max_lat)
    boxes: tuple[tuple[float, float, float, float], ...] = ()
    #: sample: residues of id mod 100 kept (None: no sampling predicate)
    sample: frozenset[int] | None = None
    #: Mastodon: hashtags (lowercased, no '#') and author ids (home / list)
    tags: frozenset[str] = frozenset()
    authors: frozenset[int] = field(default_factory=frozenset)
    #: Mastodon user stream: the user whose notification events it gets
    owner: int | None = None
    #: the signed-in user whose stream it is (None: anonymous), whose blocks,
    #: mutes and follows change it (redpoll.bus.events.RelationEvent); on user
    #: and list streams also whom they follow (the private statuses they may
    #: see: redpoll.relations.visibility)
    viewer: int | None = None
    followed: frozenset[int] = field(default_factory=frozenset)
    #: accounts the stream's user blocks, is blocked by or mutes
    #: (redpoll.relations.relations.hidden_ids): none of their statuses or boosts,
    #: nor boosts of their statuses
    hidden: frozenset[int] = field(default_factory=frozenset)
    #: the domains the stream's user blocks (redpoll.relations.domain_blocks):
    #: none of their accounts' statuses or boosts, nor boosts of theirs
    domains: frozenset[str] = field(default_factory=frozenset)
    #: Mastodon direct stream: only direct statuses of ``viewer``'s conversations
    direct: bool = False
    #: False on Mastodon's public and hashtag streams: boosts never go out
    #: there (Event.boost)
    boosts: bool = True
    #: False on a user stream whose token may not read notifications
    #: (Mastodon: ``read`` or ``read:notifications``): no notification events
    notifications: bool = True
    #: Mastodon ``public:local``/``hashtag:local`` ("local") and
    #: ``public:remote`` ("remote"): only statuses of that origin; ``*:media``
    #: (only_media): only statuses with attachments. The REST public
    #: timeline's rules decide both (Filter.keeps)
    origin: str | None = None
    only_media: bool = False
    #: False on Mastodon's ``user:notification``: notification events only
    statuses: bool = True
    #: the context the viewer's content filters apply in on this stream
    #: (home, public; None: none) and those filters, compiled
    #: (redpoll.filters.rules.Active, read again when they change)
    context: str | None = None
    words: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name in _SET_FIELDS:
            if not getattr(self, name):
                setattr(self, name, EMPTY)
        if self.sample is not None and len(self.sample) == 100:
            self.sample = ALL_RESIDUES

    def hides(self, ev: Event) -> bool:
        if self.hidden and (ev.uid in self.hidden or ev.boosted_uid in self.hidden):
            return True
        return bool(self.domains) and (
            domain_blocks.blocked_in(self.domains, ev.login)
            or domain_blocks.blocked_in(self.domains, ev.boosted_login)
        )

    @property
    def narrowed(self) -> bool:
        """Whether :meth:`keeps` may leave out a status the other fields match."""
        return self.origin is not None or self.only_media or not self.statuses

    def keeps(self, ev: Event) -> bool:
        """A status event (posted, edited, deleted: a deletion carries the
        status, so it is decided as the post was) of this stream's origin,
        with media when only_media, and statuses at all."""
        if not self.statuses:
            return False
        status = ev.statuses()[0]
        if self.only_media and not pages.has_media(status):
            return False
        return self.origin is None or _ORIGIN[self.origin](status)

    @property
    def empty(self) -> bool:
        return not (
            self.phrases
            or self.user_ids
            or self.logins
            or self.boxes
            or self.sample
            or self.tags
            or self.authors
            or self.owner
            or self.direct
        )

    def track_matches(self, tokens: frozenset[str]) -> bool:
        return any(all(w in tokens for w in phrase) for phrase in self.phrases)

    def in_boxes(self, point: tuple[float, float] | None) -> bool:
        if point is None:
            return False
        lon, lat = point
        return any(a <= lon <= c and b <= lat <= d for a, b, c, d in self.boxes)

    def matches(self, ev: Event) -> bool:
        if ev.owner is not None:  # a notification: its owner's user streams only
            return ev.owner == self.owner and self.notifications
        if self.hides(ev) or (ev.boost and not self.boosts):
            return False
        if self.narrowed and not self.keeps(ev):
            return False
        if self.direct:
            return (
                ev.visibility == visibility.DIRECT
                and self.viewer is not None
                and (ev.uid == self.viewer or self.viewer in ev.mentioned)
            )
        if not ev.listed:  # the one decision, for the stream's own user only
            if self.viewer is None or not (
                ev.uid in self.authors or (self.owner is not None and self.owner in ev.mentioned)
            ):
                return False
            return visibility.can_see(
                self.viewer, ev.uid, ev.visibility, ev.mentioned, ev.uid in self.followed
            )
        if self.sample is not None and ev.sid % 100 in self.sample:
            return True
        if ev.uid in self.user_ids or ev.uid in self.authors:
            return True
        if self.logins and (ev.login in self.logins or not self.logins.isdisjoint(ev.mentions)):
            return True
        if self.boxes and self.in_boxes(ev.point):
            return True
        if self.tags and not self.tags.isdisjoint(ev.tags):
            return True
        if self.phrases and self.track_matches(ev.tokens):
            return True
        return False


# --- parsing request parameters --------------------------------------------------------
def _split_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",")]


def parse_track(value: str) -> tuple[tuple[str, ...], ...]:
    parts = _split_list(value)
    if len(parts) > limits.TRACK_MAX_PHRASES:
        raise ParamError(413, "track", f"has more than {limits.TRACK_MAX_PHRASES} phrases")
    phrases = []
    for part in parts:
        size = len(part.encode("utf-8"))
        if not 1 <= size <= limits.TRACK_PHRASE_MAX_BYTES:
            raise ParamError(
                406,
                "track",
                f"phrases must be 1 to {limits.TRACK_PHRASE_MAX_BYTES} bytes long (got {size})",
            )
        phrases.append(tuple(dict.fromkeys(part.lower().split())))
    return tuple(dict.fromkeys(phrases))


def parse_follow(value: str) -> tuple[frozenset[int], frozenset[str]]:
    parts = _split_list(value)
    if len(parts) > limits.FOLLOW_MAX:
        raise ParamError(413, "follow", f"has more than {limits.FOLLOW_MAX} entries")
    ids, logins = set(), set()
    for part in parts:
        name = part[1:] if part.startswith("@") else part
        if part.isascii() and part.isdigit():
            uid = int(part) if len(part) <= 16 else 0
            if not 0 < uid <= limits.MAX_ID:
                raise ParamError(406, "follow", f"has an unreadable user id {part[:20]!r}")
            ids.add(uid)
        elif name and len(name) <= limits.LOGIN_MAX_CHARS and _LOGIN_OK.fullmatch(name):
            logins.add(name.lower())
        else:
            raise ParamError(406, "follow", f"has an unreadable user id or login {part[:40]!r}")
    return frozenset(ids), frozenset(logins)


def parse_boxes(value: str, param: str) -> tuple[tuple[float, float, float, float], ...]:
    parts = _split_list(value)
    if len(parts) % 4:
        raise ParamError(
            406, param, "must be groups of four numbers min_lon,min_lat,max_lon,max_lat"
        )
    if len(parts) // 4 > limits.BOXES_MAX:
        raise ParamError(413, param, f"has more than {limits.BOXES_MAX} boxes")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        raise ParamError(406, param, "must contain only numbers") from None
    boxes = []
    for i in range(0, len(numbers), 4):
        a, b, c, d = numbers[i : i + 4]
        if not all(math.isfinite(x) for x in (a, b, c, d)):
            raise ParamError(406, param, "must contain only finite numbers")
        if not (-180 <= a <= c <= 180 and -90 <= b <= d <= 90):
            raise ParamError(
                406,
                param,
                f"box {i // 4 + 1} is not min_lon,min_lat,max_lon,max_lat "
                "within -180..180 / -90..90",
            )
        boxes.append((a, b, c, d))
    return tuple(boxes)


def parse_percent(value: str | None, default: int = 10) -> int:
    if value is None or value == "":
        return default
    try:
        percent = int(value)
    except ValueError:
        raise ParamError(406, "percent", "must be an integer from 1 to 100") from None
    if not 1 <= percent <= 100:
        raise ParamError(406, "percent", "must be an integer from 1 to 100")
    return percent


def parse_filter(params, identifier: str, *, sample: bool) -> Filter:
    """Build the filter of a v1.1 request. ``params`` maps names to strings.

    sample: the ``percent`` predicate (default 10). filter: track / follow /
    locations (or location); none of them -> 406 "no filter"."""
    if sample:
        return Filter(sample=residues(identifier, parse_percent(params.get("percent"))))
    phrases: tuple = ()
    ids: frozenset = frozenset()
    logins: frozenset = frozenset()
    boxes: tuple = ()
    given = False
    if params.get("track") is not None:
        given = True
        phrases = parse_track(params["track"])
    if params.get("follow") is not None:
        given = True
        ids, logins = parse_follow(params["follow"])
    for name in ("locations", "location"):
        if params.get(name) is not None:
            given = True
            boxes = boxes + parse_boxes(params[name], name)
    if len(boxes) > limits.BOXES_MAX:
        raise ParamError(413, "locations", f"has more than {limits.BOXES_MAX} boxes")
    if not given:
        raise ParamError(
            406,
            "track/follow/locations",
            "missing: a filter request needs at least one of track, follow, locations",
        )
    return Filter(phrases=phrases, user_ids=ids, logins=logins, boxes=boxes)


def parse_count(value: str | None) -> int:
    """v1.1 ``count`` backfill: -150000..150000 (416 outside or unreadable)."""
    if value is None or value == "":
        return 0
    try:
        count = int(value)
    except ValueError:
        raise ParamError(416, "count", "must be an integer") from None
    if not -limits.STREAM_COUNT_MAX <= count <= limits.STREAM_COUNT_MAX:
        raise ParamError(
            416,
            "count",
            f"must be between -{limits.STREAM_COUNT_MAX} and {limits.STREAM_COUNT_MAX}",
        )
    return count
