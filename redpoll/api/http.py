"""HTTP plumbing shared by every endpoint: JSON responses, errors in Mastodon's
shape, bounded body parsing, parameters, and the ``endpoint`` decorator that
authenticates, rate-limits and checks scopes before a handler runs.

A handler declares its route where it is written: ``@endpoint("GET", path,
auth=..., scope=..., doc=Doc(...))`` (or ``@route`` for a plain Starlette
handler), with its OpenAPI description (redpoll.api.contract.Doc). The app
collects the declared routes of the modules it assembles (:func:`routes_of`)
and /openapi.json is built from the same declarations, so a route and its
contract cannot drift apart.

Nothing here talks to Redis directly: tokens and rate limits are domain calls
(``redpoll.accounts.auth``, ``redpoll.accounts.ratelimit``).
"""

from __future__ import annotations

import builtins
import functools
import math
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any
from urllib.parse import parse_qsl, urlencode

import orjson
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route, Router, WebSocketRoute, get_route_path

from ..accounts import auth, ratelimit
from ..accounts.auth import Token
from ..core import limits, validate
from ..core.errors import RedpollError, ValidationError
from ..core.settings import Settings
from ..gateway import auth as gateway_auth
from ..gateway import links
from ..gateway.body import check_json_depth, read_body
from ..gateway.errors import WebError


class JSON(Response):
    media_type = "application/json; charset=utf-8"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


#: The web layer's one error type (``redpoll.gateway.errors``), by its API name.
ApiError = WebError


NOT_FOUND = "Record not found"


def error_response(exc: RedpollError) -> JSON:
    """The engine's errors as Mastodon answers them."""
    if isinstance(exc, auth.OAuthError):
        return JSON({"error": exc.code, "error_description": exc.message}, status_code=exc.status)
    if isinstance(exc, ValidationError):
        return JSON({"error": f"Validation failed: {exc.message}"}, status_code=422)
    status = exc.status if 400 <= exc.status < 600 else 500
    if status == 404:
        return JSON({"error": NOT_FOUND}, status_code=404)
    if status == 409:  # a taken name or clashing state: Mastodon says 422
        return JSON({"error": f"Validation failed: {exc.message}"}, status_code=422)
    return JSON({"error": exc.message}, status_code=status)


# --- request parameters ---------------------------------------------------------------
class Params:
    """Query and body parameters merged (body wins), as Mastodon reads them.

    Form keys ending in ``[]`` are lists (``id[]=1&id[]=2``); a JSON body may
    hold any JSON type, so every getter checks the type it gets.
    """

    def __init__(self, data: dict[str, Any]):
        self.data = data

    def has(self, name: str) -> bool:
        return self.data.get(name) not in (None, "")

    def raw(self, name: str) -> Any:
        return self.data.get(name)

    def bool(self, name: str, default: bool = False) -> bool:
        value = self.data.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "1", "on", "yes"):
            return True
        if isinstance(value, str) and value.lower() in ("false", "0", "off", "no"):
            return False
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ValidationError(name, "must be a boolean")

    def number(self, name: str) -> float | None:
        value = self.data.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, bool) or isinstance(value, list):
            raise ValidationError(name, "must be a number")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValidationError(name, "must be a number") from None
        if not math.isfinite(number):
            raise ValidationError(name, "must be a finite number")
        return number

    def cursor(self, name: str) -> int | None:
        value = self.data.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, list):
            raise ValidationError(name, "must be a single id")
        return validate.an_id(value, name)

    def nested(self, name: str) -> dict | None:
        """An object parameter: a JSON object (``{"poll": {"options": [...]}}``)
        or form keys with its name and a bracketed part, as Rails reads them
        (``poll[options][]=a&poll[expires_in]=300`` gives ``{"options": ["a"],
        "expires_in": "300"}``); None when not sent."""
        value = self.data.get(name)
        if isinstance(value, dict):
            return value
        if value not in (None, ""):
            raise ValidationError(name, "must be an object")
        prefix = name + "["
        out = {
            key[len(prefix) : -1]: v
            for key, v in self.data.items()
            if key.startswith(prefix) and key.endswith("]") and "[" not in key[len(prefix) : -1]
        }
        return out or None

    def tree(self, name: str) -> dict | None:
        """An object parameter nested deeper than :meth:`nested` reads: a
        JSON object, or form keys ``name[a][b]...`` as Rails reads them
        (``data[alerts][mention]=true`` gives ``{"alerts": {"mention":
        "true"}}``); None when not sent. A key both a value and an object
        is refused (422)."""
        value = self.data.get(name)
        if isinstance(value, dict):
            return value
        if value not in (None, ""):
            raise ValidationError(name, "must be an object")
        out: dict = {}
        prefix = name + "["
        for key, item in self.data.items():
            if not (key.startswith(prefix) and key.endswith("]")):
                continue
            path = key[len(name) + 1 : -1].split("][")
            if len(path) > 4 or any(not part or "[" in part or "]" in part for part in path):
                raise ValidationError(name, f"malformed parameter {key[:60]!r}")
            node = out
            for part in path[:-1]:
                node = node.setdefault(part, {})
                if not isinstance(node, dict):
                    raise ValidationError(name, f"malformed parameter {key[:60]!r}")
            if isinstance(node.get(path[-1]), dict):
                raise ValidationError(name, f"malformed parameter {key[:60]!r}")
            node[path[-1]] = item
        return out or None

    def ids(self, name: str, *, max_count: int = limits.API_IDS_PER_REQUEST) -> list[int]:
        value = self.data.get(name)
        if value is None or value == "":
            return []
        items = value if isinstance(value, list) else [value]
        if len(items) > max_count:
            raise ValidationError(name, f"at most {max_count} ids")
        return [validate.an_id(item, name) for item in items]

    def cursors(self) -> dict:
        """max_id / since_id / min_id / limit for the engine (it validates them)."""
        out = {}
        for name in ("max_id", "since_id", "min_id", "limit"):
            value = self.data.get(name)
            if isinstance(value, list):
                raise ValidationError(name, "must be a single value")
            if value is not None and value != "":
                out[name] = value
        return out

    # (last in the class: a method named ``str`` would hide the type in the
    # annotations after it, as ``bool`` does in its own)
    def str(
        self,
        name: str,
        *,
        required: builtins.bool = False,
        max_chars: int = 10_000,
        allow_empty: builtins.bool = True,
    ) -> str | None:
        value = self.data.get(name)
        if value is None or (value == "" and not required):
            if required:
                raise ValidationError(name, "is missing")
            return None
        if isinstance(value, list):
            raise ValidationError(name, "must be a single value")
        if not isinstance(value, str):
            raise ValidationError(name, "must be a string")
        return validate.text(value, name, max_chars, allow_empty=allow_empty and not required)


#: ``name[][field]`` / ``name[0][field]``: a list of objects in a form (Rails' nested params)
_NESTED = re.compile(r"([^\[\]]+)\[(\d*)\]\[([^\[\]]+)\]")


def _merge(data: dict[str, Any], pairs) -> None:
    indexed: dict[tuple[str, str], dict] = {}
    for key, value in pairs:
        nested = _NESTED.fullmatch(key) if "][" in key else None
        if nested is not None:  # a list of objects: a new one where a field repeats (Rails)
            name, index, attr = nested.groups()
            items = data.get(name)
            if not isinstance(items, list):
                items = data[name] = []
            if index:
                item = indexed.get((name, index))
                if item is None:
                    item = indexed[(name, index)] = {}
                    items.append(item)
            else:
                if not items or not isinstance(items[-1], dict) or attr in items[-1]:
                    items.append({})
                item = items[-1]
            item[attr] = value
            continue
        if key.endswith("[]"):
            data.setdefault(key[:-2], [])
            if not isinstance(data[key[:-2]], list):
                data[key[:-2]] = [data[key[:-2]]]
            data[key[:-2]].append(value)
        else:
            data[key] = value


async def parse_params(
    request: Request,
    files: dict[str, bytes] | None = None,
    max_bytes: int = limits.API_MAX_BODY_BYTES,
    too_big: str = "",
) -> Params:
    """The request's parameters. A multipart body's files are refused (422)
    unless ``files`` is given, which gets them by field name (the bytes);
    the body is bounded by ``max_bytes`` (413 ``too_big`` beyond)."""
    data: dict[str, Any] = {}
    _merge(data, request.query_params.multi_items())
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if request.method in ("GET", "HEAD") and not (
        (kind == "application/json" or kind.endswith("+json"))
        and request.headers.get("content-length", "0") not in ("", "0")
    ):
        # (a GET's parameters are its query, or a JSON body as Rails reads one:
        # Mastodon.py sends familiar_followers' ids so)
        return Params(data)
    body = await read_body(request, max_bytes, too_big)
    if not body.strip():
        return Params(data)
    if kind == "application/json" or kind.endswith("+json"):
        check_json_depth(body)
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise ApiError(400, "The request body is not valid JSON") from None
        if not isinstance(parsed, dict):
            raise ApiError(422, "The request body must be a JSON object")
        for key, value in parsed.items():
            data[key[:-2] if key.endswith("[]") else key] = value
    elif kind in ("application/x-www-form-urlencoded", ""):
        try:
            text = body.decode("utf-8")
            pairs = parse_qsl(
                text,
                keep_blank_values=True,
                strict_parsing=False,
                max_num_fields=1000,
                errors="strict",
            )
        except (UnicodeDecodeError, ValueError):
            raise ApiError(400, "The request body is not valid form data") from None
        _merge(data, pairs)
    elif kind == "multipart/form-data":
        try:
            # files are allowed through the parser (the body is bounded
            # already) so that an upload gets the clear 422 below
            form = await request.form(max_files=8, max_fields=1000)
        except Exception:  # python-multipart / starlette parse errors
            raise ApiError(400, "The request body is not valid multipart form data") from None
        items = form.multi_items()
        sent = [(k, v) for k, v in items if isinstance(v, UploadFile)]
        if sent and files is None:
            raise ApiError(
                422,
                "File uploads are only taken by POST /api/v1/media, "
                "POST /api/v2/media and update_credentials (avatar, header)",
            )
        for key, upload in sent:
            assert files is not None  # (refused above otherwise)
            files[key] = await upload.read()
            await upload.close()
        _merge(data, [(k, v) for k, v in items if not isinstance(v, UploadFile)])
    else:
        raise ApiError(415, f"Unsupported content type {kind[:60]!r}")
    return Params(data)


# --- the per-request context and the endpoint decorator -----------------------------------


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
        try:
            return validate.an_id(self.request.path_params[name], name)
        except ValidationError:
            raise ApiError(404, NOT_FOUND) from None

    async def limit(self, family: str, rate) -> None:
        """Count this request against a stricter per-IP family (signup, login)."""
        state = await self.rp.rate_hit(f"ip:{self.ip}:{family}", rate)
        if state is not None:
            self.rate = state
            if state.exceeded:
                raise ApiError(429, "Too many requests", headers=state.headers())

    async def authenticate(self, required: bool, scope, user: bool) -> None:
        token, _ = gateway_auth.bearer_token(self.request.scope)
        if token:
            self.token, self.rate = await self.rp.authenticate(token, self.settings.rate_token)
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
            ip_state = await self.rp.rate_hit(f"ip:{self.ip}:tokens", self.settings.rate_ip_tokens)
            if ip_state is not None and ip_state.exceeded:
                self.rate = ip_state
                raise ApiError(429, "Too many requests", headers=ip_state.headers())
        if self.token is not None:
            wanted = (scope,) if isinstance(scope, str) else scope
            if wanted and not any(self.token.allows(s) for s in wanted):
                raise ApiError(403, "This action is outside the authorized scopes")
            if user and self.token.uid is None and required:
                raise ApiError(422, "This method requires an authenticated user")

    async def _ip_hit(self) -> None:
        self.rate = await self.rp.rate_hit(f"ip:{self.ip}:api", self.settings.rate_ip)
        if self.rate is not None and self.rate.exceeded:
            raise ApiError(429, "Too many requests", headers=self.rate.headers())


Handler = Callable[[Ctx], Awaitable[Response]]


@dataclass(frozen=True)
class Declared:
    """One route a handler answers, as its decorator declared it."""

    method: str
    path: str
    doc: Any  # redpoll.api.contract.Doc
    auth: str
    scope: str | tuple | None


def route(
    method: str, path: str, *, doc: Any, auth: str = "none", scope: str | tuple | None = None
):
    """Declare that a plain Starlette handler answers ``method path`` (and
    how ``doc`` describes it); stacked, one handler answers several."""

    def mark(fn):
        fn.routes = [*getattr(fn, "routes", ()), Declared(method, path, doc, auth, scope)]
        return fn

    return mark


def endpoint(
    method: str,
    path: str,
    *,
    auth: str = "optional",
    scope: str | tuple | None = None,
    user: bool = True,
    params: bool = True,
    doc: Any,
):
    """Declare that a handler answers ``method path`` and wrap it: ``auth``
    is 'required' (401 without a valid token), 'optional' (a token, when
    sent, must be valid) or 'none'; ``scope`` is the scope a token must grant
    (a tuple: any one of them); ``user`` means a user token (not an app
    token) is needed when auth is required; ``doc`` describes it in the
    OpenAPI document (the auth and scope are these)."""

    def wrap(fn: Handler):
        @functools.wraps(fn)
        async def handler(request: Request) -> Response:
            ctx = Ctx(request)
            if auth != "none":
                await ctx.authenticate(auth == "required", scope, user)
            else:
                await ctx._ip_hit()
            if params:
                ctx.params = await parse_params(request)
            response = await fn(ctx)
            if ctx.rate is not None:
                response.headers.update(ctx.rate.headers())
            return response

        handler.routes = [Declared(method, path, doc, auth, scope)]  # type: ignore[attr-defined]
        return handler

    return wrap


def declared(modules: Iterable[ModuleType]) -> list[tuple[Declared, Callable]]:
    """Every route the handlers of ``modules`` declared, with its handler."""
    out = []
    for module in modules:
        for value in vars(module).values():
            routes = getattr(value, "routes", None)
            if getattr(value, "__module__", None) == module.__name__ and isinstance(routes, list):
                out += [(d, value) for d in routes]
    return out


def _shape(path: str) -> tuple:
    """Literal path segments sort before parameters at the same place, so a
    literal route ('/accounts/lookup') is tried before a pattern that would
    also match it ('/accounts/{id}')."""
    return tuple("{" in part for part in path.strip("/").split("/"))


def in_order(routes: list, first: tuple[str, ...] = ()) -> list:
    """Routes in the order they are tried (:class:`IndexedRouter` tries, in
    this order, only those that can match a path): the paths in ``first``,
    then the API's, each group with literal before pattern. Raises if a
    route would still hide a later one (a bug in the route table, found
    when the app is built, not by a client)."""
    ordered = sorted(
        routes,
        key=lambda r: (
            first.index(r.path) if r.path in first else len(first),
            not r.path.startswith("/api/"),
            _shape(r.path),
            r.path,
        ),
    )
    for i, later in enumerate(ordered):
        sample = later.path.replace("{", "").replace("}", "")
        methods = getattr(later, "methods", None) or {"WEBSOCKET"}
        for earlier in ordered[:i]:
            hides = earlier.path_regex.match(sample) and earlier.path != later.path
            if hides and methods & (getattr(earlier, "methods", None) or {"WEBSOCKET"}):
                raise RuntimeError(f"route {earlier.path} hides {later.path}")
    return ordered


def link_header(ctx: Ctx, items: list, key=lambda item: item.id, *, prev: bool = True) -> dict:
    """Mastodon's Link header: next = older (max_id), prev = newer (min_id)."""
    if not items:
        return {}
    url = ctx.base + ctx.request.scope["path"]  # what request.url.path is, unparsed
    keep = urlencode(
        {
            k: v
            for k, v in ctx.request.query_params.multi_items()
            if k not in ("max_id", "min_id", "since_id")
        }
    )
    url += f"?{keep}&" if keep else "?"
    # cursors are integers: nothing in them to quote
    links = [f'<{url}max_id={int(key(items[-1]))}>; rel="next"']
    if prev:
        links.append(f'<{url}min_id={int(key(items[0]))}>; rel="prev"')
    return {"Link": ", ".join(links)}


def _key(route) -> tuple:
    """Which paths a route can match, as far as its path's text tells: the
    literal segments it starts with (up to its first parameter); for a
    Route or WebSocketRoute without a ``:path`` parameter (whose parameters
    each match one segment), its number of segments and its last segment
    when that is literal. Anything else (a Mount, a route without a path)
    keeps only what it surely has."""
    path = getattr(route, "path", None)
    if not isinstance(path, str):
        return (), None, None
    segments = path.split("/")[1:]
    head = []
    for segment in segments:
        if "{" in segment:
            break
        head.append(segment)
    if not isinstance(route, (Route, WebSocketRoute)) or ":path}" in path:
        return tuple(head), None, None
    last = segments[-1] if "{" not in segments[-1] else None
    return tuple(head), len(segments), last


class IndexedRouter(Router):
    """Starlette's router, trying only the routes that can match a path.

    Starlette tries every route in order (a regular expression each, ~1-2
    µs): a request for a route late in a table of ~200 paid for all before
    it. Here the routes are indexed by :func:`_key`; a request tries, in the
    table's order, the routes whose key its path fits. Invariant: a route
    whose pattern can match a path is among those tried (a pattern matches
    only paths that start with its literal head; one whose parameters each
    match one segment, only paths of its length ending in its literal last
    segment), so the first full match, and the first partial one (a 405),
    are Starlette's (tests/api/test_routes.py checks every route of the
    app). When none matches, Starlette's own pass decides (redirecting a
    trailing slash, the 404)."""

    def _index(self) -> dict[tuple, list]:
        if getattr(self, "_indexed", None) != len(self.routes):  # routes added later
            index: dict[tuple, list] = {}
            for i, route in enumerate(self.routes):
                index.setdefault(_key(route), []).append((i, route))
            self._by_key, self._indexed, self._literal = index, len(self.routes), {}
            # the paths of literal routes (the home timeline, the instance...)
            # are asked for as they are: their candidates found once
            paths = (getattr(r, "path", None) for r in self.routes)
            literal = {p for p in paths if isinstance(p, str) and "{" not in p}
            self._literal = {path: self._candidates(path) for path in literal}
        return self._by_key

    def candidates(self, path: str) -> list:
        """The routes that can match ``path``, in the table's order."""
        self._index()
        found = self._literal.get(path)
        return found if found is not None else self._candidates(path)

    def _candidates(self, path: str) -> list:
        index, found = self._by_key, []
        segments = path.split("/")[1:]
        count, last = len(segments), segments[-1]
        for n in range(count + 1):
            head = tuple(segments[:n])
            for key in ((head, count, last), (head, count, None), (head, None, None)):
                bucket = index.get(key)
                if bucket:
                    found += bucket
        found.sort(key=lambda pair: pair[0])
        return [route for _, route in found]

    async def app(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            return await super().app(scope, receive, send)
        scope.setdefault("router", self)
        partial = None
        for route in self.candidates(get_route_path(scope)):
            match, child_scope = route.matches(scope)
            if match is Match.FULL:
                scope["route"] = route
                scope.update(child_scope)
                return await route.handle(scope, receive, send)
            if match is Match.PARTIAL and partial is None:
                partial, partial_scope = route, child_scope
        if partial is not None:  # the path matches, the method does not: a 405
            scope["route"] = partial
            scope.update(partial_scope)
            return await partial.handle(scope, receive, send)
        await super().app(scope, receive, send)  # a redirect or the 404, as Starlette decides
