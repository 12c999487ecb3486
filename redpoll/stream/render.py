"""Rendering events for Twitter v1.1 clients.

A status carries the keys v1.1 clients look for (tweepy recognises a status
by ``in_reply_to_status_id``; ``created_at`` in Twitter's format; ``user``
with id/id_str/screen_name/name); a deletion is
``{"delete":{"status":{"id","id_str","user_id","user_id_str"},"timestamp_ms"}}``.
"""

from __future__ import annotations

import json
import re
import time

from ..bus import events
from ..media import entity as media_entity
from .filters import Event

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_ENTITY = re.compile(r"(?<![\w@#])([@#])(\w+)")
_URL = re.compile(r"https?://\S+")
#: status fields that are ours, not extras
_CORE = ("id", "text", "created_at", "user_id", "login", "deleted")


def twitter_time(ms: int) -> str:
    """``Wed Feb 29 19:42:02 +0000 2012`` (locale-independent)."""
    t = time.gmtime(ms / 1000)
    return (
        f"{_DAYS[t.tm_wday]} {_MONTHS[t.tm_mon - 1]} {t.tm_mday:02d} "
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} +0000 {t.tm_year}"
    )


def entities(text: str) -> dict:
    tags, mentions = [], []
    for m in _ENTITY.finditer(text):
        span = [m.start(), m.end()]
        if m.group(1) == "#":
            tags.append({"text": m.group(2), "indices": span})
        else:
            mentions.append({"screen_name": m.group(2), "name": m.group(2), "indices": span})
    urls = [
        {
            "url": m.group(),
            "expanded_url": m.group(),
            "display_url": m.group().split("://", 1)[1],
            "indices": [m.start(), m.end()],
        }
        for m in _URL.finditer(text)
    ]
    return {"hashtags": tags, "urls": urls, "user_mentions": mentions, "symbols": []}


def v1_media(raw: str | None, text: str, base: str) -> list[dict]:
    """A status's images as Twitter's media entities (``photo``), each
    pointing at the end of the text (there is no t.co link in it); another
    server's videos and sounds are not among them."""
    out = []
    for item in media_entity.attachments(raw, base):
        if item["type"] != media_entity.IMAGE:
            continue
        mid, meta = int(item["id"]), item.get("meta") or {}
        sizes = {}
        for name, size in (
            ("large", meta.get("original")),
            ("medium", meta.get("original")),
            ("small", meta.get("small")),
            ("thumb", meta.get("small")),
        ):
            if size:
                sizes[name] = {"w": size["width"], "h": size["height"], "resize": "fit"}
        out.append(
            {
                "id": mid,
                "id_str": str(mid),
                "indices": [len(text), len(text)],
                "media_url": item["url"],
                "media_url_https": item["url"],
                "url": item["url"],
                "display_url": (item["url"] or "").split("://", 1)[-1],
                "expanded_url": item["url"],
                "type": "photo",
                "sizes": sizes,
                "ext_alt_text": item["description"],
            }
        )
    return out


def v1_status(status: dict, base: str = "") -> dict:
    sid, uid = int(status["id"]), int(status["user_id"])
    login = status.get("login", "")
    text = status.get("text", "")
    created = int(status.get("created_at", 0))
    out = {
        "created_at": twitter_time(created),
        "id": sid,
        "id_str": str(sid),
        "text": text,
        "source": "redpoll",
        "truncated": False,
        "in_reply_to_status_id": None,
        "in_reply_to_status_id_str": None,
        "in_reply_to_user_id": None,
        "in_reply_to_user_id_str": None,
        "in_reply_to_screen_name": None,
        "user": {"id": uid, "id_str": str(uid), "screen_name": login, "name": login},
        "geo": None,
        "coordinates": None,
        "place": None,
        "contributors": None,
        "is_quote_status": False,
        "retweet_count": 0,
        "favorite_count": 0,
        "entities": entities(text),
        "favorited": False,
        "retweeted": False,
        "filter_level": "low",
        "lang": None,
        "timestamp_ms": str(created),
    }
    location = status.get("location")
    if location:
        try:
            lat, lon = (float(p) for p in str(location).split(","))
            out["geo"] = {"type": "Point", "coordinates": [lat, lon]}
            out["coordinates"] = {"type": "Point", "coordinates": [lon, lat]}
        except ValueError:
            pass
    media = v1_media(status.get("media"), text, base)
    if media:  # Twitter: the first in entities, all of them in extended_entities
        out["entities"]["media"] = media[:1]
        out["extended_entities"] = {"media": media}
    _conversation(out, status, base)
    extras = {
        k: v
        for k, v in status.items()
        if k not in _CORE and k not in _CONVERSATION and k != "media"
    }
    if extras:
        out["redpoll_extra"] = extras
    return out


#: fields the engine sets from replies, mentions, hashtags and boosts
#: (redpoll.conversations.conversation, redpoll.posting.boosts), rendered in Twitter's own fields
_CONVERSATION = (
    "in_reply_to_id",
    "in_reply_to_account_id",
    "mentions",
    "tags",
    "thread",  # (the thread a reply belongs to: redpoll.conversations.thread_mutes)
    "reblog_of",
    "reblog",
)


def _conversation(out: dict, status: dict, base: str = "") -> None:
    """Twitter's reply fields, mention ids and ``retweeted_status``."""
    reply = status.get("in_reply_to_id")
    if reply:
        to = str(status.get("in_reply_to_account_id", ""))
        out |= {
            "in_reply_to_status_id": int(reply),
            "in_reply_to_status_id_str": str(reply),
            "in_reply_to_user_id": int(to) if to.isdigit() else None,
            "in_reply_to_user_id_str": to or None,
        }
    ids = {}
    for item in str(status.get("mentions", "")).split():
        uid, _, login = item.partition(":")
        ids[login.lower()] = uid
    for mention in out["entities"]["user_mentions"]:
        uid = ids.get(mention["screen_name"].lower())
        if uid:
            mention |= {"id": int(uid), "id_str": uid}
        if reply and uid == out["in_reply_to_user_id_str"]:
            out["in_reply_to_screen_name"] = mention["screen_name"]
    original = status.get("reblog")
    if isinstance(original, dict):
        inner = v1_status(original, base)
        out["retweeted_status"] = inner
        out["text"] = f"RT @{inner['user']['screen_name']}: {inner['text']}"
        out["entities"] = entities(out["text"])
        out["retweet_count"] = 0


def v1_delete(status: dict) -> dict:
    sid, uid = int(status["id"]), int(status["user_id"])
    return {
        "delete": {
            "status": {"id": sid, "id_str": str(sid), "user_id": uid, "user_id_str": str(uid)},
            "timestamp_ms": str(int(time.time() * 1000)),
        }
    }


def dumps(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def render_v1(ev: Event, base: str = "") -> bytes | None:
    """The v1.1 shape (its only links to this server are attachments', under
    ``base``); an edit (``status.update``) has none: not sent."""
    if ev.kind == events.STATUS_UPDATE:
        return None
    return dumps(v1_delete(ev.status) if ev.deleted else v1_status(ev.status, base))
