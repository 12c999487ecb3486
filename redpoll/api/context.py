"""The per-request context a handler gets (:class:`Ctx`): the engine, the
caller's token, authentication, rate limits and scopes, checked before the
handler runs (redpoll.api.routing.endpoint).

Nothing here talks to Redis directly: tokens and rate limits are domain calls
(``redpoll.accounts.auth``, ``redpoll.accounts.ratelimit``)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from ..accounts import ratelimit
from ..accounts.auth import PENDING_MESSAGE, Token
from ..core import validate
from ..core.errors import ValidationError
from ..core.settings import Settings
from ..gateway import auth as gateway_auth
from ..gateway import links
from .params import Params
from .responses import NOT_FOUND, ApiError

#: Mastodon's answer where a login's e-mail address awaits confirmation
UNCONFIRMED = "Your login is missing a confirmed e-mail address"


def path_id(request: Request, name: str = "id") -> int:
    """A numeric id from a route's path (validate.an_id: ASCII digits, in
    range); a malformed one is just an unknown record (404)."""
    try:
        return validate.an_id(request.path_params[name], name)
    except ValidationError:
        raise ApiError(404, NOT_FOUND) from None


class Ctx:
    """What a handler gets: the engine, the caller, the parameters."""

    def __init__(self, request: Request):
        self.request = request
        self.rp = request.app.state.rp
        self.settings: Settings = request.app.state.settings
        self.token: Token | None = None
        self.rate: ratelimit.RateState | None = None
        self.params = Params({})

    @property
    def uid(self) -> int:
        assert self.token is not None and self.token.uid is not None
        return self.token.uid

    @property
    def authed(self) -> Token:
        """The token of a handler whose auth is 'required' (checked before it runs)."""
        assert self.token is not None
        return self.token

    @property
    def viewer(self) -> int | None:
        return self.token.uid if self.token is not None else None

    @property
    def ip(self) -> str:
        client = self.request.client
        return client.host if client else "unknown"

    @functools.cached_property
    def base(self) -> str:
        """scheme://host[:port] of links: REDPOLL_PUBLIC_URL, else the one the
        client used (``redpoll.gateway.links``)."""
        return links.base_url(self.request.scope, self.settings.public_url)

    def path_id(self, name: str = "id") -> int:
        """A numeric id from the path; a malformed one is just an unknown record."""
        return path_id(self.request, name)

    async def limit(self, family: str, rate) -> None:
        """Count this request against a stricter per-IP family (signup, login)."""
        state = await self.rp.auth.rate_hit(f"ip:{self.ip}:{family}", rate)
        if state is not None:
            self.rate = state
            if state.exceeded:
                raise ApiError(429, "Too many requests", headers=state.headers())

    async def authenticate(self, required: bool, scope, user: bool, standing: bool = False) -> None:
        token, _ = gateway_auth.bearer_token(self.request.scope)
        if token:
            self.token, self.rate = await self.rp.auth.authenticate(token, self.settings.rate_token)
            if self.token is None:
                await self._ip_hit()
                raise ApiError(
                    401,
                    "The access token is invalid",
                    headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
                )
        else:
            await self._ip_hit()
            if required:
                raise ApiError(
                    401, "The access token is invalid", headers={"WWW-Authenticate": "Bearer"}
                )
        if self.rate is not None and self.rate.exceeded:
            raise ApiError(429, "Too many requests", headers=self.rate.headers())
        if self.token is not None and self.settings.rate_ip_tokens is not None:
            # one IP's requests over all its tokens: many app tokens must not
            # multiply its allowance. The X-RateLimit-*
            # headers keep showing the token's own bucket until this one is full.
            ip_state = await self.rp.auth.rate_hit(
                f"ip:{self.ip}:tokens", self.settings.rate_ip_tokens
            )
            if ip_state is not None and ip_state.exceeded:
                self.rate = ip_state
                raise ApiError(429, "Too many requests", headers=ip_state.headers())
        if self.token is not None:
            wanted = (scope,) if isinstance(scope, str) else scope
            if wanted and not any(self.token.allows(s) for s in wanted):
                raise ApiError(403, "This action is outside the authorized scopes")
            if user and self.token.uid is None and required:
                raise ApiError(422, "This method requires an authenticated user")
            if standing and user and required and self.token.check:
                # only a marked token pays this read (redpoll.accounts.standing)
                if await self.rp.accounts.unconfirmed(self.token.uid, self.token.digest):
                    raise ApiError(403, UNCONFIRMED)
            if standing and self.token.pending:
                # an account waiting for approval, after the address as
                # Mastodon's require_user! (the mail endpoints still answer it)
                raise ApiError(403, PENDING_MESSAGE)

    async def _ip_hit(self) -> None:
        self.rate = await self.rp.auth.rate_hit(f"ip:{self.ip}:api", self.settings.rate_ip)
        if self.rate is not None and self.rate.exceeded:
            raise ApiError(429, "Too many requests", headers=self.rate.headers())


Handler = Callable[[Ctx], Awaitable[Response]]
