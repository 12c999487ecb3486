"""The per-process hub: one reader of the event log, fanned out in-process.

One task reads the event log (``redpoll.bus.events``, a capped Redis Stream) with
XREAD BLOCK from its own connection, decodes each event once, finds the
subscribers whose filter matches through a :class:`FilterIndex`, renders the
event once per output format and appends it to each subscriber's bounded
queue. Appending never waits: a subscriber whose queue is full is cut off
(disconnect code 4, "Stall") and nobody else notices; at 60% full it gets a
FALLING_BEHIND warning if it asked for stall warnings.

Losing Redis: the reader retries with back-off from the last entry id it
handled, so subscribers stay connected and miss nothing the log still holds.
Resume: :meth:`Hub.replay` splices the recent past (v1.1 ``count``, SSE
``Last-Event-ID``) in front of the live events a new subscriber has already
queued, without duplicates.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from redis.exceptions import RedisClusterException, RedisError

from ..bus import events
from ..bus.events import FIELD
from ..core import limits
from ..core.health import DATABASE
from ..storage.store import own_client
from .filters import Event, Filter
from .index import FilterIndex

log = logging.getLogger("redpoll.stream")

#: fmt name -> renderer(Event, base URL) -> bytes (or an awaitable of bytes, or None
#: to skip); the base URL (scheme://host) is the one for links in the rendering
Renderer = Callable[[Event, str], "bytes | None | Awaitable[bytes | None]"]


def entry_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


#: the format of every Mastodon stream but a direct one
MASTODON_FMT = "mastodon"
#: the format of a Mastodon direct stream, followed by its user's id
DIRECT_FMT = "direct:"


def fmt_for(filt: Filter) -> str:
    """The rendering a Mastodon subscriber gets: a direct stream's is its
    user's own (the Conversation entity names the other participants), every
    other Mastodon stream shares MASTODON_FMT."""
    return f"{DIRECT_FMT}{filt.viewer}" if filt.direct else MASTODON_FMT


def filtered(sub: Subscriber, ev: Event, item: tuple) -> tuple | None:
    """``item`` (a rendered event) as ``sub`` gets it with its user's content
    filters (redpoll.filters.rules, in its stream's context): None when a
    ``hide`` filter meets the status, with ``filtered`` when a ``warn`` one
    does. The shared rendering is never changed: a matched one is copied."""
    f = sub.filter
    if not f.words or ev.owner is not None or ev.deleted or sub.fmt != MASTODON_FMT:
        return item
    status, original = ev.statuses()
    result = f.words.apply(status, original, context=f.context, viewer=f.viewer)
    if result is None:
        return item
    if result.hidden:
        return None
    name, entry_id, data = item
    return name, entry_id, data[:-1] + b',"filtered":' + result.json() + b"}"


def event_name(ev: Event, fmt: str) -> str:
    """What a client calls the event: a direct stream's new status is a
    ``conversation`` (Mastodon), everything else its kind."""
    if fmt.startswith(DIRECT_FMT) and not ev.deleted:
        return "conversation"
    return ev.kind


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Subscriber:
    """One streaming connection's side of the hub: its filter and its queue.

    Items are ``(name, entry_id, payload)``: ``name`` is "update"/"delete" for
    events (payload: rendered bytes) or a control message name ("warning",
    "disconnect"; payload: a dict) that the connection renders itself.
    """

    # Memory per connection (10,000 streams in one process): slots,
    # a plain list for the queue (a deque and an asyncio.Event each allocate
    # a 64-slot block, ~760 B, up front) and a future made only while the
    # writer waits.
    __slots__ = (
        "filter",
        "fmt",
        "base",
        "maxsize",
        "stall_warnings",
        "items",
        "waiter",
        "direct",
        "closing",
        "warned_at",
        "task",
        "hub",
        "name",
        "stalled",
        "__weakref__",
    )

    def __init__(
        self,
        filt: Filter,
        fmt: str,
        maxsize: int,
        *,
        stall_warnings: bool = False,
        name: str = "",
        base: str = "",
    ) -> None:
        self.filter = filt
        self.fmt = fmt
        #: scheme://host for links in what this subscriber gets: the configured
        #: public URL or this client's own request, never another client's
        self.base = base
        self.maxsize = maxsize
        self.stall_warnings = stall_warnings
        #: queued items, oldest first; the writer takes them all at once (take)
        self.items: list = []
        self.waiter: asyncio.Future | None = None
        #: set by an idle writer that can write at once (http.pump): called
        #: instead of waking its task, so a delivery costs no task switch
        self.direct: Callable[[], None] | None = None
        self.closing = False  # write what is queued, then end the response
        self.stalled = False
        self.warned_at = -1e18
        self.task: asyncio.Task | None = None  # the writer, cancelled if a stall cannot flush
        self.hub: Hub | None = None
        self.name = name

    def wakeup(self) -> None:
        """Something was queued, or the subscriber is closing: an idle writer
        that writes directly does so now (a closing one hands itself back to
        its task, or ends the stream: handoff.LeanStream); else wake the
        writer if it waits."""
        if self.direct is not None:
            hub = self.hub
            if hub is not None and hub.deferred is not None:
                hub.deferred.add(self)  # written once, after the hub's whole batch
                return
            self.direct()
            return
        self.wake_writer()

    def wake_writer(self) -> None:
        waiter = self.waiter
        if waiter is not None:
            self.waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self) -> None:
        """Until something is queued or the subscriber is closing."""
        if self.items or self.closing:
            return
        waiter = self.waiter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self.waiter = None

    def take(self) -> list:
        """Everything queued, oldest first; the queue is empty after."""
        items = self.items
        self.items = []
        return items

    # called by the hub; never blocks
    def offer(self, item: tuple) -> None:
        if self.closing:
            return
        size = len(self.items)
        if size >= self.maxsize:
            self.stall()
            return
        self.items.append(item)
        if self.stall_warnings and size + 1 >= self.maxsize * limits.STALL_WARNING_FRACTION:
            now = time.monotonic()
            if now - self.warned_at >= limits.STALL_WARNING_INTERVAL_S:
                self.warned_at = now
                percent = (size + 1) * 100 // self.maxsize
                self.items.append(
                    (
                        "warning",
                        None,
                        {
                            "warning": {
                                "code": "FALLING_BEHIND",
                                "message": f"Your connection is falling behind and messages are being queued "
                                f"for delivery to you. Your queue is now over "
                                f"{int(limits.STALL_WARNING_FRACTION * 100)}% full. You will be "
                                f"disconnected when the queue is full.",
                                "percent_full": percent,
                            }
                        },
                    )
                )
        self.wakeup()

    def finish(self, code: int, reason: str) -> None:
        """Queue a disconnect message and end after it (codes as Twitter v1.1)."""
        if self.closing:
            return
        self.items.append(
            (
                "disconnect",
                None,
                {"disconnect": {"code": code, "stream_name": self.name, "reason": reason}},
            )
        )
        self.closing = True
        self.wakeup()
        if self.hub is not None:
            self.hub.unsubscribe(self)

    def stall(self) -> None:
        """The queue is full: drop it, say why, and close even if that cannot be written."""
        self.items.clear()
        self.stalled = True
        self.finish(4, "Stall: the client is not reading fast enough; its queue is full")
        if self.hub is not None:
            self.hub.stalls += 1
        task = self.task
        if task is not None:
            asyncio.get_running_loop().call_later(limits.STALL_CLOSE_GRACE_S, task.cancel)


class PendingSend:
    """Awaits, in the writer's own task, a send that a direct write started
    and that had to wait (the transport's flow control): it hands the futures
    the send waits on to the task, as an ``await`` inside the task would."""

    __slots__ = ("coro", "fut")

    def __init__(self, coro, fut) -> None:
        self.coro = coro
        self.fut = fut

    def __await__(self):
        coro, fut = self.coro, self.fut
        while True:
            try:
                yield fut
            except BaseException as exc:  # cancelled (a stall) while it waited
                try:
                    fut = coro.throw(exc)
                except StopIteration:
                    return
                continue
            try:
                fut = coro.send(None)
            except StopIteration:
                return


#: (subscriber, replayed events) -> those of them shown now (StreamService.shown_now)
Shown = Callable[[Subscriber, list], Awaitable[list]]


class Hub:
    def __init__(
        self,
        url: str,
        cluster: bool,
        renderers: dict[str, Renderer],
        shown: Shown | None = None,
        members: Callable[[int], None] | None = None,
        filters: Callable[[int], Awaitable[None]] | None = None,
    ) -> None:
        self.url = url
        #: told of a filters event (a user's content filters changed): awaited,
        #: so the next event is matched with the filters as they are now
        self.filters = filters
        self.cluster = cluster
        self.renderers = renderers
        #: told of a members event (a user's lists changed): it schedules
        #: the re-read of their list streams, never awaited here
        self.members = members
        #: asked at replay time which of the replayed events are shown now
        #: (statuses deleted since, suspended authors, the visibility decision)
        self.shown = shown
        self.index = FilterIndex()
        self.cursor: str | None = None
        self._task: asyncio.Task | None = None
        self._reader = None
        self._client = None
        self.connected = asyncio.Event()
        #: while the hub dispatches a backlog (one read returned several
        #: events), the idle writers it queued for; each writes once after
        self.deferred: set | None = None
        #: "token:<digest>" / "user:<id>" -> open streams an "end" event closes
        self.sessions: dict[str, set[Subscriber]] = {}
        #: sessions ended lately -> when (a stream that was being opened as its
        #: end event went by is closed as soon as it is held)
        self._ended: dict[str, float] = {}
        # figures
        self.events = 0
        self.deliveries = 0
        self.stalls = 0
        self.reconnects = 0
        self.backlog_reads = 0  # reads of the log that returned several events
        #: ms from a status's creation to the hub's last write of it (or its
        #: last queueing, for a writer that was busy), latest events only:
        #: the server's share of the delivery latency
        self.lags: deque = deque(maxlen=limits.STREAM_LAG_SAMPLES)

    # --- lifecycle -----------------------------------------------------------------------
    def _connect(self, blocking: bool):
        return own_client(self.url, self.cluster, blocking=blocking)

    async def start(self) -> None:
        self._reader = self._connect(True)
        self._client = self._connect(False)
        self._task = asyncio.create_task(self._run(), name="redpoll-stream-hub")

    async def stop(self) -> None:
        for sub in list(self.index.subscribers()):
            sub.finish(1, "Shutdown: the server is going down")
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        for client in (self._reader, self._client):
            if client is not None:
                try:
                    await client.aclose()
                except Exception:
                    pass

    # --- subscribers -----------------------------------------------------------------------
    def subscribe(self, sub: Subscriber) -> None:
        sub.hub = self
        self.index.add(sub, sub.filter)

    def unsubscribe(self, sub: Subscriber) -> None:
        self.index.remove(sub)

    def refilter(self, sub: Subscriber, filt: Filter) -> None:
        """Change a live subscriber's filter (Mastodon home/list membership)."""
        sub.filter = filt
        if sub in self.index:
            self.index.add(sub, filt)

    def relate(self, ev: events.RelationEvent) -> int:
        """Apply a relation event to the open streams of both its users, at
        once and without a read (the event carries the state): whom a user
        stream shows (its authors), whose private statuses a user or list
        stream may show (followed), and whom every stream of the user hides
        (hidden). A follow that ends takes the account out of the user's
        lists (redpoll.relations.unlisting), so a list stream stops showing
        it too (one only asked to follow, never in ``followed``, stays).
        Returns how many streams changed. Applying it again changes
        nothing; the membership refresh (StreamService) re-reads what a
        stale event may have left."""
        changed = 0
        for viewer, other, follows, hides in ev.sides():
            for sub in list(self.index.viewing(viewer)):
                f = sub.filter
                authors, followed, hidden = f.authors, f.followed, f.hidden
                if follows is not None:
                    if f.owner == viewer:  # a user stream: the home's authors
                        authors = authors | {other} if follows else authors - {other}
                    elif not follows and other in f.followed:  # a list stream: it left the list
                        authors = authors - {other}
                    if f.owner == viewer or f.authors or f.followed:  # user and list streams
                        followed = followed | {other} if follows else followed - {other}
                if hides is not None:
                    hidden = hidden | {other} if hides else hidden - {other}
                if (authors, followed, hidden) != (f.authors, f.followed, f.hidden):
                    self.refilter(
                        sub, replace(f, authors=authors, followed=followed, hidden=hidden)
                    )
                    changed += 1
        return changed

    # --- sessions: streams an "end" event closes (revocation, suspension) -------------------
    def hold(self, sub: Subscriber, sessions: tuple[str, ...]) -> None:
        """Close ``sub`` when an end event names one of ``sessions``
        (``Principal.sessions``); at once if one was ended lately."""
        now = time.monotonic()
        for key in sessions:
            self.sessions.setdefault(key, set()).add(sub)
        if any(now - self._ended.get(key, -1e18) < limits.STREAM_ENDED_KEPT_S for key in sessions):
            sub.finish(6, "Token revoked: the access token was revoked or its user suspended")

    def release(self, sub: Subscriber, sessions: tuple[str, ...]) -> None:
        for key in sessions:
            held = self.sessions.get(key)
            if held is not None:
                held.discard(sub)
                if not held:
                    del self.sessions[key]

    def end(self, key: str) -> int:
        """Close every stream held under ``key``; returns how many."""
        now = time.monotonic()
        ended = self._ended
        ended[key] = now
        if len(ended) > limits.STREAM_ENDED_KEPT:
            for old in [k for k, at in ended.items() if now - at >= limits.STREAM_ENDED_KEPT_S]:
                del ended[old]
            while len(ended) > limits.STREAM_ENDED_KEPT:
                del ended[next(iter(ended))]
        subs = self.sessions.pop(key, ())
        for sub in subs:
            sub.finish(6, "Token revoked: the access token was revoked or its user suspended")
        return len(subs)

    @property
    def subscribers(self) -> int:
        return len(self.index)

    # --- rendering -------------------------------------------------------------------------
    async def render(self, ev: Event, fmt: str, base: str = "") -> bytes | None:
        """``ev`` in format ``fmt`` with links under ``base``, rendered once per
        (format, base) and kept on the event for every subscriber alike."""
        key = (fmt, ev.kind, base)
        if key in ev.rendered:
            return ev.rendered[key]
        if fmt.startswith(DIRECT_FMT):  # "direct:<uid>": a conversation as its user sees it
            out = self.renderers[DIRECT_FMT](ev, base, int(fmt[len(DIRECT_FMT) :]))
        else:
            out = self.renderers[fmt](ev, base)
        if inspect.isawaitable(out):
            out = await out
        ev.rendered[key] = out
        return out

    # --- the reader ------------------------------------------------------------------------
    async def _run(self) -> None:
        delay = limits.RECONNECT_FIRST_S
        lost = False
        while True:
            try:
                if self.cursor is None:
                    self.cursor = await events.newest_id(self._reader)
                elif lost:  # connected only once the server answered again
                    await self._reader.ping()
                    lost = False
                self.connected.set()
                entries = await events.read_after(
                    self._reader, self.cursor, limits.EVENT_READ_COUNT, limits.EVENT_READ_BLOCK_MS
                )
                delay = limits.RECONNECT_FIRST_S
                DATABASE.back("stream hub")
                # Behind (several events in one read): queue them all, then
                # write each connection once, so a backlog costs a system call
                # per connection rather than per delivery and is caught up
                # sooner; in step (one event a read), each is written at once.
                deferred = self.deferred = set() if len(entries) > 1 else None
                if deferred is not None:
                    self.backlog_reads += 1
                try:
                    for entry_id, fields in entries:
                        self.cursor = _text(entry_id)
                        await self._dispatch(self.cursor, fields)
                finally:
                    self.deferred = None
                    for sub in deferred or ():
                        sub.wakeup()
            except asyncio.CancelledError:
                raise
            except (RedisError, RedisClusterException, OSError) as exc:
                self.connected.clear()
                lost = True
                self.reconnects += 1
                DATABASE.lost("stream hub", exc)  # one log line per outage, not per retry
                await asyncio.sleep(delay)
                delay = min(delay * 2, limits.RECONNECT_MAX_S)
            except Exception:  # a bad entry must not stop the stream for everyone
                log.exception("event log reader failed on an entry; skipping it")

    def _decode(
        self, entry_id: str, fields: dict
    ) -> (
        Event
        | events.EndEvent
        | events.RelationEvent
        | events.MembersEvent
        | events.FiltersEvent
        | None
    ):
        """A status event as an :class:`Event`, an end, relation or members event as itself
        (schemas: ``redpoll.bus.events``); None for anything unreadable."""
        payload = fields.get(FIELD.encode(), fields.get(FIELD))
        if payload is None:
            return None
        try:
            event = events.parse(payload)
        except (ValueError, KeyError, TypeError):
            log.warning("unreadable event %s", entry_id)
            return None
        if isinstance(
            event, (events.EndEvent, events.RelationEvent, events.MembersEvent, events.FiltersEvent)
        ):
            return event
        if isinstance(event, events.NotificationEvent):
            return Event.for_notification(entry_id, event)
        return Event(entry_id, event.kind, event.status)

    async def _dispatch(self, entry_id: str, fields: dict) -> None:
        ev = self._decode(entry_id, fields)
        if ev is None:
            return
        if isinstance(ev, events.EndEvent):  # close the streams it names
            for key in ev.sessions:
                self.end(key)
            return
        if isinstance(ev, events.RelationEvent):  # before any later event is matched
            self.relate(ev)
            return
        if isinstance(ev, events.MembersEvent):
            if self.members is not None and self.index.viewing(ev.user):
                self.members(ev.user)
            return
        if isinstance(ev, events.FiltersEvent):
            if self.filters is not None and self.index.viewing(ev.user):
                await self.filters(ev.user)
            return
        self.events += 1
        matched = self.index.match(ev)
        if not matched:
            return
        by_fmt: dict[tuple[str, str], list[Subscriber]] = {}
        for sub in matched:
            by_fmt.setdefault((sub.fmt, sub.base), []).append(sub)
        for (fmt, base), subs in by_fmt.items():
            data = await self.render(ev, fmt, base)
            if data is None:
                continue
            item = (event_name(ev, fmt), ev.id, data)
            for sub in subs:
                if sub.filter.words:  # the subscriber's content filters
                    mine = filtered(sub, ev, item)
                    if mine is not None:
                        sub.offer(mine)
                        self.deliveries += 1
                    continue
                sub.offer(item)
                self.deliveries += 1
        if ev.kind == events.UPDATE:  # a post's lag (not an edit's, nor a deletion's)
            created = ev.status.get("created_at")
            if isinstance(created, int):
                self.lags.append(time.time() * 1000 - created)

    # --- resume ------------------------------------------------------------------------------
    async def replay(self, sub: Subscriber, *, count: int = 0, after: str | None = None) -> int:
        """Put the recent past in front of ``sub``'s queue: the last ``count``
        events (v1.1 backfill; filtered, so fewer may match) or every retained
        event after entry id ``after`` (SSE Last-Event-ID). Returns the number
        of events queued. Call after :meth:`subscribe` so nothing falls between.

        Bounded: the log is read in pages of
        ``limits.REPLAY_PAGE_ENTRIES``, only matching events are kept, and as
        soon as more match than the queue has room for, the subscriber is cut
        off as stalled (it could never take them) and reading stops. So one
        replay holds at most a queue's worth of events and one page."""
        matched: list[Event] = []
        newest: str | None = None  # the newest entry id considered
        if count:
            want = min(abs(count), limits.EVENT_LOG_MAXLEN)
            top = "+"
            while want > 0 and not sub.closing:
                page = await events.page_back(
                    self._client, top, min(want, limits.REPLAY_PAGE_ENTRIES)
                )
                if not page:
                    break
                if newest is None:
                    newest = _text(page[0][0])
                want -= len(page)
                top = "(" + _text(page[-1][0])
                if not self._keep(sub, page, matched):
                    return 0
            matched.reverse()
        elif after is not None:
            start, seen = "(" + after, 0
            while seen < limits.EVENT_LOG_MAXLEN and not sub.closing:
                page = await events.page_forward(self._client, start, limits.REPLAY_PAGE_ENTRIES)
                if not page:
                    break
                seen += len(page)
                newest = _text(page[-1][0])
                start = "(" + newest
                if not self._keep(sub, page, matched):
                    return 0
        if newest is None or sub.closing:
            return 0
        if self.shown is not None and matched:
            # what REST would show now: the log still holds statuses deleted
            # since, by accounts suspended since, or no longer visible
            matched = await self.shown(sub, matched)
        rendered = []
        for ev in matched:
            data = await self.render(ev, sub.fmt, sub.base)
            if data is not None:
                item = filtered(sub, ev, (event_name(ev, sub.fmt), ev.id, data))
                if item is not None:
                    rendered.append(item)
        last = entry_key(newest)
        live = list(sub.items)
        sub.items.clear()
        for item in rendered:
            sub.offer(item)
        for item in live:
            if item[1] is None or entry_key(item[1]) > last:
                sub.offer(item)
        return len(rendered)

    def _keep(self, sub: Subscriber, page: list, matched: list[Event]) -> bool:
        """Add the events of ``page`` that ``sub`` matches to ``matched``;
        False (and ``sub`` cut off) once they cannot fit its queue."""
        room = sub.maxsize - len(sub.items)
        for entry_id, fields in page:
            ev = self._decode(_text(entry_id), fields)
            if isinstance(ev, Event) and sub.filter.matches(ev):
                matched.append(ev)
                if len(matched) > room:
                    matched.clear()
                    sub.stall()
                    return False
        return True

    def stats(self) -> dict[str, Any]:
        lags = sorted(self.lags)

        def pct(p: float):
            return round(lags[min(len(lags) - 1, int(len(lags) * p))], 1) if lags else None

        return {
            "subscribers": self.subscribers,
            "events": self.events,
            "deliveries": self.deliveries,
            "stalls": self.stalls,
            "reconnects": self.reconnects,
            "cursor": self.cursor,
            "backlog_reads": self.backlog_reads,
            "lag_ms_p50": pct(0.5),
            "lag_ms_p99": pct(0.99),
            "lag_ms_max": round(lags[-1], 1) if lags else None,
        }
