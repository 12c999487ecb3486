"""Strikes and their appeals, as Mastodon's AccountWarning and Appeal: every
account action a moderator takes (redpoll.moderation.admin_accounts.act)
keeps a warning about the account (the action, the moderator's text, the
statuses of the report it settles), which the account's owner sees and
may appeal once, with a text, within limits.APPEAL_WINDOW_S of the strike;
a role with ``manage_appeals`` approves the appeal (the action is undone:
redpoll.moderation.appeals) or rejects it.

Keys (redpoll.moderation.keys): the warnings of an account are one hash in
its slot (id -> JSON); a global hash says whose each warning is, and a
global zset lists the appealed ones. Writing a warning: its id (INCR), its
owner (HSET), its record (HSET): each a single command, in that order, so
a warning cut short before its record is simply not there (its id is
skipped). An appeal is listed first (ZADD, idempotent), then made (one
script on the account's slot, warning_appeal.lua, that refuses a second
one): a listed member without an appeal is skipped on reading."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..core import keys as core_keys
from ..core import limits, validate
from ..core.errors import Conflict, NotFound, ValidationError
from ..core.models import now_ms
from ..notifications import notifications
from ..storage.store import Store
from . import keys

#: Mastodon's AccountWarning actions this server takes (of its
#: none/disable/mark_statuses_as_sensitive/delete_statuses/sensitive/silence/suspend)
ACTIONS = ("none", "disable", "sensitive", "silence", "suspend")
STATES = ("pending", "approved", "rejected")


class WarningNotFound(NotFound):
    pass


@dataclass(frozen=True, slots=True)
class Appeal:
    text: str
    state: str  # pending, approved, rejected
    created_at: int
    decided_by: int | None = None
    decided_at: int | None = None


@dataclass(frozen=True, slots=True)
class Warning:
    id: int
    account: int  # whom it is about
    actor: int  # the moderator (0: the operator)
    action: str
    text: str
    status_ids: tuple[int, ...]
    report: int | None
    created_at: int
    appeal: Appeal | None = None
    overruled_at: int | None = None

    @property
    def appealable_until(self) -> int:
        return self.created_at + limits.APPEAL_WINDOW_S * 1000

    @classmethod
    def from_json(cls, raw: bytes | str) -> Warning:
        d = json.loads(raw)
        a = d.get("appeal")
        appeal = None
        if isinstance(a, dict) and a:
            appeal = Appeal(
                a.get("text", ""),
                a.get("state", "pending"),
                int(a.get("at", 0)),
                int(a["by"]) if a.get("by") not in (None, "") else None,
                int(a["decided_at"]) if a.get("decided_at") else None,
            )
        ids = d.get("status_ids") or ""
        return cls(
            id=int(d["id"]),
            account=int(d["account"]),
            actor=int(d.get("actor") or 0),
            action=d["action"],
            text=d.get("text", ""),
            status_ids=tuple(int(s) for s in str(ids).split(",") if s),
            report=int(d["report"]) if d.get("report") else None,
            created_at=int(d["at"]),
            appeal=appeal,
            overruled_at=int(d["overruled_at"]) if d.get("overruled_at") else None,
        )


async def record(
    store: Store,
    account: int,
    actor: int | None,
    action: str,
    text: str,
    status_ids=(),
    report: int | None = None,
) -> Warning:
    """Keep one warning (three single commands in order: see the module)."""
    if action not in ACTIONS:
        raise ValidationError("type", "must be one of " + ", ".join(ACTIONS))
    (wid,) = await store.batch([("INCR", keys.WARNING_SEQ)])
    wid = int(wid)
    body = {
        "id": wid,
        "account": account,
        "actor": actor or 0,
        "action": action,
        "text": text,
        "status_ids": ",".join(str(s) for s in status_ids),
        "report": report or "",
        "at": now_ms(),
    }
    raw = json.dumps(body, separators=(",", ":"))
    await store.batch([("HSET", keys.WARNING_OWNERS, wid, account)])
    await store.batch([("HSET", keys.warnings(account), wid, raw)])
    return Warning.from_json(raw)


async def notify(store: Store, w: Warning) -> int:
    """The account's ``moderation_warning`` notification of ``w`` (Mastodon
    4.3; its account is the recipient's own, as Mastodon's), carrying the
    warning as made; idempotent (its key names the warning)."""
    (op,) = await store.batch([("INCR", core_keys.INTERACTION_SEQ)])
    snapshot = {
        "id": w.id,
        "action": w.action,
        "text": w.text,
        "status_ids": ",".join(str(s) for s in w.status_ids),
        "at": w.created_at,
    }
    return await notifications.apply(
        store,
        w.account,
        "moderation_warning",
        w.account,
        w.id,
        int(op),
        True,
        own=True,
        extra={"warning": snapshot},
    )


async def of_account(store: Store, account: int) -> list[Warning]:
    """The warnings about ``account``, newest first."""
    (raw,) = await store.batch([("HGETALL", keys.warnings(account))])
    values = raw.values() if isinstance(raw, dict) else (raw or [])[1::2]
    return sorted((Warning.from_json(v) for v in values), key=lambda w: -w.id)


async def owner(store: Store, wid) -> int:
    wid = validate.an_id(wid, "id")
    (uid,) = await store.batch([("HGET", keys.WARNING_OWNERS, wid)])
    if uid is None:
        raise WarningNotFound(f"warning {wid} does not exist")
    return int(uid)


async def get(store: Store, account: int, wid) -> Warning:
    wid = validate.an_id(wid, "id")
    (raw,) = await store.batch([("HGET", keys.warnings(account), wid)])
    if raw is None:
        raise WarningNotFound(f"warning {wid} does not exist")
    return Warning.from_json(raw)


async def _change(store: Store, account: int, op: str, wid: int, arg: str) -> Warning:
    since = now_ms() - limits.APPEAL_WINDOW_S * 1000
    why, raw = await store.run(
        "warning_appeal", [keys.warnings(account)], [op, wid, now_ms(), arg, since]
    )
    why = why.decode() if isinstance(why, bytes) else why
    if why == "NOTFOUND":
        raise WarningNotFound(f"warning {wid} does not exist")
    if why == "APPEALED":
        raise ValidationError("text", "this warning has been appealed already")
    if why == "TOOLATE":
        raise ValidationError("text", "this warning is too old to be appealed")
    if why == "DECIDED":
        raise Conflict("this appeal has been decided already")
    return Warning.from_json(raw)


async def appeal(store: Store, account: int, wid, text: str) -> Warning:
    """The owner's one appeal of a warning about them (idempotent listing,
    then one script: see the module)."""
    wid = validate.an_id(wid, "id")
    text = validate.text(text or "", "text", limits.APPEAL_MAX_CHARS, allow_empty=True).strip()
    if not text:
        raise ValidationError("text", "must not be empty")
    await get(store, account, wid)  # (a stranger's or unknown warning: 404, nothing listed)
    await store.batch([("ZADD", keys.APPEALS, wid, f"{account}:{wid}")])
    return await _change(store, account, "appeal", wid, text)


async def decide(store: Store, account: int, wid: int, approve: bool, by: int | None) -> Warning:
    """Approve or reject a pending appeal (one script); Conflict when none is pending."""
    return await _change(store, account, "approve" if approve else "reject", wid, str(by or 0))


async def appealed(store: Store, state: str | None = None, limit: int = 100) -> list[Warning]:
    """The appealed warnings, newest first, those whose appeal is in
    ``state`` (None: any), at most ``limit``, reading at most
    limits.APPEALS_SCAN listed ones."""
    if state is not None and state not in STATES:
        raise ValidationError("state", "must be one of " + ", ".join(STATES))
    (members,) = await store.batch([("ZREVRANGE", keys.APPEALS, 0, limits.APPEALS_SCAN - 1)])
    pairs = []
    for m in members or []:
        uid, _, wid = (m.decode() if isinstance(m, bytes) else m).partition(":")
        pairs.append((int(uid), int(wid)))
    rows = await store.batch([("HGET", keys.warnings(u), w) for u, w in pairs])
    out = []
    for raw in rows:
        if raw is None:
            continue
        w = Warning.from_json(raw)
        if w.appeal is None or (state is not None and w.appeal.state != state):
            continue
        out.append(w)
        if len(out) >= limit:
            break
    return out
