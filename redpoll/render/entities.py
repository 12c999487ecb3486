"""Engine records rendered as Mastodon entities (docs: "API > Entities").

Ids are strings, times ISO 8601 in UTC, text HTML-escaped into paragraphs
(a status's URLs, mentions and hashtags as Mastodon's links).
Features redpoll does not have are rendered as Mastodon renders their
absence (empty lists, null, false, zero).
"""

from __future__ import annotations

import functools
import html
import re
import time
from urllib.parse import quote, urlsplit

import orjson

from ..admin import roles
from ..cards import cards
from ..collections.collections import Collection
from ..collections.collections import Item as CollectionItem
from ..conversations import conversation
from ..conversations.conversation import Conversation
from ..core import limits, uris
from ..core.markup import html_text
from ..core.models import Status, User
from ..core.version import __version__
from ..lists.lists import UserList
from ..media import entity as media_entity
from ..notifications.notifications import Notification
from ..polls.polls import Poll
from ..records.state import NONE, PollState, StatusState

#: The Mastodon release whose API Redpoll answers, and its ``api_versions``
#: number (/api/v2/instance): the highest Mastodon API version all of whose
#: additions are answered here (Mastodon's lib/mastodon/version.rb; what each
#: added, from Mastodon's docs, their version histories, and its pull requests):
#:   2 (4.3): grouped notifications (/api/v2/notifications), notification
#:      policy v2 and requests, the first numbered version;
#:   3 (4.4): source[attribution_domains] and update_credentials'
#:      attribution_domains[];
#:   4 (4.4): DELETE /api/v1/statuses/:id's delete_media, DELETE /api/v1/media/:id;
#:   5 (4.4): the filter action ``blur``;
#:   6 (4.4): featured accounts: POST /api/v1/accounts/:id/endorse, unendorse,
#:      GET /api/v1/accounts/:id/endorsements (Mastodon PR 34421; clients use
#:      pin/unpin below 6);
#:   7 (4.5): quote posts: quoted_status_id and quote_approval_policy (posting
#:      and editing), Status quote/quotes_count/quote_approval,
#:      /api/v1/statuses/:id/quotes, revoking, interaction_policy,
#:      source[quote_policy] and posting:default:quote_policy, the ``quote``
#:      and ``quoted_update`` notifications and push alerts.
#: Not 8: Mastodon 4.6's 8 adds GET/PATCH /api/v1/profile (the Profile
#: entity), missing here, with annual reports; 9 the avatar and header
#: descriptions; 10 collections, supported_types and the collection
#: notifications.
MASTODON_API_VERSION = 7
MASTODON_VERSION = "4.5.0"
VERSION = f"{MASTODON_VERSION} (compatible; Redpoll {__version__})"


def iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def day(ms: int) -> str:
    return time.strftime("%Y-%m-%dT00:00:00.000Z", time.gmtime(ms // 1000))


_URL = re.compile(r"https?://[^\s<>\"'`\\]+", re.IGNORECASE)
_URL_PREFIX = re.compile(r"(https?://(www\.)?)", re.IGNORECASE)
#: characters a URL does not end with (a sentence goes on after it)
_URL_TRAILING = ".,:;!?"
#: shown of a URL after its scheme (and www.), as Mastodon shows it
URL_SHOWN_CHARS = 30
_REL = "nofollow noopener noreferrer"


def _url_end(url: str) -> str:
    """A URL found in text without what ends the sentence around it: trailing
    punctuation, and a closing parenthesis that opens nowhere in it."""
    while url:
        if url[-1] in _URL_TRAILING:
            url = url[:-1]
        elif url[-1] == ")" and url.count("(") < url.count(")"):
            url = url[:-1]
        else:
            break
    return url


def _link_url(url: str) -> str:
    e = functools.partial(html.escape, quote=True)
    found = _URL_PREFIX.match(url)
    prefix = found.group(1) if found else ""
    rest = url[len(prefix) :]
    cutoff = "ellipsis" if len(rest) > URL_SHOWN_CHARS else ""
    return (
        f'<a href="{e(url)}" target="_blank" rel="{_REL}">'
        f'<span class="invisible">{e(prefix)}</span>'
        f'<span class="{cutoff}">{e(rest[:URL_SHOWN_CHARS])}</span>'
        f'<span class="invisible">{e(rest[URL_SHOWN_CHARS:])}</span></a>'
    )


def status_html(text: str, mentions, base: str) -> str:
    """A status's text as Mastodon formats it (TextFormatter): URLs, the
    mentions of accounts it recorded (``mentions``: (id, login) pairs) and
    hashtags become links with Mastodon's markup; everything else is
    escaped; paragraphs and line breaks as :func:`html_text`."""
    text = text.replace("\r\n", "\n")
    e = functools.partial(html.escape, quote=True)
    found: list[tuple[int, int, str]] = []  # (start, end, html), not overlapping
    taken = []
    for m in _URL.finditer(text):
        url = _url_end(m.group())
        if _URL_PREFIX.fullmatch(url):
            continue  # a scheme alone
        found.append((m.start(), m.start() + len(url), _link_url(url)))
        taken.append((m.start(), m.start() + len(url)))

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    logins = {login.lower(): login for _, login in mentions}
    for m in conversation.MENTION.finditer(text):
        login = logins.get(m.group(1).lower())
        if login is not None and free(m.start(), m.end()):
            found.append(
                (
                    m.start(),
                    m.end(),
                    f'<span class="h-card"><a href="{e(base)}/@{e(login)}" '
                    f'class="u-url mention">@<span>{e(login)}</span></a></span>',
                )
            )
    for m in conversation.TAG.finditer(text):
        tag = m.group(1)
        if not tag.isdigit() and free(m.start(), m.end()):
            found.append(
                (
                    m.start(),
                    m.end(),
                    f'<a href="{e(base)}/tags/{e(quote(tag, safe=""))}" '
                    f'class="mention hashtag" rel="tag">#<span>{e(tag)}</span></a>',
                )
            )
    out, at = [], 0
    for start, end, piece in sorted(found):
        out += [e(text[at:start]), piece]
        at = end
    out.append(e(text[at:]))
    paragraphs = [p for p in "".join(out).split("\n\n") if p.strip()]
    return "".join("<p>" + p.replace("\n", "<br />") + "</p>" for p in paragraphs) or "<p></p>"


def account(user: User, base: str) -> dict:
    if user.suspended:
        return suspended_account(user, base)
    avatar = media_entity.full_url(user.avatar, base) or f"{base}/avatars/original/missing.png"
    header = media_entity.full_url(user.header, base) or f"{base}/headers/original/missing.png"
    return {
        "id": str(user.id),
        # a remote account's login is name@host: its username is the name
        "username": user.login.split("@", 1)[0],
        "acct": user.login,
        "display_name": user.display_name,
        "locked": user.locked,
        "bot": user.bot,
        "discoverable": user.discoverable,
        "indexable": user.indexable,
        "group": False,
        "created_at": day(user.created_at),
        "note": html_text(user.bio) if user.bio else "",
        "url": user.url or f"{base}/@{user.login}",
        "uri": user.uri or uris.actor(base, user.login),
        "avatar": avatar,
        "avatar_static": media_entity.full_url(user.avatar_static, base) or avatar,
        "header": header,
        "header_static": media_entity.full_url(user.header_static, base) or header,
        "followers_count": user.followers,
        "following_count": user.following,
        "statuses_count": user.posts,
        "last_status_at": None,
        "hide_collections": False,
        "noindex": False,
        "emojis": media_entity.emojis(urlsplit(user.uri).netloc, user.emojis, base)
        if user.uri
        else [],
        "roles": badges(user),
        # as Mastodon: a field's name is plain text, its value HTML
        "fields": [
            {"name": name, "value": html.escape(value), "verified_at": None}
            for name, value in user.fields
        ],
    } | ({"moved": account(user.moved, base)} if user.moved is not None else {})


def suspended_account(user: User, base: str) -> dict:
    """A suspended account as Mastodon shows it: who it is (ids, names,
    links), and nothing it wrote or gathered (no display name, bio or
    fields, the default images, zero counts)."""
    avatar = f"{base}/avatars/original/missing.png"
    header = f"{base}/headers/original/missing.png"
    return {
        "id": str(user.id),
        "username": user.login.split("@", 1)[0],
        "acct": user.login,
        "display_name": "",
        "locked": False,
        "bot": False,
        "discoverable": False,
        "indexable": False,
        "group": False,
        "created_at": day(user.created_at),
        "note": "",
        "url": user.url or f"{base}/@{user.login}",
        "uri": user.uri or uris.actor(base, user.login),
        "avatar": avatar,
        "avatar_static": avatar,
        "header": header,
        "header_static": header,
        "followers_count": 0,
        "following_count": 0,
        "statuses_count": 0,
        "last_status_at": None,
        "hide_collections": False,
        "noindex": True,
        "emojis": [],
        "roles": [],
        "fields": [],
        "suspended": True,
    }


def badges(user: User) -> list[dict]:
    """The account entity's ``roles``: the highlighted role it holds (a
    built-in one from its fixed definition, a defined one from the badge its
    record keeps, redpoll.admin.roles.badge)."""
    built_in = roles.BUILT_IN.get(user.role)
    if built_in is not None:
        return [role_badge(built_in)] if built_in.highlighted else []
    return [orjson.loads(user.badge)] if user.badge and user.role else []


def role_badge(role: roles.Role) -> dict:
    """A highlighted role as an Account's ``roles`` show it."""
    return {"id": str(role.id), "name": role.name, "color": role.color}


def role_definition(role: roles.Role) -> dict:
    """A role as ``/api/v1/redpoll/admin/roles`` shows it: Mastodon's Role
    entity with its own permissions (not the everyone role's added), their
    names, and its position."""
    return role_badge(role) | {
        "permissions": str(role.permissions),
        "permission_names": roles.names_of(role.permissions),
        "highlighted": role.highlighted,
        "position": role.position,
        "everyone": role.everyone,
        "built_in": role.built_in,
    }


def role_entity(role: roles.Role) -> dict:
    """Mastodon's Role entity (its computed permissions, as Mastodon's
    REST::RoleSerializer: a decimal string)."""
    return role_badge(role) | {
        "permissions": str(role.computed),
        "highlighted": role.highlighted,
    }


def credential_account(user: User, base: str, role: roles.Role, follow_requests: int = 0) -> dict:
    """The account with its ``source``: the plain text as the user wrote it,
    and the posting defaults (what a post without those parameters gets),
    and the role it holds (read by the caller: redpoll.admin.roles.of)."""
    return (
        account(user, base)
        | {
            "source": {
                "privacy": user.privacy,
                "quote_policy": user.quote_policy,
                "attribution_domains": list(user.attribution_domains),
                "sensitive": False,
                "language": None,
                "note": user.bio,
                "fields": [
                    {"name": name, "value": value, "verified_at": None}
                    for name, value in user.fields
                ],
                "follow_requests_count": follow_requests,
            }
        }
        | {"role": role_entity(role)}
    )


def placeholder_user(status: Status) -> User:
    """For a status whose author record cannot be read: what the status knows."""
    return User(
        id=status.user_id,
        login=status.login,
        display_name=status.login,
        bio="",
        created_at=status.created_at,
        followers=0,
        following=0,
        posts=0,
    )


#: Status entity fields that change after the status is written: rendered
#: per request from interactions.StatusState, never kept (render/rendered.py).
STATE_FIELDS = (
    "reblogs_count",
    "favourites_count",
    "replies_count",
    "quotes_count",
    "quote_approval",
)
VIEWER_FIELDS = ("favourited", "reblogged", "muted", "bookmarked", "pinned", "filtered")


def quote_approval(state: StatusState) -> dict:
    """Mastodon's QuoteApproval of a status (redpoll.quotes): who may quote
    it without approval, and whether the viewer may (none needs approval
    on one server: ``manual`` is empty)."""
    return {
        "automatic": [] if state.quote_policy == "nobody" else [state.quote_policy],
        "manual": [],
        "current_user": state.quote_approval,
    }


def quote_entity(state: StatusState, quoted: dict | None) -> dict | None:
    """Mastodon's Quote entity of a status's quote (None: it quotes
    nothing): its state as the viewer is shown it and the quoted status's
    entity, only when accepted and shown (``quoted``)."""
    if not state.quote_state:
        return None
    accepted = state.quote_state == "accepted"
    return {"state": state.quote_state, "quoted_status": quoted if accepted else None}


def shallow_quote(state: StatusState) -> dict | None:
    """Mastodon's ShallowQuote (a quoted status's own quote): the state and
    the id of what it quotes, only when accepted."""
    if not state.quote_state:
        return None
    accepted = state.quote_state == "accepted"
    return {
        "state": state.quote_state,
        "quoted_status_id": str(state.quoted) if accepted else None,
    }


def quote_json(entity: dict | None) -> bytes:
    """The ``quote`` field as the tail of a JSON object (``,"quote":...``),
    rendered per request (the quoted status's visibility is decided when
    shown), before ``state_json``."""
    return b',"quote":' + orjson.dumps(entity)


def status_state(state: StatusState, viewer: bool) -> dict:
    out = {
        "reblogs_count": state.reblogs,
        "favourites_count": state.favourites,
        "replies_count": state.replies,
        "quotes_count": state.quotes,
        "quote_approval": quote_approval(state),
    }
    if viewer:
        out |= {
            "favourited": state.favourited,
            "reblogged": state.reblogged,
            "muted": state.muted,
            "bookmarked": state.bookmarked,
            "pinned": state.pinned,
            "filtered": orjson.loads(state.filtered) if state.filtered else [],
        }
    return out


@functools.lru_cache(maxsize=limits.API_STATE_TAILS)
def state_json(state: StatusState, viewer: bool) -> bytes:
    """``status_state`` as the tail of a JSON object (``,"k":v...}``), for
    appending to a kept rendering cut before its closing brace. Kept by
    value: the same counts and flags always give the same bytes, and most
    statuses on a page share a few small combinations."""
    tail = (
        f',"reblogs_count":{state.reblogs},"favourites_count":{state.favourites},'
        f'"replies_count":{state.replies},"quotes_count":{state.quotes},'
        f'"quote_approval":{orjson.dumps(quote_approval(state)).decode()}'
    )
    if viewer:
        tail += (
            f',"favourited":{"true" if state.favourited else "false"},'
            f'"reblogged":{"true" if state.reblogged else "false"},'
            f'"muted":{"true" if state.muted else "false"},'
            f'"bookmarked":{"true" if state.bookmarked else "false"},'
            f'"pinned":{"true" if state.pinned else "false"}'
        )
        tail += ',"filtered":' + (state.filtered.decode() if state.filtered else "[]")
    return tail.encode() + b"}"


def poll(sid: int, p: Poll, votes: PollState | None, viewer: bool, now: int | None = None) -> dict:
    """Mastodon's Poll entity of the poll ``p`` of status ``sid`` with its
    ``votes`` (None: none read, zero); ``voted`` and ``own_votes`` only for
    a signed-in ``viewer`` (the author has voted, as Mastodon says, with no
    choices). With ``hide_totals`` each option's count is null until the
    poll ends, except to its author."""
    votes = votes or PollState()
    expired = p.expired(now)
    hidden = p.hide_totals and not expired and not votes.author
    counts = votes.counts + (0,) * (len(p.options) - len(votes.counts))
    out = {
        "id": str(sid),
        "expires_at": iso(p.expires_at),
        "expired": expired,
        "multiple": p.multiple,
        "votes_count": sum(counts[: len(p.options)]),
        "voters_count": votes.voters,
        "options": [
            {"title": title, "votes_count": None if hidden else counts[i]}
            for i, title in enumerate(p.options)
        ],
        "emojis": [],
    }
    if viewer:
        out["voted"] = votes.author or votes.own is not None
        out["own_votes"] = list(votes.own or ())
    return out


def poll_json(s: Status, state: StatusState, viewer: bool) -> bytes:
    """The ``poll`` field of a status with a poll as the tail of a JSON
    object (``,"poll":{...}``): votes change with every vote and ``expired``
    with the clock, so it is rendered per request, after the kept part
    (render/rendered.py)."""
    p = Poll.of(s)
    if p is None:
        return b',"poll":null'
    return b',"poll":' + orjson.dumps(poll(s.id, p, state.poll, viewer))


def status(
    s: Status,
    author: dict,
    base: str,
    *,
    viewer: bool = False,
    with_source: bool = False,
    state: StatusState | None = NONE,
    sensitized: bool = False,
) -> dict:
    """The Status entity; ``state=None`` leaves out the fields that change
    after posting (STATE_FIELDS, VIEWER_FIELDS, and a poll: ``poll_json``),
    for a kept rendering. ``sensitized``: its author's media are marked
    sensitive by a moderator (redpoll.moderation.admin_accounts): the status
    is shown sensitive (to everyone: Mastodon shows the author its own
    flag, which a rendering kept for every viewer cannot)."""
    extra = s.extra  # what POST /api/v1/statuses stored beyond the text
    conv = Conversation.of(s)  # replies, mentions, hashtags (engine: conversation.py)
    out = {
        "id": str(s.id),
        # a remote status: as on its server
        "uri": extra.get("uri") or uris.status(base, s.login, s.id),
        "url": extra.get("url") or extra.get("uri") or f"{base}/@{s.login}/{s.id}",
        "created_at": iso(s.created_at),
        "account": author,
        # (a status of attachments only has no text: Mastodon's content is then empty)
        # a remote status: its HTML as kept (sanitized when it came); else its text
        "content": s.html or (status_html(s.text, conv.mentions, base) if s.text else ""),
        "visibility": extra.get("visibility", "public"),
        "sensitive": sensitized or extra.get("sensitive") == "true",
        "spoiler_text": extra.get("spoiler_text", ""),
        "media_attachments": media_entity.attachments(extra.get("media"), base, s.id),
        "application": None,
        "mentions": [
            {"id": str(uid), "username": login, "acct": login, "url": f"{base}/@{login}"}
            for uid, login in conv.mentions
        ],
        "tags": [{"name": t, "url": f"{base}/tags/{t}"} for t in conv.tags],
        "emojis": media_entity.emojis(
            urlsplit(extra.get("uri", "")).netloc, extra.get("emo", ""), base
        ),
        "in_reply_to_id": str(conv.in_reply_to_id) if conv.in_reply_to_id else None,
        "in_reply_to_account_id": (
            str(conv.in_reply_to_account_id) if conv.in_reply_to_id else None
        ),
        "reblog": None,
        "poll": None,
        "card": cards.entity(s, base),
        "language": extra.get("language"),
        "edited_at": iso(int(extra["edited_at"])) if extra.get("edited_at") else None,
    }
    if "poll" in extra:  # (a status without one has "poll": null in its kept part)
        definition = Poll.of(s)
        if state is None:
            del out["poll"]
        elif definition is not None:
            out["poll"] = poll(s.id, definition, state.poll, viewer)
    if state is not None:
        out |= status_state(state, viewer)
        out["quote"] = shallow_quote(state)  # a page's own statuses: the whole Quote
    if with_source:
        out["text"] = s.text
    return out


def status_edit(version: dict, author: dict, base: str) -> dict:
    """Mastodon's StatusEdit entity: one version of a status's history
    (redpoll.posting.editing.history), ``author`` its author's entity."""
    mentions = Conversation.of(
        Status(
            id=0,
            text="",
            created_at=0,
            user_id=0,
            login="",
            extra={"mentions": version.get("mentions", "")},
        )
    ).mentions
    text = version.get("text", "")
    return {
        "content": status_html(text, mentions, base) if text else "",
        "spoiler_text": version.get("spoiler_text", ""),
        "sensitive": bool(version.get("sensitive")),
        "created_at": iso(int(version.get("at", 0))),
        "account": author,
        # (as Mastodon's StatusEdit: the options' titles of the poll it had)
        "poll": (
            {"options": [{"title": t} for t in version["poll"]]} if version.get("poll") else None
        ),
        "media_attachments": media_entity.attachments(version.get("media") or None, base),
        "emojis": [],
    }


def relationship(target: int, following: bool, followed_by: bool) -> dict:
    return {
        "id": str(target),
        "following": following,
        "showing_reblogs": following,
        "notifying": False,
        "languages": None,
        "followed_by": followed_by,
        "blocking": False,
        "blocked_by": False,
        "muting": False,
        "muting_notifications": False,
        "requested": False,
        "requested_by": False,
        "domain_blocking": False,
        "endorsed": False,
        "note": "",
    }


def user_list(item: UserList) -> dict:
    return {"id": str(item.id), "title": item.title, "replies_policy": "list", "exclusive": False}


def account_warning(
    wid: int,
    action: str,
    text: str,
    status_ids,
    created_at: int,
    target_account,
    appeal: dict | None,
) -> dict:
    """Mastodon's AccountWarning entity (``target_account`` an Account
    entity, as a dict or as JSON bytes to splice in by the caller)."""
    return {
        "id": str(wid),
        "action": action,
        "text": text,
        "status_ids": [str(s) for s in status_ids] or None,
        "target_account": target_account,
        "appeal": appeal,
        "created_at": iso(created_at),
    }


def note_warning(note: Notification, account) -> dict | None:
    """A moderation_warning's AccountWarning, as the notification recorded
    it when made (its appeal: GET /api/v1/redpoll/warnings/:id)."""
    w = note.warning
    if note.type != "moderation_warning" or not w:
        return None
    ids = [s for s in str(w.get("status_ids") or "").split(",") if s]
    return account_warning(
        int(w["id"]), w["action"], w.get("text", ""), ids, int(w["at"]), account, None
    )


def collection_item(item: CollectionItem) -> dict:
    """Mastodon's CollectionItem."""
    return {
        "id": str(item.id),
        "account_id": str(item.account),
        "state": item.state,
        "created_at": iso(item.created_at),
    }


def collection(c: Collection, base: str) -> dict:
    """Mastodon's Collection, with the items as shown (item_count theirs)."""
    return {
        "id": str(c.id),
        "uri": f"{base}/collections/{c.id}",
        "url": None,  # no page of its own here
        "name": c.name,
        "description": c.description,
        "language": c.language,
        "account_id": str(c.owner),
        "local": True,
        "sensitive": c.sensitive,
        "discoverable": c.discoverable,
        "item_count": len(c.items),
        "created_at": iso(c.created_at),
        "updated_at": iso(c.updated_at),
        "tag": {"name": c.tag, "url": f"{base}/tags/{c.tag}"} if c.tag else None,
        "items": [collection_item(i) for i in c.items],
    }


def notification(
    note: Notification, account: dict, status: dict | None, coll: dict | None = None
) -> dict:
    """The Notification entity: ``account`` its actor's entity, ``status``
    the entity of the status it is about (None: none shown), ``coll`` the
    Collection an added_to_collection names (Mastodon 4.6)."""
    out = {
        "id": str(note.id),
        "type": note.type,
        "group_key": note.group_key,
        "created_at": iso(note.created_at),
        "account": account,
    }
    if status is not None:
        out["status"] = status
    if coll is not None:
        out["collection"] = coll
    warning = note_warning(note, account)
    if warning is not None:
        out["moderation_warning"] = warning
    return out


def notification_json(
    note: Notification, account: bytes, status: bytes | None, coll: dict | None = None
) -> bytes:
    """:func:`notification` as JSON bytes, from the JSON of its account's
    and its status's entities (kept renderings)."""
    head = orjson.dumps(
        {
            "id": str(note.id),
            "type": note.type,
            "group_key": note.group_key,
            "created_at": iso(note.created_at),
            **({"filtered": True} if note.filtered else {}),
            **({"collection": coll} if coll is not None else {}),
        }
    )[:-1]
    warning = note_warning(note, None)
    tail = b"}"
    if warning is not None:  # (its target_account is the notification's account)
        body = orjson.dumps(warning)
        tail = (
            b',"moderation_warning":'
            + body.replace(b'"target_account":null', b'"target_account":' + account, 1)
            + b"}"
        )
    return (
        head
        + b',"account":'
        + account
        + (b',"status":' + status + tail if status is not None else tail)
    )


def notification_request_json(
    rid: int,
    created_at: int,
    updated_at: int,
    count: int,
    account: bytes,
    last_status: bytes | None,
) -> bytes:
    """The NotificationRequest entity (Mastodon 4.3) as JSON bytes, from the
    JSON of its account's entity and of its last status's (None: the viewer
    may not see it now, rendered null); the count is a string, as Mastodon's."""
    head = orjson.dumps(
        {
            "id": str(rid),
            "created_at": iso(created_at),
            "updated_at": iso(updated_at),
            "notifications_count": str(count),
        }
    )[:-1]
    return (
        head
        + b',"account":'
        + account
        + b',"last_status":'
        + (last_status if last_status is not None else b"null")
        + b"}"
    )


def direct_conversation(
    cid: int, unread: bool, accounts: list[dict], last_status: dict | None
) -> dict:
    """The Conversation entity of a direct conversation: ``accounts`` the
    other participants' entities, ``last_status`` its last status's entity
    (None when the viewer may not see it)."""
    return {"id": str(cid), "unread": unread, "accounts": accounts, "last_status": last_status}
