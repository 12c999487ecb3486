"""``redpoll check [--repair]``: walk the database in bounded steps and
report what breaks an invariant docs/design.md states; with ``repair``
mend what can be mended. Each repair is idempotent (a second run finds
nothing, and mends nothing twice), each an atomic script on one slot or
the feature's own idempotent action:

==================  =============================================  ============================
invariant           what is read                                   repair
==================  =============================================  ============================
user-counts         a local account's ``following`` / ``followers``   count_set.lua: the counter
                    against ZCARD of its follows / its followers      set to the size, on the
                    (local and remote)                                user's slot
status-counts       a status's ``f`` / ``r`` / ``p`` against its      count_set.lua on the
                    favourites, boosts, counted replies               status's slot
follow-edges        each follow has its follower entry and each       follows.mend_edge: the
                    follower entry its follow                         follow side is the truth
list-members        each list member is followed (or asked to be)     lists.remove_member
                    by the list's owner, or is the owner
timelines           home and list timelines name statuses that        fanout.take_out (the
                    exist and are not deleted                         cleanup's own script)
media-records       an upload attached to a status that is gone       uploads.drop_orphan:
                                                                      tombstone, files deleted
media-files         a file of the local media directory that no       the file deleted
                    record names (older than an hour: an upload
                    begun after the walk passed its record is
                    not taken for one; none while the database
                    has never named a file)
==================  =============================================  ============================

Walks: users and statuses by id, ``batch`` at a time (one or two batches
of reads per step); upload records by SCAN through every master
(topology.scan_step), then the index of other servers' media kept here
(HSCAN). The names of the files the records, profiles and kept copies
hold are kept in memory for the media-files check (one short string per
file). A check beside live traffic may report what is in flight (a delete
whose cleanup job has not run yet); a repair of it does what the job
would.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..bus.queue import JobQueue
from ..core import keys, limits
from ..federation import keys as fed_keys
from ..lists import lists
from ..media import keys as media_keys
from ..media import uploads
from ..media.storage import NAME as MEDIA_NAME
from ..media.storage import LocalStorage, MediaStorage
from ..relations import follows
from ..storage import topology
from ..storage.store import Store
from ..timelines import fanout

log = logging.getLogger("redpoll.check")

INVARIANTS = (
    "user-counts",
    "status-counts",
    "follow-edges",
    "list-members",
    "timelines",
    "media-records",
    "media-files",
)


@dataclass
class Finding:
    invariant: str
    #: the key or file it is about
    subject: str
    detail: str
    repaired: bool = False

    def line(self) -> str:
        return f"{self.invariant}: {self.subject}: {self.detail}" + (
            " (repaired)" if self.repaired else ""
        )


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    #: how many of each thing were looked at
    walked: dict[str, int] = field(default_factory=dict)
    steps: int = 0

    def add(self, invariant: str, subject: str, detail: str, repaired: bool) -> None:
        self.findings.append(Finding(invariant, subject, detail, repaired))

    def count(self, what: str, n: int) -> None:
        self.walked[what] = self.walked.get(what, 0) + n


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _ids(rows: Iterable) -> list[int]:
    return [int(r) for r in rows]


async def check(
    store: Store,
    queue: JobQueue,
    storage: MediaStorage,
    *,
    repair: bool = False,
    batch: int = limits.CHECK_BATCH,
) -> Report:
    report = Report()
    names: set[str] = set()
    last_user = int(await store.get(keys.USER_SEQ) or 0)
    for first in range(1, last_user + 1, batch):
        await _users(
            store,
            queue,
            list(range(first, min(first + batch, last_user + 1))),
            repair,
            report,
            names,
        )
        report.steps += 1
    last_status = int(await store.get(keys.STATUS_SEQ) or 0)
    for first in range(1, last_status + 1, batch):
        await _statuses(
            store, list(range(first, min(first + batch, last_status + 1))), repair, report
        )
        report.steps += 1
    await _media(store, storage, repair, report, names, batch)
    return report


async def _users(
    store: Store,
    queue: JobQueue,
    uids: list[int],
    repair: bool,
    report: Report,
    names: set[str],
) -> None:
    rows = await store.batch(
        [
            cmd
            for u in uids
            for cmd in (
                ("HMGET", keys.user(u), "id", "uri", "avatar_f", "header_f"),
                ("ZRANGE", keys.following(u), 0, -1),
                ("ZRANGE", keys.followers(u), 0, -1),
                ("HKEYS", keys.lists(u)),
                ("LRANGE", keys.home(u), 0, -1),
            )
        ]
    )
    users = []
    for at, uid in enumerate(uids):
        record, following, followers, owned, home = rows[at * 5 : at * 5 + 5]
        if record[0] is None:
            continue
        for raw in record[2:]:
            if raw:
                names.update(_text(raw).split())
        users.append((uid, record[1] is None, _ids(following), _ids(followers), owned, home))
    report.count("users", len(users))

    # follow-edges: both sides, the follow side the truth
    checks = [
        (a, b, ("ZSCORE", keys.followers(b), a))
        for a, _, following, _, _, _ in users
        for b in following
    ] + [
        (a, b, ("ZSCORE", keys.following(a), b))
        for b, _, _, followers, _, _ in users
        for a in followers
    ]
    replies = await store.batch([c for _, _, c in checks])
    broken = {(a, b) for (a, b, _), r in zip(checks, replies) if r is None}
    for a, b in sorted(broken):
        if repair:
            await follows.mend_edge(store, a, b)
        report.add(
            "follow-edges",
            f"{keys.following(a)} / {keys.followers(b)}",
            f"the follow {a} -> {b} is on one side only",
            repair,
        )
    report.count("follows", len(checks))

    # user-counts, read after the edges were mended
    local = [u for u, is_local, *_ in users if is_local]
    counted = await store.batch(
        [
            cmd
            for u in local
            for cmd in (
                ("HMGET", keys.user(u), "following", "followers"),
                ("ZCARD", keys.following(u)),
                ("ZCARD", keys.followers(u)),
                ("ZCARD", fed_keys.remote_followers(u)),
            )
        ]
    )
    for at, uid in enumerate(local):
        (following, followers), fing, fers, remote = counted[at * 4 : at * 4 + 4]
        for name, held, real, sets in (
            ("following", following, fing, [keys.following(uid)]),
            (
                "followers",
                followers,
                fers + remote,
                [keys.followers(uid), fed_keys.remote_followers(uid)],
            ),
        ):
            if int(held or 0) != real:
                if repair:
                    await store.run("count_set", [keys.user(uid), *sets], [name, "1", "0"])
                report.add(
                    "user-counts",
                    keys.user(uid),
                    f"{name} is {int(held or 0)}, its set holds {real}",
                    repair,
                )

    # list-members: followed, or asked to be, by the owner
    lists_of = [(u, int(lid)) for u, _, _, _, owned, _ in users for lid in owned]
    members = await store.batch(
        [("ZRANGE", keys.list_members(o, lid), 0, -1) for o, lid in lists_of]
    )
    member_checks = [
        (owner, lid, m)
        for (owner, lid), row in zip(lists_of, members)
        for m in _ids(row)
        if m != owner
    ]
    held = await store.batch(
        [
            cmd
            for owner, _, m in member_checks
            for cmd in (
                ("ZSCORE", keys.following(owner), m),
                ("ZSCORE", keys.follow_requested(owner), m),
            )
        ]
    )
    for at, (owner, lid, m) in enumerate(member_checks):
        if held[2 * at] is None and held[2 * at + 1] is None:
            if repair:
                await lists.remove_member(store, queue, owner, lid, m)
            report.add(
                "list-members",
                keys.list_members(owner, lid),
                f"member {m} is not followed by the list's owner",
                repair,
            )
    report.count("list members", len(member_checks))

    # timelines: homes and list timelines name statuses that are there
    lines = [(keys.home(u), _ids(home)) for u, _, _, _, _, home in users]
    list_rows = await store.batch(
        [("LRANGE", keys.list_timeline(o, lid), 0, -1) for o, lid in lists_of]
    )
    lines += [(keys.list_timeline(o, lid), _ids(r)) for (o, lid), r in zip(lists_of, list_rows)]
    wanted = sorted({sid for _, ids in lines for sid in ids})
    found = await store.batch([("HMGET", keys.status(s), "uid", "deleted") for s in wanted])
    gone = {
        sid: "deleted" if uid is not None else "gone"
        for sid, (uid, deleted) in zip(wanted, found)
        if uid is None or deleted is not None
    }
    for key, ids in lines:
        for sid in dict.fromkeys(s for s in ids if s in gone):
            if repair:
                await fanout.take_out(store, sid, [key])
            report.add("timelines", key, f"status {sid} is {gone[sid]}", repair)
    report.count("timeline entries", sum(len(ids) for _, ids in lines))


async def _statuses(store: Store, sids: list[int], repair: bool, report: Report) -> None:
    rows = await store.batch(
        [
            cmd
            for s in sids
            for cmd in (
                ("HMGET", keys.status(s), "uid", "deleted"),
                ("HMGET", keys.status_counts(s), "f", "r", "p"),
                ("ZCARD", keys.favourited_by(s)),
                ("ZCARD", keys.reblogged_by(s)),
                ("ZCARD", keys.replies_counted(s)),
            )
        ]
    )
    walked = 0
    for at, sid in enumerate(sids):
        (uid, deleted), counts, favs, rbs, replies = rows[at * 5 : at * 5 + 5]
        if uid is None or deleted is not None:
            continue
        walked += 1
        for name, held, real, counted in (
            ("f", counts[0], favs, keys.favourited_by(sid)),
            ("r", counts[1], rbs, keys.reblogged_by(sid)),
            ("p", counts[2], replies, keys.replies_counted(sid)),
        ):
            if int(held or 0) != real:
                if repair:
                    await store.run(
                        "count_set", [keys.status_counts(sid), counted], [name, "0", "1"]
                    )
                report.add(
                    "status-counts",
                    keys.status_counts(sid),
                    f"{name} is {int(held or 0)}, its set holds {real}",
                    repair,
                )
    report.count("statuses", walked)


async def _media(
    store: Store,
    storage: MediaStorage,
    repair: bool,
    report: Report,
    names: set[str],
    batch: int,
) -> None:
    topo = topology.of(store)
    cursor: str | None = ""
    pattern = media_keys.record_pattern(0).replace("{0}", "{*}")
    records = 0
    while cursor is not None:
        cursor, found = await topo.scan_step(pattern, cursor, batch)
        report.steps += 1
        record_keys = [_text(k) for k in found]
        rows = await store.batch(
            [("HMGET", k, "state", "sid", "files", "owner", "id") for k in record_keys]
        )
        attached = [
            (k, int(sid), int(owner), int(mid))
            for k, (state, sid, files, owner, mid) in zip(record_keys, rows)
            if state is not None and _text(state) != uploads.GONE and sid and owner and mid
        ]
        for state, _, files, _, _ in rows:
            if state is not None and files:
                names.update(_text(files).split())
        records += len(record_keys)
        statuses = await store.batch(
            [("HMGET", keys.status(sid), "uid", "deleted") for _, sid, _, _ in attached]
        )
        for (k, sid, owner, mid), (uid, deleted) in zip(attached, statuses):
            if uid is None or deleted is not None:
                if repair:
                    await uploads.drop_orphan(store, storage, owner, mid, sid)
                report.add(
                    "media-records",
                    k,
                    f"attached to status {sid}, which is {'gone' if uid is None else 'deleted'}",
                    repair,
                )
    report.count("upload records", records)
    # other servers' files kept here: named by the cache's index
    # (media/remote.py), in bounded steps
    hcursor = 0
    while True:
        hcursor, entries = await store.hscan(media_keys.REMOTE_FILES, hcursor, count=batch)
        report.steps += 1
        for value in entries.values():
            names.update(_text(value).split()[1:])
        if not hcursor:
            break
    if not isinstance(storage, LocalStorage):
        return  # (a bucket is not listed: Redpoll may only put and delete there)
    if not await store.exists(media_keys.NAME_KEY):
        # no file was ever named in this database (the key is made with
        # the first): whatever the directory holds is not its to judge
        return
    root = Path(storage.root)
    cutoff = time.time() - limits.MEDIA_PARTIAL_FILE_S
    files = 0
    if root.is_dir():
        for path in sorted(root.glob("*/*/*")):
            name = path.relative_to(root).as_posix()
            if not MEDIA_NAME.fullmatch(name):
                continue
            files += 1
            if name in names:
                continue
            try:
                if path.stat().st_mtime > cutoff:
                    continue
            except FileNotFoundError:
                continue
            if repair:
                await storage.delete(name)
            report.add("media-files", str(path), "no upload record or profile names it", repair)
    report.count("media files", files)
