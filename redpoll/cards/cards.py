"""Link preview cards, as Mastodon's FetchLinkCardService: a status's first
link (a local status's first http(s) URL in its text; a remote one's first
``<a href>`` of its HTML that is no hashtag or mention), never one of this
server, not for a direct status, is fetched by a job (jobs.CardJob)
through the one outgoing-fetch guard (redpoll.net.http: each redirect
checked, one deadline, a size bound, HTML only). Its page made a card
(page.py) is kept once per URL (keys.card, by the sha256 of the
normalized URL, for limits.CARD_MAX_AGE_S; a URL that made none, for
limits.CARD_NONE_TTL_S), its image kept here through the remote media
cache (redpoll.media.remote.keep_image; none when the link's domain's
media are rejected), so readers' browsers never ask the link's server.

The status shows the card its record names (``x:card``: the card's JSON,
'' none), written by a compare-and-set on the record's version
(records.writes.update_status: every kept rendering follows). Each step is
idempotent: a job run twice writes the same card."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from collections.abc import Awaitable, Callable
from datetime import datetime
from html.parser import HTMLParser
from urllib.parse import urlsplit

from ..bus.queue import JobQueue
from ..core import keys as core_keys
from ..core import limits
from ..core.errors import Conflict, NotFound, StatusNotFound
from ..core.models import EXTRA_PREFIX, Status
from ..core.settings import Settings
from ..media import entity as media_entity
from ..media import remote as kept
from ..media.storage import open_storage
from ..net import http, safety
from ..records import writes
from ..storage.store import Store
from ..trends import links
from . import keys, page
from .jobs import CardImageJob, CardJob

log = logging.getLogger("redpoll.cards")

#: whether the media of the server of a URL are rejected here (the domain
#: policy's, redpoll.federation.remote_media.media_rejected, given by the
#: worker: the federation package stands above this one)
Rejected = Callable[[Store, str], Awaitable[bool]]

FIELD = EXTRA_PREFIX + "card"
_NONE = "none"
#: a kept card's fields no client is shown: its image's member part in the
#: remote media cache (``<digest>.<ms>``) and its image's URL on its server
IMAGE_PART = "_im"
IMAGE_ORIGIN = "_imr"
#: the path of a card's image here (redpoll.api.media): ``/<sid>/<part>``, sid
#: 0 for a card not shown by a status (a trending link's)
IMAGE_PROXY = media_entity.PROXY_PATH + "/cards"
_PART = re.compile(r"^[0-9a-f]{64}\.[0-9]{1,16}$")


class _Anchors(HTMLParser):
    """The hrefs of a remote status's HTML that are no hashtag or mention."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "a":
            return
        a = {k.lower(): (v or "") for k, v in attrs}
        rel = a.get("rel", "").lower().split()
        classes = a.get("class", "").lower().split()
        if "tag" in rel or {"mention", "u-url", "h-card", "hashtag"} & set(classes):
            return
        if a.get("href"):
            self.hrefs.append(a["href"])


def _here(settings: Settings) -> str:
    """This server's host (and port), as a link names it."""
    return urlsplit(settings.public_url).netloc.lower() if settings.public_url else ""


def _candidates(status: Status) -> list[str]:
    """The links of a status that may make its card, in order, normalized
    (trends.links)."""
    if status.reblog_of or status.extra.get("visibility", "public") == "direct":
        return []
    if status.html:
        reader = _Anchors()
        try:
            reader.feed(status.html)
        except (AssertionError, ValueError):
            pass
        found = [u for u in (links.normalize(h) for h in reader.hrefs) if u]
    else:
        found = links.parse(status.text)
    return [u for u in found if len(u) <= limits.CARD_URL_MAX_CHARS]


def link_of(status: Status, settings: Settings) -> str | None:
    """The URL whose card ``status`` shows, or None: its first link that is
    not of this server."""
    here = _here(settings)
    for url in _candidates(status):
        if urlsplit(url).netloc != here:
            return url
    return None


async def queue_for(queue: JobQueue, settings: Settings, status: Status) -> None:
    """A status was posted (or a remote one kept): its card's job queued if
    it has a link (idempotent: a replay queues it again; the job writes
    the same card)."""
    if link_of(status, settings):
        await queue.enqueue(CardJob(sid=status.id))


async def after_edit(queue: JobQueue, before: Status, after: Status) -> None:
    """An edit: the card's job queued if its links changed (the job writes
    the new link's card, or none)."""
    if _candidates(before) != _candidates(after):
        await queue.enqueue(CardJob(sid=after.id))


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


def digest(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def _published(value: str) -> str | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).isoformat() if value else None
    except ValueError:
        return None


def _lasting(exc: Exception) -> bool:
    """A fetch that would fail again: refused, too large, not HTML, a 4xx."""
    if isinstance(exc, (http.TooLarge, http.WrongType, safety.Refused)):
        return True
    return isinstance(exc, http.FetchFailed) and 400 <= exc.status < 500 and exc.status != 429


async def _make(
    store: Store, settings: Settings, rejected: Rejected, url: str, key: str
) -> dict | None:
    """Fetch ``url`` and make its card (None: its page makes none).
    FetchFailed for a passing failure (the job is retried)."""
    try:
        body, _ = await http.fetch_file(
            url,
            loopback=settings.federation_loopback,
            types=("text/html",),
            max_bytes=limits.CARD_PAGE_MAX_BYTES,
            deadline=limits.CARD_FETCH_TIMEOUT_S,
        )
    except (http.FetchFailed, safety.Refused) as exc:
        if not _lasting(exc):
            raise
        log.info("no card for %s: %s", url, exc)
        return None
    said = page.read(page.decoded(body), url)
    if said is None:
        return None
    parts = urlsplit(said.url)
    card = {
        "url": said.url,
        "title": said.title,
        "description": said.description,
        "type": "link",
        "author_name": said.author_name,
        "author_url": said.author_url,
        "provider_name": said.provider_name,
        "provider_url": f"{parts.scheme}://{parts.netloc}" if said.provider_name else "",
        "html": "",
        "width": 0,
        "height": 0,
        "image": None,
        "image_description": said.image_description,
        "embed_url": "",
        "blurhash": None,
        "language": said.language or None,
        "published_at": _published(said.published_at),
        "authors": [],
    }
    if said.image and not await rejected(store, said.image):
        part = f"{key}.{int(datetime.now().timestamp() * 1000)}"
        storage = open_storage(settings)
        image = await kept.keep_image(
            store,
            storage,
            kept.member_of_card(part),
            said.image,
            loopback=settings.federation_loopback,
        )
        if image is not None:
            card |= {
                "image": image.url,
                "width": image.width,
                "height": image.height,
                "blurhash": image.blurhash,
                IMAGE_PART: part,
                IMAGE_ORIGIN: said.image,
            }
            await kept.evict(store, storage, _bounds(settings))
    if card["author_name"] or card["author_url"]:
        card["authors"] = [
            {"name": card["author_name"], "url": card["author_url"], "account": None}
        ]
    return card


async def _kept(store: Store, key: str) -> dict | None | bool:
    """The card kept for a URL's digest; None: it makes none; False: not known."""
    raw = await store.get(keys.card(key))
    if raw is None:
        return False
    return None if raw == _NONE.encode() else json.loads(raw)


async def card_for(
    store: Store, settings: Settings, rejected: Rejected, url: str
) -> dict | None | bool:
    """The card of ``url``: kept, or fetched and kept now. None for a URL
    that makes none. While another job fetches it, waited for (at most
    limits.CARD_FETCHING_S); False if that job did not finish (the caller
    is retried)."""
    key = digest(url)
    card = await _kept(store, key)
    if card is not False:
        return card
    if not await store.set(keys.fetching(key), "1", nx=True, ex=limits.CARD_FETCHING_S):
        loop = asyncio.get_running_loop()
        until = loop.time() + limits.CARD_FETCHING_S
        while loop.time() < until and await store.get(keys.fetching(key)) is not None:
            await asyncio.sleep(0.2)  # (a bounded wait on the other job's fetch)
        return await _kept(store, key)
    try:
        card = await _make(store, settings, rejected, url, key)
        if card is None:
            await store.set(keys.card(key), _NONE, ex=limits.CARD_NONE_TTL_S)
        else:
            # (kept no longer than its image is: the remote media cache's age limit)
            age = min(limits.CARD_MAX_AGE_S, settings.remote_media_max_age_s)
            await store.set(keys.card(key), json.dumps(card), ex=max(1, int(age)))
        return card
    finally:
        await store.delete(keys.fetching(key))


async def attach(store: Store, settings: Settings, rejected: Rejected, sid: int) -> None:
    """CardJob: status ``sid`` given the card of its link (fetched if not
    kept), or none; written only if the record is still the one read
    (compare-and-set on its version; read again when it changed).
    FetchFailed when the page could not be fetched now, or another job is
    fetching it (the job is retried)."""
    for _ in range(5):
        raw = await store.hgetall(core_keys.status(sid))
        status = Status.from_hash(raw) if raw else None
        if status is None:
            return
        url = link_of(status, settings)
        card = await card_for(store, settings, rejected, url) if url else None
        if card is False:
            raise http.FetchFailed(f"{url}: being fetched by another job")
        value = json.dumps(card, separators=(",", ":")) if card else ""
        if status.extra.get("card", "") == value:
            return
        version = _text(raw.get(b"v", raw.get("v", b"")))
        try:
            await writes.of(store).update_status(
                sid, {FIELD: value}, only_if=("v", version) if version else ("", "")
            )
            return
        except Conflict:
            continue  # changed meanwhile (an edit): read again
        except StatusNotFound:
            return


async def kept_cards(store: Store, urls: list[str]) -> dict[str, dict]:
    """The cards kept for ``urls`` (normalized as trends.links counts them),
    by URL, in one round trip; none is fetched (a card is made by a post's
    job): a URL with no card kept is left out."""
    if not urls:
        return {}
    raws = await store.batch([("GET", keys.card(digest(u))) for u in urls])
    out: dict[str, dict] = {}
    for url, raw in zip(urls, raws):
        if not raw or raw == _NONE.encode():
            continue
        try:
            card = json.loads(raw)
        except ValueError:
            continue
        if isinstance(card, dict):
            out[url] = card
    return out


def shown(card: dict, sid: int, base: str) -> dict:
    """A kept card as clients are shown it: its image through this server's
    media proxy (:func:`proxy_image`: the copy kept here, fetched again when
    the cache dropped it; never its server's URL), the fields kept for that
    left out. A card kept before its image had a part names its file."""
    out = {k: v for k, v in card.items() if k not in (IMAGE_PART, IMAGE_ORIGIN)}
    part = card.get(IMAGE_PART)
    if card.get("image") and isinstance(part, str) and _PART.match(part):
        out["image"] = f"{base}{IMAGE_PROXY}/{sid}/{part}"
    else:
        out["image"] = media_entity.full_url(card.get("image"), base)
    return out


def entity(status: Status, base: str) -> dict | None:
    """The ``card`` of a status's entity: the card its record names, or
    None, as :func:`shown`."""
    raw = status.extra.get("card")
    if not raw:
        return None
    try:
        card = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(card, dict):
        return None
    return shown(card, status.id, base)


# --- a card's image, kept again ----------------------------------------------------
def _bounds(settings: Settings) -> kept.Bounds:
    return kept.Bounds(settings.remote_media_max_age_s, settings.remote_media_max_bytes)


async def _naming(store: Store, sid: int, part: str) -> dict | None:
    """The card whose image is ``part``: status ``sid``'s (not deleted), or
    for sid 0 the card kept for its URL; None if none names it."""
    if not _PART.match(part):
        return None
    if sid:
        raw, deleted = await store.hmget(core_keys.status(sid), [FIELD, "deleted"])
        if deleted:
            return None
    else:
        raw = await store.get(keys.card(part.split(".")[0]))
    try:
        card = json.loads(raw) if raw and raw != _NONE.encode() else None
    except ValueError:
        return None
    if not isinstance(card, dict) or card.get(IMAGE_PART) != part:
        return None
    return card if card.get(IMAGE_ORIGIN) else None


async def proxy_image(
    store: Store, queue: JobQueue, settings: Settings, rejected: Rejected, sid: int, part: str
) -> str:
    """Where ``/media_proxy/cards/<sid>/<part>`` sends a client: the card
    image's copy kept here. When the cache dropped it, its fetch is queued
    (jobs.CardImageJob, at most once per limits.REMOTE_MEDIA_REQUEUE_S) and
    NotFound answered meanwhile: the image's server is never named to the
    browser. NotFound too for a card not known, or whose image's server's
    media are rejected now."""
    card = await _naming(store, sid, part)
    if card is None:
        raise NotFound("no such card image")
    member = kept.member_of_card(part)
    here = await kept.kept_url(store, open_storage(settings), member)
    if here:
        return here
    if await rejected(store, card[IMAGE_ORIGIN]):
        raise NotFound("the media of this server are not shown here")
    if await kept.ask(store, member):
        await queue.enqueue(CardImageJob(sid=sid, part=part))
    raise NotFound("not kept here now: being fetched again")


async def keep_image_again(
    store: Store, settings: Settings, rejected: Rejected, sid: int, part: str
) -> None:
    """CardImageJob: the image of the card naming ``part`` fetched again and
    kept under the same member (every card naming it shows it again), if
    it is not kept and its server's media are not rejected; then the cache
    held to its bounds. Idempotent; FetchFailed for a passing failure."""
    card = await _naming(store, sid, part)
    if card is None or await rejected(store, card[IMAGE_ORIGIN]):
        return
    storage = open_storage(settings)
    member = kept.member_of_card(part)
    if await kept.kept_url(store, storage, member):
        return
    await kept.keep_image(
        store, storage, member, card[IMAGE_ORIGIN], loopback=settings.federation_loopback
    )
    await kept.evict(store, storage, _bounds(settings))
