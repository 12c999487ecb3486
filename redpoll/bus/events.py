"""Events for the real-time stream: posted and deleted statuses,
"end" events that close open streams (a revoked token, a suspended user), and
"relation" and "members" events that change open streams' filters (follows,
blocks, mutes; list members).

Posting and deleting append one event to the event log, a capped Redis Stream
(``keys.EVENT_LOG``): one key, so it works the same on a cluster, and it keeps
the recent past, so a reconnecting stream client can be replayed what it
missed (v1.1 ``count``, SSE ``Last-Event-ID``). A delete event carries the
full status marked deleted, so every stream filter decides on a deletion
exactly as it decided on the post.

This module owns the events' schema (:class:`StatusEvent`, :class:`EndEvent`,
:class:`NotificationEvent`, :class:`RelationEvent`, :class:`MembersEvent`):
the engine writes them with ``to_json``, the stream reads them with
:func:`parse`, nothing else looks inside. Events are published
at least once: a post or delete journal replayed after a crash may publish
its event again (same kind, same status).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..core import keys, limits
from ..core.models import Status
from ..storage.store import Store

#: The one field of an event-log entry: the event's JSON.
FIELD = "e"
UPDATE, DELETE = "update", "delete"
#: a status edited (Mastodon's ``status.update``): the status as it is now
STATUS_UPDATE = "status.update"


@dataclass(frozen=True)
class StatusEvent:
    """``{"event": "update" | "status.update" | "delete", "status": {...}}``
    (posted, edited, deleted), the status as
    ``Status.to_dict()`` gives it (``id``, ``user_id``, ``login``, ``text``,
    ``created_at``, extras...), with ``"deleted": true`` in a delete."""

    kind: str
    status: dict[str, Any]

    @classmethod
    def update(cls, status: Status) -> StatusEvent:
        return cls(UPDATE, status.to_dict())

    @classmethod
    def delete(cls, status: Status) -> StatusEvent:
        return cls(DELETE, status.to_dict() | {"deleted": True})

    def to_json(self) -> str:
        return json.dumps({"event": self.kind, "status": self.status}, separators=(",", ":"))

    @classmethod
    def parse(cls, payload: str | bytes) -> StatusEvent:
        """The event in an entry's payload; ValueError if it is not one."""
        return cls.from_data(json.loads(payload))

    @classmethod
    def from_data(cls, data) -> StatusEvent:
        """The event in a decoded payload; ValueError if it is not one."""
        if not isinstance(data, dict) or data.get("event") not in (UPDATE, DELETE, STATUS_UPDATE):
            raise ValueError("not a status event")
        status = data.get("status")
        if not isinstance(status, dict) or not all(
            type(status.get(name)) is int for name in ("id", "user_id")
        ):
            raise ValueError("a status event without a status id and author id")
        return cls(data["event"], status)


def update_event(status: Status, reblog: Status | None = None) -> str:
    """``reblog``: for a boost, the status it boosts, carried along whole so
    every stream renders the boost without a read (v1.1 retweeted_status)."""
    event = StatusEvent.update(status)
    if reblog is not None:
        event.status["reblog"] = reblog.to_dict()
    return event.to_json()


def status_update_event(status: Status) -> str:
    """An edit: the status as it is after it (Mastodon streams only)."""
    return StatusEvent(STATUS_UPDATE, status.to_dict()).to_json()


def delete_event(status: Status) -> str:
    return StatusEvent.delete(status).to_json()


NOTIFICATION = "notification"


@dataclass(frozen=True)
class NotificationEvent:
    """``{"event": "notification", "owner": uid, "notification": {...}}``: a
    notification made for ``owner`` (the record of notifications.py with its
    ``id``); only that user's Mastodon user streams get it."""

    owner: int
    notification: dict[str, Any]

    @classmethod
    def from_data(cls, data) -> NotificationEvent:
        note = data.get("notification")
        if (
            type(data.get("owner")) is not int
            or not isinstance(note, dict)
            or not all(name in note for name in ("id", "type", "actor", "at"))
        ):
            raise ValueError("a notification event needs its owner and record")
        return cls(data["owner"], note)


def notification_event(owner: int, nid: int, record: str) -> str:
    note = json.loads(record) | {"id": nid}
    return json.dumps(
        {"event": NOTIFICATION, "owner": owner, "notification": note}, separators=(",", ":")
    )


async def publish(store: Store, payload: str) -> str:
    """Append one event to the log; returns its entry id."""
    entry = await store.xadd(
        keys.EVENT_LOG, {FIELD: payload}, maxlen=limits.EVENT_LOG_MAXLEN, approximate=True
    )
    return entry.decode() if isinstance(entry, bytes) else entry


@dataclass(frozen=True)
class EndEvent:
    """``{"event": "end", "token": digest}`` or ``{"event": "end", "user": id}``:
    every open stream opened with this token (by its digest), or by this user
    with any token, is to be closed (revocation, suspension)."""

    token: str | None = None
    user: int | None = None

    def to_json(self) -> str:
        body = (
            {"event": END, "token": self.token}
            if self.token is not None
            else {"event": END, "user": self.user}
        )
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_data(cls, data) -> EndEvent:
        token, user = data.get("token"), data.get("user")
        if (token is None) == (user is None) or not (isinstance(token, str) or type(user) is int):
            raise ValueError("an end event names exactly one token or user")
        return cls(token, user)

    @property
    def sessions(self) -> tuple[str, ...]:
        """The keys a stream hub holds streams under (``Principal.sessions``)."""
        return (f"token:{self.token}",) if self.token is not None else (f"user:{self.user}",)


END = "end"
RELATION = "relation"


@dataclass(frozen=True)
class RelationEvent:
    """``{"event": "relation", "users": [a, b], "follows": [bool, bool],
    "hides": [bool, bool]}``: how two users stand now, each way, read after a
    follow, unfollow, removal, block, unblock, mute or unmute changed it:
    ``follows[0]``: a follows b, ``hides[0]``: b is hidden from a (blocked
    either way, or muted by a; redpoll.relations.relations.hidden_from), and the same
    from b's side at index 1; ``null`` where the change that sent it left
    that part as it was (a follow knows a follows b, not the rest, and
    sends no read for it). Open streams of both users take it at once (no
    read: it carries the state, so applying it twice changes nothing)."""

    users: tuple[int, int]
    follows: tuple[bool | None, bool | None]
    hides: tuple[bool | None, bool | None]

    def to_json(self) -> str:
        return json.dumps(
            {
                "event": RELATION,
                "users": list(self.users),
                "follows": list(self.follows),
                "hides": list(self.hides),
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_data(cls, data) -> RelationEvent:
        users, follows, hides = data.get("users"), data.get("follows"), data.get("hides")
        if not (
            isinstance(users, list)
            and len(users) == 2
            and all(type(u) is int for u in users)
            and all(
                isinstance(x, list) and len(x) == 2 and all(f is None or type(f) is bool for f in x)
                for x in (follows, hides)
            )
        ):
            raise ValueError("a relation event names two users and how each stands to the other")
        return cls(tuple(users), tuple(follows), tuple(hides))

    def sides(self):
        """(viewer, other, viewer follows other, other is hidden from viewer),
        each way; None where it is unchanged."""
        a, b = self.users
        yield a, b, self.follows[0], self.hides[0]
        yield b, a, self.follows[1], self.hides[1]


MEMBERS = "members"


@dataclass(frozen=True)
class MembersEvent:
    """``{"event": "members", "user": id}``: the user's lists changed (a
    member added or removed, a list deleted); their open list streams read
    their members again now."""

    user: int

    def to_json(self) -> str:
        return json.dumps({"event": MEMBERS, "user": self.user}, separators=(",", ":"))

    @classmethod
    def from_data(cls, data) -> MembersEvent:
        if type(data.get("user")) is not int:
            raise ValueError("a members event names its user")
        return cls(data["user"])


async def lists_changed(store: Store, user: int) -> str:
    """Tell every process's open list streams of ``user`` to read their
    members again (one XADD: idempotent, as it names no change)."""
    return await publish(store, MembersEvent(user).to_json())


FILTERS = "filters"


@dataclass(frozen=True)
class FiltersEvent:
    """``{"event": "filters", "user": id}``: the user's content filters
    changed (redpoll.filters); their open streams read them again before
    the next event is matched."""

    user: int

    def to_json(self) -> str:
        return json.dumps({"event": FILTERS, "user": self.user}, separators=(",", ":"))

    @classmethod
    def from_data(cls, data) -> FiltersEvent:
        if type(data.get("user")) is not int:
            raise ValueError("a filters event names its user")
        return cls(data["user"])


async def filters_changed(store: Store, user: int) -> str:
    """Tell every process's open streams of ``user`` to read their filters
    again (one XADD: idempotent, as it names no change)."""
    return await publish(store, FiltersEvent(user).to_json())


def parse(
    payload: str | bytes,
) -> StatusEvent | EndEvent | NotificationEvent | RelationEvent | MembersEvent | FiltersEvent:
    """Any event of the log; ValueError for anything else."""
    data = json.loads(payload)
    if isinstance(data, dict) and data.get("event") == END:
        return EndEvent.from_data(data)
    if isinstance(data, dict) and data.get("event") == NOTIFICATION:
        return NotificationEvent.from_data(data)
    if isinstance(data, dict) and data.get("event") == RELATION:
        return RelationEvent.from_data(data)
    if isinstance(data, dict) and data.get("event") == MEMBERS:
        return MembersEvent.from_data(data)
    if isinstance(data, dict) and data.get("event") == FILTERS:
        return FiltersEvent.from_data(data)
    return StatusEvent.from_data(data)


def end_event(*, token_digest: str | None = None, user_id: int | None = None) -> str:
    if (token_digest is None) == (user_id is None):
        raise ValueError("end_event takes exactly one of token_digest, user_id")
    return EndEvent(token_digest, None if user_id is None else int(user_id)).to_json()


async def end_streams(
    store: Store, *, token_digest: str | None = None, user_id: int | None = None
) -> str:
    """Close, in every process, the open streams of a token or of a user
    (within the event reader's latency: milliseconds). One XADD: idempotent,
    so a caller that is not sure it ran may run it again."""
    return await publish(store, end_event(token_digest=token_digest, user_id=user_id))


# --- reading the log (the stream hub, on a connection of its own) ------------------------
# ``client`` is a redis-py client (single server or cluster): the hub blocks
# on XREAD, which a shared connection must not do. Entries are (id, fields).
def _id(entry_id) -> str:
    return entry_id.decode() if isinstance(entry_id, bytes) else entry_id


async def newest_id(client) -> str:
    """The id of the newest entry, "0-0" for an empty log."""
    last = await client.xrevrange(keys.EVENT_LOG, count=1)
    return _id(last[0][0]) if last else "0-0"


async def read_after(client, cursor: str, count: int, block_ms: int) -> list:
    """Up to ``count`` entries after ``cursor``, waiting up to ``block_ms``."""
    reply = await client.xread({keys.EVENT_LOG: cursor}, count=count, block=block_ms)
    if not reply:
        return []
    return reply[0][1] if isinstance(reply, list) else next(iter(reply.values()))[0]


async def page_back(client, top: str, count: int) -> list:
    """Up to ``count`` entries at or before ``top`` ("+", or "(id" for before
    an id), newest first."""
    return await client.xrevrange(keys.EVENT_LOG, max=top, count=count)


async def page_forward(client, start: str, count: int) -> list:
    """Up to ``count`` entries at or after ``start`` ("(id": after an id), oldest first."""
    return await client.xrange(keys.EVENT_LOG, min=start, count=count)
