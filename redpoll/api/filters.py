"""Content filters (redpoll.filters): /api/v2/filters with their keywords
and statuses, and the v1 filters clients still call (one keyword each, as
Mastodon maps them onto v2). Only the owner sees or changes a filter;
another account's ids answer 404."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from ..core import limits
from ..core.errors import ValidationError
from ..filters import filters as F
from ..filters.rules import entity, iso_ms, keyword_entity
from .context import Ctx
from .contract import BOOL, ID, NULLABLE_STR, STR, Doc, array, obj, path_param, ref, request_body
from .params import Params
from .responses import JSON
from .routing import endpoint

CONTEXT = {"type": "array", "items": {"enum": list(F.CONTEXTS)}, "minItems": 1}
KEYWORD = obj({"id": ID, "keyword": STR, "whole_word": BOOL})
FILTER_STATUS = obj({"id": ID, "status_id": ID})
FILTER = obj(
    {
        "id": ID,
        "title": STR,
        "context": CONTEXT,
        "expires_at": NULLABLE_STR,
        "filter_action": {"enum": list(F.ACTIONS)},
        "keywords": array(KEYWORD),
        "statuses": array(FILTER_STATUS),
    }
)
FILTER_V1 = obj(
    {
        "id": ID,
        "phrase": STR,
        "context": CONTEXT,
        "expires_at": NULLABLE_STR,
        "irreversible": BOOL,
        "whole_word": BOOL,
    }
)
KEYWORD_BODY = {
    "keyword": {"type": "string", "maxLength": limits.FILTER_KEYWORD_MAX_CHARS},
    "whole_word": BOOL,
}
FILTER_BODY = {
    "title": {"type": "string", "maxLength": limits.FILTER_TITLE_MAX_CHARS},
    "context": CONTEXT,
    "filter_action": {"enum": list(F.ACTIONS)},
    "expires_in": {"type": ["integer", "string", "null"]},
    "keywords_attributes": array(obj({}, {"id": ID, "_destroy": BOOL, **KEYWORD_BODY})),
}
V1_BODY = {
    "phrase": KEYWORD_BODY["keyword"],
    "context": CONTEXT,
    "irreversible": BOOL,
    "whole_word": BOOL,
    "expires_in": FILTER_BODY["expires_in"],
}
TAG = "Filters"
READ, WRITE = "read:filters", "write:filters"


def _v2(f: F.Filter) -> dict:
    return entity(f, rules=True)


def _v1(f: F.Filter, k: F.Keyword) -> dict:
    return {
        "id": str(k.id),
        "phrase": k.keyword,
        "context": list(f.context),
        "expires_at": iso_ms(f.expires_at) if f.expires_at else None,
        "irreversible": f.action == "hide",
        "whole_word": k.whole_word,
    }


def _status(f: F.Filter, s: F.FilterStatus) -> dict:
    return {"id": str(s.id), "status_id": str(s.status_id)}


def _bool(p: Params, name: str) -> bool | None:
    return p.bool(name) if p.has(name) else None


def _context(p: Params) -> Any:
    raw = p.raw("context")
    return F.UNSET if raw is None else raw


def _attributes(p: Params) -> list[dict]:
    """``keywords_attributes`` as a list of objects (JSON: a list, or an
    object by index; a form: ``keywords_attributes[][keyword]=``)."""
    raw = p.raw("keywords_attributes")
    if raw in (None, ""):
        return []
    if isinstance(raw, dict):
        raw = list(raw.values())
    if not isinstance(raw, list) or not all(isinstance(a, dict) for a in raw):
        raise ValidationError("keywords_attributes", "must be a list of objects")
    if len(raw) > limits.FILTER_KEYWORDS_MAX * 2:
        raise ValidationError("keywords_attributes", "too many")
    return raw


def _expires_in(p: Params) -> Any:
    return p.raw("expires_in") if "expires_in" in p.data else F.UNSET


# --- v2 filters ---------------------------------------------------------------------------
@endpoint(
    "GET",
    "/api/v2/filters",
    auth="required",
    scope=READ,
    doc=Doc("Your filters", TAG, array(FILTER)),
)
async def list_filters(ctx: Ctx) -> Response:
    return JSON([_v2(f) for f in await ctx.rp.filters.all(ctx.uid)])


@endpoint(
    "POST",
    "/api/v2/filters",
    auth="required",
    scope=WRITE,
    doc=Doc(
        "Create a filter (with keywords_attributes[])",
        TAG,
        FILTER,
        body=request_body(FILTER_BODY, ("title", "context")),
    ),
)
async def create_filter(ctx: Ctx) -> Response:
    p = ctx.params
    words = []
    for a in _attributes(p):
        if str(a.get("_destroy", "")).lower() in ("true", "1"):
            continue
        if a.get("keyword") in (None, "") and a.get("whole_word") in (None, ""):
            continue  # all blank: left out, as Mastodon's nested attributes
        whole = a.get("whole_word")
        words.append(
            (
                a.get("keyword"),
                None if whole in (None, "") else str(whole).lower() in ("true", "1", "on", "yes"),
            )
        )
    f = await ctx.rp.filters.create(
        ctx.uid,
        title=p.raw("title"),
        context=p.raw("context"),
        action=p.raw("filter_action") or "warn",
        expires_in=p.raw("expires_in"),
        keywords=words,
    )
    return JSON(_v2(f))


@endpoint(
    "GET",
    "/api/v2/filters/{id}",
    auth="required",
    scope=READ,
    doc=Doc("One of your filters", TAG, FILTER, params=[path_param()]),
)
async def get_filter(ctx: Ctx) -> Response:
    return JSON(_v2(await ctx.rp.filters.get(ctx.uid, ctx.path_id())))


@endpoint(
    "PUT",
    "/api/v2/filters/{id}",
    auth="required",
    scope=WRITE,
    doc=Doc(
        "Change a filter (keywords_attributes[] with id and _destroy)",
        TAG,
        FILTER,
        params=[path_param()],
        body=request_body(FILTER_BODY),
    ),
)
async def update_filter(ctx: Ctx) -> Response:
    p = ctx.params
    f = await ctx.rp.filters.update(
        ctx.uid,
        ctx.path_id(),
        title=p.raw("title") if p.has("title") else F.UNSET,
        context=_context(p),
        action=p.raw("filter_action") if p.has("filter_action") else F.UNSET,
        expires_in=_expires_in(p),
        keywords_attributes=_attributes(p),
    )
    return JSON(_v2(f))


@endpoint(
    "DELETE",
    "/api/v2/filters/{id}",
    auth="required",
    scope=WRITE,
    doc=Doc("Delete a filter", TAG, ref("Empty"), params=[path_param()]),
)
async def delete_filter(ctx: Ctx) -> Response:
    await ctx.rp.filters.delete(ctx.uid, ctx.path_id())
    return JSON({})


# --- keywords -------------------------------------------------------------------------------
@endpoint(
    "GET",
    "/api/v2/filters/{id}/keywords",
    auth="required",
    scope=READ,
    doc=Doc("A filter's keywords", TAG, array(KEYWORD), params=[path_param()]),
)
async def list_keywords(ctx: Ctx) -> Response:
    f = await ctx.rp.filters.get(ctx.uid, ctx.path_id())
    return JSON([keyword_entity(k) for k in f.keywords])


@endpoint(
    "POST",
    "/api/v2/filters/{id}/keywords",
    auth="required",
    scope=WRITE,
    doc=Doc(
        "Add a keyword to a filter",
        TAG,
        KEYWORD,
        params=[path_param()],
        body=request_body(KEYWORD_BODY, ("keyword",)),
    ),
)
async def add_keyword(ctx: Ctx) -> Response:
    p = ctx.params
    k = await ctx.rp.filters.add_keyword(
        ctx.uid, ctx.path_id(), p.raw("keyword"), _bool(p, "whole_word")
    )
    return JSON(keyword_entity(k))


async def _get_keyword(ctx: Ctx) -> Response:
    _, k = await ctx.rp.filters.keyword(ctx.uid, ctx.path_id())
    return JSON(keyword_entity(k))


async def _update_keyword(ctx: Ctx) -> Response:
    p = ctx.params
    k = await ctx.rp.filters.update_keyword(
        ctx.uid, ctx.path_id(), p.raw("keyword"), _bool(p, "whole_word")
    )
    return JSON(keyword_entity(k))


async def _delete_keyword(ctx: Ctx) -> Response:
    await ctx.rp.filters.delete_keyword(ctx.uid, ctx.path_id())
    return JSON({})


# Mastodon's path, and the spelling some clients use
for _path in ("/api/v2/filters/keywords/{id}", "/api/v2/filter_keywords/{id}"):
    _name = _path.split("/")[3]
    globals()[f"get_keyword_{_name}"] = endpoint(
        "GET",
        _path,
        auth="required",
        scope=READ,
        doc=Doc("One filter keyword", TAG, KEYWORD, params=[path_param()]),
    )(_get_keyword)
    globals()[f"update_keyword_{_name}"] = endpoint(
        "PUT",
        _path,
        auth="required",
        scope=WRITE,
        doc=Doc(
            "Change a filter keyword",
            TAG,
            KEYWORD,
            params=[path_param()],
            body=request_body(KEYWORD_BODY),
        ),
    )(_update_keyword)
    globals()[f"delete_keyword_{_name}"] = endpoint(
        "DELETE",
        _path,
        auth="required",
        scope=WRITE,
        doc=Doc("Remove a filter keyword", TAG, ref("Empty"), params=[path_param()]),
    )(_delete_keyword)


# --- statuses -------------------------------------------------------------------------------
@endpoint(
    "GET",
    "/api/v2/filters/{id}/statuses",
    auth="required",
    scope=READ,
    doc=Doc("A filter's statuses", TAG, array(FILTER_STATUS), params=[path_param()]),
)
async def list_statuses(ctx: Ctx) -> Response:
    f = await ctx.rp.filters.get(ctx.uid, ctx.path_id())
    return JSON([_status(f, s) for s in f.statuses])


@endpoint(
    "POST",
    "/api/v2/filters/{id}/statuses",
    auth="required",
    scope=WRITE,
    doc=Doc(
        "Add a status to a filter",
        TAG,
        FILTER_STATUS,
        params=[path_param()],
        body=request_body({"status_id": ID}, ("status_id",)),
    ),
)
async def add_status(ctx: Ctx) -> Response:
    sid = ctx.params.cursor("status_id")
    if sid is None:
        raise ValidationError("status_id", "is missing")
    fid = ctx.path_id()
    await ctx.rp.filters.get(ctx.uid, fid)  # an unknown filter: 404 before the status
    s = await ctx.rp.filters.add_status(ctx.uid, fid, sid)
    return JSON({"id": str(s.id), "status_id": str(s.status_id)})


async def _get_status(ctx: Ctx) -> Response:
    f, s = await ctx.rp.filters.status(ctx.uid, ctx.path_id())
    return JSON(_status(f, s))


async def _delete_status(ctx: Ctx) -> Response:
    await ctx.rp.filters.delete_status(ctx.uid, ctx.path_id())
    return JSON({})


for _path in ("/api/v2/filters/statuses/{id}", "/api/v2/filter_statuses/{id}"):
    _name = _path.split("/")[3]
    globals()[f"get_status_{_name}"] = endpoint(
        "GET",
        _path,
        auth="required",
        scope=READ,
        doc=Doc("One filter status", TAG, FILTER_STATUS, params=[path_param()]),
    )(_get_status)
    globals()[f"delete_status_{_name}"] = endpoint(
        "DELETE",
        _path,
        auth="required",
        scope=WRITE,
        doc=Doc("Remove a status from its filter", TAG, ref("Empty"), params=[path_param()]),
    )(_delete_status)


# --- v1 -------------------------------------------------------------------------------------
@endpoint(
    "GET",
    "/api/v1/filters",
    auth="required",
    scope=READ,
    doc=Doc("Your filters, v1 (one per keyword of your v2 filters)", TAG, array(FILTER_V1)),
)
async def list_v1(ctx: Ctx) -> Response:
    return JSON([_v1(f, k) for f, k in await ctx.rp.filters.v1_filters(ctx.uid)])


@endpoint(
    "POST",
    "/api/v1/filters",
    auth="required",
    scope=WRITE,
    doc=Doc(
        "Create a v1 filter (a v2 filter of one keyword)",
        TAG,
        FILTER_V1,
        body=request_body(V1_BODY, ("phrase", "context")),
    ),
)
async def create_v1(ctx: Ctx) -> Response:
    p = ctx.params
    f, k = await ctx.rp.filters.v1_create(
        ctx.uid,
        phrase=p.raw("phrase"),
        context=p.raw("context"),
        irreversible=p.bool("irreversible"),
        whole_word=p.bool("whole_word", True),
        expires_in=p.raw("expires_in"),
    )
    return JSON(_v1(f, k))


@endpoint(
    "GET",
    "/api/v1/filters/{id}",
    auth="required",
    scope=READ,
    doc=Doc("One v1 filter", TAG, FILTER_V1, params=[path_param()]),
)
async def get_v1(ctx: Ctx) -> Response:
    return JSON(_v1(*await ctx.rp.filters.keyword(ctx.uid, ctx.path_id())))


@endpoint(
    "PUT",
    "/api/v1/filters/{id}",
    auth="required",
    scope=WRITE,
    doc=Doc(
        "Change a v1 filter", TAG, FILTER_V1, params=[path_param()], body=request_body(V1_BODY)
    ),
)
async def update_v1(ctx: Ctx) -> Response:
    p = ctx.params
    f, k = await ctx.rp.filters.v1_update(
        ctx.uid,
        ctx.path_id(),
        phrase=p.raw("phrase") if p.has("phrase") else None,
        context=_context(p),
        irreversible=_bool(p, "irreversible"),
        whole_word=_bool(p, "whole_word"),
        expires_in=_expires_in(p),
    )
    return JSON(_v1(f, k))


@endpoint(
    "DELETE",
    "/api/v1/filters/{id}",
    auth="required",
    scope=WRITE,
    doc=Doc("Delete a v1 filter (its keyword)", TAG, ref("Empty"), params=[path_param()]),
)
async def delete_v1(ctx: Ctx) -> Response:
    await ctx.rp.filters.delete_keyword(ctx.uid, ctx.path_id())
    return JSON({})


del _path, _name
