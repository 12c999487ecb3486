"""The OpenAPI 3.1 document of the API, served at GET /openapi.json.

Written out here (not inferred) so it states what clients may rely on: the
parameters of each operation, the entity shapes, and every status an
operation can answer. The schemathesis test drives every operation listed
here with generated good and bad input and checks the answers against it;
``test_api_fuzz`` also checks that every route of the app is listed.
"""
from __future__ import annotations

from functools import lru_cache

from starlette.requests import Request
from starlette.responses import Response

from .. import __version__, limits
from .http import JSON

ID = {"type": "string", "pattern": "^[0-9]{1,16}$", "examples": ["1"]}
NULLABLE_STR = {"type": ["string", "null"]}
STR = {"type": "string"}
INT = {"type": "integer"}
BOOL = {"type": "boolean"}
ERROR_REF = {"$ref": "#/components/schemas/Error"}


def _obj(required: dict, optional: dict | None = None) -> dict:
    return {"type": "object", "required": list(required),
            "properties": {**required, **(optional or {})}}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _array(item: dict) -> dict:
    return {"type": "array", "items": item}


ACCOUNT = _obj({
    "id": ID, "username": STR, "acct": STR, "display_name": STR, "locked": BOOL, "bot": BOOL,
    "group": BOOL, "discoverable": {"type": ["boolean", "null"]},
    "created_at": {"type": "string", "format": "date-time"}, "note": STR, "url": STR, "uri": STR,
    "avatar": STR, "avatar_static": STR, "header": STR, "header_static": STR,
    "followers_count": INT, "following_count": INT, "statuses_count": INT,
    "last_status_at": NULLABLE_STR, "emojis": _array({}),
    "fields": _array(_obj({"name": STR, "value": STR, "verified_at": NULLABLE_STR}))})
CREDENTIAL_ACCOUNT = {"allOf": [_ref("Account"), _obj({"source": _obj({
    "privacy": STR, "sensitive": BOOL, "language": NULLABLE_STR, "note": STR,
    "fields": _array(_obj({"name": STR, "value": STR})), "follow_requests_count": INT})})]}
STATUS = _obj({
    "id": ID, "uri": STR, "url": NULLABLE_STR,
    "created_at": {"type": "string", "format": "date-time"},
    "account": _ref("Account"), "content": STR,
    "visibility": {"enum": ["public", "unlisted", "private", "direct"]},
    "sensitive": BOOL, "spoiler_text": STR, "media_attachments": _array(_ref("MediaAttachment")),
    "mentions": _array({}), "tags": _array({}), "emojis": _array({}),
    "reblogs_count": INT, "favourites_count": INT, "replies_count": INT,
    "in_reply_to_id": NULLABLE_STR, "in_reply_to_account_id": NULLABLE_STR,
    "reblog": {"type": ["object", "null"]}, "poll": {"type": ["object", "null"]},
    "card": {"type": ["object", "null"]}, "language": NULLABLE_STR,
    "edited_at": NULLABLE_STR}, {"text": STR})
RELATIONSHIP = _obj({k: BOOL for k in (
    "following", "showing_reblogs", "notifying", "followed_by", "blocking", "blocked_by",
    "muting", "muting_notifications", "requested", "requested_by", "domain_blocking",
    "endorsed")} | {"id": ID, "note": STR})
LIST = _obj({"id": ID, "title": STR, "replies_policy": {"enum": ["followed", "list", "none"]},
             "exclusive": BOOL})
APPLICATION = _obj({"id": ID, "name": STR, "website": NULLABLE_STR, "scopes": _array(STR),
                    "redirect_uris": _array(STR), "redirect_uri": STR, "client_id": STR},
                   {"client_secret": STR, "client_secret_expires_at": INT})
TOKEN = _obj({"access_token": STR, "token_type": {"const": "Bearer"}, "scope": STR,
              "created_at": INT})
ERROR = _obj({"error": STR}, {"error_description": STR, "details": {"type": "object"}})
STATUSES_CONFIG = _obj({"max_characters": INT, "max_media_attachments": INT,
                        "characters_reserved_per_url": INT})
INSTANCE_V1 = _obj({"uri": STR, "title": STR, "version": STR, "description": STR,
                    "short_description": STR, "email": STR, "urls": {"type": "object"},
                    "stats": _obj({"user_count": INT, "status_count": INT, "domain_count": INT}),
                    "languages": _array(STR), "registrations": BOOL,
                    "approval_required": BOOL, "invites_enabled": BOOL,
                    "configuration": _obj({"statuses": STATUSES_CONFIG}), "rules": _array({})})
INSTANCE_V2 = _obj({"domain": STR, "title": STR, "version": STR, "source_url": STR,
                    "description": STR, "usage": {"type": "object"},
                    "thumbnail": {"type": "object"}, "languages": _array(STR),
                    "configuration": _obj({"statuses": STATUSES_CONFIG,
                                           "urls": {"type": "object"}}),
                    "registrations": {"type": "object"}, "contact": {"type": "object"},
                    "rules": _array({}), "api_versions": _obj({"mastodon": INT})})
EMPTY = {"type": "object", "maxProperties": 0}
OAUTH_METADATA = _obj({"issuer": STR, "authorization_endpoint": STR, "token_endpoint": STR,
                       "grant_types_supported": _array(STR), "scopes_supported": _array(STR)})

NOTIFICATION = _obj({"id": ID, "type": STR, "group_key": STR,
                     "created_at": {"type": "string", "format": "date-time"},
                     "account": _ref("Account")}, {"status": _ref("Status")})
NOTIFICATION_GROUP = _obj({
    "group_key": STR, "notifications_count": INT, "type": STR,
    "most_recent_notification_id": ID, "sample_account_ids": _array(ID)}, {
    "status_id": ID, "page_min_id": ID, "page_max_id": ID,  # the last three on pages only
    "latest_page_notification_at": {"type": "string", "format": "date-time"}})
GROUPED_NOTIFICATIONS = _obj({"accounts": _array(_ref("Account")),
                              "statuses": _array(_ref("Status")),
                              "notification_groups": _array(_ref("NotificationGroup"))})
MARKER = _obj({"last_read_id": ID, "version": INT,
               "updated_at": {"type": "string", "format": "date-time"}})
MARKERS = {"type": "object", "properties": {"home": _ref("Marker"),
                                            "notifications": _ref("Marker")}}
TAG_DAY = _obj({"day": STR, "uses": STR, "accounts": STR})  # numbers as strings, as Mastodon
TAG = _obj({"name": STR, "url": STR, "history": {**_array(TAG_DAY), "maxItems": limits.TAG_HISTORY_DAYS}},
           {"following": BOOL})
CONTEXT = _obj({"ancestors": _array(_ref("Status")), "descendants": _array(_ref("Status"))})
MEDIA_SIZE = _obj({"width": INT, "height": INT, "size": STR, "aspect": {"type": "number"}})
MEDIA_ATTACHMENT = _obj({
    "id": ID, "type": {"enum": ["image"]}, "url": NULLABLE_STR, "preview_url": NULLABLE_STR,
    "remote_url": {"type": "null"}, "preview_remote_url": {"type": "null"},
    "text_url": {"type": "null"}, "description": NULLABLE_STR, "blurhash": NULLABLE_STR,
    "meta": {"type": ["object", "null"], "properties": {
        "original": MEDIA_SIZE, "small": MEDIA_SIZE,
        "focus": _obj({"x": {"type": "number"}, "y": {"type": "number"}})}}})
SCHEMAS = {"MediaAttachment": MEDIA_ATTACHMENT, "Tag": TAG, "Context": CONTEXT, "Notification": NOTIFICATION, "NotificationGroup": NOTIFICATION_GROUP,
           "GroupedNotifications": GROUPED_NOTIFICATIONS, "Marker": MARKER, "Markers": MARKERS,
           "Account": ACCOUNT, "CredentialAccount": CREDENTIAL_ACCOUNT, "Status": STATUS,
           "Relationship": RELATIONSHIP, "List": LIST, "Application": APPLICATION,
           "Token": TOKEN, "Error": ERROR, "InstanceV1": INSTANCE_V1, "InstanceV2": INSTANCE_V2,
           "Empty": EMPTY, "OAuthMetadata": OAUTH_METADATA}

# Every operation may answer these (bad token, scope, unknown record, bad or
# too big body, rate limit); listed on each so clients and the fuzzer know.
ERRORS = {"400": "Malformed request body", "401": "Missing, invalid or revoked token",
          "403": "Token lacks the scope, or the action is not allowed", "404": "Record not found",
          "413": f"Body larger than {limits.API_MAX_BODY_BYTES} bytes",
          "415": "Unsupported body content type",
          "422": "Validation failed (wrong type, missing or over-long field)",
          "429": "Rate limit exceeded (X-RateLimit-* headers)",
          "503": "Database unavailable; retry"}
RATE_HEADERS = {name: {"schema": STR, "description": desc} for name, desc in (
    ("X-RateLimit-Limit", "Requests allowed in the window"),
    ("X-RateLimit-Remaining", "Requests left in the window"),
    ("X-RateLimit-Reset", "ISO 8601 time the window ends"))}
LINK_HEADER = {"Link": {"schema": STR,
                        "description": 'Pagination: <...max_id=>; rel="next", <...min_id=>; rel="prev"'}}


def _query(name: str, schema: dict, description: str = "", required: bool = False) -> dict:
    param = {"name": name, "in": "query", "schema": schema, "required": required}
    if description:
        param["description"] = description
    if schema.get("type") == "array":
        param |= {"style": "form", "explode": True}
    return param


def _path(name: str = "id") -> dict:
    return {"name": name, "in": "path", "required": True, "schema": ID}


PAGE = [_query("max_id", ID, "Older than this id"), _query("since_id", ID, "Newer than this id"),
        _query("min_id", ID, "Immediately newer than this id"),
        _query("limit", {"type": "integer", "minimum": 1, "maximum": limits.PAGE_MAX},
               f"Page size (default {limits.PAGE_DEFAULT}, at most {limits.PAGE_MAX})")]


LOGIN_PARAM = {"name": "login", "in": "path", "required": True,
               "schema": {"type": "string", "pattern": "^[A-Za-z0-9_]{1,30}$"}}
PROFILE_FIELD = {"type": "string", "maxLength": limits.PROFILE_FIELD_MAX_CHARS}
SEARCH = _obj({"accounts": _array(_ref("Account")), "statuses": _array(_ref("Status")),
               "hashtags": _array(_obj({"name": STR, "url": STR}))})
SEARCH_PARAMS = [
    _query("q", {"type": "string", "maxLength": limits.SEARCH_QUERY_MAX_CHARS}, required=True),
    _query("limit", {"type": "integer", "minimum": 1, "maximum": limits.PAGE_MAX}),
    _query("offset", {"type": "integer", "minimum": 0, "maximum": limits.SEARCH_WINDOW}),
    _query("resolve", BOOL, "Needs a user token; local names only"),
    _query("following", BOOL, "Only accounts you follow")]
PREFERENCES = _obj({"posting:default:visibility": {"enum": ["public", "unlisted", "private",
                                                            "direct"]},
                    "posting:default:sensitive": BOOL, "posting:default:language": NULLABLE_STR,
                    "reading:expand:media": {"enum": ["default", "show_all", "hide_all"]},
                    "reading:expand:spoilers": BOOL})


def _body(properties: dict, required: tuple = ()) -> dict:
    schema = {"type": "object", "properties": properties, "required": list(required)}
    return {"required": bool(required), "content": {
        "application/x-www-form-urlencoded": {"schema": schema},
        "application/json": {"schema": schema}}}


def op(summary: str, tag: str, ok: dict | None, *, scope: str | None = None,
       auth: str = "optional", params: list | None = None, body: dict | None = None,
       paged: bool = False, ok_type: str = "application/json", ok_status: str = "200",
       extra_headers: dict | None = None) -> dict:
    headers = dict(RATE_HEADERS) | (LINK_HEADER if paged else {}) | (extra_headers or {})
    content = {ok_type: {"schema": ok if ok is not None else STR}}
    responses = {ok_status: {"description": "Success", "headers": headers, "content": content}}
    err_type = "text/html" if ok_type == "text/html" else "application/json"
    for code, text in ERRORS.items():
        schema = STR if err_type == "text/html" else ERROR_REF
        responses[code] = {"description": text, "content": {err_type: {"schema": schema}}}
    out = {"summary": summary, "tags": [tag], "parameters": params or [], "responses": responses}
    if body is not None:
        out["requestBody"] = body
    if auth == "required":
        out["security"] = [{"bearer": [scope] if scope else []}]
    elif auth == "optional":
        out["security"] = [{"bearer": [scope] if scope else []}, {}]
    else:
        out["security"] = []
    if scope:
        out["x-required-scope"] = scope
    return out


def _paths() -> dict:
    status, account, lst = _ref("Status"), _ref("Account"), _ref("List")
    statuses, accounts = _array(status), _array(account)
    instance = "Instance"
    return {
        "/api/v1/instance": {"get": op("Instance information (v1)", instance, _ref("InstanceV1"),
                                       auth="none")},
        "/api/v2/instance": {"get": op("Instance information (v2)", instance, _ref("InstanceV2"),
                                       auth="none")},
        "/.well-known/oauth-authorization-server": {"get": op(
            "OAuth server metadata (RFC 8414)", "OAuth", _ref("OAuthMetadata"), auth="none")},
        "/api/v1/apps": {"post": op("Register an application", "OAuth", _ref("Application"),
                                    auth="none", body=_body({
                                        "client_name": STR, "redirect_uris": STR,
                                        "scopes": STR, "website": STR},
                                        ("client_name", "redirect_uris")))},
        "/api/v1/apps/verify_credentials": {"get": op("The token's application", "OAuth",
                                                      _ref("Application"), auth="required")},
        "/oauth/token": {"post": op(
            "Obtain a token (password, client_credentials, authorization_code)", "OAuth",
            _ref("Token"), auth="none", body=_body({
                "grant_type": {"enum": ["password", "client_credentials", "authorization_code"]},
                "client_id": STR, "client_secret": STR, "scope": STR, "username": STR,
                "password": STR, "code": STR, "redirect_uri": STR, "code_verifier": STR},
                ("grant_type", "client_id", "client_secret")))},
        "/oauth/revoke": {"post": op("Revoke a token", "OAuth", _ref("Empty"), auth="none",
                                     body=_body({"client_id": STR, "client_secret": STR,
                                                 "token": STR},
                                                ("client_id", "client_secret", "token")))},
        "/oauth/authorize": {
            "get": op("The authorization page (HTML log-in and approve form)", "OAuth", STR,
                      auth="none", ok_type="text/html", params=[
                          _query("response_type", {"const": "code"}, required=True),
                          _query("client_id", STR, required=True),
                          _query("redirect_uri", STR), _query("scope", STR),
                          _query("state", STR), _query("code_challenge", STR),
                          _query("code_challenge_method", {"const": "S256"})]),
            "post": op("Submit the authorization form: redirect with a code, or show it (oob)",
                       "OAuth", STR, auth="none", ok_type="text/html",
                       body={"required": True, "content": {"application/x-www-form-urlencoded": {
                           "schema": {"type": "object", "properties": {
                               "response_type": STR, "client_id": STR, "redirect_uri": STR,
                               "scope": STR, "state": STR, "username": STR, "password": STR,
                               "code_challenge": STR, "code_challenge_method": STR},
                               "required": ["client_id", "username", "password"]}}}}),
        },
        "/api/v1/accounts": {"post": op(
            "Register an account (app token with write:accounts); returns a user token",
            "Accounts", _ref("Token"), auth="required", scope="write:accounts",
            body=_body({"username": STR, "email": STR, "password": STR,
                        "agreement": {"type": ["boolean", "string"]}, "locale": STR,
                        "reason": STR}, ("username", "email", "password", "agreement")))},
        "/api/v1/accounts/verify_credentials": {"get": op(
            "The token's account", "Accounts", _ref("CredentialAccount"), auth="required",
            scope="read:accounts")},
        "/api/v1/accounts/lookup": {"get": op(
            "Find an account by username", "Accounts", account, scope="read:accounts",
            params=[_query("acct", STR, required=True)])},
        "/api/v1/accounts/relationships": {"get": op(
            "Relationships with the given accounts", "Accounts", _array(_ref("Relationship")),
            auth="required", scope="read:follows", params=[_query(
                "id[]", {"type": "array", "items": ID,
                         "maxItems": limits.API_IDS_PER_REQUEST})])},
        "/api/v1/accounts/{id}": {"get": op("An account", "Accounts", account,
                                            scope="read:accounts", params=[_path()])},
        "/api/v1/accounts/{id}/statuses": {"get": op(
            "An account's statuses", "Accounts", statuses, scope="read:statuses", paged=True,
            params=[_path(), *PAGE, _query("pinned", BOOL), _query("only_media", BOOL),
                    _query("exclude_replies", BOOL), _query("exclude_reblogs", BOOL)])},
        "/api/v1/accounts/{id}/follow": {"post": op(
            "Follow an account", "Accounts", _ref("Relationship"), auth="required",
            scope="write:follows", params=[_path()],
            body=_body({"reblogs": BOOL, "notify": BOOL}))},
        "/api/v1/accounts/{id}/unfollow": {"post": op(
            "Unfollow an account", "Accounts", _ref("Relationship"), auth="required",
            scope="write:follows", params=[_path()])},
        "/api/v1/accounts/{id}/block": {"post": op(
            "Block an account: follows both ways end, neither sees the other", "Accounts",
            _ref("Relationship"), auth="required", scope="write:blocks", params=[_path()])},
        "/api/v1/accounts/{id}/unblock": {"post": op(
            "Unblock an account", "Accounts", _ref("Relationship"), auth="required",
            scope="write:blocks", params=[_path()])},
        "/api/v1/accounts/{id}/mute": {"post": op(
            "Mute an account (duration seconds, 0 = until unmuted; notifications too "
            "unless notifications=false)", "Accounts", _ref("Relationship"), auth="required",
            scope="write:mutes", params=[_path()],
            body=_body({"duration": {"type": "integer", "minimum": 0,
                                     "maximum": limits.MUTE_DURATION_MAX_S},
                        "notifications": BOOL}))},
        "/api/v1/accounts/{id}/unmute": {"post": op(
            "Unmute an account", "Accounts", _ref("Relationship"), auth="required",
            scope="write:mutes", params=[_path()])},
        "/api/v1/conversations": {"get": op(
            "Your direct conversations, the one with the newest status first (cursors are "
            "last status ids)", "Statuses",
            _array(_obj({"id": ID, "unread": BOOL, "accounts": accounts})),
            auth="required", scope="read:statuses", paged=True, params=PAGE)},
        "/api/v1/conversations/{id}/read": {"post": op(
            "Mark a conversation read", "Statuses",
            _obj({"id": ID, "unread": BOOL, "accounts": accounts}), auth="required",
            scope="write:conversations", params=[_path()])},
        "/api/v1/conversations/{id}": {"delete": op(
            "Take a conversation off your list", "Statuses", _obj({}), auth="required",
            scope="write:conversations", params=[_path()])},
        "/api/v1/reports": {"post": op(
            "Report an account (and some of its statuses) to the moderators", "Accounts",
            _obj({"id": STR, "category": STR, "comment": STR, "action_taken": BOOL}),
            auth="required", scope="write:reports",
            body=_body({"account_id": ID,
                        "status_ids": {"type": "array", "items": ID,
                                       "maxItems": limits.REPORT_STATUSES_MAX},
                        "comment": {"type": "string",
                                    "maxLength": limits.REPORT_COMMENT_MAX_CHARS},
                        "category": {"enum": ["spam", "legal", "violation", "other"]},
                        "forward": BOOL}, required=("account_id",)))},
        "/api/v1/blocks": {"get": op(
            "Accounts you block, newest block first (cursors are block ids)", "Accounts",
            accounts, auth="required", scope="read:blocks", paged=True, params=PAGE)},
        "/api/v1/mutes": {"get": op(
            "Accounts you mute now, newest mute first (cursors are mute ids)", "Accounts",
            accounts, auth="required", scope="read:mutes", paged=True, params=PAGE)},
        "/api/v1/accounts/{id}/followers": {"get": op(
            "An account's followers, newest first", "Accounts", accounts,
            scope="read:accounts", paged=True, params=[_path(), *PAGE])},
        "/api/v1/accounts/{id}/following": {"get": op(
            "The accounts an account follows, newest first", "Accounts", accounts,
            scope="read:accounts", paged=True, params=[_path(), *PAGE])},
        "/api/v1/statuses": {
            "post": op("Post a status (Idempotency-Key honoured; lat/long stored as location; "
                       "visibility public, unlisted, private (followers and mentioned) "
                       "or direct (mentioned only))",
                       "Statuses", status, auth="required", scope="write:statuses",
                       params=[{"name": "Idempotency-Key", "in": "header", "required": False,
                                "schema": {"type": "string",
                                           "maxLength": limits.IDEMPOTENCY_KEY_MAX_CHARS}}],
                       body=_body({"status": {"type": "string",
                                              "maxLength": limits.STATUS_MAX_CHARS},
                                   "visibility": {"enum": ["public", "unlisted", "private",
                                                           "direct"]},
                                   "sensitive": BOOL,
                                   "spoiler_text": {"type": "string",
                                                    "maxLength": limits.SPOILER_TEXT_MAX_CHARS},
                                   "language": {"type": "string",
                                                "pattern": "^[a-z]{2,3}(-[a-z]{2,8})?$"},
                                   "media_ids": {"type": "array", "items": ID,
                                                 "maxItems": limits.MEDIA_PER_STATUS,
                                                 "description": "Your uploads not attached "
                                                                "elsewhere; with them the "
                                                                "text may be empty"},
                                   "in_reply_to_id": {**ID, "description":
                                                      "Reply to this status (404 if unknown)"},
                                   "lat": {"type": "number", "minimum": -90, "maximum": 90},
                                   "long": {"type": "number", "minimum": -180, "maximum": 180}},
                                  ())),
            "get": op("Several statuses by id", "Statuses", statuses, scope="read:statuses",
                      params=[_query("id[]", {"type": "array", "items": ID,
                                              "maxItems": limits.API_IDS_PER_REQUEST})]),
        },
        "/api/v1/statuses/{id}": {
            "get": op("A status", "Statuses", status, scope="read:statuses", params=[_path()]),
            "delete": op("Delete your status; returns it with its source text", "Statuses",
                         status, auth="required", scope="write:statuses", params=[_path()]),
        },
        "/api/v1/timelines/home": {"get": op(
            "Home timeline", "Timelines", statuses, auth="required", scope="read:statuses",
            paged=True, params=PAGE)},
        "/api/v1/timelines/public": {"get": op(
            "Public timeline: every status, newest first", "Timelines", statuses,
            scope="read:statuses", paged=True,
            params=[*PAGE, _query("local", BOOL), _query("remote", BOOL),
                    _query("only_media", BOOL)])},
        "/api/v1/timelines/list/{list_id}": {"get": op(
            "A list's timeline", "Timelines", statuses, auth="required", scope="read:lists",
            paged=True, params=[_path("list_id"), *PAGE])},
        "/api/v1/lists": {
            "get": op("Your lists", "Lists", _array(lst), auth="required", scope="read:lists"),
            "post": op("Create a list", "Lists", lst, auth="required", scope="write:lists",
                       body=_body({"title": {"type": "string",
                                             "maxLength": limits.LIST_TITLE_MAX_CHARS},
                                   "replies_policy": {"enum": ["followed", "list", "none"]},
                                   "exclusive": BOOL}, ("title",))),
        },
        "/api/v1/lists/{id}": {
            "get": op("A list", "Lists", lst, auth="required", scope="read:lists",
                      params=[_path()]),
            "put": op("Rename a list", "Lists", lst, auth="required", scope="write:lists",
                      params=[_path()], body=_body({
                          "title": {"type": "string", "maxLength": limits.LIST_TITLE_MAX_CHARS},
                          "replies_policy": {"enum": ["followed", "list", "none"]},
                          "exclusive": BOOL})),
            "delete": op("Delete a list", "Lists", _ref("Empty"), auth="required",
                         scope="write:lists", params=[_path()]),
        },
        "/api/v1/lists/{id}/accounts": {
            "get": op("A list's members (limit=0: all)", "Lists", accounts, auth="required",
                      scope="read:lists", paged=True, params=[
                          _path(), _query("max_id", ID),
                          _query("limit", {"type": "integer", "minimum": 0, "maximum": 80})]),
            "post": op("Add members", "Lists", _ref("Empty"), auth="required",
                       scope="write:lists", params=[_path()], body=_body({
                           "account_ids": {"type": "array", "items": ID, "minItems": 1,
                                           "maxItems": limits.API_IDS_PER_REQUEST}},
                           ("account_ids",))),
            "delete": op("Remove members", "Lists", _ref("Empty"), auth="required",
                         scope="write:lists", params=[_path(), _query(
                             "account_ids[]", {"type": "array", "items": ID,
                                               "maxItems": limits.API_IDS_PER_REQUEST})]),
        },
        "/api/v2/search": {"get": op(
            "Search accounts (login/display-name prefix, @login, @login@this-host), your "
            "statuses holding every word, hashtags; never contacts another host",
            "Search", SEARCH, scope="read:search", params=SEARCH_PARAMS + [
                _query("type", {"enum": ["accounts", "hashtags", "statuses"]}),
                _query("account_id", ID), _query("max_id", ID), _query("min_id", ID),
                _query("exclude_unreviewed", BOOL)])},
        "/api/v1/accounts/search": {"get": op(
            "Search accounts by login or display-name prefix", "Accounts", accounts,
            auth="required", scope="read:accounts", params=SEARCH_PARAMS)},
        "/api/v1/accounts/update_credentials": {"patch": op(
            "Change your profile; locked: follows need your approval; source[privacy] is "
            "the visibility of posts that name none (other posting defaults: 422); "
            "avatar and header images as multipart form data", "Accounts",
            _ref("CredentialAccount"), auth="required", scope="write:accounts",
            body=_body({
                "display_name": {"type": "string", "maxLength": limits.DISPLAY_NAME_MAX_CHARS},
                "note": {"type": "string", "maxLength": limits.BIO_MAX_CHARS},
                "locked": BOOL, "bot": BOOL, "discoverable": BOOL,
                "source[privacy]": {"enum": ["public", "unlisted", "private", "direct"]},
                "fields_attributes": {"type": "array", "maxItems": limits.PROFILE_FIELDS_MAX,
                                      "items": _obj({"name": PROFILE_FIELD,
                                                     "value": PROFILE_FIELD})}}))},
        **_media_paths(),
        "/api/v1/custom_emojis": {"get": op("Custom emojis (none)", "Instance", _array({}),
                                            auth="none")},
        "/api/v1/filters": {"get": op("Your filters, v1 (none yet)", "Filters", _array({}),
                                      auth="required", scope="read:filters")},
        "/api/v2/filters": {"get": op("Your filters, v2 (none yet)", "Filters", _array({}),
                                      auth="required", scope="read:filters")},
        "/api/v1/announcements": {"get": op(
            "Instance announcements (none)", "Instance", _array({}), auth="required",
            params=[_query("with_dismissed", BOOL)])},
        "/api/v1/preferences": {"get": op(
            "Your posting and reading defaults", "Accounts", PREFERENCES, auth="required",
            scope="read:accounts")},
        "/api/v1/follow_requests": {"get": op(
            "Pending requests to follow you (a locked account), newest first (cursors are "
            "request ids)", "Accounts",
            accounts, auth="required", scope="read:follows", paged=True, params=PAGE)},
        "/api/v1/follow_requests/{id}/authorize": {"post": op(
            "Let an account that asked follow you", "Accounts", _ref("Relationship"),
            auth="required", scope="write:follows", params=[_path()])},
        "/api/v1/follow_requests/{id}/reject": {"post": op(
            "Refuse an account's request to follow you", "Accounts", _ref("Relationship"),
            auth="required", scope="write:follows", params=[_path()])},
        "/api/v1/accounts/{id}/remove_from_followers": {"post": op(
            "Make an account stop following you", "Accounts", _ref("Relationship"),
            auth="required", scope="write:follows", params=[_path()])},
        "/avatars/original/missing.png": {"get": op(
            "The default avatar", "Pages", {"type": "string", "format": "binary"}, auth="none",
            ok_type="image/png")},
        "/headers/original/missing.png": {"get": op(
            "The default header image", "Pages", {"type": "string", "format": "binary"},
            auth="none", ok_type="image/png")},
        "/@{login}": {"get": op("An account's page (HTML)", "Pages", STR, auth="none",
                                ok_type="text/html", params=[LOGIN_PARAM])},
        "/@{login}/{id}": {"get": op("A status's page (HTML)", "Pages", STR, auth="none",
                                     ok_type="text/html", params=[LOGIN_PARAM, _path()])},
        "/openapi.json": {"get": op("This document", "Meta", {"type": "object"}, auth="none")},
        # operators and load balancers (redpoll/api/ops.py)
        "/health": {"get": op("Liveness: 200 while the process runs; says if the database is reachable",
                              "Operations", {"type": "object", "required": ["status", "database"],
                                             "properties": {"status": STR, "database": STR}},
                              auth="none")},
        "/ready": {"get": op("Readiness: database answers, stream hub connected, jobs flowing "
                             "(503 with Retry-After and the problems otherwise)", "Operations",
                             {"type": "object", "required": ["ready", "problems"],
                              "properties": {"ready": {"type": "boolean"},
                                             "problems": {"type": "array", "items": STR}}},
                             auth="none")},
        "/metrics": {"get": op("Prometheus text format (docs/operating.md lists each metric)",
                               "Operations", STR, auth="none", ok_type="text/plain")},
        **_social_paths(),
    }


def _media_paths() -> dict:
    """Uploads (redpoll/media/routes.py)."""
    media = _ref("MediaAttachment")
    upload = {"required": True, "content": {"multipart/form-data": {"schema": {
        "type": "object", "required": ["file"], "properties": {
            "file": {"type": "string", "format": "binary",
                     "description": "JPEG, PNG, WebP or GIF, at most "
                                    f"{limits.MEDIA_IMAGE_MAX_BYTES} bytes and "
                                    f"{limits.MEDIA_IMAGE_MATRIX_MAX} pixels"},
            "description": {"type": "string", "maxLength": limits.MEDIA_DESCRIPTION_MAX_CHARS},
            "focus": {"type": "string", "pattern": "^-?[0-9.]+,-?[0-9.]+$"}}}}}}
    described = _body({"description": {"type": "string",
                                       "maxLength": limits.MEDIA_DESCRIPTION_MAX_CHARS},
                       "focus": {"type": "string", "pattern": "^-?[0-9.]+,-?[0-9.]+$"}})
    v2 = op("Upload an image; 202 with url null while it is processed", "Media", media,
            auth="required", scope="write:media", body=upload, ok_status="202")
    v2["responses"]["200"] = v2["responses"]["202"]
    one = op("One of your uploads not attached to a status: 206 while processing, 200 ready",
             "Media", media, auth="required", scope="write:media", params=[_path()])
    one["responses"]["206"] = one["responses"]["200"]
    put = op("Describe an upload not attached yet (description, focus)", "Media", media,
             auth="required", scope="write:media", params=[_path()], body=described)
    put["responses"]["206"] = put["responses"]["200"]
    return {
        "/api/v2/media": {"post": v2},
        "/api/v1/media": {"post": op("Upload an image, processed before the answer", "Media",
                                     media, auth="required", scope="write:media", body=upload)},
        "/api/v1/media/{id}": {"get": one, "put": put},
        "/system/media/{d1}/{d2}/{file}": {"get": op(
            "A stored file (by its unguessable name; cached for a year)", "Media",
            {"type": "string", "format": "binary"}, auth="none", ok_type="image/jpeg",
            params=[*({"name": d, "in": "path", "required": True,
                       "schema": {"type": "string", "pattern": "^[0-9a-f]{2}$"}}
                      for d in ("d1", "d2")),
                    {"name": "file", "in": "path", "required": True, "schema": {
                        "type": "string", "pattern": "^[0-9a-f]{32}[.](jpg|png|webp|gif)$"}}])},
    }


def _social_paths() -> dict:
    """Favourites, bookmarks, notifications, markers."""
    status, accounts = _ref("Status"), _array(_ref("Account"))
    accounts_page = [_path(), _query("max_id", ID), _query("since_id", ID),
                     _query("min_id", ID),
                     _query("limit", {"type": "integer", "minimum": 1,
                                      "maximum": limits.ACCOUNTS_PAGE_MAX})]

    types = {"type": "array", "maxItems": 12, "items": {"enum": [
        "mention", "status", "reblog", "follow", "follow_request", "favourite", "poll",
        "update", "admin.sign_up", "admin.report", "severed_relationships",
        "moderation_warning"]}}
    notes_query = [*PAGE[:3], _query("limit", {"type": "integer", "minimum": 1,
                                               "maximum": limits.NOTIFICATIONS_PAGE_MAX}),
                   _query("types[]", types), _query("exclude_types[]", types),
                   _query("account_id", ID)]
    group_key = {"name": "group_key", "in": "path", "required": True,
                 "schema": {"type": "string", "maxLength": 60}}

    def action(summary: str, scope: str) -> dict:
        return {"post": op(summary, "Statuses", status, auth="required", scope=scope,
                           params=[_path()])}

    tag_path = {"name": "name", "in": "path", "required": True,
                "schema": {"type": "string", "maxLength": limits.TAG_MAX_CHARS}}
    return {
        "/api/v1/statuses/{id}/context": {"get": op(
            "A status's thread: ancestors oldest first, descendants depth-first (bounded)",
            "Statuses", _ref("Context"), scope="read:statuses", params=[_path()])},
        "/api/v1/timelines/tag/{tag}": {"get": op(
            "Public statuses carrying a hashtag", "Timelines", _array(status),
            scope="read:statuses", paged=True,
            params=[{**tag_path, "name": "tag"}, *PAGE, _query("local", BOOL),
                    _query("remote", BOOL), _query("only_media", BOOL),
                    *(_query(f"{mode}[]", {"type": "array", "items": STR,
                                           "maxItems": limits.TAG_TIMELINE_COMBINE_MAX},
                             text) for mode, text in (
                        ("any", "Or carrying one of these hashtags"),
                        ("all", "And carrying all of these"),
                        ("none", "And none of these")))])},
        "/api/v1/tags/{name}": {"get": op(
            "A hashtag (404 if never used nor followed)", "Tags", _ref("Tag"),
            scope="read:statuses", params=[tag_path])},
        "/api/v1/tags/{name}/follow": {"post": op(
            "Follow a hashtag: its new statuses reach your home", "Tags", _ref("Tag"),
            auth="required", scope="write:follows", params=[tag_path])},
        "/api/v1/tags/{name}/unfollow": {"post": op(
            "Unfollow a hashtag", "Tags", _ref("Tag"), auth="required", scope="write:follows",
            params=[tag_path])},
        "/api/v1/followed_tags": {"get": op(
            "The hashtags you follow", "Tags", _array(_ref("Tag")), auth="required",
            scope="read:follows")},
        "/api/v1/statuses/{id}/reblog": {"post": op(
            "Boost a status (again: the same boost); returns the boost wrapping it; "
            "a private status only by its author, a direct one never (403)",
            "Statuses", status, auth="required", scope="write:statuses", params=[_path()],
            body=_body({"visibility": {"enum": ["public", "unlisted"]}}))},
        "/api/v1/statuses/{id}/unreblog": action(
            "Undo a boost (it leaves every timeline); returns the original",
            "write:statuses"),
        "/api/v1/statuses/{id}/reblogged_by": {"get": op(
            "Who boosted a status, newest first", "Statuses", accounts,
            scope="read:statuses", paged=True, params=accounts_page)},
        "/api/v1/statuses/{id}/favourite": action("Favourite a status (again: no change)",
                                                  "write:favourites"),
        "/api/v1/statuses/{id}/unfavourite": action("Undo a favourite (and its notification)",
                                                    "write:favourites"),
        "/api/v1/statuses/{id}/bookmark": action("Bookmark a status", "write:bookmarks"),
        "/api/v1/statuses/{id}/unbookmark": action("Remove a bookmark", "write:bookmarks"),
        "/api/v1/statuses/{id}/favourited_by": {"get": op(
            "Who favourited a status, newest first", "Statuses", accounts,
            scope="read:statuses", paged=True, params=accounts_page)},
        "/api/v1/favourites": {"get": op(
            "Your favourites, newest favourite first (cursors are favourite ids)", "Statuses",
            _array(status), auth="required", scope="read:favourites", paged=True, params=PAGE)},
        "/api/v1/bookmarks": {"get": op(
            "Your bookmarks, newest first (cursors are bookmark ids)", "Statuses",
            _array(status), auth="required", scope="read:bookmarks", paged=True, params=PAGE)},
        "/api/v1/notifications": {"get": op(
            "Your notifications, newest first", "Notifications", _array(_ref("Notification")),
            auth="required", scope="read:notifications", paged=True, params=notes_query)},
        "/api/v1/notifications/{id}": {"get": op(
            "One notification", "Notifications", _ref("Notification"), auth="required",
            scope="read:notifications", params=[_path()])},
        "/api/v1/notifications/{id}/dismiss": {"post": op(
            "Dismiss one notification", "Notifications", _ref("Empty"), auth="required",
            scope="write:notifications", params=[_path()])},
        "/api/v1/notifications/clear": {"post": op(
            "Dismiss every notification", "Notifications", _ref("Empty"), auth="required",
            scope="write:notifications")},
        "/api/v1/notifications/unread_count": {"get": op(
            "Notifications newer than the notifications marker", "Notifications",
            _obj({"count": INT}), auth="required", scope="read:notifications",
            params=[_query("limit", {"type": "integer", "minimum": 1, "maximum": 1000})])},
        "/api/v2/notifications": {"get": op(
            "Notifications grouped by type and status", "Notifications",
            _ref("GroupedNotifications"), auth="required", scope="read:notifications",
            paged=True, params=[*notes_query, _query("grouped_types[]", types),
                                _query("expand_accounts", {"enum": ["full", "partial_avatars"]}),
                                _query("include_filtered", BOOL)])},
        "/api/v2/notifications/unread_count": {"get": op(
            "Notification groups with a notification newer than the notifications marker",
            "Notifications", _obj({"count": INT}), auth="required", scope="read:notifications",
            params=[_query("limit", {"type": "integer", "minimum": 1,
                                     "maximum": limits.NOTIFICATIONS_UNREAD_MAX}),
                    *notes_query[4:], _query("grouped_types[]", types)])},
        "/api/v2/notifications/{group_key}": {"get": op(
            "One notification group whole", "Notifications", _ref("GroupedNotifications"),
            auth="required", scope="read:notifications", params=[group_key])},
        "/api/v2/notifications/{group_key}/accounts": {"get": op(
            "The accounts of one notification group, newest first", "Notifications",
            accounts, auth="required", scope="read:notifications", params=[group_key])},
        "/api/v2/notifications/{group_key}/dismiss": {"post": op(
            "Dismiss every notification of one group", "Notifications", _ref("Empty"),
            auth="required", scope="write:notifications", params=[group_key])},
        "/api/v1/markers": {
            "get": op("Read markers of home and notifications", "Markers", _ref("Markers"),
                      auth="required", scope="read:statuses",
                      params=[_query("timeline[]", {"type": "array", "maxItems": 4, "items": {
                          "enum": ["home", "notifications"]}})]),
            "post": op("Move read markers", "Markers", _ref("Markers"), auth="required",
                       scope="write:statuses", body={"required": True, "content": {
                           "application/json": {"schema": {"type": "object", "properties": {
                               name: _obj({"last_read_id": ID})
                               for name in ("home", "notifications")}, "minProperties": 1}}}}),
        },
    }


@lru_cache(maxsize=1)
def build() -> dict:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Redpoll: the Mastodon client API", "version": __version__,
                 "description": "A Twitter-style social network on Redis. Paths, parameters "
                                "and entities follow docs.joinmastodon.org; ids are strings. "
                                "Errors are {\"error\": \"...\"}."},
        "paths": _paths(),
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "An OAuth access token"}},
        },
    }


async def document(request: Request) -> Response:
    return JSON(build())
