"""Outgoing requests to other servers: JSON documents fetched (signed when a
key is given, for servers that require authorized fetch) and activities
posted to inboxes, always signed. Every request goes through the address
check of :mod:`.safety`, has a time limit and a size limit
(limits.FED_FETCH_TIMEOUT_S, limits.FED_FETCH_MAX_BYTES)."""
from __future__ import annotations

import json
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import certifi
import httpx

from ..core import limits
from ..core.errors import RedpollError
from ..core.version import __version__
from . import safety, signing

AS_JSON = "application/activity+json"
LD_JSON = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"'
ACCEPT = f"{AS_JSON}, {LD_JSON}"
USER_AGENT = f"redpoll/{__version__}"


class FetchFailed(RedpollError):
    """A peer did not answer as needed: a refused address, a timeout, an
    error status (``status``; 0 when there was no answer), a body too large
    or not JSON."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Signer:
    key: signing.KeyPair
    key_id: str


#: One TLS context for every request (making one per request was most of a
#: delivery's time); each request still gets its own connection, made to the
#: address checked for its own host, so no connection serves two hosts.
_TLS = ssl.create_default_context(cafile=certifi.where())


async def _send(method: str, url: str, *, loopback: bool, body: bytes | None = None,
                signer: Signer | None = None, headers: dict[str, str] | None = None
                ) -> tuple[int, bytes, dict]:
    scheme, host, port = safety.check_url(url, loopback=loopback)
    address = await safety.resolve(host, port, loopback=loopback)
    extra = {"user-agent": USER_AGENT, **(headers or {})}
    if signer is not None:
        extra = signing.sign(signer.key, signer.key_id, method, url, body, extra)
    parts = urlsplit(url)
    # connect to the address checked, naming the host in Host and in TLS
    shown = f"[{address}]" if ":" in address else address
    target = urlunsplit((scheme, f"{shown}:{port}", parts.path or "/", parts.query, ""))
    extra["host"] = parts.netloc
    try:
        async with httpx.AsyncClient(timeout=limits.FED_FETCH_TIMEOUT_S, verify=_TLS,
                                     follow_redirects=False) as client:
            request = client.build_request(method, target, content=body, headers=extra,
                                           extensions={"sni_hostname": host})
            response = await client.send(request, stream=True)
            try:
                data = bytearray()
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) > limits.FED_FETCH_MAX_BYTES:
                        raise FetchFailed(f"{url}: the answer is larger than "
                                          f"{limits.FED_FETCH_MAX_BYTES} bytes")
            finally:
                await response.aclose()
    except httpx.HTTPError as exc:
        raise FetchFailed(f"{url}: {type(exc).__name__} {exc}".strip()) from None
    return response.status_code, bytes(data), dict(response.headers)


async def fetch_json(url: str, *, loopback: bool, signer: Signer | None = None,
                     accept: str = ACCEPT) -> dict:
    """The JSON object at ``url``; FetchFailed otherwise."""
    status, body, _ = await _send("GET", url, loopback=loopback, signer=signer,
                                  headers={"accept": accept})
    if status != 200:
        raise FetchFailed(f"{url} answered {status}", status)
    try:
        data = json.loads(body)
    except ValueError:
        raise FetchFailed(f"{url} did not answer JSON", status) from None
    if not isinstance(data, dict):
        raise FetchFailed(f"{url} did not answer a JSON object", status)
    return data


async def post_activity(inbox: str, activity: bytes, signer: Signer, *, loopback: bool) -> int:
    """POST a signed activity to an inbox; the status it answered
    (FetchFailed when it could not be reached at all)."""
    status, _, _ = await _send("POST", inbox, loopback=loopback, body=activity, signer=signer,
                               headers={"content-type": AS_JSON, "accept": ACCEPT})
    return status
