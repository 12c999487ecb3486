"""Notifications: one bounded list per user, each notification
found again by its key ``<type>:<actor>:<target>`` so that undoing the
action (unfavourite, unboost, unfollow) removes it.

A notification is written by :func:`apply`, one atomic script on the
recipient's slot (notify.lua), as one step of the action that causes it
(which also says whether the recipient has push subscriptions: then a
jobs.PushJob sends it, redpoll.push); the
action's journal replays that step after a crash, and the operation id it
carries makes a late or repeated step harmless. Reads skip nothing
themselves: the API leaves out notifications whose status is gone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import orjson

from ..bus import events
from ..bus.queue import add
from ..core import keys, limits, validate
from ..core.errors import NotFound, ValidationError
from ..core.models import now_ms
from ..storage.store import Store
from .jobs import PushJob

#: Kinds Mastodon documents for the Notification entity's ``type``.
TYPES = (
    "mention",
    "status",
    "reblog",
    "follow",
    "follow_request",
    "favourite",
    "poll",
    "update",
    "quote",
    "quoted_update",
    "added_to_collection",
    "admin.sign_up",
    "admin.report",
    "severed_relationships",
    "moderation_warning",
)

#: Kinds about a status (the entity's ``status``): shown only while its
#: owner may see that status (redpoll.reading.notification_view).
WITH_STATUS = frozenset(
    {"mention", "status", "reblog", "favourite", "poll", "update", "quote", "quoted_update"}
)

#: Kinds the notification policy may filter or drop (Mastodon 4.3's
#: filterable kinds; quote is one in 4.5, added_to_collection in 4.6).
FILTERABLE = frozenset(
    {
        "mention",
        "status",
        "reblog",
        "follow",
        "follow_request",
        "favourite",
        "quote",
        "added_to_collection",
    }
)
#: Kinds whose filtered notifications go into the sender's notification
#: request (Mastodon: mentions and quotes).
REQUESTED = frozenset({"mention", "quote"})
#: The policy's fields in the order notify.lua reads their defaults, with
#: Mastodon 4.3's defaults.
POLICY_DEFAULTS = {
    "for_not_following": "accept",
    "for_not_followers": "accept",
    "for_new_accounts": "accept",
    "for_private_mentions": "filter",
    "for_limited_accounts": "filter",
}

#: Kinds grouped in /api/v2/notifications (Mastodon 4.3: favourite, follow,
#: reblog; admin.sign_up has no meaning here).
GROUPABLE = ("favourite", "follow", "reblog")
#: A group key as notify.lua makes them, or ``ungrouped-<id>``.
GROUP_KEY = re.compile(
    r"(?:ungrouped-[0-9]{1,16}|(?:favourite|reblog)-[0-9]{1,16}-[0-9]{1,10}"
    r"|follow-[0-9]{1,10})\Z"
)


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
    #: Mastodon's group key: made by notify.lua for GROUPABLE kinds,
    #: ``ungrouped-<id>`` for the others.
    group_key: str = ""
    #: held back by the owner's notification policy (notify.lua)
    filtered: bool = False
    #: a moderation_warning's warning as it was made (id, action, text,
    #: status_ids, at: redpoll.moderation.warnings)
    warning: dict | None = None
    #: an added_to_collection's collection (its owner is ``actor``:
    #: redpoll.collections)
    collection: int | None = None

    @classmethod
    def from_json(cls, nid: int, raw: bytes | str) -> Notification:
        data = orjson.loads(raw)
        return cls(
            id=nid,
            type=data["type"],
            actor=int(data["actor"]),
            status=int(data["status"]) if data.get("status") else None,
            created_at=int(data["at"]),
            key=data["key"],
            group_key=data.get("group_key") or f"ungrouped-{nid}",
            filtered=bool(data.get("filtered")),
            warning=data.get("warning") if isinstance(data.get("warning"), dict) else None,
            collection=int(data["collection"]) if data.get("collection") else None,
        )


@dataclass(frozen=True, slots=True)
class Group:
    """One notification group of a grouped page (Mastodon's NotificationGroup):
    ``first`` is the notification that stands for it on the page."""

    key: str
    first: Notification
    count: int
    most_recent_id: int
    page_min_id: int
    sample_account_ids: list[int] = field(default_factory=list)
    latest_at: int = 0  # ms: when the most recent notification was made


@dataclass(frozen=True, slots=True)
class WholeGroup:
    """A group read whole (GET /api/v2/notifications/:group_key)."""

    key: str
    count: int
    notifications: list[Notification]  # newest first, at most the bound asked for


def key(kind: str, actor: int, target: int) -> str:
    """The notification's index key: what undo looks up."""
    return f"{kind}:{actor}:{target}"


def group_prefix(kind: str, status: int | None) -> str:
    """The part of a group key before its hour bucket (Mastodon's type
    prefix): ``favourite-<status>``, ``reblog-<status>``, ``follow``; '' for
    kinds that are not grouped."""
    if kind in ("favourite", "reblog") and status:
        return f"{kind}-{status}"
    return "follow" if kind == "follow" else ""


def _keys(uid: int) -> list[str]:
    """The keys of the dismiss and grouped-read scripts (the reads use the
    first three)."""
    return [
        keys.notifications(uid),
        keys.notification_records(uid),
        keys.notification_group_index(uid),
        keys.notification_index_done(uid),
    ]


async def apply(
    store: Store,
    owner: int,
    kind: str,
    actor: int,
    target: int,
    op: int,
    on: bool,
    status: int | None = None,
    own: bool = False,
    private_mention: bool = False,
    extra: dict | None = None,
) -> int:
    """Make (``on``) or undo the notification of ``owner`` about ``actor``
    doing ``kind`` to ``target``, as operation ``op``; nothing for one's own
    actions unless ``own`` (the end of one's own poll). Idempotent; the id
    made now or 0. A notification made passes the owner's notification
    policy in the same script (notify.lua): dropped (0), filtered (made,
    neither streamed nor pushed) or made as any; ``private_mention``: a
    direct mention that answers no private mention of the owner's
    (conversations.private_mention_not_in_response); ``extra``: more fields
    of the record (a moderation_warning's ``warning``)."""
    if owner == actor and not own:
        return 0
    name = key(kind, actor, target)
    facts = await _sender_facts(store, actor, private_mention) if on and kind in FILTERABLE else ""
    record = (
        json.dumps(
            {
                "type": kind,
                "actor": str(actor),
                "status": status,
                "at": now_ms(),
                "key": name,
                **(extra or {}),
            },
            separators=(",", ":"),
        )
        if on
        else ""
    )
    made = await store.run(
        "notify",
        [
            keys.notifications(owner),
            keys.notification_records(owner),
            keys.notification_index(owner),
            keys.notification_group_index(owner),
            keys.notification_index_done(owner),
            keys.push_subscriptions(owner),
            *_filter_keys(owner),
        ],
        [
            name,
            op,
            "1" if on else "0",
            record,
            limits.NOTIFICATIONS_MAX,
            group_prefix(kind, status) if on else "",
            now_ms() // 3_600_000,
            limits.NOTIFICATION_GROUP_SPAN_H,
            limits.NOTIFICATION_INDEX_DONE_KEPT,
            "1" if kind in FILTERABLE else "0",
            facts,
            ",".join(POLICY_DEFAULTS.values()),
            "1" if kind in REQUESTED else "0",
            now_ms(),
            (now_ms() - limits.NOTIFICATION_NEW_FOLLOWER_S * 1000) * 1000,
            status or "",
        ],
    )
    if not made:
        return 0
    nid, stored, pushed = int(made[0]), made[1], int(made[2])
    if int(made[3]):  # filtered: only a notification request or include_filtered shows it
        return nid
    stored = stored.decode() if isinstance(stored, bytes) else stored
    # the owner's open user streams get it (at least once: a replay may repeat it)
    await events.publish(store, events.notification_event(owner, nid, stored))
    if pushed:
        # to the owner's push subscriptions, decided when sent (redpoll.push).
        # At most once: a call cut short here leaves this notification
        # unpushed (its replay finds it made already), as a push service
        # may drop one anyway
        await add(store, PushJob(owner, nid))
    return nid


def _filter_keys(owner: int) -> list[str]:
    """The keys notify.lua and the dismiss scripts use for filtering after
    their first six or four (KEYS[7..13] of notify.lua)."""
    return [
        keys.notification_policy(owner),
        keys.notification_permissions(owner),
        keys.filtered_notifications(owner),
        keys.notification_requests(owner),
        keys.notification_request_records(owner),
        keys.following(owner),
        keys.followers(owner),
    ]


async def _sender_facts(store: Store, actor: int, private_mention: bool) -> str:
    """What notify.lua cannot read in the owner's slot about the sender:
    ``new_account`` (made less than limits.NOTIFICATION_NEW_ACCOUNT_S ago),
    ``limited`` (silenced by a moderator), ``private_mention``."""
    at, silenced = await store.hmget(keys.user(actor), ["at", "sil"])
    facts = []
    if at and now_ms() - int(at) < limits.NOTIFICATION_NEW_ACCOUNT_S * 1000:
        facts.append("new_account")
    if silenced in (b"1", "1"):
        facts.append("limited")
    if private_mention:
        facts.append("private_mention")
    return ",".join(facts)


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
        await store.sadd(keys.notifiers(target), uid)
    else:
        await store.srem(keys.notifiers(target), uid)


async def notifies(store: Store, uid: int, target: int) -> bool:
    return bool(await store.sismember(keys.notifiers(target), uid))


def _types(values, name: str) -> list[str]:
    out = []
    for value in values or []:
        if value not in TYPES:
            raise ValidationError(name, "unknown notification type " + str(value)[:40])
        out.append(value)
    return out


async def page(
    store: Store,
    uid: int,
    *,
    max_id=None,
    since_id=None,
    min_id=None,
    limit=None,
    types=None,
    exclude_types=None,
    account_id=None,
    include_filtered: bool = False,
) -> list[Notification]:
    """Notifications newest first by Mastodon's id cursors, filtered by type
    (``types`` only these, ``exclude_types`` not these) and by the account
    that caused them, reading on past filtered ones up to a bound; those
    the notification policy filtered only with ``include_filtered``."""
    uid = validate.an_id(uid, "user_id")
    cursors = [
        validate.optional_id(max_id, "max_id") or "",
        validate.optional_id(since_id, "since_id") or "",
        validate.optional_id(min_id, "min_id") or "",
    ]
    size = validate.page_limit(
        limit, limits.NOTIFICATIONS_PAGE_DEFAULT, limits.NOTIFICATIONS_PAGE_MAX
    )
    include = _types(types, "types")
    exclude = _types(exclude_types, "exclude_types")
    account = validate.optional_id(account_id, "account_id") or ""
    rows = await store.run(
        "notification_page",
        [keys.notifications(uid), keys.notification_records(uid)],
        [
            *cursors,
            size,
            ",".join(include),
            ",".join(exclude),
            account,
            limits.NOTIFICATIONS_SCAN_MAX,
            "1" if include_filtered else "",
        ],
    )
    return [Notification.from_json(int(nid), raw) for nid, raw in zip(rows[0::2], rows[1::2])]


async def get(store: Store, uid: int, nid) -> Notification:
    nid = validate.an_id(nid, "notification_id")
    raw = await store.hget(keys.notification_records(uid), nid)
    if raw is None:
        raise NotificationNotFound(f"notification {nid} does not exist")
    return Notification.from_json(nid, raw)


async def dismiss(store: Store, uid: int, nid) -> None:
    """Remove one notification (its index entry stays: a repeat of the action
    that made it does not make it again). Dismissing an unknown one is 404."""
    nid = validate.an_id(nid, "notification_id")
    removed = await store.run("notification_dismiss", [*_keys(uid), *_filter_keys(uid)[2:5]], [nid])
    if not removed:
        raise NotificationNotFound(f"notification {nid} does not exist")


async def clear(store: Store, uid: int) -> None:
    """Remove every notification of the user, filtered ones and their
    notification requests too (one DEL of all eight keys; the policy and the
    accepted senders stay)."""
    await store.delete(
        keys.notifications(uid),
        keys.notification_records(uid),
        keys.notification_index(uid),
        keys.notification_group_index(uid),
        keys.notification_index_done(uid),
        keys.filtered_notifications(uid),
        keys.notification_requests(uid),
        keys.notification_request_records(uid),
    )


def _group_key(value) -> str:
    if not isinstance(value, str) or not GROUP_KEY.match(value):
        raise NotificationNotFound("no such notification group")
    return value


def _grouped_types(values) -> str:
    if values is None:
        return ",".join(GROUPABLE)
    return ",".join(t for t in _types(values, "grouped_types") if t in GROUPABLE)


async def group_page(
    store: Store,
    uid: int,
    *,
    max_id=None,
    since_id=None,
    min_id=None,
    limit=None,
    types=None,
    exclude_types=None,
    account_id=None,
    grouped_types=None,
    include_filtered: bool = False,
) -> list[Group]:
    """One page of grouped notifications, newest first (Mastodon 4.3's
    GET /api/v2/notifications): at most ``limit`` groups, each counted,
    sampled and bounded by what the group holds up to the page's newest
    notification, so a group spread over pages counts all of its older
    notifications on each. ``grouped_types`` None = every GROUPABLE kind."""
    uid = validate.an_id(uid, "user_id")
    cursors = [
        validate.optional_id(max_id, "max_id") or "",
        validate.optional_id(since_id, "since_id") or "",
        validate.optional_id(min_id, "min_id") or "",
    ]
    size = validate.page_limit(
        limit, limits.NOTIFICATIONS_PAGE_DEFAULT, limits.NOTIFICATIONS_PAGE_MAX
    )
    include = _types(types, "types")
    exclude = _types(exclude_types, "exclude_types")
    account = validate.optional_id(account_id, "account_id") or ""
    grouped = _grouped_types(grouped_types)
    reps, info = await store.run(
        "notification_groups",
        _keys(uid)[:3],
        [
            *cursors,
            size,
            ",".join(include),
            ",".join(exclude),
            account,
            limits.NOTIFICATIONS_SCAN_MAX,
            grouped,
            limits.NOTIFICATION_GROUP_SAMPLE,
            "1" if include_filtered else "",
        ],
    )
    known = {}
    for i in range(0, len(info), 6):
        gk, count, recent, low, actors, at = (
            v.decode() if isinstance(v, bytes) else v for v in info[i : i + 6]
        )
        known[gk] = (
            int(count),
            int(recent),
            int(low),
            [int(a) for a in actors.split(",") if a],
            int(at) if at else None,
        )
    out = []
    for i in range(0, len(reps), 3):
        nid, raw, gk = int(reps[i]), reps[i + 1], reps[i + 2]
        gk = gk.decode() if isinstance(gk, bytes) else gk
        note = Notification.from_json(nid, raw)
        count, recent, low, sample, at = known.get(gk, (1, nid, nid, [note.actor], None))
        out.append(
            Group(
                key=gk,
                first=note,
                count=count,
                most_recent_id=recent,
                page_min_id=low,
                sample_account_ids=sample or [note.actor],
                latest_at=at or note.created_at,
            )
        )
    return out


async def group(store: Store, uid: int, group_key, most: int) -> WholeGroup:
    """One group whole: its count and newest ``most`` notifications; 404 when
    it holds none."""
    gk = _group_key(group_key)
    total, rows = await store.run(
        "notification_group",
        [keys.notification_records(uid), keys.notification_group_index(uid)],
        [gk, most],
    )
    notes = [Notification.from_json(int(nid), raw) for nid, raw in zip(rows[0::2], rows[1::2])]
    if not notes:
        raise NotificationNotFound(f"notification group {gk} does not exist")
    return WholeGroup(key=gk, count=int(total), notifications=notes)


async def dismiss_group(store: Store, uid: int, group_key) -> int:
    """Remove every notification of one group (one script: atomic); how
    many went (Mastodon answers an empty or unknown group like any other)."""
    if not isinstance(group_key, str) or not GROUP_KEY.match(group_key):
        return 0
    if group_key.startswith("ungrouped-"):
        try:
            await dismiss(store, uid, group_key.removeprefix("ungrouped-"))
        except NotificationNotFound:
            return 0
        return 1
    return int(await store.run("notification_group_dismiss", _keys(uid), [group_key]))
