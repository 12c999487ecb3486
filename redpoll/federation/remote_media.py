"""Other servers' media kept here (redpoll.media.remote), as the domain
policy allows: nothing is fetched from a domain whose media are rejected
(a domain block's ``reject_media``, and every suspended or, in the limited
federation mode, not allowed domain). The jobs (jobs.RemoteMediaJob,
jobs.RemoteImagesJob, in the ingress lane) fetch, keep and then hold the
cache to its bounds; the media proxy (``/media_proxy/...``) answers for a
copy not kept: it queues its fetch and names the origin meanwhile."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from ..bus.queue import JobQueue
from ..core import keys as core_keys
from ..core import limits
from ..core.errors import NotFound
from ..core.models import EXTRA_PREFIX
from ..core.settings import Settings
from ..media import entity
from ..media import remote as kept
from ..media.storage import open_storage
from ..storage.store import Store
from . import domains
from .jobs import RemoteImagesJob, RemoteMediaJob


def bounds(settings: Settings) -> kept.Bounds:
    return kept.Bounds(settings.remote_media_max_age_s, settings.remote_media_max_bytes)


async def media_rejected(store: Store, uri: str) -> bool:
    """Whether the media of the server of ``uri`` are not fetched here."""
    block = await domains.policy(store, urlsplit(uri).netloc.lower()) if uri else None
    return not uri or (block is not None and block.reject_media)


async def queue_attachments(queue: JobQueue, sid: int, media_extra: str) -> None:
    """A remote status was kept: the fetch of its images queued, if it has
    any to keep (a replay queues it again: the job keeps what is not kept)."""
    if any(kept.fetchable(i) for i in entity.snapshot_items(media_extra)):
        await queue.enqueue(RemoteMediaJob(sid=sid))


async def fetch_attachments(store: Store, settings: Settings, sid: int) -> None:
    """RemoteMediaJob: the status's images kept here (unless its domain's
    media are rejected), then the cache held to its bounds."""
    uri = await store.hget(core_keys.status(sid), EXTRA_PREFIX + "uri")
    if await media_rejected(store, uri.decode() if uri else ""):
        return
    storage = open_storage(settings)
    await kept.keep_attachments(
        store,
        storage,
        sid,
        loopback=settings.federation_loopback,
        # (a video or a sound never larger than the whole cache may be)
        av_max_bytes=min(limits.REMOTE_MEDIA_AV_MAX_BYTES, settings.remote_media_max_bytes),
    )
    await kept.evict(store, storage, bounds(settings))


async def fetch_profile_images(store: Store, settings: Settings, uid: int) -> None:
    """RemoteImagesJob: as :func:`fetch_attachments`, an account's avatar
    and header."""
    uri = await store.hget(core_keys.user(uid), "uri")
    if await media_rejected(store, uri.decode() if uri else ""):
        return
    storage = open_storage(settings)
    await kept.keep_profile_images(store, storage, uid, loopback=settings.federation_loopback)
    await kept.evict(store, storage, bounds(settings))


async def keep_profile_origins(
    store: Store, queue: JobQueue, uid: int, uri: str, images: dict[str, str]
) -> None:
    """A remote account's avatar and header as its server names them now
    (kind -> URL, '' none) on its record; their fetch queued where no copy
    of them is kept (the default image shown if its media are rejected)."""
    shown = not await media_rejected(store, uri)
    wanted = [await kept.point_origin(store, uid, kind, url, shown) for kind, url in images.items()]
    if any(wanted):
        await queue.enqueue(RemoteImagesJob(uid=uid))


async def proxy_attachment(
    store: Store, queue: JobQueue, sid: int, aid: int, token: str, style: str
) -> str:
    """Where ``/media_proxy/<sid>/<aid>/<token>/<style>`` sends a client:
    the copy kept here, else (its fetch queued, at most once per
    limits.REMOTE_MEDIA_REQUEUE_S) its server's URL. NotFound for an
    attachment not known by that token, or of a domain whose media are
    rejected."""
    if style not in entity.STYLES:
        raise NotFound("no such style")
    raw, uri, deleted = await store.hmget(
        core_keys.status(sid), [kept.MEDIA_FIELD, EXTRA_PREFIX + "uri", "deleted"]
    )
    items = json.loads(raw) if raw and not deleted else []
    item = next(
        (
            i
            for i in items
            if i.get("remote") and str(i.get("id")) == str(aid) and i.get("tok") == token
        ),
        None,
    )
    if item is None:
        raise NotFound("no such attachment")
    image = item.get("t", entity.IMAGE) == entity.IMAGE
    if style == "original":
        here = item.get("lurl")
    else:  # (a video's or a sound's file is no preview)
        here = item.get("lpurl") or (item.get("lurl") if image else None)
    if here:
        return here
    if item.get("rej") or await media_rejected(store, uri.decode() if uri else ""):
        raise NotFound("the media of this server are not shown here")
    if kept.fetchable(item) and await kept.ask(store, kept.member_of_attachment(sid, aid)):
        await queue.enqueue(RemoteMediaJob(sid=sid))
    return item["url"] if style == "original" else item.get("purl") or item["url"]


async def proxy_profile_image(store: Store, queue: JobQueue, uid: int, kind: str) -> str:
    """Where ``/media_proxy/accounts/<uid>/<kind>`` sends a client: as
    :func:`proxy_attachment`, for a remote account's avatar or header."""
    if kind not in ("avatar", "header"):
        raise NotFound("no such image")
    shown, origin, files, uri = (
        (v or b"").decode()
        for v in await store.hmget(core_keys.user(uid), [kind, f"{kind}_r", f"{kind}_f", "uri"])
    )
    if files and shown:
        return shown
    if not origin or await media_rejected(store, uri):
        raise NotFound("no such image")
    if await kept.ask(store, kept.member_of_profile(uid, kind)):
        await queue.enqueue(RemoteImagesJob(uid=uid))
    return origin
