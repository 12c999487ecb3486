"""The ActivityStreams documents this server publishes, as Mastodon shapes
them: a local account as a Person, a status as a Note, the activities that
carry them, and the WebFinger and host-meta answers. Pure functions of
records and the server's base URL; nothing here reads or writes. A status
with a poll is a Question (its options as ``oneOf`` or ``anyOf`` Notes with
their counts), and a vote is a Note naming one option, as Mastodon's."""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..core import uris
from ..core.models import Status, User

AS = "https://www.w3.org/ns/activitystreams"
PUBLIC = f"{AS}#Public"
CONTEXT: list[Any] = [
    AS,
    "https://w3id.org/security/v1",
    {
        "manuallyApprovesFollowers": "as:manuallyApprovesFollowers",
        "sensitive": "as:sensitive",
        "Hashtag": "as:Hashtag",
        "toot": "http://joinmastodon.org/ns#",
        "discoverable": "toot:discoverable",
        "votersCount": "toot:votersCount",
        # quotes and who may make them (Mastodon's context extensions; FEP-044f)
        "quote": "https://w3id.org/fep/044f#quote",
        "quoteUri": "http://fedibird.com/ns#quoteUri",
        "_misskey_quote": "https://misskey-hub.net/ns#_misskey_quote",
        "quoteAuthorization": {
            "@id": "https://w3id.org/fep/044f#quoteAuthorization",
            "@type": "@id",
        },
        "gts": "https://gotosocial.org/ns#",
        "interactionPolicy": {"@id": "gts:interactionPolicy", "@type": "@id"},
        "canQuote": {"@id": "gts:canQuote", "@type": "@id"},
        "automaticApproval": {"@id": "gts:automaticApproval", "@type": "@id"},
        "manualApproval": {"@id": "gts:manualApproval", "@type": "@id"},
    },
]


def actor_id(base: str, login: str) -> str:
    return uris.actor(base, login)


def key_id(base: str, login: str) -> str:
    return f"{actor_id(base, login)}#main-key"


def instance_actor_id(base: str) -> str:
    """The server's own actor, which signs the documents it fetches."""
    return f"{base}/actor"


def note_id(base: str, login: str, sid: int) -> str:
    return uris.status(base, login, sid)


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def person(user: User, base: str, public_pem: str) -> dict:
    me = actor_id(base, user.login)
    doc = {
        "@context": CONTEXT,
        "id": me,
        "type": "Service" if user.bot else "Person",
        "preferredUsername": user.login,
        "name": user.display_name or user.login,
        "summary": "".join(f"<p>{html.escape(p)}</p>" for p in user.bio.split("\n\n") if p),
        "url": f"{base}/@{user.login}",
        "inbox": f"{me}/inbox",
        "outbox": f"{me}/outbox",
        "followers": f"{me}/followers",
        "following": f"{me}/following",
        "featured": f"{me}/collections/featured",
        "endpoints": {"sharedInbox": f"{base}/inbox"},
        "manuallyApprovesFollowers": user.locked,
        "discoverable": user.discoverable,
        "published": iso(user.created_at),
        "publicKey": {"id": key_id(base, user.login), "owner": me, "publicKeyPem": public_pem},
    }
    if user.avatar:
        doc["icon"] = {
            "type": "Image",
            "url": user.avatar if "://" in user.avatar else f"{base}{user.avatar}",
        }
    if user.header:  # (as Mastodon: the header is the actor's ``image``)
        doc["image"] = {
            "type": "Image",
            "url": user.header if "://" in user.header else f"{base}{user.header}",
        }
    return doc


def instance_actor(base: str, public_pem: str) -> dict:
    me = instance_actor_id(base)
    return {
        "@context": CONTEXT,
        "id": me,
        "type": "Application",
        "preferredUsername": base.split("://", 1)[1],
        "inbox": f"{base}/actor/inbox",
        "outbox": f"{base}/actor/outbox",
        "url": f"{base}/about",
        "manuallyApprovesFollowers": True,
        "publicKey": {"id": f"{me}#main-key", "owner": me, "publicKeyPem": public_pem},
    }


def addressing(status: Status, base: str, mentioned: list[str] = ()) -> tuple[list[str], list[str]]:
    """``to`` and ``cc`` of a status by its visibility, as Mastodon sets
    them; ``mentioned``: the actor ids it mentions (cc'd, or, for a direct
    status, its only audience)."""
    followers = f"{actor_id(base, status.login)}/followers"
    visibility = status.extra.get("visibility", "public")
    mentioned = list(mentioned)
    if visibility == "public":
        return [PUBLIC], [followers, *mentioned]
    if visibility == "unlisted":
        return [followers], [PUBLIC, *mentioned]
    if visibility == "direct":
        return mentioned, []
    return [followers], mentioned


@dataclass(frozen=True)
class PollView:
    """A local poll as other servers are shown it: its options' titles and
    counts, its voters, whether several may be chosen, when it ends (ms)
    and whether it has."""

    options: tuple[str, ...]
    counts: tuple[int, ...]
    voters: int
    multiple: bool
    ends_at: int
    closed: bool


def note(
    status: Status,
    base: str,
    content_html: str,
    in_reply_to: str | None = None,
    mentions: list[tuple[str, str]] = (),
    attachments: list[dict] = (),
    poll: PollView | None = None,
    quoting: dict | None = None,
) -> dict:
    """``mentions``: (actor id, ``@name@host``) of each account it mentions;
    ``attachments``: its MediaAttachment entities (as Documents); ``poll``:
    its poll (the note is then a Question); ``quoting``: its quote fields
    and interaction policy (redpoll.federation.quoting.note_fields)."""
    to, cc = addressing(status, base, [uri for uri, _ in mentions])
    doc = {
        "id": note_id(base, status.login, status.id),
        "type": "Note",
        "attributedTo": actor_id(base, status.login),
        "url": f"{base}/@{status.login}/{status.id}",
        "published": iso(status.created_at),
        "to": to,
        "cc": cc,
        "content": content_html,
        "inReplyTo": in_reply_to,
        "sensitive": status.extra.get("sensitive") == "true",
        "summary": status.extra.get("spoiler_text") or None,
        "tag": [{"type": "Mention", "href": uri, "name": name} for uri, name in mentions],
        "attachment": [document(a) for a in attachments],
    }
    if quoting:
        doc.update(quoting)
    if status.extra.get("edited_at"):
        doc["updated"] = iso(int(status.extra["edited_at"]))
    if poll is not None:
        doc["type"] = "Question"
        doc["anyOf" if poll.multiple else "oneOf"] = [
            {"type": "Note", "name": title, "replies": {"type": "Collection", "totalItems": count}}
            for title, count in zip(poll.options, poll.counts)
        ]
        doc["endTime"] = iso(poll.ends_at)
        doc["votersCount"] = poll.voters
        if poll.closed:
            doc["closed"] = iso(poll.ends_at)
    return doc


def vote(voter: str, vote_id: str, question: str, author: str, title: str) -> dict:
    """A vote for the option ``title`` of the Question ``question`` by
    ``author``: a Create of a Note that names the option and nothing else,
    addressed to the poll's author only (Mastodon's)."""
    obj = {
        "id": vote_id,
        "type": "Note",
        "name": title,
        "attributedTo": voter,
        "to": [author],
        "inReplyTo": question,
    }
    return activity("Create", f"{vote_id}/activity", voter, obj, to=[author])


_TYPES = {
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "png": "image/png",
    "webp": "image/webp",
    "gif": "image/gif",
}


def document(entity: dict) -> dict:
    """A MediaAttachment entity as Mastodon attaches it to a Note."""
    url = entity["url"] or ""
    doc = {
        "type": "Document",
        "mediaType": _TYPES.get(url.rsplit(".", 1)[-1].lower(), "image/jpeg"),
        "url": url,
        "name": entity.get("description"),
        "blurhash": entity.get("blurhash"),
    }
    original = (entity.get("meta") or {}).get("original") or {}
    if original.get("width") and original.get("height"):
        doc["width"], doc["height"] = original["width"], original["height"]
    return doc


def activity(
    kind: str,
    activity_id: str,
    actor: str,
    obj: Any,
    *,
    to: list[str] | None = None,
    cc: list[str] | None = None,
) -> dict:
    doc: dict[str, Any] = {
        "@context": CONTEXT if isinstance(obj, dict) else AS,
        "id": activity_id,
        "type": kind,
        "actor": actor,
        "object": obj,
    }
    if to is not None:
        doc["to"] = to
    if cc is not None:
        doc["cc"] = cc
    return doc


def webfinger(login: str, host: str, base: str) -> dict:
    me = actor_id(base, login)
    return {
        "subject": f"acct:{login}@{host}",
        "aliases": [f"{base}/@{login}", me],
        "links": [
            {
                "rel": "http://webfinger.net/rel/profile-page",
                "type": "text/html",
                "href": f"{base}/@{login}",
            },
            {"rel": "self", "type": "application/activity+json", "href": me},
        ],
    }


def host_meta(base: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">\n'
        f'  <Link rel="lrdd" template="{base}/.well-known/webfinger?resource={{uri}}"/>\n'
        "</XRD>\n"
    )


def collection(cid: str, total: int) -> dict:
    """A collection shown by its size only (Mastodon hides the members of
    followers and following collections from others too)."""
    return {"@context": AS, "id": cid, "type": "OrderedCollection", "totalItems": total}
