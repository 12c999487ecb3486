"""The streaming service an app mounts: one hub per process, its routes, the
keep-alive tickers, and the injected token verifier.

    service = StreamService(settings, url, verify=my_verify)
    app = Starlette(routes=[*service.routes(), ...], lifespan=...)
    # in the lifespan: await service.start() ... await service.stop()
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute

from ..core import limits
from ..core.settings import Settings
from ..engine.engine import Redpoll
from ..gateway import links
from ..gateway.auth import Principal, Verifier
from ..gateway.errors import WebError
from ..render.rendered import RenderedStatuses
from .hub import DIRECT_FMT, MASTODON_FMT, Hub, Subscriber
from .mastodon import SSE_PATHS, ConversationRenderer, Health, MastodonRenderer, SSEEndpoint
from .render import render_v1
from .v1 import FMT as V1_FMT
from .v1 import V1Endpoint
from .websocket import STREAMS, WebSocketEndpoint

log = logging.getLogger("redpoll.stream")


def verifier(rp: Redpoll) -> Verifier:
    """Bearer tokens as stream principals (streams are not rate limited)."""

    async def verify(token: str) -> Principal | None:
        info, _ = await rp.auth.authenticate(token, None)
        # a token of an account waiting for approval, or for its address to
        # be confirmed (only a marked token pays that read), opens no stream
        if info is None or info.pending:
            return None
        if (
            info.check
            and info.uid is not None
            and await rp.accounts.unconfirmed(info.uid, info.digest)
        ):
            return None
        return Principal.of(info)

    return verify


class StreamService:
    def __init__(
        self,
        settings: Settings,
        url: str | None = None,
        *,
        verify: Verifier | None = None,
        mastodon_renderer: Callable | None = None,
        engine=None,
        rendered: RenderedStatuses | None = None,
    ):
        self.settings = settings
        #: Mastodon status entities as JSON, kept per process: the API app
        #: passes its own, so REST pages and stream events share renderings
        self.rendered = rendered if rendered is not None else RenderedStatuses()
        self.url = url
        self.verify = verify
        #: the Redpoll engine, for Mastodon user/list streams (who follows whom)
        self.engine = engine
        self.renderers = {V1_FMT: render_v1}
        if mastodon_renderer is not None:
            self.renderers[MASTODON_FMT] = mastodon_renderer
        #: created by :meth:`start` (routes can be built before the URL is known)
        self.hub: Hub | None = None
        if engine is not None:
            self.attach(engine)
        self._tracked: dict[float, set[Subscriber]] = {}
        #: "id:<identifier>" / "ip:<address>" -> streams open in this process
        self._open: Counter[str] = Counter()
        self._tickers: list[asyncio.Task] = []
        self._endpoints: dict | None = None
        #: open user/list streams -> (their SSE endpoint, principal, params),
        #: re-read by one task (_refresh_members) instead of one task each
        self._members: dict[Subscriber, tuple] = {}
        #: handed-off WebSockets (handoff.LeanSocket), pinged by one task
        self.sockets: set = set()
        #: users whose list streams are being read again (members_changed) ->
        #: whether another members event came meanwhile; and those tasks
        self._rereading: dict[int, bool] = {}
        self._rereads: set[asyncio.Task] = set()

    def attach(self, engine) -> None:
        """Use ``engine`` (a Redpoll) for Mastodon streams: its tokens verify
        bearer tokens (unless a verifier was injected), its users and follows
        feed the rendering and the user/list streams."""
        self.engine = engine
        if self.verify is None:
            self.verify = verifier(engine)
        self.renderers[MASTODON_FMT] = MastodonRenderer(self)
        self.renderers[DIRECT_FMT] = ConversationRenderer(self.renderers[MASTODON_FMT])

    def endpoints(self) -> dict:
        """stream name -> its SSE endpoint (which builds that stream's filters),
        made once and shared by every WebSocket."""
        if self._endpoints is None:
            self._endpoints = {name: SSEEndpoint(self, name) for name in STREAMS}
        return self._endpoints

    def base_for(self, scope) -> str:
        """Link base for what this connection is sent: REDPOLL_PUBLIC_URL, or
        the connection's own request (never another client's)."""
        return links.base_url(scope, self.settings.public_url)

    def open_stream(self, identifier: str, scope, over_identifier: int = 429) -> tuple[str, str]:
        """Take a place for one open stream of ``identifier`` (a principal's
        ``counted_as``) from the scope's client IP; WebError
        ``over_identifier`` (v1.1: 420) or 429 when either already holds its
        limit. Give it back with :meth:`close_stream`."""
        settings = self.settings
        by_id, by_ip = f"id:{identifier}", f"ip:{client_ip(scope)}"
        held = self._open
        cap = settings.stream_connections_per_identifier
        if cap is not None and held[by_id] >= cap:
            raise WebError(
                over_identifier,
                f"Exceeded connection limit for this identifier: "
                f"at most {cap} open streams per identifier",
            )
        cap = settings.stream_connections_per_ip
        if cap is not None and held[by_ip] >= cap:
            raise WebError(
                429, f"Exceeded connection limit for this IP: at most {cap} open streams per IP"
            )
        held[by_id] += 1
        held[by_ip] += 1
        return by_id, by_ip

    def stream_closed(self, sub: Subscriber, place: tuple[str, str], sessions: tuple) -> None:
        """A handed-off stream's connection ended (``handoff.LeanStream``):
        release all its endpoint held, as the endpoint's own clean-up does."""
        hub = self.hub
        if hub is not None:
            hub.unsubscribe(sub)
            hub.release(sub, sessions)
        self.untrack(sub)
        self.unwatch_members(sub)
        self.close_stream(place)

    def close_stream(self, place: tuple[str, str]) -> None:
        held = self._open
        for key in place:
            held[key] -= 1
            if held[key] <= 0:
                del held[key]

    async def admit_replay(self, identifier: str, scope) -> None:
        """Count a backfill / resume against its identifier (a principal's
        ``counted_as``) and its client IP (one window each, in Redis, so
        every process shares the count); WebError 429 once either has had
        its share."""
        ip = client_ip(scope)
        budgets = (
            (
                "identifier",
                f"stream-replay:id:{identifier}",
                self.settings.stream_replays_per_identifier,
            ),
            ("IP", f"stream-replay:ip:{ip}", self.settings.stream_replays_per_ip),
        )
        states = await asyncio.gather(
            *(self.engine.auth.rate_hit(bucket, rate) for _, bucket, rate in budgets)
        )
        for (who, _, rate), state in zip(budgets, states):  # every attempt counts in both
            if state is not None and state.exceeded:
                wait = max(1, int(state.reset - time.time()) + 1)
                raise WebError(
                    429,
                    f"Too many backfills (count / Last-Event-ID): at most "
                    f"{rate[0]} per {rate[1]} s per {who}; retry in {wait} s",
                    {"Retry-After": str(wait)},
                )

    # --- lifecycle ------------------------------------------------------------------------
    async def start(self, url: str | None = None) -> None:
        self.url = url or self.url or self.settings.redis_url
        if self.url is None:
            raise RuntimeError("StreamService needs the Redis URL")
        self.hub = Hub(
            self.url,
            self.settings.cluster,
            self.renderers,
            shown=self.shown_now if self.engine is not None else None,
            members=self.members_changed,
            filters=self.filters_changed,
        )
        await self.hub.start()
        for interval in {
            float(self.settings.stream_keepalive_s),
            float(self.settings.sse_heartbeat_s),
        }:
            self._tracked.setdefault(interval, set())
            self._tickers.append(asyncio.create_task(self._tick(interval)))
        self._tickers.append(asyncio.create_task(self._check_tokens()))
        self._tickers.append(asyncio.create_task(self._refresh_members()))
        self._tickers.append(asyncio.create_task(self._ping_sockets()))

    async def stop(self) -> None:
        for task in self._tickers:
            task.cancel()
        for task in self._tickers:
            try:
                await task
            except asyncio.CancelledError:
                pass
        if self.hub is not None:
            await self.hub.stop()

    # --- keep-alives ----------------------------------------------------------------------
    def track(self, sub: Subscriber, interval: float | None = None) -> None:
        interval = float(self.settings.stream_keepalive_s if interval is None else interval)
        self._tracked.setdefault(interval, set()).add(sub)

    def untrack(self, sub: Subscriber) -> None:
        for subs in self._tracked.values():
            subs.discard(sub)

    async def _tick(self, interval: float) -> None:
        """Every ``interval``: each idle connection of this interval gets a keep-alive."""
        while True:
            await asyncio.sleep(interval)
            for sub in self._tracked.get(interval, ()):
                if not sub.items and not sub.closing:
                    sub.items.append(("keepalive", None, None))
                    sub.wakeup()

    async def _ping_sockets(self) -> None:
        """Every ``ws_ping_s`` (``limits.WS_PING_INTERVAL_S``): a ping to each
        handed-off WebSocket; one that has not answered the last one is
        dropped (as uvicorn's own keep-alive, which pings the sockets it
        still holds)."""
        while True:
            await asyncio.sleep(self.settings.ws_ping_s)
            for sock in list(self.sockets):
                sock.ping()

    # --- user / list stream members ---------------------------------------------------------
    def watch_members(self, sub: Subscriber, endpoint, principal, params: dict) -> None:
        """Re-read ``sub``'s authors (who its user follows, its list's members)
        every ``limits.MEMBERSHIP_REFRESH_S`` while it is open."""
        self._members[sub] = (endpoint, principal, params)

    def unwatch_members(self, sub: Subscriber) -> None:
        self._members.pop(sub, None)

    async def _refresh_members(self) -> None:
        """Every ``limits.MEMBERSHIP_REFRESH_S``: each open user/list stream's
        filter is built afresh, once per (channel, user, list) however many
        streams share it, a few at a time; a stream whose list is gone ends;
        and every stream's content filters are read again (by version).
        One task for all of them: a task per stream cost memory."""
        while True:
            await asyncio.sleep(limits.MEMBERSHIP_REFRESH_S)
            groups: dict[tuple, tuple] = {}
            for sub, (endpoint, principal, params) in list(self._members.items()):
                key = (endpoint.channel, principal.user_id, params.get("list", ""))
                groups.setdefault(key, (endpoint, principal, params, []))[3].append(sub)
            todo = list(groups.values())
            for start in range(0, len(todo), limits.MEMBERSHIP_REFRESH_BATCH):
                await asyncio.gather(
                    *(
                        self._refresh_group(*group)
                        for group in todo[start : start + limits.MEMBERSHIP_REFRESH_BATCH]
                    )
                )
            # content filters too, should a filters event have been lost (a
            # process that died between the write and the event): one read
            # of the version per user when unchanged
            viewers = list(
                {
                    sub.filter.viewer
                    for sub in self.hub.index.subscribers()
                    if sub.filter.context is not None
                }
            )
            for start in range(0, len(viewers), limits.MEMBERSHIP_REFRESH_BATCH):
                await asyncio.gather(
                    *(
                        self.filters_changed(uid)
                        for uid in viewers[start : start + limits.MEMBERSHIP_REFRESH_BATCH]
                    )
                )

    def members_changed(self, uid: int) -> None:
        """A members event for ``uid`` (Hub.members): their open user and
        list streams read their members again now, in a task of their own
        (the hub's reader goes on); one at a time per user."""
        if uid in self._rereading:
            self._rereading[uid] = True  # once more when the running one is done
            return
        self._rereading[uid] = False
        task = asyncio.create_task(self._reread(uid))
        self._rereads.add(task)
        task.add_done_callback(self._rereads.discard)

    async def _reread(self, uid: int) -> None:
        try:
            while True:
                groups: dict[tuple, tuple] = {}
                for sub, (endpoint, principal, params) in list(self._members.items()):
                    if principal.user_id == uid:
                        key = (endpoint.channel, params.get("list", ""))
                        groups.setdefault(key, (endpoint, principal, params, []))[3].append(sub)
                await asyncio.gather(*(self._refresh_group(*g) for g in groups.values()))
                if not self._rereading.get(uid):
                    return
                self._rereading[uid] = False
        finally:
            self._rereading.pop(uid, None)

    async def _refresh_group(self, endpoint, principal, params: dict, subs: list) -> None:
        # a relation event applied while this reads (Hub.relate) is newer
        # than what it reads: those streams keep it, the next pass re-reads
        before = {sub: sub.filter for sub in subs}
        try:
            fresh = await endpoint.personal_filter(principal, params)
        except WebError:  # the list is gone
            for sub in subs:
                if sub in self._members:
                    self.unwatch_members(sub)
                    sub.finish(1, "list deleted")
            return
        except Exception:  # Redis away: keep the last known members
            return
        for sub in subs:
            old = sub.filter
            if (
                sub in self._members
                and old is before[sub]
                and (fresh.authors, fresh.followed, fresh.hidden)
                != (old.authors, old.followed, old.hidden)
            ):
                # its content filters stay (a filters event keeps them current)
                self.hub.refilter(sub, replace(fresh, context=old.context, words=old.words))

    async def filters_changed(self, uid: int) -> None:
        """A filters event for ``uid`` (Hub.filters): their open streams
        take their content filters and the user's domain blocks as they are
        now, before the hub matches the next event (one read, for all of
        them)."""
        try:
            words, (_, domains) = await asyncio.gather(
                self.engine.filters.active(uid), self.engine.relations.hidden_of(uid)
            )
        except Exception:  # Redis away: the next change (or reconnect) brings them
            log.warning("could not read the filters of user %s", uid, exc_info=True)
            return
        for sub in list(self.hub.index.viewing(uid)):
            if sub.filter.context is not None:
                sub.filter.words = words
            if sub.filter.domains != domains:  # its domain blocks, read with them
                self.hub.refilter(sub, replace(sub.filter, domains=domains))

    async def shown_now(self, sub: Subscriber, evs: list) -> list:
        """Of the events a replay found for ``sub`` (``Hub.replay``), those
        REST would show its user now: a status (and a boost's original)
        that still exists, whose author is not suspended, that the one
        visibility decision lets the stream's user see (redpoll.relations.visibility,
        mutes included, as on every stream; anonymous: public and unlisted
        only). Deletions pass (a bare id), and notifications pass to their
        renderer, which asks the same when it renders them. A few round
        trips for at most a queue's worth of events."""
        sids: list[int] = []
        for ev in evs:
            if ev.owner is None and not ev.deleted:
                sids.append(ev.sid)
                reblog = ev.status.get("reblog")
                if isinstance(reblog, dict):
                    sids.append(int(reblog["id"]))
        if not sids:
            return evs
        seen = await self.engine.timelines.visible_ids(sub.filter.viewer, sids)
        out = []
        for ev in evs:
            if ev.owner is not None or ev.deleted:
                out.append(ev)
                continue
            reblog = ev.status.get("reblog")
            if ev.sid in seen and (not isinstance(reblog, dict) or int(reblog["id"]) in seen):
                out.append(ev)
        return out

    async def _check_tokens(self) -> None:
        """Every ``stream_token_check_s`` (``limits.STREAM_TOKEN_CHECK_S``): close the streams whose token
        no longer exists. Revocation closes them at once through its end event;
        this catches a revocation that died before publishing it."""
        while True:
            await asyncio.sleep(self.settings.stream_token_check_s)
            digests = [k[6:] for k in list(self.hub.sessions) if k.startswith("token:")]
            for start in range(0, len(digests), 1000):
                chunk = digests[start : start + 1000]
                try:
                    gone = await self.engine.auth.missing_tokens(chunk)
                except Exception as exc:  # Redis away: try again next round
                    log.warning("stream token check failed: %s", type(exc).__name__)
                    break
                for dig in gone:
                    self.hub.end(f"token:{dig}")

    async def start_for(self, engine) -> None:
        """Attach ``engine`` and start on the Redis it talks to (the API's lifespan)."""
        self.attach(engine)
        await self.start(engine.url)

    async def _stats(self, request):
        """Counters of this process's hub (subscribers, events, deliveries,
        stalls, reconnects), for the benchmark and operators on the machine
        itself: answered on loopback only."""
        client = request.client.host if request.client else ""
        if client not in ("127.0.0.1", "::1"):
            return JSONResponse({"error": "Record not found"}, status_code=404)
        return JSONResponse(self.hub.stats() if self.hub else {})

    # --- routes ---------------------------------------------------------------------------
    def routes(self) -> list[Route | WebSocketRoute]:
        sample = V1Endpoint(self, sample=True)
        filt = V1Endpoint(self, sample=False)
        routes = [
            Route("/1.1/statuses/sample.json", sample, methods=["GET", "POST"]),
            Route("/1.1/statuses/filter.json", filt, methods=["GET", "POST"]),
            Route("/api/v1/streaming/health", Health(), methods=["GET"]),
            Route("/stream/stats", self._stats, methods=["GET"]),
        ]
        for path, (stream, media) in SSE_PATHS.items():
            routes.append(
                Route(
                    f"/api/v1/streaming/{path}", SSEEndpoint(self, stream, media), methods=["GET"]
                )
            )
        # Mastodon's multiplexed WebSocket (redpoll/stream/websocket.py)
        routes.append(WebSocketRoute("/api/v1/streaming", WebSocketEndpoint(self)))
        return routes


def client_ip(scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"
