"""The one authentication backend of the HTTP edge: REST, SSE, WebSocket and
the v1.1 streams find a bearer token the same way and turn it into the same
records through ``redpoll.accounts.auth`` (a token is one Redis lookup, never cached,
so a revoked token fails on the very next request).

* :func:`bearer_token`: ``Authorization: Bearer``; where the surface allows
  it, the ``access_token`` parameter (streams, as Mastodon) and the
  ``Sec-WebSocket-Protocol`` header (browsers cannot set headers on a
  WebSocket).
* :func:`authenticate`: the token's record and its rate-limit state.
* :class:`Principal` / :func:`verifier`: a token as a stream's principal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..accounts.auth import Token


def _header(scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def bearer_token(
    scope, params: dict | None = None, *, subprotocol: bool = False
) -> tuple[str | None, str | None]:
    """(token, the subprotocol to echo when the token came as one); the
    ``access_token`` parameter counts only when ``params`` are given."""
    value = _header(scope, b"authorization") or ""
    if value[:7].lower() == "bearer " and value[7:].strip():
        return value[7:].strip(), None
    if params is not None and params.get("access_token"):
        return params["access_token"], None
    if subprotocol:
        proto = (_header(scope, b"sec-websocket-protocol") or "").split(",")[0].strip()
        if proto:
            return proto, proto
    return None, None


@dataclass(frozen=True)
class Principal:
    """Who a stream belongs to: ``identifier`` seeds the sample and counts
    its connections, ``user_id`` (a user's token) feeds the Mastodon user and
    list streams, ``token`` (the bearer token's digest) lets revocation find
    its streams."""

    identifier: str
    user_id: int | None = None
    scopes: frozenset = frozenset()
    #: digest of the bearer token it came with (None: an identifier parameter)
    token: str | None = None
    #: named by the client alone (an ``identifier`` parameter, an OAuth 1.0a
    #: header), not by a token
    anonymous: bool = False

    @property
    def counted_as(self) -> str:
        """The name its open streams and replays are counted under: a
        token's ``identifier``, or an anonymous one in a namespace of its
        own (``identifier=user:25`` is not user 25's budget)."""
        return f"anon:{self.identifier}" if self.anonymous else self.identifier

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

    @classmethod
    def of(cls, token: Token) -> Principal:
        ident = f"user:{token.uid}" if token.uid is not None else f"app:{token.client_id}"
        return cls(
            identifier=ident, user_id=token.uid, scopes=frozenset(token.scopes), token=token.digest
        )


#: token -> Principal, or None for an unknown / revoked token
Verifier = Callable[[str], Awaitable["Principal | None"]]
