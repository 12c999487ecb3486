"""A member's CSV exports, in the files Mastodon's settings make (and its
import reads): ``following_accounts.csv`` (with a header: ``Account
address,Show boosts,Notify on new posts,Languages``), ``lists.csv`` (``list
name,account address``), ``blocked_accounts.csv``, ``muted_accounts.csv``
(``Account address,Hide notifications``), ``blocked_domains.csv`` and
``bookmarks.csv`` (the status's ActivityPub id); the last four one value a
row, without a header, as Mastodon's.

Each is read newest first in steps of limits.EXPORT_STEP members, every
step one round trip for its facts; the sets read are bounded already
(limits.FOLLOW_MAX, BLOCKS_MAX, MUTES_MAX, DOMAIN_BLOCKS_MAX, BOOKMARKS_MAX,
LIST_MAX_MEMBERS). An export only reads: cut short, it leaves nothing."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass

from ..core import keys, limits, uris, validate
from ..core.models import User
from ..lists import lists
from ..records import statuses
from ..records.users import get_users
from ..relations.relations import Mute
from ..storage.store import Store

#: What can be exported: the name of each file (Mastodon's).
FILES = {
    "follows": "following_accounts.csv",
    "lists": "lists.csv",
    "blocks": "blocked_accounts.csv",
    "mutes": "muted_accounts.csv",
    "domain_blocks": "blocked_domains.csv",
    "bookmarks": "bookmarks.csv",
}


@dataclass(frozen=True, slots=True)
class Here:
    """What addresses and ids are made with: this server's host (a local
    account's address is ``login@host``) and its base URL."""

    host: str
    base: str

    def address(self, user: User) -> str:
        return user.login if user.remote else f"{user.login}@{self.host}"


def _csv(rows: Iterable[Iterable]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(rows)
    return out.getvalue()


def _flag(value: bool) -> str:
    return "true" if value else "false"


async def _members(store: Store, key: str) -> list[int]:
    """Every member of the sorted set ``key``, highest score (newest) first,
    read in steps of limits.EXPORT_STEP."""
    out: list[int] = []
    start = 0
    while True:
        got = await store.zrevrange(key, start, start + limits.EXPORT_STEP - 1)
        out.extend(int(m) for m in got)
        if len(got) < limits.EXPORT_STEP:
            return out
        start += limits.EXPORT_STEP


def _steps(ids: list[int]) -> Iterable[list[int]]:
    for i in range(0, len(ids), limits.EXPORT_STEP):
        yield ids[i : i + limits.EXPORT_STEP]


async def follows(store: Store, uid: int, here: Here) -> str:
    """Whom ``uid`` follows, with each follow's options; Redpoll keeps no
    per-follow languages, so that column is empty."""
    uid = validate.an_id(uid, "user_id")
    rows: list[list[str]] = [["Account address", "Show boosts", "Notify on new posts", "Languages"]]
    for step in _steps(await _members(store, keys.following(uid))):
        found = await get_users(store, step)
        if not found:
            continue
        # (one batch: the hidden boosts on uid's slot, whom each notifies on its own)
        hidden, *notify = await store.batch(
            [("SMISMEMBER", keys.hidden_reblogs(uid), *[u.id for u in found])]
            + [("SISMEMBER", keys.notifiers(u.id), uid) for u in found]
        )
        for user, hides, tells in zip(found, hidden, notify):
            rows.append([here.address(user), _flag(not hides), _flag(bool(tells)), ""])
    return _csv(rows)


async def blocks(store: Store, uid: int, here: Here) -> str:
    uid = validate.an_id(uid, "user_id")
    rows: list[list[str]] = []
    for step in _steps(await _members(store, keys.blocking(uid))):
        rows.extend([here.address(u)] for u in await get_users(store, step))
    return _csv(rows)


async def mutes(store: Store, uid: int, here: Here, now_ms: int) -> str:
    """The active mutes; ``Hide notifications`` as each mute says."""
    uid = validate.an_id(uid, "user_id")
    rows: list[list[str]] = [["Account address", "Hide notifications"]]
    for step in _steps(await _members(store, keys.muting(uid))):
        [terms] = await store.batch([("HMGET", keys.mute_terms(uid), *step)])
        active = {
            aid: m for aid, t in zip(step, terms) if (m := Mute.parse(t)) and m.active(now_ms)
        }
        for user in await get_users(store, list(active)):
            rows.append([here.address(user), _flag(active[user.id].notifications)])
    return _csv(rows)


async def domain_blocks(store: Store, uid: int) -> str:
    uid = validate.an_id(uid, "user_id")
    got = await store.zrevrange(keys.domain_blocks(uid), 0, limits.DOMAIN_BLOCKS_MAX - 1)
    return _csv([m.decode()] for m in got)


async def bookmarks(store: Store, uid: int, here: Here) -> str:
    """Each bookmarked status's ActivityPub id (a remote one's own, a local
    one's here), newest bookmark first; deleted statuses left out."""
    uid = validate.an_id(uid, "user_id")
    rows: list[list[str]] = []
    for step in _steps(await _members(store, keys.bookmarks(uid))):
        for s in await statuses.get_statuses(store, step):
            uri = s.extra.get("uri") or uris.status(here.base, s.login, s.id)
            rows.append([uri])
    return _csv(rows)


async def lists_of(store: Store, uid: int, here: Here) -> str:
    """Each list's members as ``list name,account address`` rows, the lists
    in the order they were made."""
    uid = validate.an_id(uid, "user_id")
    rows: list[list[str]] = []
    for found in await lists.get_lists(store, uid):
        members = await _members(store, keys.list_members(uid, found.id))
        for step in _steps(members):
            rows.extend([found.title, here.address(u)] for u in await get_users(store, step))
    return _csv(rows)


async def export(store: Store, uid: int, kind: str, here: Here, now_ms: int) -> str:
    """The CSV ``kind`` (one of :data:`FILES`) of ``uid``."""
    if kind == "follows":
        return await follows(store, uid, here)
    if kind == "lists":
        return await lists_of(store, uid, here)
    if kind == "blocks":
        return await blocks(store, uid, here)
    if kind == "mutes":
        return await mutes(store, uid, here, now_ms)
    if kind == "domain_blocks":
        return await domain_blocks(store, uid)
    if kind == "bookmarks":
        return await bookmarks(store, uid, here)
    raise ValueError(f"unknown export {kind!r}")
