"""The API's contract: the OpenAPI 3.1 pieces every handler's ``doc`` is
written with (entity schemas, parameters, errors), and the document built
from the routes the handlers declare (served at GET /openapi.json).

Written out (not inferred) so it states what clients may rely on: the
parameters of each operation, the entity shapes, and every status an
operation can answer. Each operation is described beside its handler
(``@endpoint(..., doc=Doc(...))``); the schemathesis test drives every
operation with generated good and bad input and checks the answers against
the document.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..core import limits
from ..core.version import __version__
from ..notifications import notifications

ID = {"type": "string", "pattern": "^[0-9]{1,16}$", "examples": ["1"]}
NULLABLE_STR = {"type": ["string", "null"]}
STR = {"type": "string"}
INT = {"type": "integer"}
BOOL = {"type": "boolean"}
ERROR_REF = {"$ref": "#/components/schemas/Error"}


def obj(required: dict, optional: dict | None = None) -> dict:
    return {
        "type": "object",
        "required": list(required),
        "properties": {**required, **(optional or {})},
    }


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def array(item: dict) -> dict:
    return {"type": "array", "items": item}


ACCOUNT = obj(
    {
        "id": ID,
        "username": STR,
        "acct": STR,
        "display_name": STR,
        "locked": BOOL,
        "bot": BOOL,
        "group": BOOL,
        "discoverable": {"type": ["boolean", "null"]},
        "created_at": {"type": "string", "format": "date-time"},
        "note": STR,
        "url": STR,
        "uri": STR,
        "avatar": STR,
        "avatar_static": STR,
        "header": STR,
        "header_static": STR,
        "followers_count": INT,
        "following_count": INT,
        "statuses_count": INT,
        "last_status_at": NULLABLE_STR,
        "emojis": array({}),
        "fields": array(obj({"name": STR, "value": STR, "verified_at": NULLABLE_STR})),
    },
    {"moved": {"oneOf": [{"type": "null"}, ref("Account")]}},
)
CREDENTIAL_ACCOUNT = {
    "allOf": [
        ref("Account"),
        obj(
            {
                "source": obj(
                    {
                        "privacy": STR,
                        "quote_policy": {"enum": ["public", "followers", "nobody"]},
                        "attribution_domains": array(STR),
                        "sensitive": BOOL,
                        "language": NULLABLE_STR,
                        "note": STR,
                        "fields": array(obj({"name": STR, "value": STR})),
                        "follow_requests_count": INT,
                    }
                )
            }
        ),
    ]
}
#: GET /api/v1/mutes: the Account with when its mute ends (null: until unmuted)
MUTED_ACCOUNT = {"allOf": [ref("Account"), obj({"mute_expires_at": NULLABLE_STR})]}
#: Mastodon's PreviewCard (redpoll.cards): a link's title, description and
#: image (kept here), type "link"
PREVIEW_CARD = obj(
    {
        "url": STR,
        "title": STR,
        "description": STR,
        "type": {"enum": ["link", "photo", "video", "rich"]},
        "author_name": STR,
        "author_url": STR,
        "provider_name": STR,
        "provider_url": STR,
        "html": STR,
        "width": INT,
        "height": INT,
        "image": NULLABLE_STR,
        "image_description": STR,
        "embed_url": STR,
        "blurhash": NULLABLE_STR,
        "language": NULLABLE_STR,
        "published_at": NULLABLE_STR,
        "authors": array({}),
    }
)

STATUS = obj(
    {
        "id": ID,
        "uri": STR,
        "url": NULLABLE_STR,
        "created_at": {"type": "string", "format": "date-time"},
        "account": ref("Account"),
        "content": STR,
        "visibility": {"enum": ["public", "unlisted", "private", "direct"]},
        "sensitive": BOOL,
        "spoiler_text": STR,
        "media_attachments": array(ref("MediaAttachment")),
        "mentions": array({}),
        "tags": array({}),
        "emojis": array({}),
        "reblogs_count": INT,
        "favourites_count": INT,
        "replies_count": INT,
        "in_reply_to_id": NULLABLE_STR,
        "in_reply_to_account_id": NULLABLE_STR,
        "reblog": {"type": ["object", "null"]},
        "poll": {"oneOf": [{"type": "null"}, ref("Poll")]},
        "card": {"oneOf": [{"type": "null"}, ref("PreviewCard")]},
        "language": NULLABLE_STR,
        "edited_at": NULLABLE_STR,
        "quotes_count": INT,
        "quote_approval": obj(
            {
                "automatic": array(STR),
                "manual": array(STR),
                "current_user": {"enum": ["automatic", "manual", "denied", "unknown"]},
            }
        ),
        # Quote ({state, quoted_status}) or, inside a quoted status,
        # ShallowQuote ({state, quoted_status_id}); null when it quotes nothing
        "quote": {"type": ["object", "null"]},
    },
    {
        "text": STR,
        "filtered": array(
            obj(
                {
                    "filter": {"type": "object"},
                    "keyword_matches": {"type": ["array", "null"]},
                    "status_matches": {"type": ["array", "null"]},
                }
            )
        ),
    },
)
RELATIONSHIP = obj(
    {
        k: BOOL
        for k in (
            "following",
            "showing_reblogs",
            "notifying",
            "followed_by",
            "blocking",
            "blocked_by",
            "muting",
            "muting_notifications",
            "requested",
            "requested_by",
            "domain_blocking",
            "endorsed",
        )
    }
    | {"id": ID, "note": STR}
)
LIST = obj(
    {
        "id": ID,
        "title": STR,
        "replies_policy": {"enum": ["followed", "list", "none"]},
        "exclusive": BOOL,
    }
)
APPLICATION = obj(
    {
        "id": ID,
        "name": STR,
        "website": NULLABLE_STR,
        "scopes": array(STR),
        "redirect_uris": array(STR),
        "redirect_uri": STR,
        "client_id": STR,
        "vapid_key": STR,
    },
    {"client_secret": STR, "client_secret_expires_at": INT},
)
TOKEN = obj(
    {"access_token": STR, "token_type": {"const": "Bearer"}, "scope": STR, "created_at": INT}
)
ERROR = obj({"error": STR}, {"error_description": STR, "details": {"type": "object"}})
STATUSES_CONFIG = obj(
    {"max_characters": INT, "max_media_attachments": INT, "characters_reserved_per_url": INT}
)
INSTANCE_V1 = obj(
    {
        "uri": STR,
        "title": STR,
        "version": STR,
        "description": STR,
        "short_description": STR,
        "email": STR,
        "urls": {"type": "object"},
        "stats": obj({"user_count": INT, "status_count": INT, "domain_count": INT}),
        "languages": array(STR),
        "registrations": BOOL,
        "approval_required": BOOL,
        "invites_enabled": BOOL,
        "configuration": obj({"statuses": STATUSES_CONFIG}),
        "rules": array({}),
    }
)
INSTANCE_V2 = obj(
    {
        "domain": STR,
        "title": STR,
        "version": STR,
        "source_url": STR,
        "description": STR,
        "usage": {"type": "object"},
        "thumbnail": {"type": "object"},
        "languages": array(STR),
        "configuration": obj(
            {
                "statuses": STATUSES_CONFIG,
                "urls": {"type": "object"},
                "vapid": obj({"public_key": STR}),
            }
        ),
        "registrations": {"type": "object"},
        "contact": {"type": "object"},
        "rules": array({}),
        "api_versions": obj({"mastodon": INT}),
        "wrapstodon": {"type": ["integer", "null"]},
    }
)
EMPTY = {"type": "object", "maxProperties": 0}
OAUTH_METADATA = obj(
    {
        "issuer": STR,
        "authorization_endpoint": STR,
        "token_endpoint": STR,
        "grant_types_supported": array(STR),
        "scopes_supported": array(STR),
    }
)

APPEAL = obj({"text": STR, "state": {"enum": ["pending", "approved", "rejected"]}})
ACCOUNT_WARNING = obj(
    {
        "id": ID,
        "action": {"enum": ["none", "disable", "sensitive", "silence", "suspend"]},
        "text": STR,
        "status_ids": {"type": ["array", "null"], "items": ID},
        "target_account": ref("Account"),
        "appeal": {"oneOf": [{"type": "null"}, APPEAL]},
        "created_at": {"type": "string", "format": "date-time"},
    }
)
NOTIFICATION = obj(
    {
        "id": ID,
        "type": STR,
        "group_key": STR,
        "created_at": {"type": "string", "format": "date-time"},
        "account": ref("Account"),
    },
    {
        "status": ref("Status"),
        "filtered": BOOL,
        "moderation_warning": ref("AccountWarning"),
        "collection": ref("Collection"),  # added_to_collection (Mastodon 4.6)
    },
)
NOTIFICATION_GROUP = obj(
    {
        "group_key": STR,
        "notifications_count": INT,
        "type": STR,
        "most_recent_notification_id": ID,
        "sample_account_ids": array(ID),
    },
    {
        "status_id": ID,
        "moderation_warning": ref("AccountWarning"),
        "collection": ref("Collection"),
        "page_min_id": ID,
        "page_max_id": ID,  # the last three on pages only
        "latest_page_notification_at": {"type": "string", "format": "date-time"},
    },
)
NOTIFICATION_REQUEST = obj(
    {
        "id": ID,
        "created_at": {"type": "string", "format": "date-time"},
        "updated_at": {"type": "string", "format": "date-time"},
        "notifications_count": {"type": "string", "pattern": "^[0-9]{1,4}$"},
        "account": ref("Account"),
        "last_status": {"anyOf": [ref("Status"), {"type": "null"}]},
    }
)
POLICY_ACTION = {"enum": ["accept", "filter", "drop"]}
POLICY_SUMMARY = obj({"pending_requests_count": INT, "pending_notifications_count": INT})
NOTIFICATION_POLICY = obj(
    {
        "for_not_following": POLICY_ACTION,
        "for_not_followers": POLICY_ACTION,
        "for_new_accounts": POLICY_ACTION,
        "for_private_mentions": POLICY_ACTION,
        "for_limited_accounts": POLICY_ACTION,
        "summary": POLICY_SUMMARY,
    }
)
NOTIFICATION_POLICY_V1 = obj(
    {
        "filter_not_following": BOOL,
        "filter_not_followers": BOOL,
        "filter_new_accounts": BOOL,
        "filter_private_mentions": BOOL,
        "summary": POLICY_SUMMARY,
    }
)
GROUPED_NOTIFICATIONS = obj(
    {
        "accounts": array(ref("Account")),
        "statuses": array(ref("Status")),
        "notification_groups": array(ref("NotificationGroup")),
    },
    {  # expand_accounts=partial_avatars (PartialAccountWithAvatar)
        "partial_accounts": array(
            obj(
                {
                    "id": ID,
                    "acct": STR,
                    "url": STR,
                    "avatar": STR,
                    "avatar_static": STR,
                    "locked": BOOL,
                    "bot": BOOL,
                }
            )
        )
    },
)
MARKER = obj(
    {"last_read_id": ID, "version": INT, "updated_at": {"type": "string", "format": "date-time"}}
)
MARKERS = {"type": "object", "properties": {"home": ref("Marker"), "notifications": ref("Marker")}}
TAG_DAY = obj({"day": STR, "uses": STR, "accounts": STR})  # numbers as strings, as Mastodon
TAG = obj(
    {"name": STR, "url": STR, "history": {**array(TAG_DAY), "maxItems": limits.TAG_HISTORY_DAYS}},
    {"following": BOOL, "featuring": BOOL},
)
FEATURED_TAG = obj(
    {
        "id": ID,
        "name": STR,
        "url": STR,
        "statuses_count": STR,  # a number as a string, as Mastodon
        "last_status_at": {"type": ["string", "null"], "format": "date"},
    }
)
COLLECTION_ITEM = obj(
    {
        "id": ID,
        "account_id": {"type": ["string", "null"]},
        "state": {"enum": ["pending", "accepted", "rejected", "revoked"]},
        "created_at": STR,
    }
)
COLLECTION = obj(
    {
        "id": ID,
        "uri": STR,
        "url": NULLABLE_STR,
        "name": STR,
        "description": STR,
        "language": NULLABLE_STR,
        "account_id": ID,
        "local": BOOL,
        "sensitive": BOOL,
        "discoverable": BOOL,
        "item_count": INT,
        "created_at": STR,
        "updated_at": STR,
        "tag": {"anyOf": [obj({"name": STR, "url": STR}), {"type": "null"}]},
        "items": array(ref("CollectionItem")),
    }
)
CONTEXT = obj({"ancestors": array(ref("Status")), "descendants": array(ref("Status"))})
MEDIA_SIZE = obj({"width": INT, "height": INT, "size": STR, "aspect": {"type": "number"}})
MEDIA_ATTACHMENT = obj(
    {
        "id": ID,
        # (uploads here are images; another server's may be videos and
        # sounds, and a rejected domain's are shown as unknown)
        "type": {"enum": ["image", "video", "audio", "unknown"]},
        "url": NULLABLE_STR,
        "preview_url": NULLABLE_STR,
        "remote_url": NULLABLE_STR,
        "preview_remote_url": NULLABLE_STR,
        "text_url": {"type": "null"},
        "description": NULLABLE_STR,
        "blurhash": NULLABLE_STR,
        "meta": {
            "type": ["object", "null"],
            "properties": {
                "original": MEDIA_SIZE,
                "small": MEDIA_SIZE,
                "focus": obj({"x": {"type": "number"}, "y": {"type": "number"}}),
            },
        },
    }
)
STATUS_EDIT = obj(
    {
        "content": STR,
        "spoiler_text": STR,
        "sensitive": BOOL,
        "created_at": {"type": "string", "format": "date-time"},
        "account": ref("Account"),
        "poll": {"type": ["object", "null"]},
        "media_attachments": array(ref("MediaAttachment")),
        "emojis": array({}),
    }
)
STATUS_SOURCE = obj({"id": ID, "text": STR, "spoiler_text": STR})
SCHEDULED_STATUS = obj(
    {
        "id": ID,
        "scheduled_at": {"type": "string", "format": "date-time"},
        "params": obj(
            {
                "text": STR,
                "visibility": {"enum": ["public", "unlisted", "private", "direct"]},
                "spoiler_text": NULLABLE_STR,
                "sensitive": BOOL,
                "in_reply_to_id": NULLABLE_STR,
                "media_ids": {"type": ["array", "null"], "items": ID},
                "language": NULLABLE_STR,
                "poll": {"type": ["object", "null"]},
                "idempotency": NULLABLE_STR,
                "application_id": {"type": ["string", "null"]},
                "with_rate_limit": BOOL,
            }
        ),
        "media_attachments": array(ref("MediaAttachment")),
    }
)
POLL = obj(
    {
        "id": ID,
        "expires_at": NULLABLE_STR,
        "expired": BOOL,
        "multiple": BOOL,
        "votes_count": INT,
        "voters_count": {"type": ["integer", "null"]},
        "options": array(obj({"title": STR, "votes_count": {"type": ["integer", "null"]}})),
        "emojis": array({}),
    },
    {"voted": BOOL, "own_votes": array(INT)},
)
POLL_REF = ref("Poll")
#: A status's ``poll`` parameter (POST and PUT /api/v1/statuses), JSON or
#: form-encoded (``poll[options][]``, ``poll[expires_in]``, ...)
POLL_PARAM = {
    "type": "object",
    "required": ["options", "expires_in"],
    "properties": {
        "options": {
            "type": "array",
            "minItems": limits.POLL_OPTIONS_MIN,
            "maxItems": limits.POLL_OPTIONS_MAX,
            "items": {"type": "string", "maxLength": limits.POLL_OPTION_MAX_CHARS},
        },
        "expires_in": {
            "type": "integer",
            "minimum": limits.POLL_EXPIRES_MIN_S,
            "maximum": limits.POLL_EXPIRES_MAX_S,
        },
        "multiple": BOOL,
        "hide_totals": BOOL,
    },
    "description": "A poll with the status (not with media_ids)",
}
TRENDS_LINK = obj(
    {
        "url": STR,
        "title": STR,
        "description": STR,
        "type": {"enum": ["link"]},
        "history": {**array(TAG_DAY), "maxItems": limits.TAG_HISTORY_DAYS},
    },
    {
        "author_name": STR,
        "author_url": STR,
        "provider_name": STR,
        "provider_url": STR,
        "html": STR,
        "width": INT,
        "height": INT,
        "image": NULLABLE_STR,
        "embed_url": STR,
        "blurhash": NULLABLE_STR,
    },
)
SUGGESTION = obj(
    {
        "source": {"enum": ["past_interactions", "global"]},
        "sources": array({"enum": ["friends_of_friends", "most_followed"]}),
        "account": ref("Account"),
    }
)
SCHEMAS = {
    "TrendsLink": TRENDS_LINK,
    "Suggestion": SUGGESTION,
    "ScheduledStatus": SCHEDULED_STATUS,
    "MediaAttachment": MEDIA_ATTACHMENT,
    "StatusEdit": STATUS_EDIT,
    "StatusSource": STATUS_SOURCE,
    "Poll": POLL,
    "Tag": TAG,
    "FeaturedTag": FEATURED_TAG,
    "Collection": COLLECTION,
    "CollectionItem": COLLECTION_ITEM,
    "Context": CONTEXT,
    "Notification": NOTIFICATION,
    "AccountWarning": ACCOUNT_WARNING,
    "NotificationGroup": NOTIFICATION_GROUP,
    "GroupedNotifications": GROUPED_NOTIFICATIONS,
    "NotificationRequest": NOTIFICATION_REQUEST,
    "NotificationPolicy": NOTIFICATION_POLICY,
    "NotificationPolicyV1": NOTIFICATION_POLICY_V1,
    "Marker": MARKER,
    "Markers": MARKERS,
    "Account": ACCOUNT,
    "CredentialAccount": CREDENTIAL_ACCOUNT,
    "MutedAccount": MUTED_ACCOUNT,
    "Status": STATUS,
    "PreviewCard": PREVIEW_CARD,
    "Relationship": RELATIONSHIP,
    "List": LIST,
    "Application": APPLICATION,
    "Token": TOKEN,
    "Error": ERROR,
    "InstanceV1": INSTANCE_V1,
    "InstanceV2": INSTANCE_V2,
    "Empty": EMPTY,
    "OAuthMetadata": OAUTH_METADATA,
    "WebPushSubscription": obj(
        {
            "id": {"type": "string"},
            "endpoint": STR,
            "standard": BOOL,
            "alerts": {"type": "object", "additionalProperties": BOOL},
            "policy": {"enum": ["all", "followed", "follower", "none"]},
            "server_key": STR,
        }
    ),
}

# Every operation may answer these (bad token, scope, unknown record, bad or
# too big body, rate limit); listed on each so clients and the fuzzer know.
ERRORS = {
    "400": "Malformed request body",
    "401": "Missing, invalid or revoked token",
    "403": "Token lacks the scope, or the action is not allowed",
    "404": "Record not found",
    "413": f"Body larger than {limits.API_MAX_BODY_BYTES} bytes",
    "415": "Unsupported body content type",
    "422": "Validation failed (wrong type, missing or over-long field)",
    "429": "Rate limit exceeded (X-RateLimit-* headers)",
    "503": "Database unavailable; retry",
}
RATE_HEADERS = {
    name: {"schema": STR, "description": desc}
    for name, desc in (
        ("X-RateLimit-Limit", "Requests allowed in the window"),
        ("X-RateLimit-Remaining", "Requests left in the window"),
        ("X-RateLimit-Reset", "ISO 8601 time the window ends"),
    )
}
LINK_HEADER = {
    "Link": {
        "schema": STR,
        "description": 'Pagination: <...max_id=>; rel="next", <...min_id=>; rel="prev"',
    }
}


def query_param(name: str, schema: dict, description: str = "", required: bool = False) -> dict:
    param = {"name": name, "in": "query", "schema": schema, "required": required}
    if description:
        param["description"] = description
    if schema.get("type") == "array":
        param |= {"style": "form", "explode": True}
    return param


def path_param(name: str = "id") -> dict:
    return {"name": name, "in": "path", "required": True, "schema": ID}


PAGE = [
    query_param("max_id", ID, "Older than this id"),
    query_param("since_id", ID, "Newer than this id"),
    query_param("min_id", ID, "Immediately newer than this id"),
    query_param(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": limits.PAGE_MAX},
        f"Page size (default {limits.PAGE_DEFAULT}, at most {limits.PAGE_MAX})",
    ),
]


LOGIN_PARAM = {
    "name": "login",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9_]{1,30}$"},
}
PROFILE_FIELD = {"type": "string", "maxLength": limits.PROFILE_FIELD_MAX_CHARS}
SEARCH = obj(
    {
        "accounts": array(ref("Account")),
        "statuses": array(ref("Status")),
        "hashtags": array(obj({"name": STR, "url": STR})),
    }
)
SEARCH_PARAMS = [
    query_param("q", {"type": "string", "maxLength": limits.SEARCH_QUERY_MAX_CHARS}, required=True),
    query_param("limit", {"type": "integer", "minimum": 1, "maximum": limits.PAGE_MAX}),
    query_param("offset", {"type": "integer", "minimum": 0, "maximum": limits.SEARCH_WINDOW}),
    query_param("resolve", BOOL, "Needs a user token; local names only"),
    query_param("following", BOOL, "Only accounts you follow"),
]
PREFERENCES = obj(
    {
        "posting:default:visibility": {"enum": ["public", "unlisted", "private", "direct"]},
        "posting:default:sensitive": BOOL,
        "posting:default:language": NULLABLE_STR,
        "posting:default:quote_policy": {"enum": ["public", "followers", "nobody"]},
        "reading:expand:media": {"enum": ["default", "show_all", "hide_all"]},
        "reading:expand:spoilers": BOOL,
    }
)


FORM = "application/x-www-form-urlencoded"


def request_body(properties: dict, required: tuple = (), *, html_form: bool = False) -> dict:
    """A body of ``properties``: a form or JSON, as the API takes both; only
    a form where ``html_form`` (a page's own form posts back)."""
    schema = {"type": "object", "properties": properties, "required": list(required)}
    content = {FORM: {"schema": schema}}
    if not html_form:
        content["application/json"] = {"schema": schema}
    return {"required": bool(required) or html_form, "content": content}


@dataclass(frozen=True)
class Doc:
    """How one operation is described: its summary, its tag, the schema of a
    success (None: a string), its parameters and body, and the shape of the
    answer. Its auth and scope are the handler's own (redpoll.api.routing)."""

    summary: str
    tag: str
    ok: dict | None
    params: list | None = None
    body: dict | None = None
    paged: bool = False
    ok_type: str = "application/json"
    ok_status: str = "200"
    #: more success statuses answered with the same content (202 then 200, 206)
    also: tuple[str, ...] = ()
    extra_headers: dict | None = field(default=None, hash=False)


def operation(doc: Doc, auth: str, scope: str | tuple | None) -> dict:
    headers = dict(RATE_HEADERS) | (LINK_HEADER if doc.paged else {}) | (doc.extra_headers or {})
    content = {doc.ok_type: {"schema": doc.ok if doc.ok is not None else STR}}
    responses = {
        code: {"description": "Success", "headers": headers, "content": content}
        for code in (doc.ok_status, *doc.also)
    }
    err_type = "text/html" if doc.ok_type == "text/html" else "application/json"
    for code, text in ERRORS.items():
        schema = STR if err_type == "text/html" else ERROR_REF
        responses[code] = {"description": text, "content": {err_type: {"schema": schema}}}
    out = {
        "summary": doc.summary,
        "tags": [doc.tag],
        "parameters": doc.params or [],
        "responses": responses,
    }
    if doc.body is not None:
        out["requestBody"] = doc.body
    scopes = list(scope) if isinstance(scope, tuple) else [scope] if scope else []
    if auth == "required":
        out["security"] = [{"bearer": [s]} for s in scopes] or [{"bearer": []}]
    elif auth == "optional":
        out["security"] = [*([{"bearer": [s]} for s in scopes] or [{"bearer": []}]), {}]
    else:
        out["security"] = []
    if scopes:
        out["x-required-scope"] = " or ".join(scopes)
    return out


# --- pieces the handlers' docs share ---------------------------------------------------------
STATUS_REF, ACCOUNT_REF, LIST_REF = ref("Status"), ref("Account"), ref("List")
STATUSES_REF, ACCOUNTS_REF = array(STATUS_REF), array(ACCOUNT_REF)
SCHEDULED_REF = ref("ScheduledStatus")
INSTANCE_TAG = "Instance"
ACCOUNTS_PAGE = [
    path_param(),
    query_param("max_id", ID),
    query_param("since_id", ID),
    query_param("min_id", ID),
    query_param("limit", {"type": "integer", "minimum": 1, "maximum": limits.ACCOUNTS_PAGE_MAX}),
]
#: ``types[]``/``exclude_types[]``/``grouped_types[]``: every kind the one list
#: (redpoll.notifications.notifications.TYPES) names, each at most once.
NOTIFICATION_TYPES = {
    "type": "array",
    "maxItems": len(notifications.TYPES),
    "items": {"enum": list(notifications.TYPES)},
}
NOTIFICATIONS_QUERY = [
    *PAGE[:3],
    query_param(
        "limit", {"type": "integer", "minimum": 1, "maximum": limits.NOTIFICATIONS_PAGE_MAX}
    ),
    query_param("types[]", NOTIFICATION_TYPES),
    query_param("exclude_types[]", NOTIFICATION_TYPES),
    query_param("account_id", ID),
]
GROUP_KEY = {
    "name": "group_key",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "maxLength": 60},
}
TAG_PATH = {
    "name": "name",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "maxLength": limits.TAG_MAX_CHARS},
}


def build(routes: Iterable) -> dict:
    """The OpenAPI document of the routes (Starlette's) whose handlers
    declared them (redpoll.api.routing.Declared); others are left out."""
    paths: dict[str, dict] = {}
    for route in (d for r in routes for d in getattr(r.endpoint, "routes", ()) if d.path == r.path):
        paths.setdefault(route.path, {})[route.method.lower()] = operation(
            route.doc, route.auth, route.scope
        )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Redpoll: the Mastodon client API",
            "version": __version__,
            "description": "A Twitter-style social network on Redis. Paths, parameters "
            "and entities follow docs.joinmastodon.org; ids are strings. "
            'Errors are {"error": "..."}.',
        },
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An OAuth access token",
                }
            },
        },
    }
