"""Plain-ASGI helpers shared by the stream endpoints: request parameters,
identification, error answers, and the writer loop that drains a
:class:`Subscriber` into a chunked response."""
from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Awaitable, Callable
from urllib.parse import parse_qsl, unquote

from .. import limits
from .hub import Subscriber

log = logging.getLogger("redpoll.stream")

#: Largest request body read (form-encoded filter parameters).
MAX_BODY = 512 * 1024


@dataclass(frozen=True)
class Principal:
    """Who a bearer token belongs to: ``identifier`` seeds the sample, ``user_id``
    (when the token is a user's) feeds the Mastodon user and list streams."""
    identifier: str
    user_id: int | None = None
    scopes: frozenset = frozenset()
    #: digest of the bearer token it came with (None: an identifier parameter)
    token: str | None = None

    @property
    def sessions(self) -> tuple[str, ...]:
        """What an "end" event names to close this principal's streams
        (``Hub.hold``): its token, and its user."""
        out = ()
        if self.token is not None:
            out += (f"token:{self.token}",)
        if self.user_id is not None:
            out += (f"user:{self.user_id}",)
        return out


#: token -> Principal, or None for an unknown / revoked token
Verifier = Callable[[str], Awaitable["Principal | None"]]


class HTTPError(Exception):
    def __init__(self, status: int, message: str, headers: list | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or []


def header(scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


async def read_params(scope, receive) -> dict[str, str] | None:
    """Query string and (for POST) an urlencoded form body, the body winning;
    None when the client went away before sending all of it (one INFO line:
    nothing is wrong with the server)."""
    params = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
    if scope["method"] == "POST":
        body = bytearray()
        more = True
        while more:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                log.info("client went away", extra={"method": scope["method"],
                                                     "path": scope["path"][:200]})
                return None
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
            if len(body) > MAX_BODY:
                raise HTTPError(413, f"request body larger than {MAX_BODY} bytes")
        ctype = (header(scope, b"content-type") or "").split(";")[0].strip().lower()
        if body and ctype in ("", "application/x-www-form-urlencoded"):
            try:
                text = bytes(body).decode("utf-8")
            except UnicodeDecodeError:
                raise HTTPError(406, "the request body is not UTF-8") from None
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
    for part in value[len("OAuth "):].split(","):
        name, _, raw = part.strip().partition("=")
        fields[name] = unquote(raw.strip('"'))
    ident = fields.get("oauth_token") or fields.get("oauth_consumer_key")
    return f"oauth:{ident}" if ident else None


async def identify(scope, params: dict, verify: Verifier | None) -> Principal:
    """``identifier`` parameter, or a bearer token (header or ``access_token``),
    or an OAuth 1.0a header; none of them -> 401."""
    auth = header(scope, b"authorization") or ""
    token = None
    if auth[:7].lower() == "bearer ":
        token = auth[7:].strip()
    elif params.get("access_token"):
        token = params["access_token"]
    if token:
        principal = await verify(token) if verify is not None else None
        if principal is None:
            raise HTTPError(401, "The access token is invalid",
                            [(b"www-authenticate", b'Bearer error="invalid_token"')])
        return principal
    ident = params.get("identifier")
    if ident:
        if len(ident.encode("utf-8")) > limits.IDENTIFIER_MAX_BYTES:
            raise HTTPError(406, f"Parameter identifier is longer than {limits.IDENTIFIER_MAX_BYTES} bytes")
        return Principal(identifier=ident)
    if auth[:6] == "OAuth ":
        ident = _oauth1_identity(auth)
        if ident:
            return Principal(identifier=ident)
    raise HTTPError(401, "Authentication required: give an identifier parameter or a bearer token",
                    [(b"www-authenticate", b'Bearer realm="redpoll"')])


async def send_error(send, status: int, message: str, headers: list | None = None) -> None:
    body = json.dumps({"errors": [{"code": status, "message": message}], "error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())] + (headers or [])})
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
    sub.wake.set()


async def pump(sub: Subscriber, send, receive, frame: Callable[[tuple], bytes | None],
               first: bytes | None = None) -> None:
    """Write ``sub``'s queue to the response, one item per chunk, until the
    client goes away or the subscriber is closed. Keep-alives are queued by the
    service's ticker as ``("keepalive", None, None)`` items."""
    sub.task = asyncio.current_task()
    watcher = asyncio.create_task(watch_disconnect(receive, sub))
    try:
        if first:
            await send({"type": "http.response.body", "body": first, "more_body": True})
        items = sub.items
        while True:
            if not items:
                if sub.closing:
                    break
                sub.wake.clear()
                await sub.wake.wait()
                continue
            data = frame(items.popleft())
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
