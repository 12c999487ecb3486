"""Mastodon streaming over Server-Sent Events (docs: "Methods > streaming").

``GET /api/v1/streaming/health`` (no auth, body ``OK``) and the SSE streams
``user`` (the caller's home: people they follow and themselves),
``user/notification`` (only its ``notification`` events), ``public``,
``public/local`` (this server's statuses only) and ``public/remote`` (other
servers' only), each with ``?only_media=true`` for statuses with media only,
``hashtag?tag=`` (and ``hashtag/local``), ``list?list=`` (a list of the
caller's) and ``direct``, as Mastodon's streaming server routes them (STREAMS
names each). A user token is required (``Authorization: Bearer`` or
``access_token``), as Mastodon 4.2+.

Wire format, as Mastodon.py parses it strictly: LF line endings, ``field:
value`` with one space, an ``event:`` line in every event block; ``:)`` first,
then a ``:thump`` comment every ``sse_heartbeat_s``. Events are ``update``
(a Mastodon Status entity; a boost wraps its original in ``reblog``),
``status.update`` (an edited status, the entity as edited; not on the
direct stream),
``delete`` (the bare id) and, on ``user`` and ``user/notification`` (which
carries nothing else) only, ``notification`` (the caller's own Notification
entities); each carries ``id:``,
the event-log entry id, so a reconnecting client sending ``Last-Event-ID``
is replayed what it missed (filtered as usual).
"""

from __future__ import annotations

import json
import re

from ..accounts import auth
from ..bus import events
from ..conversations.conversation import normalize_tag
from ..conversations.direct_messages import conversation_of, participants
from ..core import validate
from ..core.errors import NotFound, UserNotFound, ValidationError
from ..core.models import Status
from ..gateway.auth import Principal
from ..gateway.errors import WebError
from ..notifications.notifications import Notification
from ..quotes import quotes
from ..records.state import NONE, StatusState
from ..render import entities
from .asgi import CLOSE_AFTER, can_hand_off, header, identify, read_params, send_error, stream_out
from .filters import ALL_RESIDUES, Event, Filter, status_of
from .hub import Subscriber, fmt_for

_ENTRY_ID = re.compile(r"\d{1,20}-\d{1,20}")
_TAG_OK = re.compile(r"[\w·\u200c]+")
#: the contexts of the viewer's content filters on each stream (redpoll.filters.rules)
CONTEXTS = {"user": "home", "list": "home", "public": "public", "hashtag": "public"}
#: Mastodon's stream names -> (the channel whose filter it is, the origin it
#: narrows to, only statuses with media); ``user:notification`` is the user
#: stream's notification events alone
STREAMS = {
    "user": ("user", None, False),
    "user:notification": ("user:notification", None, False),
    "public": ("public", None, False),
    "public:media": ("public", None, True),
    "public:local": ("public", "local", False),
    "public:local:media": ("public", "local", True),
    "public:remote": ("public", "remote", False),
    "public:remote:media": ("public", "remote", True),
    "hashtag": ("hashtag", None, False),
    "hashtag:local": ("hashtag", "local", False),
    "list": ("list", None, False),
    "direct": ("direct", None, False),
}
#: SSE path (under /api/v1/streaming/) -> its stream, and the one ``?only_media=``
#: asks for instead (Mastodon's streaming server; its WebSocket names the
#: media streams themselves)
SSE_PATHS = {
    "user": ("user", None),
    "user/notification": ("user:notification", None),
    "public": ("public", "public:media"),
    "public/local": ("public:local", "public:local:media"),
    "public/remote": ("public:remote", "public:remote:media"),
    "hashtag": ("hashtag", None),
    "hashtag/local": ("hashtag:local", None),
    "list": ("list", None),
    "direct": ("direct", None),
}
_FALSE = ("0", "f", "false", "off")


def truthy(value) -> bool:
    """A query flag as Mastodon's streaming server reads one: given, and not
    one of its false words."""
    return bool(value) and str(value).lower() not in _FALSE


def last_event_id(scope) -> str | None:
    """The ``Last-Event-ID`` header as an event-log entry id ("ms-seq", each
    part below 2**64 as Redis stream ids are), None when absent or empty;
    WebError 400 when it is anything else."""
    raw = (header(scope, b"last-event-id") or "").strip()
    if not raw:
        return None
    match = _ENTRY_ID.fullmatch(raw)
    if match is None or any(int(part) >= 2**64 for part in raw.split("-")):
        raise WebError(
            400,
            "Last-Event-ID must be an event id as sent in id: lines "
            "(milliseconds-sequence, each below 2^64)",
        )
    return raw


def frame_sse(item: tuple) -> bytes | None:
    name, entry_id, payload = item
    if name == "keepalive":
        return b":thump\n"
    if isinstance(payload, dict):  # v1.1 control messages have no Mastodon form
        return None
    if entry_id:
        return b"event: %s\nid: %s\ndata: %s\n\n" % (name.encode(), entry_id.encode(), payload)
    return b"event: %s\ndata: %s\n\n" % (name.encode(), payload)


class MastodonRenderer:
    """Event -> Mastodon Status JSON through the renderer REST uses
    (``render.rendered.RenderedStatuses``, shared with the REST pages of the
    same process): the author as the engine has them now, links under the
    subscriber's base."""

    def __init__(self, service):
        self.service = service

    async def __call__(self, ev: Event, base: str) -> bytes:
        if ev.deleted:
            return str(ev.sid).encode()
        if ev.notification is not None:
            return await self.notification(ev.notification, base, ev.owner)
        raw = ev.status
        if isinstance(raw.get("reblog"), dict):  # a boost: its original rendered inside
            return json.dumps(
                await self.entity(raw, base), separators=(",", ":"), ensure_ascii=False
            ).encode()
        status = _status(raw)
        return self.service.rendered.json(
            status,
            await self._author(status),
            base,
            viewer=False,
            state=await self._anyones_state(status),
        )

    async def _anyones_state(self, status: Status) -> StatusState:
        """Anyone's view of ``status`` now: who may quote it (the status's
        own policy, redpoll.quotes) and its poll's votes (no own votes;
        nothing to read for a status without a poll)."""
        shown = NONE._replace(quote_policy=quotes.policy(status))
        if "poll" not in status.extra:
            return shown
        found = await self.service.engine.statuses.poll_states([status])
        return shown._replace(poll=found.get(status.id))

    async def _author(self, status: Status):
        try:
            return await self.service.engine.accounts.get_user(status.user_id)
        except UserNotFound:
            return entities.placeholder_user(status)

    async def entity(self, raw: dict, base: str) -> dict:
        """A status of the event log as the API's entity; a boost carries its
        original (redpoll.bus.events.update_event), rendered into ``reblog``."""
        status = _status(raw)
        author = await self._author(status)
        body = entities.status(
            status,
            entities.account(author, base),
            base,
            state=await self._anyones_state(status),
            sensitized=author.sensitized,
        )
        if isinstance(raw.get("reblog"), dict):
            body["reblog"] = await self.entity(raw["reblog"], base)
        return body

    async def notification(self, note: dict, base: str, owner: int) -> bytes | None:
        """A Mastodon Notification entity (redpoll.bus.events.notification_event),
        or None when it is not shown to its owner now (its account hidden, its
        status gone, not visible to them or hidden by their filters:
        redpoll.reading.notification_view), live and replayed alike; its status
        carries ``filtered`` when a warn filter of theirs meets it."""
        record = Notification.from_json(int(note["id"]), json.dumps(note))
        found = await self.service.engine.notifications.shown_with(owner, record)
        if found is None:
            return None
        status, coll = found
        actor = Status(id=0, text="", created_at=0, user_id=record.actor, login="")
        account = entities.account(await self._author(actor), base)
        shown = await self.entity(status.to_dict(), base) if status is not None else None
        if status is not None:  # its owner's warn filters of the notifications context
            words = await self.service.engine.filters.active(owner)
            result = words.apply(status, context="notifications", viewer=owner) if words else None
            if result is not None:
                shown["filtered"] = json.loads(result.json())
        body = entities.notification(
            record, account, shown, entities.collection(coll, base) if coll is not None else None
        )
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


class ConversationRenderer:
    """A direct stream's event: Mastodon's Conversation entity as one of its
    participants sees it (the others in ``accounts``; ``unread`` unless they
    wrote it); a delete is the bare id, as on every stream."""

    def __init__(self, statuses: MastodonRenderer):
        self.statuses = statuses

    async def __call__(self, ev: Event, base: str, viewer: int) -> bytes | None:
        if ev.deleted:
            return str(ev.sid).encode()
        if ev.kind == events.STATUS_UPDATE:  # as Mastodon: edits are not conversation events
            return None
        status = _status(ev.status)
        others = [u for u in participants(status) if u != viewer]
        users = await self.statuses.service.engine.accounts.get_users(others)
        body = entities.direct_conversation(
            conversation_of(status),
            status.user_id != viewer,
            [entities.account(u, base) for u in users],
            await self.statuses.entity(ev.status, base),
        )
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


_status = status_of


class Health:
    async def __call__(self, scope, receive, send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"2")],
            }
        )
        await send({"type": "http.response.body", "body": b"OK"})


#: channel -> the scope its stream needs (Mastodon's streaming server:
#: ``read`` covers it; the public and hashtag streams need none)
SCOPED = {
    "user": "read:statuses",
    "list": "read:statuses",
    "direct": "read:statuses",
    "user:notification": "read:notifications",
}


def may_read(principal: Principal, scope: str) -> bool:
    """Whether the principal's token grants ``scope`` (``read`` grants every
    ``read:*``: redpoll.accounts.auth.within). A user stream carries notifications
    only with ``read:notifications``, as Mastodon's."""
    return auth.within((scope,), principal.scopes)


class SSEEndpoint:
    """One Mastodon stream (STREAMS): the filters of its subscribers, over
    SSE and on the WebSocket alike; as an SSE route, ``media`` is the stream
    it serves instead when asked ``?only_media=``."""

    def __init__(self, service, stream: str, media: str | None = None):
        self.service = service
        self.stream = stream
        #: user | user:notification | public | hashtag | list | direct
        self.channel, self.origin, self.only_media = STREAMS[stream]
        self.media = media

    async def members(self, principal: Principal, params: dict) -> frozenset[int]:
        """Whose statuses the user / list stream shows, asked of the engine."""
        engine = self.service.engine
        uid = principal.user_id
        if self.channel == "user":
            return await engine.relations.following_ids(uid) | {uid}
        raw = params.get("list", "")
        if not raw.isdigit():
            raise WebError(400, "Missing list parameter")
        try:  # an id past 2**53 cannot exist: not found, like any unknown list
            return await engine.lists.member_ids(uid, validate.an_id(raw, "list"))
        except (NotFound, ValidationError):
            raise WebError(404, "Record not found") from None

    async def build_filter(self, principal: Principal, params: dict) -> Filter:
        """The filter of this channel's stream for ``principal``, with the
        user's content filters in this channel's context; WebError when it
        may not have one (scopes, a missing tag or list)."""
        filt = await self._build_filter(principal, params)
        if principal.user_id is not None and self.channel in CONTEXTS:
            filt.context = CONTEXTS[self.channel]
            filt.words = await self.service.engine.filters.active(principal.user_id)
        return filt

    async def _build_filter(self, principal: Principal, params: dict) -> Filter:
        uid = principal.user_id
        if self.channel in SCOPED and not may_read(principal, SCOPED[self.channel]):
            raise WebError(401, "Access token does not have the required scopes")
        hidden, domains = frozenset(), frozenset()
        if uid is not None:  # blocks, mutes and domain blocks (redpoll.relations)
            hidden, domains = await self.service.engine.relations.hidden_of(uid)
        if self.channel == "public":  # no boosts on public streams, as Mastodon
            return Filter(
                sample=ALL_RESIDUES,
                hidden=hidden,
                domains=domains,
                viewer=uid,
                boosts=False,
                origin=self.origin,
                only_media=self.only_media,
            )
        if self.channel == "hashtag":
            tag = normalize_tag(params.get("tag", ""))
            if not tag or not _TAG_OK.fullmatch(tag):
                raise WebError(400, "Missing tag name parameter")
            return Filter(
                tags=frozenset({tag}),
                hidden=hidden,
                domains=domains,
                viewer=uid,
                boosts=False,
                origin=self.origin,
                only_media=self.only_media,
            )
        if uid is None:
            raise WebError(422, "This method requires an authenticated user")
        if self.channel == "direct":
            return Filter(direct=True, viewer=uid, hidden=hidden)
        if self.channel == "user:notification":  # its notification events, no statuses
            return Filter(owner=uid, viewer=uid, hidden=hidden, statuses=False)
        return await self.personal_filter(principal, params)

    async def personal_filter(self, principal: Principal, params: dict) -> Filter:
        """A user or list stream's filter: its authors, and who its user is
        and follows (redpoll.relations.visibility decides on private statuses by it)."""
        uid = principal.user_id
        owner = uid if self.channel == "user" else None
        authors = await self.members(principal, params)
        followed = (
            authors
            if self.channel == "user"
            else await self.service.engine.relations.following_ids(uid)
        )
        hidden, domains = await self.service.engine.relations.hidden_of(uid)
        return Filter(
            authors=authors,
            owner=owner,
            viewer=uid,
            followed=frozenset(followed),
            hidden=hidden,
            domains=domains,
            notifications=may_read(principal, "read:notifications"),
        )

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        try:
            params = await read_params(scope, receive)
            if params is None:  # the client left mid-body (logged)
                return
            if not (header(scope, b"authorization") or params.get("access_token")):
                raise WebError(401, "Error: Missing access token")
            principal = await identify(scope, params, self.service.verify)
            endpoint = self
            if self.media is not None and truthy(params.get("only_media")):
                endpoint = self.service.endpoints()[self.media]
            filt = await endpoint.build_filter(principal, params)
            last = last_event_id(scope)
            place = self.service.open_stream(principal.counted_as, scope)
        except WebError as exc:
            await send_error(send, exc)
            return
        handed = False  # True: the connection holds the place and releases it
        try:
            if last is not None:
                try:
                    await self.service.admit_replay(principal.counted_as, scope)
                except WebError as exc:
                    await send_error(send, exc)
                    return
            handed = await endpoint._stream(
                scope, receive, send, principal, params, filt, last, place
            )
        finally:
            if not handed:
                self.service.close_stream(place)

    async def _stream(
        self,
        scope,
        receive,
        send,
        principal: Principal,
        params: dict,
        filt: Filter,
        last: str | None,
        place: tuple,
    ) -> bool:
        hub = self.service.hub
        sub = Subscriber(
            filt,
            fmt_for(filt),
            self.service.settings.stream_queue_max,
            name=self.stream,
            base=self.service.base_for(scope),
        )
        hub.subscribe(sub)
        hub.hold(sub, principal.sessions)  # closed when its token is revoked
        handed = False
        try:
            handed = await self._pump(scope, receive, send, sub, principal, params, last, place)
            return handed
        finally:
            if not handed:
                hub.release(sub, principal.sessions)

    async def _pump(
        self,
        scope,
        receive,
        send,
        sub: Subscriber,
        principal: Principal,
        params: dict,
        last: str | None,
        place: tuple,
    ) -> bool:
        hub = self.service.hub
        if last is not None:
            await hub.replay(sub, after=last)
        headers = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),
        ]
        if can_hand_off(scope):
            headers.append(CLOSE_AFTER)
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        self.service.track(sub, self.service.settings.sse_heartbeat_s)
        if self.channel in ("user", "list"):
            # follows and list members change while the stream is open
            self.service.watch_members(sub, self, principal, params)
        handed = False
        try:
            handed = await stream_out(
                scope,
                receive,
                send,
                sub,
                frame_sse,
                self.service,
                place,
                principal.sessions,
                first=b":)\n",
            )
            return handed
        finally:
            if not handed:
                self.service.untrack(sub)
                self.service.unwatch_members(sub)
