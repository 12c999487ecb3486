"""The Twitter v1.1 streaming endpoints:

* ``GET|POST /1.1/statuses/sample.json``: ``percent`` sample (default 10,
  seeded by the client identifier; 100 is the firehose).
* ``POST|GET /1.1/statuses/filter.json``: ``track``, ``follow``,
  ``locations`` (or ``location``), ORed; none -> 406.

Common parameters: ``identifier`` (or a bearer token; neither -> 401),
``delimited=length`` (any other value: not delimited), ``stall_warnings=true``,
``count`` (-150000..150000, backfill from the event log; negative: disconnect
code 9 after it). The body is chunked JSON, one document per line ending in
``\\r\\n``, with a keep-alive ``\\r\\n`` every ``stream_keepalive_s``.
"""

from __future__ import annotations

import json
from dataclasses import replace

from ..gateway.errors import WebError
from .asgi import CLOSE_AFTER, can_hand_off, identify, read_params, send_error, stream_out
from .filters import parse_count, parse_filter
from .hub import Subscriber

FMT = "v1"


def frame_line(item: tuple) -> bytes:
    name, _, payload = item
    if name == "keepalive":
        return b"\r\n"
    if isinstance(payload, dict):
        payload = json.dumps(payload, separators=(",", ":")).encode()
    return payload + b"\r\n"


def frame_length(item: tuple) -> bytes:
    """delimited=length: the byte count of the message including its \\r\\n,
    then \\r\\n, then the message. Keep-alives stay bare newlines."""
    data = frame_line(item)
    if item[0] == "keepalive":
        return data
    return b"%d\r\n%s" % (len(data), data)


class V1Endpoint:
    def __init__(self, service, sample: bool):
        self.service = service
        self.sample = sample
        self.name = "statuses/sample" if sample else "statuses/filter"

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] not in ("GET", "POST", "HEAD"):
            await send_error(
                send, WebError(405, "Use GET or POST", {"Allow": "GET, POST"}), twitter=True
            )
            return
        try:
            params = await read_params(scope, receive)
            if params is None:  # the client left mid-body (logged)
                return
            principal = await identify(scope, params, self.service.verify)
            filt = parse_filter(params, principal.identifier, sample=self.sample)
            engine = self.service.engine
            if principal.user_id is not None and engine is not None:
                # a user's stream: whom they block, are blocked by or mute
                # stays hidden, and relation events keep it so (Filter.viewer)
                hidden, domains = await engine.relations.hidden_of(principal.user_id)
                filt = replace(filt, viewer=principal.user_id, hidden=hidden, domains=domains)
            count = parse_count(params.get("count"))
            place = self.service.open_stream(principal.counted_as, scope, over_identifier=420)
        except WebError as exc:  # ParamError too
            await send_error(send, exc, twitter=True)
            return
        handed = False  # True: the connection holds the place and releases it
        try:
            if count:
                try:
                    await self.service.admit_replay(principal.counted_as, scope)
                except WebError as exc:
                    await send_error(send, exc, twitter=True)
                    return
            handed = await self._stream(scope, receive, send, params, principal, filt, count, place)
        finally:
            if not handed:
                self.service.close_stream(place)

    async def _stream(
        self, scope, receive, send, params: dict, principal, filt, count: int, place: tuple
    ) -> bool:
        delimited = params.get("delimited", "") == "length"
        stall_warnings = params.get("stall_warnings", "").strip().lower() in ("true", "1")
        settings = self.service.settings
        sub = Subscriber(
            filt,
            FMT,
            settings.stream_queue_max,
            stall_warnings=stall_warnings,
            name=self.name,
            base=self.service.base_for(scope),
        )  # (attachments' links)
        hub = self.service.hub
        hub.subscribe(sub)
        hub.hold(sub, principal.sessions)  # closed when its token is revoked
        handed = False
        try:
            handed = await self._pump(
                scope, receive, send, sub, count, delimited, place, principal.sessions
            )
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
        count: int,
        delimited: bool,
        place: tuple,
        sessions: tuple,
    ) -> bool:
        hub = self.service.hub
        head = scope["method"] == "HEAD"
        headers = [
            (b"content-type", b"application/json; charset=utf-8"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),
        ]
        if not head and can_hand_off(scope):
            headers.append(CLOSE_AFTER)
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if head:
            hub.unsubscribe(sub)
            await send({"type": "http.response.body", "body": b""})
            return False
        if count:
            if count < 0:
                hub.unsubscribe(sub)
            await hub.replay(sub, count=count)
            if count < 0:
                sub.finish(9, "Max message limit: the backfill is complete")
        self.service.track(sub)
        handed = False
        try:
            handed = await stream_out(
                scope,
                receive,
                send,
                sub,
                frame_length if delimited else frame_line,
                self.service,
                place,
                sessions,
            )
            return handed
        finally:
            if not handed:
                self.service.untrack(sub)
