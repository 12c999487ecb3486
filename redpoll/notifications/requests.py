"""Notification filtering (Mastodon 4.3): the user's notification policy
and the notification requests it fills, one per sender of filtered mentions.

The policy is decided where a notification is made, in the same script
(notify.lua): dropped, filtered (listed but marked, neither streamed,
pushed nor counted) or accepted. Accepting a request (one script:
atomic) unmarks its sender's filtered notifications and accepts the
sender from then on; dismissing one (one script) removes them. What a
request shows (its account, its last status) is decided when it is read
(redpoll.reading.pages.notification_requests)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import keys, limits, validate
from ..core.errors import NotFound, ValidationError
from ..storage.store import Store
from .notifications import POLICY_DEFAULTS

#: What each policy field may say.
ACTIONS = ("accept", "filter", "drop")


class RequestNotFound(NotFound):
    pass


@dataclass(frozen=True, slots=True)
class Request:
    """One notification request (Mastodon's NotificationRequest)."""

    id: int
    actor: int
    created_at: int  # ms
    updated_at: int  # ms
    last_status: int | None
    count: int  # filtered mentions held, at most limits.NOTIFICATION_REQUEST_COUNT_MAX


async def policy(store: Store, uid: int) -> dict[str, str]:
    """The user's policy, each field as stored or its default."""
    stored = await store.hgetall(keys.notification_policy(uid))
    have = {
        (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
        for k, v in stored.items()
    }
    return {f: have.get(f) if have.get(f) in ACTIONS else d for f, d in POLICY_DEFAULTS.items()}


async def set_policy(store: Store, uid: int, changes: dict[str, str | None]) -> dict[str, str]:
    """Change the fields given (one HSET: atomic); the policy after."""
    out = {}
    for name, value in changes.items():
        if value is None:
            continue
        if name not in POLICY_DEFAULTS:
            raise ValidationError(name, "unknown policy field")
        if value not in ACTIONS:
            raise ValidationError(name, "must be accept, filter or drop")
        out[name] = value
    if out:
        await store.hset(keys.notification_policy(uid), mapping=out)
    return await policy(store, uid)


def _rows(flat) -> list[Request]:
    out = []
    for i in range(0, len(flat), 6):
        rid, actor, at, upd, last, n = (
            v.decode() if isinstance(v, bytes) else str(v) for v in flat[i : i + 6]
        )
        out.append(
            Request(
                id=int(float(rid)),
                actor=int(actor),
                created_at=int(at),
                updated_at=int(upd),
                last_status=int(last) if last else None,
                count=min(max(int(n), 0), limits.NOTIFICATION_REQUEST_COUNT_MAX),
            )
        )
    return out


def _keys(uid: int) -> list[str]:
    return [keys.notification_requests(uid), keys.notification_request_records(uid)]


async def page(
    store: Store, uid: int, *, max_id=None, since_id=None, min_id=None, limit=None
) -> list[Request]:
    """Requests newest first by Mastodon's id cursors (newest requests have
    the highest ids); ``limit`` as Mastodon's (40, at most 80)."""
    size = validate.page_limit(
        limit, limits.NOTIFICATION_REQUESTS_PAGE_DEFAULT, limits.NOTIFICATION_REQUESTS_PAGE_MAX
    )
    return await read(store, uid, max_id=max_id, since_id=since_id, min_id=min_id, size=size)


async def read(store: Store, uid: int, *, max_id=None, since_id=None, min_id=None, size: int):
    """:func:`page` without the page bound (the reading layer reads on past
    hidden ones up to limits.NOTIFICATION_REQUESTS_SCAN_MAX)."""
    flat = await store.run(
        "notification_requests_read",
        _keys(uid),
        [
            validate.optional_id(max_id, "max_id") or "",
            validate.optional_id(since_id, "since_id") or "",
            validate.optional_id(min_id, "min_id") or "",
            size,
            "",
        ],
    )
    return _rows(flat)


async def get(store: Store, uid: int, rid) -> Request:
    rid = validate.an_id(rid, "id")
    found = _rows(await store.run("notification_requests_read", _keys(uid), ["", "", "", 1, rid]))
    if not found:
        raise RequestNotFound(f"notification request {rid} does not exist")
    return found[0]


async def accept(store: Store, uid: int, rid) -> None:
    """Accept one request (notification_request_accept.lua); 404 unknown."""
    found = await get(store, uid, rid)
    done = await store.run(
        "notification_request_accept",
        [
            *_keys(uid),
            keys.filtered_notifications(uid),
            keys.notification_records(uid),
            keys.notification_permissions(uid),
        ],
        [found.actor, found.id],
    )
    if not done:
        raise RequestNotFound(f"notification request {found.id} does not exist")


async def dismiss(store: Store, uid: int, rid) -> None:
    """Dismiss one request (notification_request_dismiss.lua); 404 unknown."""
    found = await get(store, uid, rid)
    done = await store.run(
        "notification_request_dismiss",
        [
            *_keys(uid),
            keys.filtered_notifications(uid),
            keys.notification_records(uid),
            keys.notifications(uid),
            keys.notification_index_done(uid),
        ],
        [found.actor, found.id],
    )
    if not done:
        raise RequestNotFound(f"notification request {found.id} does not exist")


async def accept_many(store: Store, uid: int, ids: list[int]) -> None:
    """Accept each of ``ids`` that is a request of the user (each one step;
    unknown ones are passed over, as Mastodon's bulk accept)."""
    for rid in dict.fromkeys(ids):
        try:
            await accept(store, uid, rid)
        except RequestNotFound:
            pass


async def dismiss_many(store: Store, uid: int, ids: list[int]) -> None:
    for rid in dict.fromkeys(ids):
        try:
            await dismiss(store, uid, rid)
        except RequestNotFound:
            pass
