"""Other servers' custom emoji (``tag`` items of type ``Emoji`` with an
``icon``, as Mastodon sends them), kept here as Mastodon keeps them: per
server and shortcode, the image's URL there as its notes and actors last
named it (keys.emoji), the image itself a copy in the remote media cache
(redpoll.media.remote: an ``e:`` member, the cache's bounds; fetched by a
job, jobs.RemoteEmojiJob, through the outgoing-fetch guard). A status or an
account names the shortcodes its text uses (``x:emo`` / ``emo``: space-
separated); its entity's ``emojis`` show them through this server's media
proxy (media.entity.emojis), never from their server. Nothing is kept of a
server whose media are rejected: its shortcodes stay text."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from ..bus.queue import JobQueue
from ..core import limits
from ..core.errors import NotFound
from ..core.settings import Settings
from ..media import entity
from ..media import keys as media_keys
from ..media import remote as kept
from ..media.storage import MediaStorage, open_storage
from ..net import http
from ..storage.store import Store
from . import keys, remote_media
from .jobs import RemoteEmojiJob

#: the field of keys.emoji naming the server (no shortcode: it has a '#')
_HOST = "#host"
SHORTCODE = re.compile(rf"[A-Za-z0-9_]{{2,{limits.REMOTE_EMOJI_SHORTCODE_MAX_CHARS}}}")


def _host(uri: str) -> str:
    return urlsplit(uri).netloc.lower()


def _icon_url(icon, uri: str) -> str:
    """The http(s) URL of an emoji's ``icon`` (relative: on its document's
    server; as remote.media_link), else ''."""
    icon = icon[0] if isinstance(icon, list) and icon else icon
    url = icon.get("url") if isinstance(icon, dict) else None
    url = url[0] if isinstance(url, list) and url else url
    url = (url.get("href") or "") if isinstance(url, dict) else url
    if not isinstance(url, str) or not url:
        return ""
    absolute = urljoin(uri, url.strip())
    return absolute if absolute.startswith(("https://", "http://")) and _host(absolute) else ""


def _listed(value) -> list:
    return value if isinstance(value, list) else [value] if value else []


def parse(tags, uri: str, texts: list[str]) -> dict[str, str]:
    """The custom emoji of a note's or actor's ``tag`` that its ``texts``
    use (``:shortcode:``), shortcode -> the http(s) URL of its image; at
    most limits.REMOTE_EMOJI_PER_OBJECT."""
    used = " ".join(t for t in texts if isinstance(t, str))
    found: dict[str, str] = {}
    for tag in _listed(tags):
        if len(found) >= limits.REMOTE_EMOJI_PER_OBJECT:
            break
        if not isinstance(tag, dict) or tag.get("type") != "Emoji":
            continue
        name = tag.get("name")
        code = name.strip(":") if isinstance(name, str) else ""
        if not SHORTCODE.fullmatch(code) or f":{code}:" not in used:
            continue
        url = _icon_url(tag.get("icon"), uri)
        if url and len(url) <= limits.EXTRA_VALUE_MAX_BYTES:
            found[code] = url
    return found


async def keep(store: Store, queue: JobQueue, uri: str, found: dict[str, str]) -> str:
    """The emoji ``found`` in the note or actor ``uri`` recorded for its
    server (one HSET: idempotent), and the fetch of those not kept here
    queued; the shortcodes for its record ('' none, or the server's media
    rejected here)."""
    host = _host(uri)
    if not found or not host or await remote_media.media_rejected(store, uri):
        return ""
    # (its server's host kept with them: the media proxy knows it by its digest)
    await store.hset(keys.emoji(entity.host_digest(host)), mapping=found | {_HOST: host})
    # (each not kept queued at most once per limits.REMOTE_MEDIA_REQUEUE_S
    # until it is: a note naming an image that cannot be had costs no fetch)
    missing = [
        code
        for code, url in found.items()
        if await store.hget(media_keys.REMOTE_FILES, kept.member_of_emoji(url)) is None
        and await kept.ask(store, kept.member_of_emoji(url))
    ]
    if missing:
        await queue.enqueue(RemoteEmojiJob(host=host, codes=" ".join(missing)))
    return " ".join(found)


async def fetch(store: Store, settings: Settings, host: str, codes: str) -> None:
    """RemoteEmojiJob: each emoji's image kept here if it is not (and the
    server's media are not rejected), then the cache held to its bounds.
    FetchFailed for a passing failure (the job is retried; what was kept
    stays)."""
    if await remote_media.media_rejected(store, f"https://{host}/"):
        return
    storage = open_storage(settings)
    passing: Exception | None = None
    for code in codes.split()[: limits.REMOTE_EMOJI_PER_OBJECT]:
        raw = await store.hget(keys.emoji(entity.host_digest(host)), code)
        if raw is None:
            continue
        origin = raw.decode()
        member = kept.member_of_emoji(origin)
        if await kept.kept_url(store, storage, member):
            continue
        try:
            image = await kept.keep_image(
                store, storage, member, origin, loopback=settings.federation_loopback
            )
        except http.FetchFailed as exc:
            passing = passing or exc
            continue
        if image is not None:  # kept: once dropped, it may be asked for again at once
            await store.delete(media_keys.remote_asked(member))
    await kept.evict(store, storage, remote_media.bounds(settings))
    if passing is not None:
        raise passing


async def proxy(
    store: Store, queue: JobQueue, storage: MediaStorage, digest: str, code: str
) -> str:
    """Where ``/media_proxy/emoji/<host digest>/<shortcode>`` sends a
    client: the emoji's copy kept here. When it is not kept (not fetched
    yet, or dropped by the cache), its fetch is queued (at most once per
    limits.REMOTE_MEDIA_REQUEUE_S) and NotFound answered meanwhile: its
    server is never named to the browser."""
    if not (re.fullmatch(r"[0-9a-f]{32}", digest) and SHORTCODE.fullmatch(code)):
        raise NotFound("no such emoji")
    raw, named = await store.hmget(keys.emoji(digest), [code, _HOST])
    if raw is None or named is None:
        raise NotFound("no such emoji")
    origin, host = raw.decode(), named.decode()
    member = kept.member_of_emoji(origin)
    here = await kept.kept_url(store, storage, member)
    if here:
        return here
    if await remote_media.media_rejected(store, f"https://{host}/"):
        raise NotFound("the media of this server are not shown here")
    if await kept.ask(store, member):
        await queue.enqueue(RemoteEmojiJob(host=host, codes=code))
    raise NotFound("not kept here now: being fetched")
