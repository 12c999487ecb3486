"""Other servers' media kept here, as Mastodon's media cache: the image
attachments of remote statuses and the avatars and headers of remote
accounts are fetched once (by jobs, through the one outgoing-fetch guard,
redpoll.net), checked, stripped, scaled and given a preview and a blurhash
as uploads are (processing.py), stored through the same MediaStorage, and
served from here; their server's URL stays the attachment's ``remote_url``.

A copy is a *member* of the cache index (keys.REMOTE_KEPT: ``s:<sid>:<aid>``,
``u:<uid>:<kind>``, or ``c:0:<digest>.<ms>`` for a link card's image,
:func:`keep_image`) naming its files and their weight
(keys.REMOTE_FILES, keys.REMOTE_BYTES). The index is bounded: a copy older
than the age limit, and the oldest copies while all of them weigh more
than the size limit, are dropped (:func:`evict`; settings
REDPOLL_REMOTE_MEDIA_MAX_AGE_S / _MAX_BYTES). A copy not kept (not fetched
yet, its fetch failed, or dropped) is shown through this server's media
proxy (``/media_proxy/...``, as Mastodon's ``url`` while a file "needs
redownload"): asked for, it queues the copy's fetch (a job, at most once
per limits.REMOTE_MEDIA_REQUEUE_S) and sends the client to the origin
meanwhile.

Every step is idempotent and ordered so that no client is handed a URL of
a deleted file:

* fetching: the copy's entry is written first (remote_kept_add.lua:
  atomic, returning the files an earlier entry of it named), then its
  files, then the status's item or the user record is pointed at them
  (a compare-and-set: records.writes.update_status, remote_image.lua),
  then the earlier files are deleted. Each fetch names its files anew (the
  fetch time is in their keyed hash), so a file one fetch wrote is never
  another's. One job fetches a copy at a time (keys.remote_fetching); a
  fetch cut short leaves an entry the next fetch of it replaces, or that
  eviction drops with its files.
* dropping: the status's item or the user record is pointed away first
  (compare-and-set on the files it names), then the entry goes if it is
  still the one read (remote_kept_drop.lua), then its files are deleted.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass

from ..core import keys as core_keys
from ..core import limits
from ..core.errors import Conflict, StatusNotFound, ValidationError
from ..core.models import EXTRA_PREFIX, now_ms
from ..net import http, safety
from ..records import writes
from ..storage.store import Store
from . import files, keys, processing
from .entity import IMAGE, VIDEO, profile_proxy
from .storage import MediaStorage

log = logging.getLogger("redpoll.media")

MEDIA_FIELD = EXTRA_PREFIX + "media"
_INDEX = [keys.REMOTE_KEPT, keys.REMOTE_FILES, keys.REMOTE_BYTES]
#: the kinds of a profile image's member, with the processing each gets
_PROFILE = {"avatar": processing.AVATAR, "header": processing.HEADER}


@dataclass(frozen=True)
class Bounds:
    """How much of other servers' media is kept: an age (s) and a weight
    (bytes of stored files, all copies together)."""

    max_age_s: int = limits.REMOTE_MEDIA_MAX_AGE_S
    max_bytes: int = limits.REMOTE_MEDIA_MAX_BYTES


def fetchable(item: dict) -> bool:
    """Whether an attachment of a status is another server's image, video
    or sound (and its preview image) that can be kept here and is not."""
    return bool(
        item.get("remote") and item.get("tok") and not item.get("rej") and not item.get("files")
    )


#: the leading bytes of the video and sound files kept as they came, and
#: their extension (media.storage.CONTENT_TYPES); ``ftyp`` (ISO media) is
#: told by the attachment's kind
_SIGNATURES = (
    (b"\x1a\x45\xdf\xa3", "webm"),
    (b"OggS", "ogg"),
    (b"fLaC", "flac"),
    (b"ID3", "mp3"),
    (b"\xff\xfb", "mp3"),
    (b"\xff\xf3", "mp3"),
    (b"\xff\xf2", "mp3"),
)


def av_ext(data: bytes, kind: str) -> str:
    """The extension a remote video's or sound's file is kept under, by
    what its bytes are (never by what its server says); ValidationError
    for a file that is none of the kept kinds."""
    if data[4:8] == b"ftyp":
        return "mp4" if kind == VIDEO else "m4a"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "wav"
    for head, ext in _SIGNATURES:
        if data.startswith(head):
            return ext
    raise ValidationError("file", "is not a video or sound file kept here")


async def _av_file(url: str, kind: str, loopback: bool, max_bytes: int) -> processing.Output | None:
    """A remote video or sound itself, as it came (its kind checked by its
    bytes): None when it cannot be kept (larger than ``max_bytes``, not a
    known kind, refused: a retry would fail the same; logged); FetchFailed
    for a passing failure."""
    try:
        data, _ = await http.fetch_file(
            url,
            loopback=loopback,
            types=("video/", "audio/"),
            max_bytes=max_bytes,
            deadline=limits.REMOTE_MEDIA_AV_FETCH_TIMEOUT_S,
        )
        return processing.Output(data, av_ext(data, kind))
    except (http.FetchFailed, safety.Refused, ValidationError) as exc:
        if not _lasting(exc):
            raise
        log.info("remote %s %s not kept: %s", kind, url, exc)
        return None


def member_of_attachment(sid: int, aid: int) -> str:
    return keys.remote_member("s", sid, aid)


def member_of_profile(uid: int, kind: str) -> str:
    return keys.remote_member("u", uid, kind)


def member_of_card(digest: str) -> str:
    """The member of a link preview card's image (redpoll.cards): by the
    digest of the card's URL."""
    return keys.remote_member("c", 0, digest)


def member_of_emoji(origin: str) -> str:
    """The member of a remote custom emoji's image: by the digest of its
    URL on its server (an emoji given a new image is a new copy)."""
    return keys.remote_member("e", 0, hashlib.sha256(origin.encode()).hexdigest()[:32])


async def ask(store: Store, member: str) -> bool:
    """Whether the fetch of a copy not kept should be queued now: once per
    limits.REMOTE_MEDIA_REQUEUE_S (SET NX with that expiry)."""
    return bool(
        await store.set(keys.remote_asked(member), "1", nx=True, ex=limits.REMOTE_MEDIA_REQUEUE_S)
    )


# --- fetching ----------------------------------------------------------------------
def _lasting(exc: Exception) -> bool:
    """Whether a fetch failed in a way a retry would fail again: an address
    or URL the guard refuses, an answer 4xx (but 429), larger than the
    bound, not an image, or a file that is not a readable image within the
    bounds."""
    if isinstance(exc, (http.TooLarge, http.WrongType)):
        return True
    if isinstance(exc, http.FetchFailed):
        return 400 <= exc.status < 500 and exc.status != 429
    return isinstance(exc, (safety.Refused, ValidationError))


async def _fetch(url: str, loopback: bool) -> bytes:
    data, _ = await http.fetch_file(
        url,
        loopback=loopback,
        types=("image/",),
        max_bytes=limits.REMOTE_MEDIA_FETCH_MAX_BYTES,
        deadline=limits.REMOTE_MEDIA_FETCH_TIMEOUT_S,
    )
    return data


async def _processed(data: bytes, kind: str) -> processing.Processed:
    probe = await processing.run(processing.inspect, data)
    return await processing.run(processing.process, data, probe, kind)


async def _store(
    store: Store, storage: MediaStorage, member: str, salt: int, done: processing.Processed
) -> tuple[list[str], list[str]]:
    """The copy's entry written, then its files: (its names, the names an
    earlier entry of it held)."""
    key = await files.name_key(store)
    names = [files.name(key, salt, out) for out in done.files]
    size = sum(len(out.data) for out in done.files)
    before = await store.run("remote_kept_add", _INDEX, [member, now_ms(), size, " ".join(names)])
    before = before.decode() if isinstance(before, bytes) else (before or "")
    for name, out in zip(names, done.files):
        await storage.put(name, out.data)
    return names, [n for n in before.split() if n not in names]


async def _forget(store: Store, storage: MediaStorage, member: str, names: list[str]) -> None:
    """A copy's files that were not pointed at after all: its entry dropped
    if it still names them, and they are deleted."""
    entry = await store.hget(keys.REMOTE_FILES, member)
    if entry and entry.decode().split()[1:] == names:
        await store.run("remote_kept_drop", _INDEX, [member, entry.decode()])
    for name in names:
        await storage.delete(name)


async def _one_at_a_time(store: Store, member: str) -> bool:
    return bool(
        await store.set(
            keys.remote_fetching(member),
            "1",
            nx=True,
            ex=int(limits.REMOTE_MEDIA_FETCH_TIMEOUT_S * 4),
        )
    )


async def _change_item(store: Store, sid: int, aid: int, change) -> bool:
    """Attachment ``aid`` of status ``sid`` changed by ``change(item)`` (a
    new item, or None for no change), written only if the status's
    attachments are still those read (update_status's compare-and-set;
    read again and retried when they changed meanwhile). Whether it was
    written."""
    for _ in range(5):
        raw = await store.hget(core_keys.status(sid), MEDIA_FIELD)
        if not raw:
            return False
        text = raw.decode()
        items = json.loads(text)
        at = next((i for i, x in enumerate(items) if x.get("remote") and int(x["id"]) == aid), None)
        if at is None:
            return False
        new = change(dict(items[at]))
        if new is None:
            return False
        items[at] = new
        try:
            await writes.of(store).update_status(
                sid,
                {MEDIA_FIELD: json.dumps(items, separators=(",", ":"))},
                only_if=(MEDIA_FIELD, text),
            )
            return True
        except Conflict:
            continue  # changed meanwhile: read again
        except StatusNotFound:
            return False
    return False


def _pointing(origin: str, fields: dict):
    """The change of an attachment that points it at its kept copy: none if
    it was kept meanwhile, or names another file now."""

    def point(it: dict) -> dict | None:
        if it.get("files") or it.get("url") != origin:
            return None
        return it | fields

    return point


async def keep_attachments(
    store: Store,
    storage: MediaStorage,
    sid: int,
    *,
    loopback: bool,
    av_max_bytes: int = limits.REMOTE_MEDIA_AV_MAX_BYTES,
) -> list[str]:
    """Fetch and keep the images, videos and sounds (and their previews) of
    remote status ``sid`` not kept here yet (a video or sound of more than
    ``av_max_bytes``: its preview only, the file shown from its server);
    the URLs that could not be (a refused address, a 4xx, not an image:
    fetching them again would fail the same; logged). FetchFailed for a
    passing failure (a timeout, a 5xx: the job is retried; what was kept
    stays)."""
    raw = await store.hget(core_keys.status(sid), MEDIA_FIELD)
    failed: list[str] = []
    passing: Exception | None = None
    for item in json.loads(raw) if raw else []:
        if not fetchable(item):
            continue
        aid, member = int(item["id"]), member_of_attachment(sid, int(item["id"]))
        if not await _one_at_a_time(store, member):
            continue
        kind = item.get("t") or IMAGE
        image = kind == IMAGE
        url = item["url"] if image else item.get("purl") or ""
        try:
            try:
                itself = (
                    None if image else await _av_file(item["url"], kind, loopback, av_max_bytes)
                )
                if url:
                    done = await _processed(await _fetch(url, loopback), processing.ATTACHMENT)
                else:  # a video or a sound with no preview: the file alone
                    done = processing.Processed([])
            except (http.FetchFailed, safety.Refused, ValidationError) as exc:
                if not _lasting(exc):
                    passing = passing or exc
                    continue
                log.info("remote attachment %s not kept: %s", url, exc)
                failed.append(url)
                continue
            if not image:  # a video's or a sound's preview: the small one only
                done = processing.Processed(done.files[-1:], done.meta, done.blurhash)
                if itself is not None:  # and the file itself, first
                    done = processing.Processed([itself, *done.files], done.meta, done.blurhash)
            if not done.files:
                failed.append(item["url"])
                continue
            names, older = await _store(store, storage, member, sid * 2**32 + aid + now_ms(), done)
            fields: dict = {"files": " ".join(names)}
            if image:
                fields |= {
                    "lurl": storage.url(names[0]),
                    "lpurl": storage.url(names[-1]),
                    "meta": done.meta,
                    "bh": done.blurhash,
                }
            else:
                if itself is not None:
                    fields["lurl"] = storage.url(names[0])
                if url:
                    fields["lpurl"] = storage.url(names[-1])
                    if not item.get("bh"):
                        fields["bh"] = done.blurhash
            if not await _change_item(store, sid, aid, _pointing(item["url"], fields)):
                older = names
                await _forget(store, storage, member, names)
            for name in older:
                await storage.delete(name)
        finally:
            await store.delete(keys.remote_fetching(member))
    if passing is not None:
        raise passing  # (the job is retried; what was kept stays)
    return failed


async def point_origin(store: Store, uid: int, kind: str, origin: str, shown: bool) -> bool:
    """A remote account's avatar or header as its server names it now
    (``origin``, '' none), kept on its record (remote_image.lua 'origin':
    a copy kept of the same URL stays, one of another URL is no longer
    shown). ``shown`` False: the domain's media are rejected here, the
    default image is shown. Whether it should be fetched."""
    if kind not in _PROFILE:
        raise ValueError(kind)
    instead = profile_proxy(uid, kind) if origin and shown else ""
    done = await store.run("remote_image", [core_keys.user(uid)], ["origin", kind, origin, instead])
    return done == 1 and bool(origin) and shown


async def keep_profile_images(
    store: Store, storage: MediaStorage, uid: int, *, loopback: bool
) -> list[str]:
    """Fetch and keep remote account ``uid``'s avatar and header if they are
    not kept here; as :func:`keep_attachments`, the URLs that could not be."""
    fields = [f"{k}{s}" for k in _PROFILE for s in ("_r", "_f")]
    raw = await store.hmget(core_keys.user(uid), fields)
    values = dict(zip(fields, ((v or b"").decode() for v in raw)))
    failed: list[str] = []
    passing: Exception | None = None
    for kind, how in _PROFILE.items():
        origin = values[f"{kind}_r"]
        if not origin or values[f"{kind}_f"]:
            continue
        member = member_of_profile(uid, kind)
        if not await _one_at_a_time(store, member):
            continue
        try:
            try:
                done = await _processed(await _fetch(origin, loopback), how)
            except (http.FetchFailed, safety.Refused, ValidationError) as exc:
                if not _lasting(exc):
                    passing = passing or exc
                    continue
                log.info("remote %s %s not kept: %s", kind, origin, exc)
                failed.append(origin)
                continue
            salt = -(uid * 4 + (1 if kind == "avatar" else 2)) - now_ms() * 2**40
            names, older = await _store(store, storage, member, salt, done)
            pointed = await store.run(
                "remote_image",
                [core_keys.user(uid)],
                [
                    "point",
                    kind,
                    origin,
                    storage.url(names[0]),
                    storage.url(names[-1]),
                    " ".join(names),
                ],
            )
            if pointed != 1:
                older = names
                await _forget(store, storage, member, names)
            for name in older:
                await storage.delete(name)
        finally:
            await store.delete(keys.remote_fetching(member))
    if passing is not None:
        raise passing  # (the job is retried; what was kept stays)
    return failed


@dataclass(frozen=True)
class KeptImage:
    """An image kept here by :func:`keep_image`: its URL here (the small
    rendering), its size and blurhash."""

    url: str
    width: int
    height: int
    blurhash: str


async def keep_image(
    store: Store, storage: MediaStorage, member: str, url: str, *, loopback: bool
) -> KeptImage | None:
    """Fetch the image at ``url`` (another server's) and keep it here as
    ``member`` of the bounded cache, as an attachment's (checked, stripped,
    scaled, a blurhash): its small rendering. None when it cannot be (a
    refused address, a 4xx, not an image, a fetch already under way: a
    retry would fail the same or is being made); FetchFailed for a passing
    failure. The copy's entry is written before its files (as every copy:
    a fetch cut short leaves an entry the next one replaces or eviction
    drops with its files); the files an earlier copy of it named are
    deleted once the new ones are stored."""
    if not await _one_at_a_time(store, member):
        return None
    try:
        try:
            done = await _processed(await _fetch(url, loopback), processing.ATTACHMENT)
        except (http.FetchFailed, safety.Refused, ValidationError) as exc:
            if not _lasting(exc):
                raise http.FetchFailed(str(exc)) from None
            log.info("image %s not kept: %s", url, exc)
            return None
        small = processing.Processed(done.files[-1:], done.meta, done.blurhash)
        names, older = await _store(store, storage, member, now_ms() * 2**8 + 255, small)
        for name in older:
            await storage.delete(name)
        size = done.meta.get("small") or {}
        return KeptImage(
            storage.url(names[-1]),
            int(size.get("width", 0)),
            int(size.get("height", 0)),
            done.blurhash,
        )
    finally:
        await store.delete(keys.remote_fetching(member))


async def kept_url(store: Store, storage: MediaStorage, member: str) -> str | None:
    """The URL here of a kept copy's small rendering (its last file), or
    None while it is not kept."""
    entry = await store.hget(keys.REMOTE_FILES, member)
    names = entry.decode().split()[1:] if entry else []
    return storage.url(names[-1]) if names else None


# --- dropping ----------------------------------------------------------------------
async def drop(store: Store, storage: MediaStorage, member: str) -> int:
    """Drop one kept copy (idempotent): what shows it pointed away (back to
    the media proxy), its entry, then its files. Bytes it weighed."""
    entry = await store.hget(keys.REMOTE_FILES, member)
    if entry is None:
        await store.zrem(keys.REMOTE_KEPT, member)
        return 0
    value = entry.decode()
    size, *names = value.split()
    joined = " ".join(names)
    what, owner, part = member.split(":", 2)
    if what in ("c", "e"):  # a card's image or an emoji: the media proxy fetches it again
        pass
    elif what == "s":

        def away(it: dict) -> dict | None:
            if it.get("files") != joined:
                return None
            return {k: v for k, v in it.items() if k not in ("lurl", "lpurl", "files")}

        await _change_item(store, int(owner), int(part), away)
    else:
        await store.run(
            "remote_image",
            [core_keys.user(int(owner))],
            ["unpoint", part, joined, profile_proxy(int(owner), part)],
        )
    gone = await store.run("remote_kept_drop", _INDEX, [member, value])
    gone = gone.decode() if isinstance(gone, bytes) else (gone or "")
    for name in gone.split():
        await storage.delete(name)
    return int(size) if gone else 0


async def kept(store: Store) -> tuple[int, int]:
    """(copies kept, bytes they weigh)."""
    count, total = await store.batch([("ZCARD", keys.REMOTE_KEPT), ("GET", keys.REMOTE_BYTES)])
    return int(count), int(total or 0)


async def evict(
    store: Store,
    storage: MediaStorage,
    bounds: Bounds,
    *,
    older_than_s: float | None = None,
    batch: int = limits.REMOTE_MEDIA_EVICT_BATCH,
    now: int | None = None,
) -> int:
    """Drop, oldest first, the copies older than ``bounds.max_age_s`` (or
    ``older_than_s`` when given: ``redpoll admin media-cache clear``; 0:
    every copy), and more while all together weigh more than
    ``bounds.max_bytes``; at most ``batch`` of them (the next pass goes on).
    How many were dropped."""
    now = now or now_ms()
    age = bounds.max_age_s if older_than_s is None else older_than_s
    cutoff = now - age * 1000
    dropped = 0
    while dropped < batch:
        oldest = await store.zrange(keys.REMOTE_KEPT, 0, 49, withscores=True)
        if not oldest:
            break
        for member, at in oldest:
            total = int(await store.get(keys.REMOTE_BYTES) or 0)
            if not (at <= cutoff or total > bounds.max_bytes) or dropped >= batch:
                return dropped
            await drop(store, storage, member.decode())
            dropped += 1
    return dropped


async def forget_status(store: Store, sid: int, items: list[dict]) -> tuple[str, ...]:
    """A remote status is being deleted: the entries of the copies kept of
    its attachments go (remote_kept_drop.lua; idempotent); the names of
    their files, for the caller to delete."""
    names: list[str] = []
    for item in items:
        if item.get("remote") and item.get("files"):
            member = member_of_attachment(sid, int(item["id"]))
            entry = await store.hget(keys.REMOTE_FILES, member)
            if entry is not None:
                await store.run("remote_kept_drop", _INDEX, [member, entry.decode()])
            names += item["files"].split()
    return tuple(names)
