"""Notifications (v1 and grouped v2) and read markers."""

from __future__ import annotations

import orjson
from starlette.responses import Response

from ..accounts import markers
from ..core import limits, validate
from ..core.errors import ValidationError
from ..notifications import notifications, requests
from ..notifications.notifications import WITH_STATUS, Notification
from ..reading import pages
from ..reading.notification_view import WITH_COLLECTION
from ..render import entities
from .context import Ctx
from .contract import (
    ACCOUNTS_REF,
    BOOL,
    GROUP_KEY,
    ID,
    INT,
    NOTIFICATION_TYPES,
    NOTIFICATIONS_QUERY,
    Doc,
    array,
    obj,
    path_param,
    query_param,
    ref,
)
from .responses import JSON, NOT_FOUND, ApiError, link_header
from .routing import endpoint
from .statuses import rendered_pairs


def _types(ctx: Ctx, name: str) -> list:
    value = ctx.params.raw(name)
    if value in (None, ""):
        return []
    items = value if isinstance(value, list) else [value]
    if len(items) > len(notifications.TYPES) or not all(isinstance(i, str) for i in items):
        raise ValidationError(name, "must be a list of notification types")
    return items


def _query(ctx: Ctx) -> dict:
    p = ctx.params
    p.cursors()  # each a single value
    return {
        "max_id": p.cursor("max_id"),
        "since_id": p.cursor("since_id"),
        "min_id": p.cursor("min_id"),
        "limit": p.raw("limit"),
        "types": _types(ctx, "types"),
        "exclude_types": _types(ctx, "exclude_types"),
        "account_id": p.cursor("account_id"),
        "include_filtered": p.bool("include_filtered"),
    }


def _accounts(ctx: Ctx, ids, shown: pages.Shown) -> dict[int, bytes]:
    """The account entities (JSON bytes, kept renderings: render/rendered.py)
    of ``ids`` that ``shown`` read, by id, in order."""
    kept = ctx.request.app.state.rendered
    return {
        uid: kept.account(shown.users[uid], ctx.base)
        for uid in dict.fromkeys(ids)
        if uid in shown.users
    }


def _rendered(ctx: Ctx, notes: list[Notification], shown: pages.Shown) -> list[bytes]:
    """The Notification entities (as JSON bytes) of the notifications shown
    to the caller now (redpoll.reading.pages.notes_shown) whose account
    still exists and, for a kind about a status, whose status the caller
    may see: accounts and statuses from the process's kept renderings
    (render/rendered.py), as a page of statuses is served."""
    accounts = _accounts(ctx, (n.actor for n in notes), shown)
    statuses = {s.id: body for s, body in rendered_pairs(ctx, shown)}
    return [
        entities.notification_json(
            n,
            accounts[n.actor],
            statuses[n.status] if n.status else None,
            _collection(ctx, n, shown),
        )
        for n in notes
        if _shown(n, accounts, statuses, shown)
    ]


def _collection(ctx: Ctx, n: Notification, shown: pages.Shown) -> dict | None:
    """The Collection entity an added_to_collection names, as shown to the caller."""
    c = shown.collections.get(n.collection) if n.collection else None
    return entities.collection(c, ctx.base) if c is not None else None


@endpoint(
    "GET",
    "/api/v1/notifications",
    auth="required",
    scope="read:notifications",
    doc=Doc(
        "Your notifications, newest first",
        "Notifications",
        array(ref("Notification")),
        paged=True,
        params=[*NOTIFICATIONS_QUERY, query_param("include_filtered", BOOL)],
    ),
)
async def list_notifications(ctx: Ctx) -> Response:
    notes, shown_notes, shown = await ctx.rp.notifications.page(ctx.uid, **_query(ctx))
    return Response(
        b"[" + b",".join(_rendered(ctx, shown_notes, shown)) + b"]",
        media_type=JSON.media_type,
        headers=link_header(ctx, notes),
    )


@endpoint(
    "GET",
    "/api/v1/notifications/{id}",
    auth="required",
    scope="read:notifications",
    doc=Doc("One notification", "Notifications", ref("Notification"), params=[path_param()]),
)
async def get_notification(ctx: Ctx) -> Response:
    try:
        notes, shown = await ctx.rp.notifications.get(ctx.uid, ctx.path_id())
    except notifications.NotificationNotFound:
        raise ApiError(404, NOT_FOUND) from None
    rendered = _rendered(ctx, notes, shown)
    if not rendered:
        raise ApiError(404, NOT_FOUND)
    return Response(rendered[0], media_type=JSON.media_type)


@endpoint(
    "POST",
    "/api/v1/notifications/{id}/dismiss",
    auth="required",
    scope="write:notifications",
    doc=Doc("Dismiss one notification", "Notifications", ref("Empty"), params=[path_param()]),
)
async def dismiss(ctx: Ctx) -> Response:
    await ctx.rp.notifications.dismiss(ctx.uid, ctx.path_id())
    return JSON({})


@endpoint(
    "POST",
    "/api/v1/notifications/clear",
    auth="required",
    scope="write:notifications",
    doc=Doc("Dismiss every notification", "Notifications", ref("Empty")),
)
async def clear(ctx: Ctx) -> Response:
    await ctx.rp.notifications.clear(ctx.uid)
    return JSON({})


@endpoint(
    "POST",
    "/api/v2/notifications/clear",
    auth="required",
    scope="write:notifications",
    doc=Doc(
        "Dismiss every notification (Mastodon's v2 route of the same action)",
        "Notifications",
        ref("Empty"),
    ),
)
async def clear_v2(ctx: Ctx) -> Response:
    await ctx.rp.notifications.clear(ctx.uid)
    return JSON({})


@endpoint(
    "GET",
    "/api/v1/notifications/unread_count",
    auth="required",
    scope="read:notifications",
    doc=Doc(
        "Notifications newer than the notifications marker",
        "Notifications",
        obj({"count": INT}),
        params=[query_param("limit", {"type": "integer", "minimum": 1, "maximum": 1000})],
    ),
)
async def unread_count(ctx: Ctx) -> Response:
    """Notifications newer than the ``notifications`` marker, at most
    ``limit`` (Mastodon: default 100, at most 1000)."""
    cap = ctx.params.raw("limit")
    cap = 100 if cap in (None, "") else _limit(cap, 1000)
    return JSON({"count": await ctx.rp.notifications.unread(ctx.uid, cap)})


def _limit(value, maximum: int) -> int:
    return validate.page_limit(value, maximum, maximum)


def _partial(ctx: Ctx) -> bool:
    """``expand_accounts``: ``full`` (the default) or ``partial_avatars``
    (Mastodon 4.3: each group's most recent account in full, the rest of its
    sample as PartialAccountWithAvatar in ``partial_accounts``); anything
    else Mastodon's 400 (InvalidParameterError)."""
    expand = ctx.params.str("expand_accounts", max_chars=40)
    if expand not in (None, "full", "partial_avatars"):
        raise ApiError(
            400,
            f"Invalid value for 'expand_accounts': '{expand}', allowed values are "
            "'full' and 'partial_avatars'",
        )
    return expand == "partial_avatars"


#: PartialAccountWithAvatar's fields (Mastodon 4.3)
PARTIAL_FIELDS = ("id", "acct", "url", "avatar", "avatar_static", "locked", "bot")


def _grouped_query(ctx: Ctx) -> dict:
    """The grouped endpoints' extra parameters: ``grouped_types[]`` (absent
    = every groupable kind), and ``include_filtered`` accepted (nothing is
    filtered)."""
    ctx.params.raw("supported_types")
    return {
        "grouped_types": _types(ctx, "grouped_types") if ctx.params.has("grouped_types") else None
    }


def _side_lists(
    ctx: Ctx, account_ids: list[int], shown: pages.Shown
) -> tuple[dict[int, bytes], dict[int, bytes]]:
    """Accounts and statuses (JSON bytes, kept renderings) by id, each once
    (GroupedNotificationsResults), from redpoll.reading.pages.side_lists's answer."""
    return (
        _accounts(ctx, account_ids, shown),
        {s.id: body for s, body in rendered_pairs(ctx, shown)},
    )


def _group_entity(
    key: str, first: Notification, count: int, recent: int, sample: list[int], accounts: dict
) -> dict:
    out = {
        "group_key": key,
        "notifications_count": count,
        "type": first.type,
        "most_recent_notification_id": str(recent),
        "sample_account_ids": [str(a) for a in sample if a in accounts],
    }
    if first.status:
        out["status_id"] = str(first.status)
    if first.actor in accounts:  # (a moderation_warning's warning, Mastodon 4.3)
        warning = entities.note_warning(first, orjson.loads(accounts[first.actor]))
        if warning is not None:
            out["moderation_warning"] = warning
    return out


def _results(
    groups: list[dict],
    accounts: dict[int, bytes],
    statuses: dict[int, bytes],
    headers: dict | None = None,
    partial: bool = False,
) -> Response:
    """GroupedNotificationsResults: the accounts and statuses the groups
    name, each once, joined as bytes beside the groups; ``partial``
    (expand_accounts=partial_avatars): only each group's most recent account
    in ``accounts``, the other sampled ones in ``partial_accounts``, as
    Mastodon's GroupedNotificationsPresenter."""
    if partial:
        used_accounts = {int(g["sample_account_ids"][0]) for g in groups if g["sample_account_ids"]}
        rest = {int(a) for g in groups for a in g["sample_account_ids"][1:]} - used_accounts
    else:
        used_accounts = {int(a) for g in groups for a in g["sample_account_ids"]}
        rest = set()
    used_statuses = {int(g["status_id"]) for g in groups if "status_id" in g}
    tail = b""
    if partial:
        tail = b',"partial_accounts":' + orjson.dumps(
            [
                {k: v for k, v in orjson.loads(a).items() if k in PARTIAL_FIELDS}
                for uid, a in accounts.items()
                if uid in rest
            ]
        )
    return Response(
        b'{"accounts":['
        + b",".join(a for uid, a in accounts.items() if uid in used_accounts)
        + b"]"
        + tail
        + b',"statuses":['
        + b",".join(s for sid, s in statuses.items() if sid in used_statuses)
        + b'],"notification_groups":'
        + orjson.dumps(groups)
        + b"}",
        media_type=JSON.media_type,
        headers=headers,
    )


def _shown(n: Notification, accounts: dict, statuses: dict, shown: pages.Shown) -> bool:
    return (
        n.actor in accounts
        and (n.type not in WITH_STATUS or n.status in statuses)
        and (n.type not in WITH_COLLECTION or n.collection in shown.collections)
    )


@endpoint(
    "GET",
    "/api/v2/notifications",
    auth="required",
    scope="read:notifications",
    doc=Doc(
        "Notifications grouped by type and status",
        "Notifications",
        ref("GroupedNotifications"),
        paged=True,
        params=[
            *NOTIFICATIONS_QUERY,
            query_param("grouped_types[]", NOTIFICATION_TYPES),
            query_param("expand_accounts", {"enum": ["full", "partial_avatars"]}),
            query_param("include_filtered", BOOL),
        ],
    ),
)
async def grouped(ctx: Ctx) -> Response:
    """GET /api/v2/notifications: one page of notification groups (Mastodon
    4.3): each group once per page, counted and sampled over all of its
    notifications up to the page's newest, with the accounts and statuses
    they name listed once beside them."""
    extra = _grouped_query(ctx)
    partial = _partial(ctx)
    groups, ids, shown = await ctx.rp.notifications.groups(ctx.uid, **_query(ctx), **extra)
    accounts, statuses = _side_lists(ctx, ids, shown)
    body = []
    for g in groups:
        if not _shown(g.first, accounts, statuses, shown):
            continue
        entity = _group_entity(
            g.key, g.first, g.count, g.most_recent_id, g.sample_account_ids, accounts
        )
        coll = _collection(ctx, g.first, shown)
        if coll is not None:
            entity["collection"] = coll
        entity.update(
            {
                "page_min_id": str(g.page_min_id),
                "page_max_id": str(g.most_recent_id),
                "latest_page_notification_at": entities.iso(g.latest_at),
            }
        )
        body.append(entity)
    return _results(
        body,
        accounts,
        statuses,
        headers=link_header(ctx, groups, key=lambda g: g.first.id),
        partial=partial,
    )


async def _whole(ctx: Ctx) -> tuple[notifications.WholeGroup, dict, dict, dict | None]:
    try:
        whole, ids, shown = await ctx.rp.notifications.group(
            ctx.uid, ctx.request.path_params["group_key"], limits.NOTIFICATION_GROUP_READ_MAX
        )
    except notifications.NotificationNotFound:
        raise ApiError(404, NOT_FOUND) from None
    first = whole.notifications[0]
    accounts, statuses = _side_lists(ctx, ids, shown)
    if not _shown(first, accounts, statuses, shown):
        raise ApiError(404, NOT_FOUND)
    return whole, accounts, statuses, _collection(ctx, first, shown)


@endpoint(
    "GET",
    "/api/v2/notifications/{group_key}",
    auth="required",
    scope="read:notifications",
    doc=Doc(
        "One notification group whole",
        "Notifications",
        ref("GroupedNotifications"),
        params=[GROUP_KEY],
    ),
)
async def get_group(ctx: Ctx) -> Response:
    """GET /api/v2/notifications/:group_key: one group whole."""
    whole, accounts, statuses, coll = await _whole(ctx)
    first = whole.notifications[0]
    sample = [n.actor for n in whole.notifications][: limits.NOTIFICATION_GROUP_SAMPLE]
    entity = _group_entity(whole.key, first, whole.count, first.id, sample, accounts)
    if coll is not None:
        entity["collection"] = coll
    return _results([entity], accounts, statuses)


@endpoint(
    "GET",
    "/api/v2/notifications/{group_key}/accounts",
    auth="required",
    scope="read:notifications",
    doc=Doc(
        "The accounts of one notification group, newest first",
        "Notifications",
        ACCOUNTS_REF,
        params=[GROUP_KEY],
    ),
)
async def group_accounts(ctx: Ctx) -> Response:
    """GET /api/v2/notifications/:group_key/accounts: the group's accounts,
    newest first (at most limits.NOTIFICATION_GROUP_READ_MAX)."""
    whole, accounts, _, _ = await _whole(ctx)
    return Response(
        b"["
        + b",".join(
            accounts[a]
            for a in dict.fromkeys(n.actor for n in whole.notifications)
            if a in accounts
        )
        + b"]",
        media_type=JSON.media_type,
    )


@endpoint(
    "POST",
    "/api/v2/notifications/{group_key}/dismiss",
    auth="required",
    scope="write:notifications",
    doc=Doc(
        "Dismiss every notification of one group", "Notifications", ref("Empty"), params=[GROUP_KEY]
    ),
)
async def dismiss_group(ctx: Ctx) -> Response:
    """POST /api/v2/notifications/:group_key/dismiss: every notification of
    the group goes (one script). As Mastodon's, an empty or unknown group
    answers the same."""
    await ctx.rp.notifications.dismiss_group(ctx.uid, ctx.request.path_params["group_key"])
    return JSON({})


@endpoint(
    "GET",
    "/api/v2/notifications/unread_count",
    auth="required",
    scope="read:notifications",
    doc=Doc(
        "Notification groups with a notification newer than the notifications marker",
        "Notifications",
        obj({"count": INT}),
        params=[
            query_param(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": limits.NOTIFICATIONS_UNREAD_MAX},
            ),
            *NOTIFICATIONS_QUERY[4:],
            query_param("grouped_types[]", NOTIFICATION_TYPES),
            query_param("include_filtered", BOOL),
        ],
    ),
)
async def unread_groups(ctx: Ctx) -> Response:
    """GET /api/v2/notifications/unread_count: groups with a notification
    newer than the ``notifications`` marker (``limit``: 100 default, 1000 max)."""
    p = ctx.params
    extra = _grouped_query(ctx)
    p.bool("include_filtered")  # accepted; filtered ones are never counted as unread
    return JSON(
        {
            "count": await ctx.rp.notifications.unread_groups(
                ctx.uid,
                p.raw("limit"),
                types=_types(ctx, "types"),
                exclude_types=_types(ctx, "exclude_types"),
                account_id=p.cursor("account_id"),
                **extra,
            )
        }
    )


# --- notification filtering: the policy and notification requests ------------------------
_V1_POLICY = {
    "filter_not_following": "for_not_following",
    "filter_not_followers": "for_not_followers",
    "filter_new_accounts": "for_new_accounts",
    "filter_private_mentions": "for_private_mentions",
}
_POLICY_FIELD = {"type": "string", "enum": list(requests.ACTIONS)}


def _summary(counts: tuple[int, int]) -> dict:
    return {"pending_requests_count": counts[0], "pending_notifications_count": counts[1]}


async def _policy(ctx: Ctx, v1: bool) -> Response:
    policy, counts = await ctx.rp.notifications.policy(ctx.uid)
    if v1:  # Mastodon's v1 entity: true where the v2 field is not accept
        body = {name: policy[field] != "accept" for name, field in _V1_POLICY.items()}
    else:
        body = dict(policy)
    return JSON({**body, "summary": _summary(counts)})


POLICY_DOC = Doc(
    "Your notification filtering policy",
    "Notifications",
    ref("NotificationPolicy"),
)
POLICY_UPDATE_DOC = Doc(
    "Change your notification filtering policy",
    "Notifications",
    ref("NotificationPolicy"),
    body={
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {name: _POLICY_FIELD for name in notifications.POLICY_DEFAULTS},
                }
            }
        }
    },
)


@endpoint(
    "GET",
    "/api/v2/notifications/policy",
    auth="required",
    scope="read:notifications",
    doc=POLICY_DOC,
)
async def get_policy(ctx: Ctx) -> Response:
    """GET /api/v2/notifications/policy (Mastodon 4.3)."""
    return await _policy(ctx, v1=False)


async def _update_policy(ctx: Ctx) -> Response:
    changes = {name: ctx.params.str(name, max_chars=10) for name in notifications.POLICY_DEFAULTS}
    await ctx.rp.notifications.set_policy(ctx.uid, changes)
    return await _policy(ctx, v1=False)


@endpoint(
    "PATCH",
    "/api/v2/notifications/policy",
    auth="required",
    scope="write:notifications",
    doc=POLICY_UPDATE_DOC,
)
async def patch_policy(ctx: Ctx) -> Response:
    """PATCH /api/v2/notifications/policy: the fields given change."""
    return await _update_policy(ctx)


@endpoint(
    "PUT",
    "/api/v2/notifications/policy",
    auth="required",
    scope="write:notifications",
    doc=POLICY_UPDATE_DOC,
)
async def put_policy(ctx: Ctx) -> Response:
    """PUT /api/v2/notifications/policy: as PATCH (Mastodon routes both)."""
    return await _update_policy(ctx)


@endpoint(
    "GET",
    "/api/v1/notifications/policy",
    auth="required",
    scope="read:notifications",
    doc=Doc(
        "Your notification filtering policy (v1)", "Notifications", ref("NotificationPolicyV1")
    ),
)
async def get_policy_v1(ctx: Ctx) -> Response:
    return await _policy(ctx, v1=True)


async def _update_policy_v1(ctx: Ctx) -> Response:
    """v1's booleans: true = filter, false = accept, for the fields given."""
    changes = {}
    for name, field in _V1_POLICY.items():
        if ctx.params.has(name):
            changes[field] = "filter" if ctx.params.bool(name) else "accept"
    await ctx.rp.notifications.set_policy(ctx.uid, changes)
    return await _policy(ctx, v1=True)


POLICY_V1_UPDATE_DOC = Doc(
    "Change your notification filtering policy (v1)",
    "Notifications",
    ref("NotificationPolicyV1"),
    body={
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": {name: BOOL for name in _V1_POLICY}}
            }
        }
    },
)


@endpoint(
    "PUT",
    "/api/v1/notifications/policy",
    auth="required",
    scope="write:notifications",
    doc=POLICY_V1_UPDATE_DOC,
)
async def put_policy_v1(ctx: Ctx) -> Response:
    return await _update_policy_v1(ctx)


@endpoint(
    "PATCH",
    "/api/v1/notifications/policy",
    auth="required",
    scope="write:notifications",
    doc=POLICY_V1_UPDATE_DOC,
)
async def patch_policy_v1(ctx: Ctx) -> Response:
    return await _update_policy_v1(ctx)


def _requests_rendered(ctx: Ctx, found: list, shown: pages.Shown) -> list[bytes]:
    """The NotificationRequest entities of ``found`` (those shown now,
    redpoll.reading.pages.requests_shown): the account and the last status
    from the kept renderings, a last status the caller may not see now null."""
    accounts = _accounts(ctx, (r.actor for r in found), shown)
    statuses = {s.id: body for s, body in rendered_pairs(ctx, shown)}
    return [
        entities.notification_request_json(
            r.id,
            r.created_at,
            r.updated_at,
            r.count,
            accounts[r.actor],
            statuses.get(r.last_status) if r.last_status else None,
        )
        for r in found
        if r.actor in accounts
    ]


@endpoint(
    "GET",
    "/api/v1/notifications/requests",
    auth="required",
    scope="read:notifications",
    doc=Doc(
        "Your notification requests, newest first",
        "Notifications",
        array(ref("NotificationRequest")),
        paged=True,
        params=[
            *NOTIFICATIONS_QUERY[:3],
            query_param(
                "limit",
                {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": limits.NOTIFICATION_REQUESTS_PAGE_MAX,
                },
            ),
        ],
    ),
)
async def list_requests(ctx: Ctx) -> Response:
    """GET /api/v1/notifications/requests: one request per sender whose
    mentions were filtered, newest first, as shown now."""
    p = ctx.params
    p.cursors()
    read, found, shown = await ctx.rp.notifications.requests(
        ctx.uid,
        max_id=p.cursor("max_id"),
        since_id=p.cursor("since_id"),
        min_id=p.cursor("min_id"),
        limit=p.raw("limit"),
    )
    return Response(
        b"[" + b",".join(_requests_rendered(ctx, found, shown)) + b"]",
        media_type=JSON.media_type,
        headers=link_header(ctx, read),
    )


@endpoint(
    "GET",
    "/api/v1/notifications/requests/merged",
    auth="required",
    scope="read:notifications",
    doc=Doc("Whether accepted requests are merged", "Notifications", obj({"merged": BOOL})),
)
async def requests_merged(ctx: Ctx) -> Response:
    """Accepting is one step here (notification_request_accept.lua): always merged."""
    return JSON({"merged": True})


def _bulk_ids(ctx: Ctx) -> list[int]:
    """``id[]`` (Mastodon.py sends its lists as ``id[][]``: taken too)."""
    return [*ctx.params.ids("id"), *ctx.params.ids("id[]")][: limits.API_IDS_PER_REQUEST]


BULK_DOC_PARAMS = [
    query_param(
        "id[]",
        {"type": "array", "maxItems": limits.API_IDS_PER_REQUEST, "items": ID},
    )
]


@endpoint(
    "POST",
    "/api/v1/notifications/requests/accept",
    auth="required",
    scope="write:notifications",
    doc=Doc("Accept notification requests", "Notifications", ref("Empty"), params=BULK_DOC_PARAMS),
)
async def accept_requests(ctx: Ctx) -> Response:
    await ctx.rp.notifications.accept_requests(ctx.uid, _bulk_ids(ctx))
    return JSON({})


@endpoint(
    "POST",
    "/api/v1/notifications/requests/dismiss",
    auth="required",
    scope="write:notifications",
    doc=Doc("Dismiss notification requests", "Notifications", ref("Empty"), params=BULK_DOC_PARAMS),
)
async def dismiss_requests(ctx: Ctx) -> Response:
    await ctx.rp.notifications.dismiss_requests(ctx.uid, _bulk_ids(ctx))
    return JSON({})


@endpoint(
    "GET",
    "/api/v1/notifications/requests/{id}",
    auth="required",
    scope="read:notifications",
    doc=Doc(
        "One notification request",
        "Notifications",
        ref("NotificationRequest"),
        params=[path_param()],
    ),
)
async def get_request(ctx: Ctx) -> Response:
    try:
        found, shown = await ctx.rp.notifications.request(ctx.uid, ctx.path_id())
    except requests.RequestNotFound:
        raise ApiError(404, NOT_FOUND) from None
    rendered = _requests_rendered(ctx, found, shown)
    if not rendered:
        raise ApiError(404, NOT_FOUND)
    return Response(rendered[0], media_type=JSON.media_type)


async def _one_request(ctx: Ctx, act) -> Response:
    """Accept or dismiss one request; 404 for one not shown now (its sender
    since blocked, say), as for one that does not exist."""
    rid = ctx.path_id()
    try:
        found, shown = await ctx.rp.notifications.request(ctx.uid, rid)
        if not _requests_rendered(ctx, found, shown):
            raise ApiError(404, NOT_FOUND)
        await act(ctx.uid, rid)
    except requests.RequestNotFound:
        raise ApiError(404, NOT_FOUND) from None
    return JSON({})


@endpoint(
    "POST",
    "/api/v1/notifications/requests/{id}/accept",
    auth="required",
    scope="write:notifications",
    doc=Doc(
        "Accept one notification request", "Notifications", ref("Empty"), params=[path_param()]
    ),
)
async def accept_request(ctx: Ctx) -> Response:
    """Its sender's filtered notifications join the list, and later ones are
    accepted (one script: notification_request_accept.lua)."""
    return await _one_request(ctx, ctx.rp.notifications.accept_request)


@endpoint(
    "POST",
    "/api/v1/notifications/requests/{id}/dismiss",
    auth="required",
    scope="write:notifications",
    doc=Doc(
        "Dismiss one notification request", "Notifications", ref("Empty"), params=[path_param()]
    ),
)
async def dismiss_request(ctx: Ctx) -> Response:
    """Its sender's filtered notifications go (one script)."""
    return await _one_request(ctx, ctx.rp.notifications.dismiss_request)


# --- markers ---------------------------------------------------------------------------
def _marker(m: markers.Marker) -> dict:
    return {
        "last_read_id": str(m.last_read_id),
        "version": m.version,
        "updated_at": entities.iso(m.updated_at),
    }


@endpoint(
    "GET",
    "/api/v1/markers",
    auth="required",
    scope="read:statuses",
    doc=Doc(
        "Read markers of home and notifications",
        "Markers",
        ref("Markers"),
        params=[
            query_param(
                "timeline[]",
                {"type": "array", "maxItems": 4, "items": {"enum": ["home", "notifications"]}},
            )
        ],
    ),
)
async def get_markers(ctx: Ctx) -> Response:
    value = ctx.params.raw("timeline")
    names = value if isinstance(value, list) else ([] if value in (None, "") else [value])
    if len(names) > len(markers.TIMELINES) * 2:
        raise ValidationError("timeline", "too many timelines")
    found = await ctx.rp.timelines.get_markers(
        ctx.uid, [n for n in names if n in markers.TIMELINES]
    )
    return JSON({m.timeline: _marker(m) for m in found})


@endpoint(
    "POST",
    "/api/v1/markers",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Move read markers",
        "Markers",
        ref("Markers"),
        body={
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            name: obj({"last_read_id": ID}) for name in ("home", "notifications")
                        },
                        "minProperties": 1,
                    }
                }
            },
        },
    ),
)
async def set_markers(ctx: Ctx) -> Response:
    """Body ``{"home": {"last_read_id": "1"}}`` (JSON) or
    ``home[last_read_id]=1`` (form); unknown timelines are ignored."""
    positions = {}
    for name in markers.TIMELINES:
        nested = ctx.params.raw(name)
        last = (
            nested.get("last_read_id")
            if isinstance(nested, dict)
            else ctx.params.raw(f"{name}[last_read_id]")
        )
        if nested is not None and not isinstance(nested, dict):
            raise ValidationError(name, "must be an object with last_read_id")
        if last is not None:
            positions[name] = last
    return JSON(
        {m.timeline: _marker(m) for m in await ctx.rp.timelines.set_markers(ctx.uid, positions)}
    )
