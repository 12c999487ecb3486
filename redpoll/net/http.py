"""One outgoing HTTP request: the URL and the address it resolves to
checked by :mod:`.safety`, the connection made to the address checked
(naming the host in Host and in TLS), one deadline for the whole of it
(limits.FED_FETCH_TIMEOUT_S: resolving the name, connecting, the headers
and the body together, so a peer that trickles its answer is cut off as
one that never answers) and a size limit on the answer
(limits.FED_FETCH_MAX_BYTES). :func:`fetch_file` is a GET of a file (an
image of another server) following redirects, each hop checked, under one
deadline for all of them, its size and Content-Type bounded."""

from __future__ import annotations

import asyncio
import ssl
from urllib.parse import urljoin, urlsplit, urlunsplit

import certifi
import httpx

from ..core import limits
from ..core.errors import RedpollError
from ..core.version import __version__
from . import safety

USER_AGENT = f"redpoll/{__version__}"
#: One TLS context for every request (making one per request was most of a
#: delivery's time, ~45 ms); each request still gets its own connection, made
#: to the address checked for its own host, so no connection serves two hosts.
_TLS = ssl.create_default_context(cafile=certifi.where())


class FetchFailed(RedpollError):
    """A peer did not answer as needed: a refused address, a timeout, an
    error status (``status``; 0 when there was no answer), a body too large
    or not JSON."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(message)
        self.status = status


class TooLarge(FetchFailed):
    """The answer was larger than the bound (it would be again)."""


class WrongType(FetchFailed):
    """The answer was not of a media type asked for (it would be again)."""


async def send(
    method: str,
    url: str,
    *,
    loopback: bool,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    max_bytes: int | None = None,
    deadline: float | None = None,
) -> tuple[int, bytes, dict]:
    """(status, body, headers) of one request; safety.Refused for a URL or
    address it must not use, FetchFailed when nothing answered, the answer
    is larger than ``max_bytes`` (limits.FED_FETCH_MAX_BYTES), or the whole
    request (name, connection, headers, body) took longer than ``deadline``
    (limits.FED_FETCH_TIMEOUT_S)."""
    max_bytes = limits.FED_FETCH_MAX_BYTES if max_bytes is None else max_bytes
    deadline = limits.FED_FETCH_TIMEOUT_S if deadline is None else deadline
    try:
        async with asyncio.timeout(deadline):
            return await _send(
                method,
                url,
                loopback=loopback,
                body=body,
                headers=headers,
                max_bytes=max_bytes,
                deadline=deadline,
            )
    except TimeoutError:
        raise FetchFailed(f"{url}: no whole answer within the {deadline:g} s deadline") from None


async def _send(
    method: str,
    url: str,
    *,
    loopback: bool,
    body: bytes | None,
    headers: dict[str, str] | None,
    max_bytes: int,
    deadline: float,
) -> tuple[int, bytes, dict]:
    scheme, host, port = safety.check_url(url, loopback=loopback)
    address = await safety.resolve(host, port, loopback=loopback)
    extra = {"user-agent": USER_AGENT, **(headers or {})}
    parts = urlsplit(url)
    shown = f"[{address}]" if ":" in address else address
    target = urlunsplit((scheme, f"{shown}:{port}", parts.path or "/", parts.query, ""))
    extra["host"] = parts.netloc
    try:
        async with httpx.AsyncClient(
            timeout=deadline, verify=_TLS, follow_redirects=False
        ) as client:
            request = client.build_request(
                method, target, content=body, headers=extra, extensions={"sni_hostname": host}
            )
            response = await client.send(request, stream=True)
            try:
                data = bytearray()
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) > max_bytes:
                        raise TooLarge(f"{url}: the answer is larger than {max_bytes} bytes")
            finally:
                await response.aclose()
    except httpx.HTTPError as exc:
        raise FetchFailed(f"{url}: {type(exc).__name__} {exc}".strip()) from None
    return response.status_code, bytes(data), dict(response.headers)


#: the statuses a fetch follows to the Location they name
REDIRECTS = frozenset({301, 302, 303, 307, 308})


async def fetch_file(
    url: str,
    *,
    loopback: bool,
    types: tuple[str, ...],
    max_bytes: int,
    deadline: float,
) -> tuple[bytes, str]:
    """(body, media type) of the file at ``url``: a GET following at most
    limits.FED_FETCH_REDIRECTS redirects, each hop checked by the address
    guard, all of it under the one ``deadline`` (s) and at most
    ``max_bytes`` long; its Content-Type must start with one of ``types``
    (``"image/"``). safety.Refused for an address or URL it must not use;
    FetchFailed otherwise (``status`` the peer's answer, 0 for none)."""
    try:
        async with asyncio.timeout(deadline):
            for _ in range(limits.FED_FETCH_REDIRECTS + 1):
                status, body, headers = await _send(
                    "GET",
                    url,
                    loopback=loopback,
                    body=None,
                    headers={"accept": ", ".join(t + "*" for t in types)},
                    max_bytes=max_bytes,
                    deadline=deadline,
                )
                headers = {k.lower(): v for k, v in headers.items()}
                location = headers.get("location", "")
                if status in REDIRECTS and location:
                    url = urljoin(url, location)
                    continue
                if not 200 <= status < 300:
                    raise FetchFailed(f"{url}: answered {status}", status)
                media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
                if not media_type.startswith(types):
                    raise WrongType(
                        f"{url}: answered {media_type or 'no Content-Type'}, "
                        f"not {' or '.join(t + '*' for t in types)}",
                        status,
                    )
                return body, media_type
    except TimeoutError:
        raise FetchFailed(f"{url}: no whole answer within the {deadline:g} s deadline") from None
    raise FetchFailed(f"{url}: more than {limits.FED_FETCH_REDIRECTS} redirects")
