"""Remote accounts: an actor of another server kept as an account here, so
that follows, timelines, the home rule and the renderers treat it as any
other; its login is ``name@host``, its record carries its ``uri`` and
``url``, and :func:`keys.actor` what delivery and signatures need.

Writing one is idempotent and retried, never half-visible: the URI is
claimed for an id first (SET NX, the race's one winner), the account record
and actor hash written next (one script on the account's slot), then the
login and the search index; an ensure cut short anywhere is completed by
the next one for that actor (each step is safe to repeat)."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from ..accounts import account_index
from ..bus.queue import JobQueue
from ..core import keys as core_keys
from ..core import limits
from ..core.errors import RedpollError, UserNotFound
from ..core.models import User, now_ms
from ..records import users
from ..search.jobs import ReindexAuthorJob
from ..storage.store import Store
from . import client, domains, emoji, keys, remote_media, signing
from .documents import instance_actor_id
from .text import html_to_text

ACTOR_TYPES = {"Person", "Service", "Application", "Group", "Organization"}
#: A remote username as Mastodon takes one from a peer: letters, digits and
#: ``_``, with ``.`` and ``-`` inside (no markup, spaces or quotes that a
#: client would show as part of the handle).
USERNAME = re.compile(r"[a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?", re.IGNORECASE)


class BadActor(RedpollError):
    """A document that is not an actor this server can keep."""


@dataclass(frozen=True)
class Actor:
    """What a remote actor's document says that this server keeps."""

    uri: str
    username: str
    host: str
    name: str
    bio: str
    url: str
    inbox: str
    shared_inbox: str
    key_id: str
    pem: str
    locked: bool
    bot: bool
    avatar: str
    header: str = ""
    #: listed in the profile directory (``toot:discoverable``; absent: not,
    #: as Mastodon)
    discoverable: bool = False
    #: its public statuses searchable by anyone here (``toot:indexable``;
    #: absent: not, as Mastodon)
    indexable: bool = False
    #: its custom emoji that its name and bio use: shortcode -> image URL
    emojis: tuple[tuple[str, str], ...] = ()

    @property
    def login(self) -> str:
        return f"{self.username}@{self.host}"

    @property
    def delivery_inbox(self) -> str:
        return self.shared_inbox or self.inbox


def first_url(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return str(value.get("href") or value.get("url") or "")
    if isinstance(value, list) and value:
        return first_url(value[0])
    return ""


def host_of(uri: str) -> str:
    return urlsplit(uri).netloc.lower()


def link_on(value: str, uri: str) -> str:
    """``value`` if it is an http(s) URL on the host of ``uri``, else ''
    (a ``javascript:`` or any other scheme, or another host's page, is never
    handed to clients as a remote account's or status's ``url``)."""
    if (
        isinstance(value, str)
        and value.startswith(("https://", "http://"))
        and host_of(value) == host_of(uri)
    ):
        return value
    return ""


def media_link(value: str, uri: str) -> str:
    """An http(s) URL for a remote image (relative ones are taken as its
    document's own server's), else ''."""
    if not isinstance(value, str) or not value:
        return ""
    absolute = urljoin(uri, value.strip())
    return absolute if absolute.startswith(("https://", "http://")) and host_of(absolute) else ""


def local_uri(base: str, uri: str) -> bool:
    """Whether ``uri`` is on this server's own host (never a remote actor)."""
    return bool(base) and host_of(uri) == host_of(base)


def parse_actor(doc: dict, fetched_from: str | None = None) -> Actor:
    """An actor document as kept; BadActor if it is not one, or if it names
    another id than the one it was fetched from (client.fetch_object: a
    document is taken only under its own id)."""
    uri = doc.get("id")
    if not isinstance(uri, str) or not uri.startswith(("https://", "http://")):
        raise BadActor("an actor needs an http(s) id")
    if doc.get("type") not in ACTOR_TYPES:
        raise BadActor(f"{uri} is a {doc.get('type')!r}, not an actor")
    if fetched_from is not None and fetched_from != uri:
        raise BadActor(f"{fetched_from} answered another actor ({uri})")
    username = doc.get("preferredUsername")
    # (a server's own actor may be named after its host, port included)
    if (
        not isinstance(username, str)
        or len(username) > limits.FED_USERNAME_MAX_CHARS
        or not (USERNAME.fullmatch(username) or username.lower() == host_of(uri))
    ):
        raise BadActor(f"{uri} has no usable preferredUsername")
    key = doc.get("publicKey") or {}
    if isinstance(key, list):
        key = key[0] if key else {}
    inbox = doc.get("inbox")
    if not isinstance(inbox, str) or not isinstance(key, dict) or not key.get("publicKeyPem"):
        raise BadActor(f"{uri} has no inbox or no public key")
    if key.get("owner") not in (None, uri):
        raise BadActor(f"{uri} publishes a key of another owner")
    endpoints = doc.get("endpoints") if isinstance(doc.get("endpoints"), dict) else {}
    shared = endpoints.get("sharedInbox") if isinstance(endpoints.get("sharedInbox"), str) else ""
    for link in (inbox, shared):
        if link and host_of(link) != host_of(uri):
            raise BadActor(f"{uri} names an inbox on another host")
    return Actor(
        uri=uri,
        username=username,
        host=host_of(uri),
        name=str(doc.get("name") or "")[: limits.DISPLAY_NAME_MAX_CHARS],
        bio=html_to_text(str(doc.get("summary") or ""))[: limits.BIO_MAX_CHARS],
        url=link_on(first_url(doc.get("url")), uri) or uri,
        inbox=inbox,
        shared_inbox=shared,
        key_id=str(key.get("id") or f"{uri}#main-key"),
        pem=str(key["publicKeyPem"]),
        locked=bool(doc.get("manuallyApprovesFollowers")),
        bot=doc.get("type") in ("Service", "Application"),
        discoverable=doc.get("discoverable") is True,
        indexable=doc.get("indexable") is True,
        avatar=_image(doc.get("icon"), uri),
        header=_image(doc.get("image"), uri),
        emojis=tuple(
            emoji.parse(
                doc.get("tag"), uri, [str(doc.get("name") or ""), str(doc.get("summary") or "")]
            ).items()
        ),
    )


def _image(value, uri: str) -> str:
    """The URL of an actor's ``icon`` (avatar) or ``image`` (header)."""
    if isinstance(value, list):
        value = value[0] if value else None
    return media_link(first_url(value.get("url")) if isinstance(value, dict) else "", uri)


async def account_id(store: Store, uri: str) -> int | None:
    """The account kept for the actor ``uri``, if any."""
    raw = await store.get(keys.by_uri(uri))
    return int(raw) if raw else None


async def keep(store: Store, actor: Actor) -> User:
    """The account for ``actor``, made or brought up to date (idempotent)."""
    uid = await account_id(store, actor.uri)
    was_indexable = uid is not None and await store.hget(core_keys.user(uid), "idx") == b"1"
    if uid is None:
        fresh = await store.incr(core_keys.USER_SEQ)
        await store.set(keys.by_uri(actor.uri), fresh, nx=True)
        uid = await account_id(store, actor.uri)  # ours, or the race's winner's
        assert uid is not None
    record = {
        "id": uid,
        "login": actor.login,
        "name": actor.name or actor.username,
        "bio": actor.bio,
        "uri": actor.uri,
        "url": actor.url,
        "locked": "1" if actor.locked else "0",
        "bot": "1" if actor.bot else "0",
        "disc": "1" if actor.discoverable else "0",
        "idx": "1" if actor.indexable else "0",
    }
    # its custom emoji: recorded for its server, their images fetched by a job
    record["emo"] = await emoji.keep(store, JobQueue(store), actor.uri, dict(actor.emojis))
    details = {
        "uri": actor.uri,
        "inbox": actor.inbox,
        "shared_inbox": actor.shared_inbox,
        "key_id": actor.key_id,
        "pem": actor.pem,
        "fetched": now_ms(),
    }
    rev = await store.run(
        "fed_keep_actor",
        [core_keys.user(uid), keys.actor(uid)],
        [json.dumps(record), json.dumps(details), now_ms()],
    )
    # its avatar and header: kept here once fetched (a job), the default if
    # its server's media are rejected (idempotent)
    await remote_media.keep_profile_origins(
        store, JobQueue(store), uid, actor.uri, {"avatar": actor.avatar, "header": actor.header}
    )
    await store.set(core_keys.login(actor.login.lower()), f"{uid}:{now_ms()}", nx=True)
    await account_index.index_account(store, uid, int(rev), actor.login, record["name"])
    await store.sadd(keys.PEERS, host_of(actor.uri))  # a peer (idempotent)
    if was_indexable != actor.indexable:  # its statuses follow it into or out of public search
        await JobQueue(store).enqueue(ReindexAuthorJob(uid))
    return await users.get_user(store, uid)


async def peers(store: Store) -> list[str]:
    """The hosts of the remote accounts kept here, sorted, less those the
    server suspended (Mastodon's /api/v1/instance/peers leaves out blocked
    domains). Accounts kept before the set existed were put in by
    migration 4 (federation/migrations.py)."""
    hosts = sorted(
        h.decode() if isinstance(h, bytes) else h for h in await store.smembers(keys.PEERS)
    )
    blocked = {b.host for b in await domains.blocks(store) if b.suspended}
    return [h for h in hosts if h not in blocked and not any(h.endswith("." + b) for b in blocked)]


async def close(store: Store, uid: int) -> None:
    """A remote account deleted on its server: shown as suspended (nothing
    it wrote is shown; the one visibility decision hides it everywhere).
    Idempotent."""
    await store.run(
        "fed_keep_actor",
        [core_keys.user(uid), keys.actor(uid)],
        [json.dumps({"susp": "1"}), json.dumps({"deleted": now_ms()}), now_ms()],
    )


async def details(store: Store, uid: int) -> dict[str, str]:
    """The actor hash of a remote account ({} for a local one)."""
    raw = await store.hgetall(keys.actor(uid))
    return {k.decode(): v.decode() for k, v in raw.items()}


async def _pair(store: Store, key: str) -> signing.KeyPair:
    raw = await store.hget(key, "pair")
    if raw is None:
        fresh = signing.KeyPair.generate()
        await store.hsetnx(key, "pair", json.dumps([fresh.private_pem, fresh.public_pem]))
        raw = await store.hget(key, "pair")  # ours, or a concurrent first's
    private, public = json.loads(raw)
    return signing.KeyPair(private, public)


async def key_pair(store: Store, uid: int) -> signing.KeyPair:
    """A local account's key pair, made on first use (HSETNX: one wins)."""
    return await _pair(store, keys.key_pair(uid))


async def instance_key(store: Store) -> signing.KeyPair:
    return await _pair(store, keys.INSTANCE_KEY)


async def instance_signer(store: Store, base: str) -> client.Signer:
    return client.Signer(await instance_key(store), f"{instance_actor_id(base)}#main-key")


async def fetch_actor(
    store: Store, base: str, uri: str, *, loopback: bool, id_known: bool = True
) -> User:
    """Fetch the actor whose id is ``uri`` (signed by the server's actor,
    for peers that require authorized fetch) and keep it; ``id_known``
    False: ``uri`` is a link to it (client.fetch_object). Never an account
    of this server's own host (BadActor)."""
    if local_uri(base, uri):
        raise BadActor(f"{uri} is on this server: not a remote actor")
    if await domains.suspended(store, host_of(uri)):
        raise BadActor(f"{host_of(uri)} is blocked here")
    doc = await client.fetch_object(
        uri, loopback=loopback, id_known=id_known, signer=await instance_signer(store, base)
    )
    actor = parse_actor(doc)
    if local_uri(base, actor.uri) or await domains.suspended(store, actor.host):
        raise BadActor(f"{actor.uri} is on this server, or on a server blocked here")
    return await keep(store, actor)


#: actor id -> account id here, as kept (an actor's account never changes once
#: made): a process-wide memo, bounded by limits.FED_KEYS_KEPT (cleared when full)
_UIDS: dict[str, int] = {}


async def fresh_key(store: Store, uri: str) -> tuple[User, str, int] | None:
    """The account of actor ``uri``, its public key and when it was fetched
    (ms), when both are kept and fetched within limits.FED_ACTOR_REFRESH_S:
    one round trip (two when the account id is not in this process's
    memo). None otherwise."""
    uid = _UIDS.get(uri)
    if uid is None:
        uid = await account_id(store, uri)
        if uid is None:
            return None
        if len(_UIDS) >= limits.FED_KEYS_KEPT:
            _UIDS.clear()
        _UIDS[uri] = uid
    actor, record = await asyncio.gather(
        store.hgetall(keys.actor(uid)), store.hgetall(core_keys.user(uid))
    )
    fetched = actor.get(b"fetched")
    if not record or not fetched or now_ms() - int(fetched) >= limits.FED_ACTOR_REFRESH_S * 1000:
        return None
    return User.from_hash(record), actor.get(b"pem", b"").decode(), int(fetched)


async def key_owner(
    store: Store, base: str, key_id: str, *, loopback: bool, fetch: bool = True
) -> str | None:
    """The id of the actor whose key is ``key_id``. An ``actor#fragment``
    key id names its actor (as Mastodon takes it). A key at its own URL
    (GoToSocial's ``…/main-key``) is fetched: its document is the key,
    naming its ``owner``, or the actor itself; the owner's own document
    (fetched from its id) must name the key back, so a document planted
    anywhere cannot lend its key to an account. Learned once, kept
    limits.FED_KEY_OWNER_TTL_S. None when not kept and ``fetch`` is False;
    BadActor or FetchFailed when it cannot be had."""
    if "#" in key_id:
        return key_id.split("#", 1)[0]
    kept = await store.get(keys.key_owner(key_id))
    if kept:
        return kept.decode()
    if not fetch:
        return None
    if local_uri(base, key_id):
        raise BadActor(f"{key_id} is on this server: not a remote key")
    doc = await client.fetch_json(
        key_id, loopback=loopback, signer=await instance_signer(store, base)
    )
    if doc.get("type") in ACTOR_TYPES:
        owner = doc.get("id")
    else:
        owner = doc.get("owner") if doc.get("id") == key_id else None
    if not isinstance(owner, str) or not owner.startswith(("https://", "http://")):
        raise BadActor(f"{key_id} names no owner")
    actor = await fetch_actor(store, base, owner, loopback=loopback)
    if (await details(store, actor.id)).get("key_id") != key_id:
        raise BadActor(f"{owner} does not name {key_id} as its key")
    await store.set(keys.key_owner(key_id), owner, ex=limits.FED_KEY_OWNER_TTL_S)
    return owner


async def known_or_fetch(
    store: Store, base: str, uri: str, *, loopback: bool, refresh: bool = False
) -> User:
    """The account of actor ``uri``: kept and fresh (fetched within
    limits.FED_ACTOR_REFRESH_S), else fetched now; ``refresh``: fetched now."""
    uid = await account_id(store, uri)
    if uid is not None and not refresh:
        fetched = await store.hget(keys.actor(uid), "fetched")
        if fetched and now_ms() - int(fetched) < limits.FED_ACTOR_REFRESH_S * 1000:
            try:
                return await users.get_user(store, uid)
            except UserNotFound:
                pass
    return await fetch_actor(store, base, uri, loopback=loopback)


async def kept_account(store: Store, handle: str) -> User | None:
    """The remote account ``name@host`` if it is kept here (no lookup on its
    server)."""
    handle = handle.strip().removeprefix("acct:").lstrip("@")
    known = await store.get(core_keys.login(handle.lower()))
    uid = int(known.split(b":", 1)[0]) if known else 0
    if not uid:
        return None
    try:
        found = await users.get_user(store, uid)
    except UserNotFound:
        return None
    return found if found.remote else None


async def resolve_handle(store: Store, base: str, handle: str, *, loopback: bool) -> User:
    """``name@host`` (or ``@name@host``, ``acct:name@host``) looked up by
    WebFinger on its host and kept; BadActor or FetchFailed if it is not."""
    handle = handle.strip().removeprefix("acct:").lstrip("@")
    name, _, host = handle.rpartition("@")
    if not name or not host:
        raise BadActor(f"{handle!r} is not name@host")
    found = await kept_account(store, handle)
    if found is not None:
        return found
    if await domains.suspended(store, host):
        raise BadActor(f"{host} is blocked here")
    scheme = "http" if loopback and not host.endswith(":443") else "https"
    finger = await client.fetch_json(
        f"{scheme}://{host}/.well-known/webfinger?resource=acct:{name}@{host}",
        loopback=loopback,
        accept="application/jrd+json, application/json",
        types=None,
    )
    links = finger.get("links") if isinstance(finger.get("links"), list) else []
    for link in links:
        if (
            isinstance(link, dict)
            and link.get("rel") == "self"
            and "json" in str(link.get("type", ""))
            and isinstance(link.get("href"), str)
        ):
            return await fetch_actor(store, base, link["href"], loopback=loopback, id_known=False)
    raise BadActor(f"{handle} has no ActivityPub actor")
