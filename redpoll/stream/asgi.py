"""Plain-ASGI helpers shared by the stream endpoints: request parameters,
identification, error answers, and the writer loop that drains a
:class:`Subscriber` into a chunked response."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from urllib.parse import parse_qsl, unquote

from starlette.requests import ClientDisconnect, Request

from ..core import limits
from ..gateway.auth import Principal, Verifier, bearer_token
from ..gateway.body import read_body
from ..gateway.errors import WebError
from .handoff import HANDOFF, LeanStream
from .hub import PendingSend, Subscriber

log = logging.getLogger("redpoll.stream")


def header(scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


async def read_params(scope, receive) -> dict[str, str] | None:
    """Query string and (for POST) an urlencoded form body, the body winning;
    None when the client went away before sending all of it (one INFO line:
    nothing is wrong with the server)."""
    params = dict(
        parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    )
    if scope["method"] == "POST":
        try:
            body = await read_body(Request(scope, receive))
        except ClientDisconnect:
            log.info(
                "client went away", extra={"method": scope["method"], "path": scope["path"][:200]}
            )
            return None
        ctype = (header(scope, b"content-type") or "").split(";")[0].strip().lower()
        if body and ctype in ("", "application/x-www-form-urlencoded"):
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                raise WebError(406, "the request body is not UTF-8") from None
            params.update(parse_qsl(text, keep_blank_values=True))
    # parse_qsl decoded with latin-1 for the query: re-decode as UTF-8 where it was
    for k, v in list(params.items()):
        try:
            params[k] = v.encode("latin-1").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass
    return params


def _oauth1_identity(value: str) -> str | None:
    """OAuth 1.0a header (tweepy, python-twitter): its access token (or consumer
    key) names the client, like ``identifier``. The signature is not checked:
    it identifies, it does not authenticate, exactly as ``identifier`` does."""
    fields = {}
    for part in value[len("OAuth ") :].split(","):
        name, _, raw = part.strip().partition("=")
        fields[name] = unquote(raw.strip('"'))
    ident = fields.get("oauth_token") or fields.get("oauth_consumer_key")
    return f"oauth:{ident}" if ident else None


async def identify(scope, params: dict, verify: Verifier | None) -> Principal:
    """``identifier`` parameter, or a bearer token (header or ``access_token``),
    or an OAuth 1.0a header; none of them -> 401."""
    auth = header(scope, b"authorization") or ""
    token, _ = bearer_token(scope, params)
    if token:
        principal = await verify(token) if verify is not None else None
        if principal is None:
            raise WebError(
                401,
                "The access token is invalid",
                {"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        return principal
    ident = params.get("identifier")
    if ident:
        if len(ident.encode("utf-8")) > limits.IDENTIFIER_MAX_BYTES:
            raise WebError(
                406, f"Parameter identifier is longer than {limits.IDENTIFIER_MAX_BYTES} bytes"
            )
        return Principal(identifier=ident, anonymous=True)
    if auth[:6] == "OAuth ":
        ident = _oauth1_identity(auth)
        if ident:
            return Principal(identifier=ident, anonymous=True)
    raise WebError(
        401,
        "Authentication required: give an identifier parameter or a bearer token",
        {"WWW-Authenticate": 'Bearer realm="redpoll"'},
    )


async def send_error(send, exc: WebError, *, twitter: bool = False) -> None:
    """Answer ``exc`` on a plain ASGI response: Mastodon's body, or v1.1's."""
    body = json.dumps(exc.twitter_body() if twitter else exc.body()).encode()
    await send(
        {
            "type": "http.response.start",
            "status": exc.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ]
            + exc.raw_headers(),
        }
    )
    await send({"type": "http.response.body", "body": body})


async def watch_disconnect(receive, sub: Subscriber) -> None:
    """Wait for the client to go away, then release the subscription."""
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            break
    if sub.hub is not None:
        sub.hub.unsubscribe(sub)
    sub.items.clear()
    sub.closing = True
    sub.wakeup()


class _Writer:
    """A response's write path, for the hub to call while the writer waits
    (an object with slots: closures cost a connection more memory)."""

    __slots__ = ("sub", "send", "frame", "handed")

    def __init__(self, sub: Subscriber, send, frame: Callable[[tuple], bytes | None]) -> None:
        self.sub = sub
        self.send = send
        self.frame = frame
        self.handed: list = []  # at most one: a direct send that waits, or its error

    def body(self, items: list) -> bytes:
        # everything queued goes out in one write: one system call for
        # several events when a client is behind (the costly part of a
        # delivery), one per event when it keeps up
        return b"".join([x for x in map(self.frame, items) if x])

    def direct(self) -> None:
        sub = self.sub
        if sub.closing:  # the task writes the rest and ends the response
            sub.direct = None
            sub.wake_writer()
            return
        try:  # nothing raised here may reach the hub: it would stop other deliveries
            data = self.body(sub.take())
            if not data:
                return
            coro = self.send({"type": "http.response.body", "body": data, "more_body": True})
            fut = coro.send(None)
        except StopIteration:
            return  # written
        except BaseException as exc:  # the task raises it
            self.handed.append(exc)
        else:
            self.handed.append(PendingSend(coro, fut))
        sub.direct = None
        sub.wake_writer()


async def pump(
    sub: Subscriber,
    send,
    receive,
    frame: Callable[[tuple], bytes | None],
    first: bytes | None = None,
) -> None:
    """Write ``sub``'s queue to the response until the client goes away or
    the subscriber is closed. Keep-alives are queued by the service's ticker
    as ``("keepalive", None, None)`` items.

    While it waits, the writer lets the hub write for it (``sub.direct``):
    what was queued is sent at once from the hub's own call, with no task
    switch (at 10,000 streams the wake-up and the resumption of
    this task's ~15 nested coroutines were a quarter of a delivery's CPU). A
    send that has to wait for the client (flow control) is handed back to
    this task, which finishes it and writes whatever queued meanwhile."""
    sub.task = asyncio.current_task()
    watcher = asyncio.create_task(watch_disconnect(receive, sub))
    writer = _Writer(sub, send, frame)
    handed = writer.handed
    try:
        if first:
            await send({"type": "http.response.body", "body": first, "more_body": True})
        while True:
            if handed:
                work = handed.pop()
                if isinstance(work, BaseException):
                    raise work
                await work
                continue
            if not sub.items:
                if sub.closing:
                    break
                sub.direct = writer.direct
                try:
                    await sub.wait()
                finally:
                    sub.direct = None
                continue
            data = writer.body(sub.take())
            if data:
                await send({"type": "http.response.body", "body": data, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except asyncio.CancelledError:
        # a stalled client that could not take even its disconnect message: return
        # with the response unfinished, and the server closes the socket
        if not sub.stalled:
            raise
    finally:
        watcher.cancel()
        if sub.hub is not None:
            sub.hub.unsubscribe(sub)


def can_hand_off(scope) -> bool:
    """Whether the server can take this response over once started
    (``handoff.StreamHttpProtocol``, what ``redpoll serve`` runs)."""
    return HANDOFF in (scope.get("extensions") or {}) and scope.get("method") != "HEAD"


#: the response header of a stream that is handed off: the connection ends
#: with the stream (it is the stream's own from then on)
CLOSE_AFTER = (b"connection", b"close")


async def stream_out(
    scope,
    receive,
    send,
    sub: Subscriber,
    frame: Callable[[tuple], bytes | None],
    service,
    place: tuple,
    sessions: tuple,
    first: bytes | None = None,
) -> bool:
    """Write ``sub``'s queue to the started response until the stream ends.

    Where the server offers it (:func:`can_hand_off`), the connection takes
    the stream over (``handoff.LeanStream``) and this returns True at once:
    the connection releases ``place``, ``sessions``, the keep-alive and
    member tracking when it ends. Elsewhere it writes through the ASGI
    ``send`` (:func:`pump`) and returns False once the stream is over; the
    caller releases them."""
    if not can_hand_off(scope):  # (a HEAD response has no body to hand off: uvicorn drops it)
        await pump(sub, send, receive, frame, first)
        return False
    lean = LeanStream(sub, frame, service, place, sessions)
    handoff = scope["extensions"][HANDOFF]
    handoff(lean)
    if first:
        lean.write(first)
    lean.flush()  # what was queued meanwhile (a backfill, live events)
    return True
