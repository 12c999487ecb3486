"""Mastodon's MediaAttachment entity, from an upload's record or from what a
status keeps of its attachments (its ``media`` extra, a JSON list copied
from the records when it was posted: :func:`snapshot`)."""

from __future__ import annotations

import hashlib
import json
import secrets
import zlib

#: every upload here is an image; a GIF too (Mastodon turns GIFs into video,
#: "gifv"; redpoll keeps them as images). Another server's attachments may
#: be videos and audio too (their item's ``t``), shown from its URLs.
IMAGE = "image"
VIDEO = "video"
AUDIO = "audio"
#: an attachment of a server whose media are rejected here (a domain block's
#: reject_media): never fetched, shown as Mastodon shows a file it has not
#: got and cannot name the type of
UNKNOWN = "unknown"

#: where this server answers for another server's files it has not kept
#: (redpoll.media.remote): ``/media_proxy/<sid>/<aid>/<token>/<style>`` for
#: an attachment, ``/media_proxy/accounts/<uid>/<kind>`` for an avatar or
#: header
PROXY_PATH = "/media_proxy"
STYLES = ("original", "small")


def attachment_proxy(sid: int, item: dict, style: str) -> str:
    return f"{PROXY_PATH}/{sid}/{item['id']}/{item['tok']}/{style}"


def profile_proxy(uid: int, kind: str) -> str:
    return f"{PROXY_PATH}/accounts/{uid}/{kind}"


def host_digest(host: str) -> str:
    """The digest naming a remote server in emoji paths and keys."""
    return hashlib.sha256(host.lower().encode()).hexdigest()[:32]


def emoji_proxy(host: str, shortcode: str) -> str:
    return f"{PROXY_PATH}/emoji/{host_digest(host)}/{shortcode}"


def emojis(host: str, shortcodes: str, base: str) -> list[dict]:
    """Mastodon's CustomEmoji of a remote status or account: ``shortcodes``
    (space-separated) of server ``host``, each shown through this server's
    media proxy (the copy kept here), never from its server."""
    if not host:
        return []
    out = []
    for code in shortcodes.split():
        url = base + emoji_proxy(host, code)
        out.append({"shortcode": code, "url": url, "static_url": url, "visible_in_picker": False})
    return out


def full_url(url: str | None, base: str) -> str | None:
    """A stored file's URL as clients get it: storage gives a path under the
    server (``/system/media/...``) or an absolute URL (another backend)."""
    if not url:
        return None
    return base + url if url.startswith("/") else url


def focus_of(raw: str | None) -> dict:
    x, y = (float(v) for v in (raw or "0,0").split(","))
    return {"x": x, "y": y}


def attachment(item: dict, base: str, sid: int = 0) -> dict:
    """The entity of one attachment: ``item`` is a :func:`snapshot` item, or
    an upload record's fields as :func:`record_item` gives them; ``sid`` its
    status. Another server's attachment (as Mastodon's): ``remote_url`` its
    server's URL; ``url`` and ``preview_url`` the copy kept here, or, while
    there is none, this server's media proxy (which queues its fetch and
    sends the client to the origin meanwhile); a rejected domain's: type
    ``unknown``, no preview. A video or a sound of another server is shown
    from its server, its preview kept here as an image's (its server's
    preview: ``preview_remote_url``); what was received before copies were
    kept is shown from its server."""
    meta = item.get("meta")
    if meta is not None:
        meta = {**meta, "focus": focus_of(item.get("focus"))}
    kind = item.get("t") or IMAGE
    url, purl = item.get("url"), item.get("purl")
    bh = item.get("bh") or None
    preview_remote = None
    if item.get("remote"):
        if kind != IMAGE:  # (a video's or a sound's preview on its server)
            preview_remote = purl
        proxied = bool(sid and item.get("tok"))
        if item.get("rej"):
            kind, purl, meta, bh, preview_remote = UNKNOWN, None, None, None, None
            url = attachment_proxy(sid, item, "original") if proxied else url
        elif kind == IMAGE and item.get("lurl"):
            url, purl = item["lurl"], item.get("lpurl") or item["lurl"]
        elif kind == IMAGE and proxied:
            url = attachment_proxy(sid, item, "original")
            purl = attachment_proxy(sid, item, "small")
        elif item.get("lurl"):  # a video or a sound kept here, and its preview
            url = item["lurl"]
            purl = item.get("lpurl") or (
                attachment_proxy(sid, item, "small") if purl and proxied else purl
            )
        elif item.get("lpurl"):  # a video or a sound not kept (too large): on its server
            purl = item["lpurl"]
        elif proxied:  # a video or a sound not kept yet: through the proxy
            url = attachment_proxy(sid, item, "original")
            purl = attachment_proxy(sid, item, "small") if purl else None
    return {
        "id": str(item["id"]),
        "type": kind,
        "url": full_url(url, base),
        "preview_url": full_url(purl, base),
        "remote_url": item.get("url") if item.get("remote") else None,
        "preview_remote_url": preview_remote,
        "text_url": None,
        "meta": meta,
        "description": item.get("desc") or None,
        "blurhash": bh,
    }


def attachments(raw: str | None, base: str, sid: int = 0) -> list[dict]:
    """The entities of a status's ``media`` extra (none: an empty list)."""
    if not raw:
        return []
    return [attachment(item, base, sid) for item in json.loads(raw)]


def record_item(record: dict[str, str]) -> dict:
    """An upload record (decoded hash) as the item :func:`attachment` takes;
    a record still processing has no URLs nor meta yet."""
    ready = record.get("state") == "ready"
    return {
        "id": int(record["id"]),
        "url": record.get("url") if ready else None,
        "purl": record.get("purl") if ready else None,
        "meta": json.loads(record["meta"]) if ready and record.get("meta") else None,
        "desc": record.get("desc", ""),
        "bh": record.get("blurhash") if ready else None,
        "focus": record.get("focus"),
        "v": record.get("v", "0"),
    }


def snapshot(records: list[dict[str, str]]) -> str:
    """What a status keeps of its attachments, in order: JSON, one item per
    record (with the record's version, checked when they are attached)."""
    return json.dumps([record_item(r) for r in records], separators=(",", ":"))


def snapshot_items(raw: str | None) -> list[dict]:
    return json.loads(raw) if raw else []


#: an attachment's ActivityStreams type -> its kind when it names no media type
_KINDS = {"Image": IMAGE, "Document": IMAGE, "Video": VIDEO, "Audio": AUDIO}


def remote_kind(a: dict) -> str | None:
    """What an attachment of another server is shown as: image, video or
    audio, by its ``mediaType`` (``image/*``, ``video/*``, ``audio/*``),
    else by its type; None for anything else (not shown)."""
    media_type = a.get("mediaType")
    if isinstance(media_type, str) and media_type:
        kind = media_type.split("/", 1)[0].lower()
        return kind if kind in (IMAGE, VIDEO, AUDIO) else None
    return _KINDS.get(a.get("type")) if isinstance(a.get("type"), str) else None


def _url_of(value) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("href") or value.get("url")
    if (
        not isinstance(value, str)
        or not value.startswith(("https://", "http://"))
        or len(value) > 2048
    ):
        return None
    return value


def remote_items(attachments: list[dict], limit: int, rejected: bool = False) -> str:
    """The ``media`` extra of a status from another server: its image,
    video and audio attachments (ActivityStreams Document, Image, Video,
    Audio objects), naming their server's URLs (a video's or a sound's
    preview: its ``icon``, if it has one), each with the token of its proxy
    URL; at most ``limit``; "" for none. Nothing is fetched here (its
    images are kept by a job: redpoll.media.remote). ``rejected``: the
    domain's media are rejected here: never fetched, shown as ``unknown``."""
    items = []
    for a in attachments:
        kind = remote_kind(a) if isinstance(a, dict) else None
        url = _url_of(a.get("url")) if kind is not None else None
        if url is None:
            continue
        meta = None
        if isinstance(a.get("width"), int) and isinstance(a.get("height"), int) and a["height"]:
            size = {
                "width": a["width"],
                "height": a["height"],
                "size": f"{a['width']}x{a['height']}",
                "aspect": round(a["width"] / a["height"], 4),
            }
            meta = {"original": size, "small": size}
        item = {
            "id": zlib.crc32(url.encode()) or 1,
            "url": url,
            "purl": url if kind == IMAGE else _url_of(a.get("icon")),
            "meta": meta,
            "desc": str(a.get("name") or "")[:1500],
            "bh": a.get("blurhash") if isinstance(a.get("blurhash"), str) else None,
            "remote": 1,
            "tok": secrets.token_hex(8),
        }
        if rejected:
            item["rej"] = 1
            item["meta"] = item["bh"] = None
        if kind != IMAGE:
            item["t"] = kind
        items.append(item)
        if len(items) >= limit:
            break
    return json.dumps(items, separators=(",", ":")) if items else ""
