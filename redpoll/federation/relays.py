"""Relays, as Mastodon has them (app/models/relay.rb): a small server sees
public posts beyond its own followings by following a relay.

An admin adds a relay by its inbox URL (:func:`add`): this server's own
actor sends it a ``Follow`` of the public collection
(``https://www.w3.org/ns/activitystreams#Public``), and the relay is
``pending`` until its ``Accept`` of that Follow (:func:`answered`:
``accepted``; a ``Reject``: ``rejected``), which names the relay's actor.
An accepted relay gets every local public post (its Create, Update and
Delete: outbox), and the notes its actor ``Announce``s are kept here as its
servers' statuses (in the federated timeline; the Announce is no boost).
Removing one (:func:`remove`) sends the ``Undo`` of the Follow.

The relays live in one hash (keys.RELAYS, by inbox URL): each write is one
command; adding again re-sends the Follow of a relay not accepted
(idempotent: the relay drops a Follow it has seen)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from ..admin import audit, roles, staff
from ..bus.queue import JobQueue
from ..core import limits
from ..core.errors import NotFound, ValidationError
from ..core.models import now_ms
from ..core.settings import Settings
from ..storage.store import Store
from . import delivery, documents, keys, remote

PENDING, ACCEPTED, REJECTED = "pending", "accepted", "rejected"


class RelayNotFound(NotFound):
    pass


@dataclass(frozen=True)
class Relay:
    """Mastodon's Relay: ``id``, ``inbox_url``, ``state`` (pending,
    accepted, rejected), ``follow_id`` (its Follow's id), ``actor`` (the
    relay's actor, once it answered), ``at`` (added, ms)."""

    id: int
    inbox_url: str
    state: str
    follow_id: str
    actor: str = ""
    at: int = 0

    @property
    def enabled(self) -> bool:
        return self.state == ACCEPTED

    def to_json(self) -> str:
        return json.dumps(
            {
                "id": self.id,
                "inbox": self.inbox_url,
                "state": self.state,
                "follow": self.follow_id,
                "actor": self.actor,
                "at": self.at,
            }
        )

    @classmethod
    def parse(cls, raw) -> Relay:
        data = json.loads(raw)
        return cls(
            int(data["id"]),
            data["inbox"],
            data["state"],
            data["follow"],
            data.get("actor", ""),
            int(data.get("at", 0)),
        )

    def entity(self) -> dict:
        """As the admin API shows it (Mastodon's admin page's columns)."""
        return {
            "id": str(self.id),
            "inbox_url": self.inbox_url,
            "state": self.state,
            "enabled": self.enabled,
            "actor": self.actor or None,
        }


def _checked(inbox_url: str) -> str:
    url = (inbox_url or "").strip()
    if not url.startswith(("https://", "http://")) or len(url) > limits.FED_RELAY_URL_MAX_CHARS:
        raise ValidationError("inbox_url", "must be an http(s) URL")
    if "@" in url.split("/", 3)[2]:
        raise ValidationError("inbox_url", "must be an http(s) URL")
    return url


async def all_(store: Store) -> list[Relay]:
    """Every relay, in the order they were added."""
    raw = await store.hvals(keys.RELAYS)
    return sorted((Relay.parse(r) for r in raw), key=lambda r: r.id)


async def enabled_inboxes(store: Store) -> list[str]:
    """The inboxes of the accepted relays (where local public posts go)."""
    return [r.inbox_url for r in await all_(store) if r.enabled]


def _follow(base: str, follow_id: str) -> dict:
    return {
        "@context": documents.AS,
        "id": follow_id,
        "type": "Follow",
        "actor": documents.instance_actor_id(base),
        "object": documents.PUBLIC,
    }


def _base(settings: Settings) -> str:
    if not settings.public_url:
        raise ValidationError("inbox_url", "relays need REDPOLL_PUBLIC_URL (federation on)")
    return settings.public_url.rstrip("/")


async def add(store: Store, queue: JobQueue, settings: Settings, inbox_url: str) -> Relay:
    """Follow the relay at ``inbox_url`` as this server's actor; the relay
    as recorded (pending until its Accept). A relay added again that is not
    accepted is sent a new Follow."""
    base, url = _base(settings), _checked(inbox_url)
    raw = await store.hget(keys.RELAYS, url)
    known = Relay.parse(raw) if raw is not None else None
    if known is not None and known.enabled:
        return known
    rid = known.id if known is not None else int(await store.incr(keys.RELAY_SEQ))
    relay = Relay(
        rid, url, PENDING, f"{base}/relays/{rid}/follows/{uuid.uuid4().hex}", "", now_ms()
    )
    await store.hset(keys.RELAYS, url, relay.to_json())
    await delivery.send(store, queue, 0, url, _follow(base, relay.follow_id))
    return relay


async def by_id(store: Store, rid) -> Relay:
    for relay in await all_(store):
        if str(relay.id) == str(rid):
            return relay
    raise RelayNotFound(f"no relay {rid}")


async def remove(store: Store, queue: JobQueue, settings: Settings, inbox_url: str) -> Relay:
    """Stop following the relay at ``inbox_url``: the Undo of its Follow
    sent, the relay forgotten (its posts no longer taken as relayed)."""
    base = _base(settings)
    raw = await store.hget(keys.RELAYS, (inbox_url or "").strip())
    if raw is None:
        raise RelayNotFound(f"no relay at {inbox_url}")
    relay = Relay.parse(raw)
    me = documents.instance_actor_id(base)
    undo = {
        "@context": documents.AS,
        "id": f"{relay.follow_id}/undo",
        "type": "Undo",
        "actor": me,
        "object": {k: v for k, v in _follow(base, relay.follow_id).items() if k != "@context"},
    }
    await delivery.send(store, queue, 0, relay.inbox_url, undo)
    await store.hdel(keys.RELAYS, relay.inbox_url)
    return relay


async def answered(store: Store, actor_uri: str, obj, accepted: bool) -> bool:
    """An Accept (``accepted``) or Reject of a relay's Follow, signed by an
    actor of the relay's host: the relay accepted (its actor recorded) or
    rejected. Whether ``obj`` named a relay's Follow."""
    follow_id = obj.get("id") if isinstance(obj, dict) else obj
    if not isinstance(follow_id, str) or "/relays/" not in follow_id:
        return False
    for relay in await all_(store):
        if relay.follow_id != follow_id:
            continue
        if remote.host_of(actor_uri) != remote.host_of(relay.inbox_url):
            return True  # another host answering for it: nothing
        state = ACCEPTED if accepted else REJECTED
        if relay.state != state or relay.actor != actor_uri:
            fresh = Relay(relay.id, relay.inbox_url, state, relay.follow_id, actor_uri, relay.at)
            await store.hset(keys.RELAYS, relay.inbox_url, fresh.to_json())
        return True
    return False


async def is_relay(store: Store, actor_uri: str) -> bool:
    """Whether ``actor_uri`` is the actor of an accepted relay."""
    return any(r.enabled and r.actor == actor_uri for r in await all_(store))


# --- the admin API's (checking manage_federation, its actions logged) --------------------------


async def _may(store: Store, actor: int | None) -> None:
    roles.require(await staff.role_of(store, actor), "manage_federation")


async def admin_list(store: Store, actor: int | None) -> list[Relay]:
    await _may(store, actor)
    return await all_(store)


async def admin_add(
    store: Store, queue: JobQueue, settings: Settings, actor: int | None, inbox_url
) -> Relay:
    await _may(store, actor)
    found = await add(store, queue, settings, str(inbox_url or ""))
    await audit.record(store, actor, "create", "Relay", found.id, found.inbox_url)
    return found


async def admin_remove(
    store: Store, queue: JobQueue, settings: Settings, actor: int | None, rid
) -> Relay:
    await _may(store, actor)
    found = await remove(store, queue, settings, (await by_id(store, rid)).inbox_url)
    await audit.record(store, actor, "destroy", "Relay", found.id, found.inbox_url)
    return found
