"""Featured hashtags: the few an account shows on its profile (Mastodon's
featured tags), each with how many of the account's public and unlisted
statuses carry it and when it last did.

The counts come from a set per account and tag of those statuses
(keys.tag_posts), written when a status is linked into its conversation
and taken out when it is deleted or edited without the tag
(conversation.tag_posts, tag_posts.lua:
one script on the account's slot, idempotent, so a journal's replay
changes nothing); the same script notes the tags used last
(keys.tags_used), which the suggestions read. Featuring is one script
(tag_feature.lua: the cap's check and the write, atomic); unfeaturing one
HDEL. Statuses posted before these sets existed were put in by migration
5 (conversations/migrations.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..core import keys, limits
from ..core.errors import NotFound, ValidationError
from ..core.models import now_ms
from ..storage.store import Store
from .conversation import normalize_tag, tag_name


class Taken(ValidationError):
    """The hashtag is featured already (Mastodon's 422 "has already been taken")."""


@dataclass(frozen=True, slots=True)
class FeaturedTag:
    id: int
    name: str  # as the account typed it
    statuses_count: int
    last_status_at: int | None  # ms


async def featured(store: Store, uid: int) -> list[FeaturedTag]:
    """``uid``'s featured tags, most used first (as Mastodon orders them)."""
    raw = await store.hgetall(keys.featured_tags(uid))
    names = sorted(k.decode() if isinstance(k, bytes) else k for k in raw)
    if not names:
        return []
    counts = await store.batch(
        [
            cmd
            for n in names
            for cmd in (
                ("ZCARD", keys.tag_posts(uid, n)),
                ("ZRANGE", keys.tag_posts(uid, n), -1, -1, "WITHSCORES"),
            )
        ]
    )
    out = []
    for i, n in enumerate(names):
        record = json.loads(raw.get(n.encode(), raw.get(n)))  # type: ignore[arg-type]
        last = counts[2 * i + 1]
        if last and not isinstance(last[0], (list, tuple)):  # RESP2: flat
            last = [last]
        out.append(
            FeaturedTag(
                int(record["id"]),
                record["name"],
                int(counts[2 * i]),
                int(float(last[0][1])) if last else None,
            )
        )
    return sorted(out, key=lambda t: (-t.statuses_count, t.name.lower()))


async def feature(store: Store, uid: int, name) -> FeaturedTag:
    """Feature ``#name`` on ``uid``'s profile; ValidationError (nothing
    written) for a name no hashtag can have, one featured already, or past
    limits.FEATURED_TAGS_MAX."""
    typed = str(name or "").strip().lstrip("#")
    try:
        key = tag_name(typed)
    except ValidationError:
        raise ValidationError("name", "is invalid") from None
    [fid] = await store.batch([("INCR", keys.FEATURED_TAG_SEQ)])
    record = json.dumps({"id": int(fid), "name": typed, "at": now_ms()})
    done = await store.run(
        "tag_feature", [keys.featured_tags(uid)], [key, record, limits.FEATURED_TAGS_MAX]
    )
    if done == 0:
        raise Taken("name", "has already been taken")
    if done == -1:
        raise ValidationError(
            "base", f"You can feature at most {limits.FEATURED_TAGS_MAX} hashtags"
        )
    return next(t for t in await featured(store, uid) if normalize_tag(t.name) == key)


async def unfeature_id(store: Store, uid: int, fid: int) -> None:
    """Stop featuring the featured tag ``fid``; NotFound if ``uid`` has none of that id."""
    raw = await store.hgetall(keys.featured_tags(uid))
    for name, value in raw.items():
        if int(json.loads(value)["id"]) == fid:
            await store.hdel(keys.featured_tags(uid), name)
            return
    raise NotFound(f"featured tag {fid} does not exist")


async def unfeature_name(store: Store, uid: int, name) -> None:
    """Stop featuring ``#name`` (nothing if it was not featured)."""
    await store.hdel(keys.featured_tags(uid), tag_name(name))


async def is_featured(store: Store, uid: int, name: str) -> bool:
    return bool(await store.hexists(keys.featured_tags(uid), name))


async def suggestions(store: Store, uid: int) -> list[str]:
    """The tags ``uid`` used last that it does not feature, newest first."""
    used, mine = await store.batch(
        [("ZRANGE", keys.tags_used(uid), 0, -1, "REV"), ("HKEYS", keys.featured_tags(uid))]
    )
    taken = {m.decode() if isinstance(m, bytes) else m for m in mine}
    names = [n.decode() if isinstance(n, bytes) else n for n in used]
    return [n for n in names if n not in taken][: limits.FEATURED_TAG_SUGGESTIONS]
