"""Outgoing requests to other servers: JSON documents fetched (signed when a
key is given, for servers that require authorized fetch) and activities
posted to inboxes, always signed. Every request goes through the address
check of :mod:`redpoll.net.safety` (:mod:`redpoll.net.http`) and has one
deadline for the whole of it and a size limit (limits.FED_FETCH_TIMEOUT_S,
limits.FED_FETCH_MAX_BYTES); a fetch follows at most
limits.FED_FETCH_REDIRECTS redirects, each hop such a request."""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from ..core import limits
from ..net import http
from ..net.http import FetchFailed
from . import signing

__all__ = ["FetchFailed", "Signer", "WrongDocument", "fetch_json", "fetch_object", "post_activity"]

AS_JSON = "application/activity+json"
LD_JSON = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"'
ACCEPT = f"{AS_JSON}, {LD_JSON}"
#: The media types an ActivityStreams document is taken in (as Mastodon
#: since 4.2.5): a file served as text/plain or application/json (an upload,
#: a static file on a peer's host) is never taken as an actor or a note.
AS_TYPES = frozenset({"application/activity+json", "application/ld+json"})


class WrongDocument(FetchFailed):
    """A peer answered, but not with the document asked for: another media
    type than an ActivityStreams one, or a document of another id. Asking
    again would get the same answer."""


@dataclass(frozen=True)
class Signer:
    key: signing.KeyPair
    key_id: str


async def _send(
    method: str,
    url: str,
    *,
    loopback: bool,
    body: bytes | None = None,
    signer: Signer | None = None,
    headers: dict[str, str] | None = None,
    rfc9421: bool = False,
) -> tuple[int, bytes, dict]:
    extra = {"user-agent": http.USER_AGENT, **(headers or {})}
    if signer is not None:
        how = signing.sign_rfc9421 if rfc9421 else signing.sign
        extra = how(signer.key, signer.key_id, method, url, body, extra)
    return await http.send(method, url, loopback=loopback, body=body, headers=extra)


def _media_type(headers: dict) -> str:
    value = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    return value.split(";", 1)[0].strip().lower()


#: the statuses a fetch follows to the Location they name
REDIRECTS = frozenset({301, 302, 303, 307, 308})


async def _get(
    url: str, *, loopback: bool, signer: Signer | None, accept: str
) -> tuple[int, bytes, dict, str]:
    """A GET that follows at most limits.FED_FETCH_REDIRECTS redirects,
    each hop its own request through the fetch guard (net.http: address,
    deadline, size) and signed for its own URL; (status, body, headers,
    the URL that answered)."""
    for _ in range(limits.FED_FETCH_REDIRECTS + 1):
        status, body, headers = await _send(
            "GET", url, loopback=loopback, signer=signer, headers={"accept": accept}
        )
        location = next((v for k, v in headers.items() if k.lower() == "location"), "")
        if status not in REDIRECTS or not location:
            return status, body, headers, url
        url = urljoin(url, location)
    raise FetchFailed(f"{url}: more than {limits.FED_FETCH_REDIRECTS} redirects", status)


async def fetch_answer(
    url: str,
    *,
    loopback: bool,
    signer: Signer | None = None,
    accept: str = ACCEPT,
    types: frozenset[str] | None = AS_TYPES,
) -> tuple[dict, str]:
    """The JSON object at ``url`` (redirects followed), answered with one of
    the media ``types`` (None: any; a WebFinger answer is only a pointer,
    its actor is fetched and checked itself), and the URL that answered it;
    FetchFailed otherwise."""
    status, body, headers, answered = await _get(
        url, loopback=loopback, signer=signer, accept=accept
    )
    if status != 200:
        raise FetchFailed(f"{url} answered {status}", status)
    if types is not None and _media_type(headers) not in types:
        raise WrongDocument(
            f"{url} answered {_media_type(headers) or 'no media type'}, "
            f"not {' or '.join(sorted(types))}",
            status,
        )
    try:
        data = json.loads(body)
    except ValueError:
        raise FetchFailed(f"{url} did not answer JSON", status) from None
    if not isinstance(data, dict):
        raise FetchFailed(f"{url} did not answer a JSON object", status)
    return data, answered


async def fetch_json(
    url: str,
    *,
    loopback: bool,
    signer: Signer | None = None,
    accept: str = ACCEPT,
    types: frozenset[str] | None = AS_TYPES,
) -> dict:
    """The JSON object at ``url`` (:func:`fetch_answer`'s, without where from)."""
    return (await fetch_answer(url, loopback=loopback, signer=signer, accept=accept, types=types))[
        0
    ]


def _answered_by_its_host(doc: dict, answered: str) -> bool:
    """Whether ``doc`` came from its own id's host (a redirect to another
    host vouches for nothing there)."""
    claimed = doc.get("id")
    return (
        isinstance(claimed, str)
        and urlsplit(claimed).netloc.lower() == urlsplit(answered).netloc.lower()
    )


async def fetch_object(
    url: str, *, loopback: bool, signer: Signer | None = None, id_known: bool = True
) -> dict:
    """The ActivityStreams object whose ``id`` is ``url``, as its own server
    answers it. A document is taken only under the id it was fetched from,
    answered by that id's own host (redirects within it are followed):
    anyone who can place a file on a host (an upload, a static file), or
    make it redirect elsewhere, could otherwise have it kept as any object
    of that host, an actor's key included. ``id_known``: ``url`` is the
    object's id, and a document naming another id is refused; otherwise (a
    link that is not the id, as a profile page's URL), a document naming
    the URL that answered is taken, and one naming another id is fetched
    once more from it and taken only if that answer names the same id
    (Mastodon's rule). FetchFailed otherwise."""
    doc, answered = await fetch_answer(url, loopback=loopback, signer=signer)
    claimed = doc.get("id")
    if _answered_by_its_host(doc, answered) and (
        claimed == url or (not id_known and claimed == answered)
    ):
        return doc
    if id_known or not isinstance(claimed, str) or not claimed.startswith(("https://", "http://")):
        raise WrongDocument(f"{url} answered a document whose id is {str(claimed)[:200]!r}", 200)
    again, answered = await fetch_answer(claimed, loopback=loopback, signer=signer)
    if again.get("id") != claimed or not _answered_by_its_host(again, answered):
        raise WrongDocument(f"{claimed} does not answer the document of its own id", 200)
    return again


async def post_activity(
    inbox: str, activity: bytes, signer: Signer, *, loopback: bool, rfc9421: bool = False
) -> int:
    """POST a signed activity to an inbox (draft-cavage, or RFC 9421 for a
    peer known to take it); the status it answered (FetchFailed when it
    could not be reached at all)."""
    status, _, _ = await _send(
        "POST",
        inbox,
        loopback=loopback,
        body=activity,
        signer=signer,
        headers={"content-type": AS_JSON, "accept": ACCEPT},
        rfc9421=rfc9421,
    )
    return status
