"""A member's CSV imports: the files Mastodon's settings take (and
:mod:`.exports` makes), each imported by a job in bounded steps, as
Mastodon's BulkImport.

Kinds and their rows (a header row of Mastodon's, when there, is skipped):
``follows`` (``Account address,Show boosts,Notify on new posts,Languages``),
``blocks`` (an address), ``mutes`` (``Account address,Hide
notifications``), ``domain_blocks`` (a domain), ``bookmarks`` (a status's
ActivityPub id or URL) and ``lists`` (``list name,account address``).
Modes: ``merge`` adds what the file names; ``overwrite`` also undoes what
the file does not name (follows, blocks, mutes, domain blocks, bookmarks;
for lists, as Mastodon: the lists the file does not name are deleted and the
named ones keep only the accounts it names). Languages are not kept per
follow here (the column is read and left).

How it runs, and why it cannot be half done:
- :func:`start` parses and checks the whole file first (size, rows, each
  kind's own bound): a refusal writes nothing. Journaled: its job is held
  first (redpoll.bus.queue.hold), then the record, its rows and its place
  in the member's imports are written in one transaction, then the held
  job is released with the first step queued (one script). Cut short, a
  worker takes the held job over: it finds the record and goes on, or
  finds none (cut before the write) and ends, nothing done.
- :func:`step` (the job) does limits.IMPORT_STEP rows through
  :class:`Actions` (the engine's own follow, block, ...: each idempotent),
  then advances the record's cursor with ``import_step.lua`` only if the
  cursor is still where the step began (atomic). A step cut short is done
  again whole; its actions are idempotent and its counts added once.
- An overwrite ends with a prune: the list of what to undo is taken once
  (the member's set then, less what the import found), then undone in
  steps, the cursor advanced by the same script.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..bus.queue import JobQueue
from ..core import keys, limits, validate
from ..core.errors import NotFound, RedpollError, ValidationError
from ..core.models import now_ms
from ..relations import domain_blocks
from ..storage.store import Store
from .exports import Here
from .jobs import ImportJob

#: What can be imported (the names of the exports) and each kind's bound.
KINDS: dict[str, int] = {
    "follows": limits.FOLLOW_MAX,
    "blocks": limits.BLOCKS_MAX,
    "mutes": limits.MUTES_MAX,
    "domain_blocks": limits.DOMAIN_BLOCKS_MAX,
    "bookmarks": limits.BOOKMARKS_MAX,
    "lists": limits.LISTS_PER_USER * limits.LIST_MAX_MEMBERS,
}
MODES = ("merge", "overwrite")

#: The first cell of Mastodon's header rows.
_HEADERS = {"account address", "#domain", "#uri", "list name"}


class ImportNotFound(NotFound):
    """No such import of this member's."""


class Actions(Protocol):
    """What an import does, each idempotent: the engine's own actions with
    their federation side (redpoll.engine.areas.imports)."""

    async def account(self, address: str, here: Here) -> int | None: ...
    async def status(self, uri: str, here: Here) -> int | None: ...
    async def follow(self, uid: int, target: int, reblogs: bool, notify: bool) -> None: ...
    async def unfollow(self, uid: int, target: int) -> None: ...
    async def block(self, uid: int, target: int) -> None: ...
    async def unblock(self, uid: int, target: int) -> None: ...
    async def mute(self, uid: int, target: int, notifications: bool) -> None: ...
    async def unmute(self, uid: int, target: int) -> None: ...
    async def block_domain(self, uid: int, host: str) -> None: ...
    async def unblock_domain(self, uid: int, host: str) -> None: ...
    async def bookmark(self, uid: int, sid: int) -> None: ...
    async def unbookmark(self, uid: int, sid: int) -> None: ...
    async def list_named(self, uid: int, title: str) -> int: ...
    async def list_ids(self, uid: int) -> dict[int, str]: ...
    async def drop_list(self, uid: int, lid: int) -> None: ...
    async def list_add(self, uid: int, lid: int, target: int) -> None: ...
    async def list_remove(self, uid: int, lid: int, target: int) -> None: ...


@dataclass(frozen=True, slots=True)
class Import:
    """One import as its record says."""

    id: int
    kind: str
    mode: str
    state: str  # scheduled | in_progress | pruning | finished
    filename: str
    total: int
    processed: int
    imported: int
    created_at: int
    finished_at: int | None

    @classmethod
    def of(cls, iid: int, raw: dict) -> Import:
        h = {k.decode(): v.decode() for k, v in raw.items()}
        return cls(
            id=iid,
            kind=h["kind"],
            mode=h["mode"],
            state=h["state"],
            filename=h.get("file", ""),
            total=int(h["total"]),
            processed=int(h.get("processed", 0)),
            imported=int(h.get("imported", 0)),
            created_at=int(h["made"]),
            finished_at=int(h["finished"]) if h.get("finished") else None,
        )


# --- parsing: the whole file checked before anything is written ---------------------
def _flag(value: str, default: bool) -> bool:
    text = value.strip().lower()
    if not text:
        return default
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValidationError("data", f"{value!r} is not true or false")


def _address(value: str) -> str:
    text = value.strip().removeprefix("@")
    if not text or any(c.isspace() for c in text) or text.count("@") > 1:
        raise ValidationError("data", f"{value!r} is not an account address")
    return text


def _row(kind: str, cells: list[str]) -> list[str]:
    """One row as kept: the kind's fields, checked (ValidationError names it)."""
    if kind == "follows":
        addr = _address(cells[0])
        boosts = _flag(cells[1] if len(cells) > 1 else "", True)
        notify = _flag(cells[2] if len(cells) > 2 else "", False)
        return [addr, "1" if boosts else "0", "1" if notify else "0"]
    if kind == "blocks":
        return [_address(cells[0])]
    if kind == "mutes":
        hide = _flag(cells[1] if len(cells) > 1 else "", True)
        return [_address(cells[0]), "1" if hide else "0"]
    if kind == "domain_blocks":
        return [domain_blocks.normalize(cells[0])]
    if kind == "bookmarks":
        uri = cells[0].strip()
        if not uri.startswith(("https://", "http://")) or len(uri) > 2048:
            raise ValidationError("data", f"{cells[0]!r} is not a status's URL")
        return [uri]
    if len(cells) < 2 or not cells[0].strip():  # lists
        raise ValidationError("data", "a lists row is: list name,account address")
    return [
        validate.text(cells[0].strip(), "list name", limits.LIST_TITLE_MAX_CHARS),
        _address(cells[1]),
    ]


def parse(kind: str, data: bytes) -> list[list[str]]:
    """The rows of a CSV file of ``kind``, each checked; ValidationError
    for a file too large, a row that is not one, or more rows than the
    kind allows (nothing is written then)."""
    if kind not in KINDS:
        raise ValidationError("type", f"must be one of {', '.join(KINDS)}")
    if len(data) > limits.IMPORT_BYTES_MAX:
        raise ValidationError("data", f"at most {limits.IMPORT_BYTES_MAX} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationError("data", "is not UTF-8 text") from None
    rows: list[list[str]] = []
    bound = min(KINDS[kind], limits.IMPORT_ROWS_MAX)
    try:
        for n, cells in enumerate(csv.reader(io.StringIO(text))):
            if not cells or not any(c.strip() for c in cells):
                continue
            if n == 0 and cells[0].strip().lower() in _HEADERS:
                continue
            rows.append(_row(kind, cells))
            if len(rows) > bound:
                raise ValidationError("data", f"at most {bound} rows of {kind}")
    except csv.Error as exc:
        raise ValidationError("data", f"is not CSV: {exc}") from None
    if not rows:
        raise ValidationError("data", "names nothing to import")
    return rows


# --- the record -------------------------------------------------------------------------
async def start(
    store: Store,
    queue: JobQueue,
    uid: int,
    kind: str,
    mode: str,
    data: bytes,
    filename: str,
    here: Here,
) -> Import:
    """Check the file, queue its job, write the import (one transaction);
    the import as made. Refused (ValidationError) before anything is written.
    ``here``: what a local address or status URL looks like (the server as
    the member asked it)."""
    uid = validate.an_id(uid, "user_id")
    if mode not in MODES:
        raise ValidationError("mode", "must be merge or overwrite")
    rows = parse(kind, data)
    filename = (filename or "")[:200]
    iid = int(await store.incr(keys.import_seq(uid)))
    made = now_ms()
    job = ImportJob(uid=uid, iid=iid)
    held = await queue.hold(job)
    pipe = store.pipeline(transaction=True)
    pipe.hset(
        keys.import_record(uid, iid),
        mapping={
            "kind": kind,
            "mode": mode,
            "state": "scheduled",
            "file": filename,
            "total": len(rows),
            "processed": 0,
            "imported": 0,
            "pos": 0,
            "made": made,
            "host": here.host,
            "base": here.base,
        },
    )
    for i in range(0, len(rows), 1000):
        pipe.rpush(keys.import_rows(uid, iid), *[json.dumps(r) for r in rows[i : i + 1000]])
    pipe.zadd(keys.imports(uid), {str(iid): made})
    await pipe.execute()
    await queue.release(held, job)
    await _trim(store, uid)
    return Import.of(iid, await store.hgetall(keys.import_record(uid, iid)))


async def _trim(store: Store, uid: int) -> None:
    """Keep the newest limits.IMPORTS_KEPT imports; older finished ones go."""
    old = await store.zrevrange(keys.imports(uid), limits.IMPORTS_KEPT, -1)
    for raw in old:
        iid = int(raw)
        state = await store.hget(keys.import_record(uid, iid), "state")
        if state in (None, b"finished"):
            await store.delete(
                keys.import_record(uid, iid),
                keys.import_rows(uid, iid),
                keys.import_found(uid, iid),
                keys.import_gone(uid, iid),
            )
            await store.zrem(keys.imports(uid), raw)


async def listed(store: Store, uid: int) -> list[Import]:
    """The member's imports, newest first."""
    uid = validate.an_id(uid, "user_id")
    ids = [int(i) for i in await store.zrevrange(keys.imports(uid), 0, limits.IMPORTS_KEPT - 1)]
    raws = await store.batch([("HGETALL", keys.import_record(uid, i)) for i in ids])
    return [Import.of(i, _pairs(r)) for i, r in zip(ids, raws) if r]


def _pairs(raw) -> dict:
    if isinstance(raw, dict):
        return raw
    return dict(zip(raw[::2], raw[1::2]))


async def get(store: Store, uid: int, iid) -> Import:
    uid = validate.an_id(uid, "user_id")
    iid = validate.an_id(iid, "id")
    raw = await store.hgetall(keys.import_record(uid, iid))
    if not raw:
        raise ImportNotFound(f"import {iid} does not exist")
    return Import.of(iid, raw)


# --- the job's step -------------------------------------------------------------------------
async def step(store: Store, actions: Actions, uid: int, iid: int) -> bool:
    """Do the next step of import ``iid``: True if there is more to do."""
    raw = await store.hgetall(keys.import_record(uid, iid))
    if not raw:  # never written (its start cut short before), or trimmed
        return False
    h = {k.decode(): v.decode() for k, v in raw.items()}
    if h["state"] == "finished":
        return False
    if h["state"] == "pruning":
        return await _prune(store, actions, uid, iid, h)
    pos, total = int(h["pos"]), int(h["total"])
    if pos == 0 and h["kind"] == "lists" and h["mode"] == "overwrite":
        await _clear_lists(store, actions, uid, iid)
    rows = [
        json.loads(r)
        for r in await store.lrange(keys.import_rows(uid, iid), pos, pos + limits.IMPORT_STEP - 1)
    ]
    done, found = 0, []
    for row in rows:
        got = await _do(actions, uid, h["kind"], row, Here(h["host"], h["base"]))
        if got is not None:
            done += 1
            found.append(got)
    end = pos + len(rows)
    state = "in_progress"
    if end >= total:
        state = "pruning" if h["mode"] == "overwrite" and h["kind"] != "lists" else "finished"
    await _advance(store, uid, iid, pos, end, done, state, found)
    return state != "finished"


async def _do(actions: Actions, uid: int, kind: str, row: list[str], here: Here) -> str | None:
    """One row done; what it found (for an overwrite), or None if it could not be."""
    try:
        if kind == "domain_blocks":
            await actions.block_domain(uid, row[0])
            return row[0]
        if kind == "bookmarks":
            sid = await actions.status(row[0], here)
            if sid is None:
                return None
            await actions.bookmark(uid, sid)
            return str(sid)
        if kind == "lists":
            target = await actions.account(row[1], here)
            if target is None or target == uid:
                return None
            lid = await actions.list_named(uid, row[0])
            await actions.list_add(uid, lid, target)
            return f"{lid}:{target}"
        target = await actions.account(row[0], here)
        if target is None or target == uid:
            return None
        if kind == "follows":
            await actions.follow(uid, target, row[1] == "1", row[2] == "1")
        elif kind == "blocks":
            await actions.block(uid, target)
        else:
            await actions.mute(uid, target, row[1] == "1")
        return str(target)
    except RedpollError:  # refused (a limit, a suspended account...): that row fails
        return None


async def _advance(
    store: Store,
    uid: int,
    iid: int,
    pos: int,
    end: int,
    done: int,
    state: str,
    found: Sequence[str],
    cursor: tuple[str, str] = ("", ""),
) -> bool:
    """The record advanced past a step (import_step.lua: only if no other
    run of it did first)."""
    return bool(
        await store.run(
            "import_step",
            [
                keys.import_record(uid, iid),
                keys.import_found(uid, iid),
                keys.import_rows(uid, iid),
                keys.import_gone(uid, iid),
            ],
            [pos, end, done, state, now_ms(), *cursor, *found],
        )
    )


# --- an overwrite: undo what the file did not name ----------------------------------------
_PRUNED = {
    "follows": (keys.following, "unfollow"),
    "blocks": (keys.blocking, "unblock"),
    "mutes": (keys.muting, "unmute"),
    "domain_blocks": (keys.domain_blocks, "unblock_domain"),
    "bookmarks": (keys.bookmarks, "unbookmark"),
}


async def _prune(store: Store, actions: Actions, uid: int, iid: int, h: dict) -> bool:
    """One step of an overwrite's prune. The first takes the list of what
    to undo: the member's set as it is then, less what the import found
    (what the member adds meanwhile is left alone); a first step cut short
    takes it again. Each later step undoes limits.IMPORT_STEP of it."""
    key_of, undo = _PRUNED[h["kind"]]
    gone_key = keys.import_gone(uid, iid)
    pos = int(h["pos"])
    if not h.get("cursor"):
        key, gone, start = key_of(uid), [], 0
        while members := await store.zrange(key, start, start + limits.EXPORT_STEP - 1):
            found = await store.smismember(keys.import_found(uid, iid), members)
            gone.extend(m for m, k in zip(members, found) if not k)
            start += limits.EXPORT_STEP
        pipe = store.pipeline(transaction=True)
        pipe.delete(gone_key)
        for i in range(0, len(gone), 1000):
            pipe.rpush(gone_key, *gone[i : i + 1000])
        await pipe.execute()
        await _advance(store, uid, iid, pos, pos, 0, "pruning", (), ("", "0"))
        return True
    cursor = int(h["cursor"])
    batch = await store.lrange(gone_key, cursor, cursor + limits.IMPORT_STEP - 1)
    for member in batch:
        value = member.decode() if h["kind"] == "domain_blocks" else int(member)
        await getattr(actions, undo)(uid, value)
    end = cursor + len(batch)
    state = "pruning" if len(batch) == limits.IMPORT_STEP else "finished"
    await _advance(store, uid, iid, pos, pos, 0, state, (), (h["cursor"], str(end)))
    return state != "finished"


async def _clear_lists(store: Store, actions: Actions, uid: int, iid: int) -> None:
    """A lists overwrite's start, as Mastodon's: the lists the file does not
    name are deleted, the named ones emptied (idempotent: done again, the
    same). The rows then fill them."""
    rows = [json.loads(r) for r in await store.lrange(keys.import_rows(uid, iid), 0, -1)]
    named = {r[0] for r in rows}
    for lid, title in (await actions.list_ids(uid)).items():
        if title not in named:
            await actions.drop_list(uid, lid)
            continue
        while members := await store.zrange(keys.list_members(uid, lid), 0, limits.EXPORT_STEP - 1):
            for m in members:
                await actions.list_remove(uid, lid, int(m))
