"""What the engine returns: plain frozen records built from Redis hashes."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

EXTRA_PREFIX = "x:"

#: A status's visibility (who may see it: redpoll.relations.visibility decides).
PUBLIC, UNLISTED, PRIVATE, DIRECT = "public", "unlisted", "private", "direct"
#: in Mastodon's order, most open first
VISIBILITIES = (PUBLIC, UNLISTED, PRIVATE, DIRECT)
#: Who may quote a status (Mastodon 4.5's quote approval policies;
#: redpoll.quotes decides with them)
QUOTE_POLICIES = ("public", "followers", "nobody")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def now_us() -> int:
    return time.time_ns() // 1_000


def _text(raw: Mapping) -> dict[str, str]:
    """A hash as read from Redis (bytes) or built in Python (str), as str -> str;
    decoded in one pass: this runs for every status and author of a page."""
    if raw and isinstance(next(iter(raw)), bytes):  # as read from Redis: all bytes
        return {k.decode(): v.decode() for k, v in raw.items()}
    return {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in raw.items()}


@dataclass(frozen=True, slots=True)
class User:
    id: int
    login: str
    display_name: str
    bio: str
    created_at: int  # ms since the epoch
    followers: int
    following: int
    posts: int
    bot: bool = False
    discoverable: bool = True
    #: its public statuses may be found by anyone's full-text search
    #: (Mastodon's ``indexable``; a record without it: False, as Mastodon's
    #: column; sign-up sets it: redpoll.accounts.account)
    indexable: bool = False
    #: profile fields: (name, value) pairs
    fields: tuple[tuple[str, str], ...] = ()
    #: the visibility of a post that names none (Mastodon's source.privacy)
    privacy: str = "public"
    #: who may quote a post that names no quote_approval_policy (Mastodon
    #: 4.5's source.quote_policy: public, followers, nobody)
    quote_policy: str = "public"
    #: domains of websites allowed to credit the account (Mastodon 4.4's
    #: source.attribution_domains)
    attribution_domains: tuple[str, ...] = ()
    #: suspended by a moderator (redpoll.moderation.moderation): hidden everywhere
    suspended: bool = False
    #: the staff role held: "", "moderator", "admin", "owner" or a defined
    #: role's id (redpoll.admin.roles)
    role: str = ""
    #: a highlighted defined role as the account entity's ``roles`` shows it
    #: (JSON id, name, color; "" for none): display only (redpoll.admin.roles.badge)
    badge: str = ""
    #: set by a moderator (redpoll.admin.accounts): limited, its media marked
    #: sensitive, its sign-in disabled
    silenced: bool = False
    sensitized: bool = False
    disabled: bool = False
    #: follows need the account's approval (redpoll.relations.follow_requests)
    locked: bool = False
    #: URLs of the avatar and header and of their stills ("": the default
    #: images; redpoll.media.profile_images)
    avatar: str = ""
    avatar_static: str = ""
    header: str = ""
    header_static: str = ""
    #: an account of another server (redpoll.federation): its actor's id and
    #: its profile page there ("" for a local account)
    uri: str = ""
    url: str = ""
    #: the account it moved to (a Move of a remote account,
    #: redpoll.federation.moves), 0 if none; and that account's record as
    #: the read that brought this one found it (records.users fills it in,
    #: never deeper: its own ``moved`` stays None)
    moved_to: int = 0
    moved: User | None = None
    #: signed up while registrations needed approval and not approved yet
    #: (redpoll.accounts.auth, redpoll.moderation.admin_accounts): it
    #: cannot sign in; and the account whose invite it signed up with (0: none)
    pending: bool = False
    invited_by: int = 0
    #: a remote account's custom emoji (shortcodes, space-separated) its
    #: name and bio use (redpoll.federation.emoji)
    emojis: str = ""

    @property
    def remote(self) -> bool:
        return bool(self.uri)

    @classmethod
    def from_hash(cls, raw: Mapping) -> User:
        h = _text(raw)
        fields = h.get("fields")
        return cls(
            id=int(h["id"]),
            login=h.get("login", ""),
            display_name=h.get("name", ""),
            bio=h.get("bio", ""),
            created_at=int(h.get("at", 0)),
            followers=int(h.get("followers", 0)),
            following=int(h.get("following", 0)),
            posts=int(h.get("posts", 0)),
            bot=h.get("bot") == "1",
            discoverable=h.get("disc", "1") == "1",
            indexable=h.get("idx") == "1",
            fields=tuple((n, v) for n, v in json.loads(fields)) if fields else (),
            privacy=h.get("privacy", "public"),
            quote_policy=h.get("qpol") or "public",
            attribution_domains=tuple(json.loads(h["attr"])) if h.get("attr") else (),
            suspended=h.get("susp") == "1",
            role=h.get("role", ""),
            badge=h.get("rb", ""),
            silenced=h.get("sil") == "1",
            sensitized=h.get("sens") == "1",
            disabled=h.get("dis") == "1",
            locked=h.get("locked") == "1",
            avatar=h.get("avatar", ""),
            avatar_static=h.get("avatar_s", ""),
            header=h.get("header", ""),
            header_static=h.get("header_s", ""),
            uri=h.get("uri", ""),
            url=h.get("url", ""),
            moved_to=int(h.get("moved") or 0),
            pending=h.get("pend") == "1",
            invited_by=int(h.get("invby") or 0),
            emojis=h.get("emo", ""),
        )

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "login": self.login,
            "display_name": self.display_name,
            "bio": self.bio,
            "created_at": self.created_at,
            "followers": self.followers,
            "following": self.following,
            "posts": self.posts,
            "bot": self.bot,
            "discoverable": self.discoverable,
            "indexable": self.indexable,
            "fields": [list(f) for f in self.fields],
            "privacy": self.privacy,
            "quote_policy": self.quote_policy,
            "attribution_domains": list(self.attribution_domains),
            "suspended": self.suspended,
            "role": self.role,
            "badge": self.badge,
            "silenced": self.silenced,
            "sensitized": self.sensitized,
            "disabled": self.disabled,
            "locked": self.locked,
            "avatar": self.avatar,
            "avatar_static": self.avatar_static,
            "header": self.header,
            "header_static": self.header_static,
            "uri": self.uri,
            "url": self.url,
        }


@dataclass(frozen=True, slots=True)
class Status:
    id: int
    text: str
    created_at: int  # ms since the epoch
    user_id: int
    login: str
    extra: dict = field(default_factory=dict)
    #: a remote status's HTML, sanitized when it came (redpoll.federation.text):
    #: what it is shown with; "" for a local one, shown from its text
    html: str = ""

    @classmethod
    def from_hash(cls, raw: Mapping) -> Status | None:
        """None for a missing or deleted status: readers skip those."""
        if not raw:
            return None
        h = _text(raw)
        if "deleted" in h:
            return None
        extra = {k[len(EXTRA_PREFIX) :]: v for k, v in h.items() if k.startswith(EXTRA_PREFIX)}
        return cls(
            id=int(h["id"]),
            text=h.get("text", ""),
            created_at=int(h["at"]),
            user_id=int(h["uid"]),
            login=h.get("login", ""),
            extra=extra,
            html=h.get("html", ""),
        )

    @property
    def listed(self) -> bool:
        """Shown in public places (public timeline, public and filter streams):
        not so for an ``unlisted`` status, which only its author's followers,
        profile and direct links show."""
        return self.extra.get("visibility", "public") == "public"

    @property
    def reblog_of(self) -> int | None:
        """The status a boost boosts; None for an original."""
        value = self.extra.get("reblog_of")
        return int(value) if value else None

    @property
    def replies_to_other(self) -> int | None:
        """The account this status replies to, when it is not its author's
        own (a post or a reply to oneself: None)."""
        other = self.extra.get("in_reply_to_account_id") if "in_reply_to_id" in self.extra else None
        return int(other) if other and int(other) != self.user_id else None

    def to_hash(self) -> dict[str, str]:
        """The hash of a new status; 'v' is its version (redpoll.core.memo: every
        later change to the record writes a new one)."""
        data = {
            "id": str(self.id),
            "text": self.text,
            "at": str(self.created_at),
            "uid": str(self.user_id),
            "login": self.login,
            "v": "1",
        }
        if self.html:
            data["html"] = self.html
        data.update({EXTRA_PREFIX + k: v for k, v in self.extra.items()})
        return data

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "text": self.text,
            "created_at": self.created_at,
            "user_id": self.user_id,
            "login": self.login,
            **self.extra,
            **({"html": self.html} if self.html else {}),
        }

    @classmethod
    def from_dict(cls, raw: Mapping) -> Status:
        """The status of :meth:`to_dict` (an event's), without what an event
        adds to it (``reblog``, ``deleted``)."""
        core = ("id", "text", "created_at", "user_id", "login", "reblog", "deleted", "html")
        return cls(
            id=int(raw["id"]),
            text=str(raw.get("text", "")),
            created_at=int(raw.get("created_at", 0)),
            user_id=int(raw["user_id"]),
            login=str(raw.get("login", "")),
            extra={k: v for k, v in raw.items() if k not in core},
            html=str(raw.get("html", "")),
        )


class Page(list):
    """One timeline page: its statuses, newest first (it is that list), and
    ``authors``, the records of some or all of their authors by id when the
    read brought them along (on a single server it brings all of them, read
    in the same call as the page). Callers read the missing ones themselves.
    ``counts``: the raw counts (interactions.state_check's ``counts``) of
    some of its statuses by id, when the read brought them along (a single
    server's page script does).
    """

    __slots__ = ("authors", "counts")

    def __init__(
        self,
        statuses=(),
        authors: dict[int, User] | None = None,
        counts: dict[int, list] | None = None,
    ):
        super().__init__(statuses)
        self.authors: dict[int, User] = authors if authors is not None else {}
        self.counts: dict[int, list] = counts if counts is not None else {}


@dataclass
class HomeRead:
    """What a home page reads before its catch-up (redpoll.timelines.hybrid.read_home):
    the large accounts the user follows, the boosters whose boosts the user
    hides, the handle on the home's own page (Timelines.page_of), and
    ``stale``: each of those accounts that posted since the home last
    caught up with it, with its profile sequence as read and the home's
    mark for it (None: no mark yet); or ``rest``, where a single server's
    first round trip caught up as far as no rule was needed: what is left
    for the home rule (the news that need it; the ids put in of which the
    home holds a boost)."""

    large: list[int]
    hidden: set[int]
    handle: object
    stale: list[tuple[int, bytes, bytes | None]] = field(default_factory=list)
    rest: object = None
