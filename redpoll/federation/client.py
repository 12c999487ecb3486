"""Outgoing requests to other servers: JSON documents fetched (signed when a
key is given, for servers that require authorized fetch) and activities
posted to inboxes, always signed. Every request goes through the address
check of :mod:`redpoll.net.safety` (:mod:`redpoll.net.http`), has a time limit and a size limit
(limits.FED_FETCH_TIMEOUT_S, limits.FED_FETCH_MAX_BYTES)."""
from __future__ import annotations

import json
from dataclasses import dataclass

from ..net import http
from ..net.http import FetchFailed
from . import signing

__all__ = ["FetchFailed", "Signer", "fetch_json", "post_activity"]

AS_JSON = "application/activity+json"
LD_JSON = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"'
ACCEPT = f"{AS_JSON}, {LD_JSON}"


@dataclass(frozen=True)
class Signer:
    key: signing.KeyPair
    key_id: str


async def _send(method: str, url: str, *, loopback: bool, body: bytes | None = None,
                signer: Signer | None = None, headers: dict[str, str] | None = None
                ) -> tuple[int, bytes, dict]:
    extra = {"user-agent": http.USER_AGENT, **(headers or {})}
    if signer is not None:
        extra = signing.sign(signer.key, signer.key_id, method, url, body, extra)
    return await http.send(method, url, loopback=loopback, body=body, headers=extra)


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
