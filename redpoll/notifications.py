"""Notifications (issue 9): one bounded list per user, each notification
found again by its key ``<type>:<actor>:<target>`` so that undoing the
action (unfavourite, unboost, unfollow) removes it.

A notification is written by :func:`apply`, one atomic script on the
recipient's slot (notify.lua), as one step of the action that causes it; the
action's journal replays that step after a crash, and the operation id it
carries makes a late or repeated step harmless. Reads skip nothing
themselves: the API leaves out notifications whose status is gone.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from . import events, keys, limits, validate
from .errors import NotFound, ValidationError
from .models import now_ms
from .store import Store

#: Kinds Mastodon documents for the Notification entity's ``type``.
TYPES = ("mention", "status", "reblog", "follow", "follow_request", "favourite", "poll",
         "update", "admin.sign_up", "admin.report", "severed_relationships",
         "moderation_warning")


class NotificationNotFound(NotFound):
    pass


@dataclass(frozen=True, slots=True)
class Notification:
    id: int
    type: str
    actor: int
    status: int | None
    created_at: int  # ms
    key: str

    @classmethod
    def from_json(cls, nid: int, raw: bytes | str) -> "Notification":
        data = json.loads(raw)
        return cls(id=nid, type=data["type"], actor=int(data["actor"]),
                   status=int(data["status"]) if data.get("status") else None,
                   created_at=int(data["at"]), key=data["key"])


def key(kind: str, actor: int, target: int) -> str:
    """The notification's index key: what undo looks up."""
    return f"{kind}:{actor}:{target}"


async def apply(store: Store, owner: int, kind: str, actor: int, target: int, op: int,
                on: bool, status: int | None = None) -> int:
    """Make (``on``) or undo the notification of ``owner`` about ``actor``
    doing ``kind`` to ``target``, as operation ``op``; nothing for one's own
    actions. Idempotent; the id made now or 0."""
    if owner == actor:
        return 0
    name = key(kind, actor, target)
    record = json.dumps({"type": kind, "actor": str(actor), "status": status, "at": now_ms(),
                         "key": name}, separators=(",", ":")) if on else ""
    made = await store.run("notify", [keys.notifications(owner), keys.notification_records(owner),
                                      keys.notification_index(owner)],
                           [name, op, "1" if on else "0", record, limits.NOTIFICATIONS_MAX])
    if made:  # the owner's open user streams get it (at least once: a replay may repeat it)
        await events.publish(store, events.notification_event(owner, int(made), record))
    return int(made)


FOLLOW_JOB = "follow_note"


async def sync_follow(store: Store, actor: int, target: int) -> None:
    """Make ``target``'s ``follow`` notification about ``actor`` agree with
    whether actor follows target now. The operation id is drawn after the
    follow changed and before its state is read, so of calls racing on the
    same pair, the one with the highest id read the final state last, and
    notify.lua keeps only the highest (idempotent; a replay just syncs)."""
    [op] = await store.batch([("INCR", keys.INTERACTION_SEQ)])
    [score] = await store.batch([("ZSCORE", keys.following(actor), target)])
    await apply(store, target, "follow", actor, target, int(op), score is not None)


async def replay_follow(store: Store, settings, job) -> None:
    """Worker handler: the journal of a follow or unfollow whose call was cut
    short (follows.py holds it around the change)."""
    await sync_follow(store, job.uid, job.target)  # a jobs.FollowNoteJob
    return None


async def set_notify(store: Store, uid: int, target: int, on: bool) -> None:
    """``follow(notify=...)``: whether ``uid`` gets a ``status`` notification
    for each post of ``target`` (one SADD/SREM on target's slot: atomic)."""
    if on:
        await store.client.sadd(keys.notifiers(target), uid)
    else:
        await store.client.srem(keys.notifiers(target), uid)


async def notifies(store: Store, uid: int, target: int) -> bool:
    return bool(await store.client.sismember(keys.notifiers(target), uid))


def _types(values, name: str) -> list[str]:
    out = []
    for value in values or []:
        if value not in TYPES:
            raise ValidationError(name, "unknown notification type " + str(value)[:40])
        out.append(value)
    return out


async def page(store: Store, uid: int, *, max_id=None, since_id=None, min_id=None, limit=None,
               types=None, exclude_types=None, account_id=None) -> list[Notification]:
    """Notifications newest first by Mastodon's id cursors, filtered by type
    (``types`` only these, ``exclude_types`` not these) and by the account
    that caused them, reading on past filtered ones up to a bound."""
    uid = validate.an_id(uid, "user_id")
    cursors = [validate.optional_id(max_id, "max_id") or "",
               validate.optional_id(since_id, "since_id") or "",
               validate.optional_id(min_id, "min_id") or ""]
    size = validate.page_limit(limit, limits.NOTIFICATIONS_PAGE_DEFAULT,
                               limits.NOTIFICATIONS_PAGE_MAX)
    include = _types(types, "types")
    exclude = _types(exclude_types, "exclude_types")
    account = validate.optional_id(account_id, "account_id") or ""
    rows = await store.run("notification_page",
                           [keys.notifications(uid), keys.notification_records(uid)],
                           [*cursors, size, ",".join(include), ",".join(exclude), account,
                            limits.NOTIFICATIONS_SCAN_MAX])
    return [Notification.from_json(int(nid), raw) for nid, raw in zip(rows[0::2], rows[1::2])]


async def get(store: Store, uid: int, nid) -> Notification:
    nid = validate.an_id(nid, "notification_id")
    raw = await store.client.hget(keys.notification_records(uid), nid)
    if raw is None:
        raise NotificationNotFound(f"notification {nid} does not exist")
    return Notification.from_json(nid, raw)


async def dismiss(store: Store, uid: int, nid) -> None:
    """Remove one notification (its index entry stays: a repeat of the action
    that made it does not make it again). Dismissing an unknown one is 404."""
    nid = validate.an_id(nid, "notification_id")
    removed = await store.run("notification_dismiss",
                              [keys.notifications(uid), keys.notification_records(uid)], [nid])
    if not removed:
        raise NotificationNotFound(f"notification {nid} does not exist")


async def clear(store: Store, uid: int) -> None:
    """Remove every notification of the user (one DEL of all three keys)."""
    await store.client.delete(keys.notifications(uid), keys.notification_records(uid),
                              keys.notification_index(uid))


async def count_after(store: Store, uid: int, after: int, cap: int) -> int:
    """How many notifications are newer than ``after``, at most ``cap``."""
    ids = await store.client.zrangebyscore(keys.notifications(uid), f"({after}", "+inf",
                                           start=0, num=cap)
    return len(ids)
