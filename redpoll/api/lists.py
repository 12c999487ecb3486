"""Lists: CRUD and membership (GET/POST/DELETE /api/v1/lists/:id/accounts)."""

from __future__ import annotations

from starlette.responses import Response

from ..core import limits
from ..core.errors import NotFollowed, ValidationError
from ..render import entities
from .context import Ctx
from .contract import (
    ACCOUNTS_REF,
    BOOL,
    ID,
    LIST_REF,
    Doc,
    array,
    path_param,
    query_param,
    ref,
    request_body,
)
from .responses import JSON, NOT_FOUND, ApiError, link_header
from .routing import endpoint

REPLIES_POLICIES = ("followed", "list", "none")


def _options(ctx: Ctx) -> None:
    policy = ctx.params.str("replies_policy", max_chars=20)
    if policy not in (None, *REPLIES_POLICIES):
        raise ValidationError("replies_policy", "must be one of " + ", ".join(REPLIES_POLICIES))
    ctx.params.bool("exclusive")


@endpoint(
    "GET",
    "/api/v1/lists",
    auth="required",
    scope="read:lists",
    doc=Doc("Your lists", "Lists", array(LIST_REF)),
)
async def get_lists(ctx: Ctx) -> Response:
    return JSON([entities.user_list(item) for item in await ctx.rp.lists.all(ctx.uid)])


@endpoint(
    "POST",
    "/api/v1/lists",
    auth="required",
    scope="write:lists",
    doc=Doc(
        "Create a list",
        "Lists",
        LIST_REF,
        body=request_body(
            {
                "title": {"type": "string", "maxLength": limits.LIST_TITLE_MAX_CHARS},
                "replies_policy": {"enum": ["followed", "list", "none"]},
                "exclusive": BOOL,
            },
            ("title",),
        ),
    ),
)
async def create_list(ctx: Ctx) -> Response:
    _options(ctx)
    title = ctx.params.str("title", required=True, max_chars=limits.LIST_TITLE_MAX_CHARS)
    return JSON(entities.user_list(await ctx.rp.lists.create(ctx.uid, title)))


@endpoint(
    "GET",
    "/api/v1/lists/{id}",
    auth="required",
    scope="read:lists",
    doc=Doc("A list", "Lists", LIST_REF, params=[path_param()]),
)
async def get_list(ctx: Ctx) -> Response:
    return JSON(entities.user_list(await ctx.rp.lists.get(ctx.uid, ctx.path_id())))


@endpoint(
    "PUT",
    "/api/v1/lists/{id}",
    auth="required",
    scope="write:lists",
    doc=Doc(
        "Rename a list",
        "Lists",
        LIST_REF,
        params=[path_param()],
        body=request_body(
            {
                "title": {"type": "string", "maxLength": limits.LIST_TITLE_MAX_CHARS},
                "replies_policy": {"enum": ["followed", "list", "none"]},
                "exclusive": BOOL,
            }
        ),
    ),
)
async def update_list(ctx: Ctx) -> Response:
    _options(ctx)
    lid = ctx.path_id()
    title = ctx.params.str("title", max_chars=limits.LIST_TITLE_MAX_CHARS)
    if title is None:  # only options changed, and redpoll keeps none: the list as it is
        return JSON(entities.user_list(await ctx.rp.lists.get(ctx.uid, lid)))
    return JSON(entities.user_list(await ctx.rp.lists.rename(ctx.uid, lid, title)))


@endpoint(
    "DELETE",
    "/api/v1/lists/{id}",
    auth="required",
    scope="write:lists",
    doc=Doc("Delete a list", "Lists", ref("Empty"), params=[path_param()]),
)
async def delete_list(ctx: Ctx) -> Response:
    await ctx.rp.lists.delete(ctx.uid, ctx.path_id())
    return JSON({})


@endpoint(
    "GET",
    "/api/v1/lists/{id}/accounts",
    auth="required",
    scope="read:lists",
    doc=Doc(
        "A list's members (limit=0: all)",
        "Lists",
        ACCOUNTS_REF,
        paged=True,
        params=[
            path_param(),
            query_param("max_id", ID),
            query_param("limit", {"type": "integer", "minimum": 0, "maximum": 80}),
        ],
    ),
)
async def list_accounts(ctx: Ctx) -> Response:
    """Members in the order they were added; ``limit=0`` returns all of them,
    else pages of ``limit`` (default 40) continued with ``max_id``."""
    members = await ctx.rp.lists.members(ctx.uid, ctx.path_id())
    p = ctx.params
    raw = p.raw("limit")
    if raw in (None, ""):
        limit = 40
    else:
        try:
            limit = int(raw)
        except (TypeError, ValueError):
            raise ValidationError("limit", "must be an integer") from None
        if isinstance(raw, bool) or limit < 0:
            raise ValidationError("limit", "must be a non-negative integer")
    after = p.cursor("max_id")
    p.cursor("since_id")
    p.cursor("min_id")
    if after is not None:
        ids = [m.id for m in members]
        members = members[ids.index(after) + 1 :] if after in ids else []
    page = members if limit == 0 else members[: min(limit, 80)]
    headers = link_header(ctx, page, prev=False) if len(page) < len(members) else {}
    return JSON([entities.account(u, ctx.base) for u in page], headers=headers)


def _account_ids(ctx: Ctx) -> list[int]:
    ids = ctx.params.ids("account_ids")
    if not ids:
        raise ValidationError("account_ids", "is missing")
    return list(dict.fromkeys(ids))


@endpoint(
    "POST",
    "/api/v1/lists/{id}/accounts",
    auth="required",
    scope="write:lists",
    doc=Doc(
        "Add members",
        "Lists",
        ref("Empty"),
        params=[path_param()],
        body=request_body(
            {
                "account_ids": {
                    "type": "array",
                    "items": ID,
                    "minItems": 1,
                    "maxItems": limits.API_IDS_PER_REQUEST,
                }
            },
            ("account_ids",),
        ),
    ),
)
async def add_accounts(ctx: Ctx) -> Response:
    """Only accounts the caller follows, or has asked to follow, or the
    caller: all of them are checked before any is added, so a refusal
    (422, naming the accounts) leaves the list as it was. Mastodon answers
    404 there (its ListAccount needs a follow or, since 4.3, a follow
    request); a 422 that says why is what a client can show."""
    lid = ctx.path_id()
    ids = _account_ids(ctx)
    await ctx.rp.lists.get(ctx.uid, lid)
    users = {u.id: u for u in await ctx.rp.accounts.get_users(ids)}
    missing = [i for i in ids if i not in users]
    if missing:
        raise ApiError(404, NOT_FOUND)
    refused = await ctx.rp.lists.unlistable(ctx.uid, ids)
    if refused:
        names = ", ".join(f"@{users[i].login}" for i in refused[:5])
        raise NotFollowed(
            f"You can only add accounts you follow to a list; you do not follow "
            f"{names}{' and others' if len(refused) > 5 else ''}"
        )
    for member in ids:
        await ctx.rp.lists.add(ctx.uid, lid, member)
    return JSON({})


@endpoint(
    "DELETE",
    "/api/v1/lists/{id}/accounts",
    auth="required",
    scope="write:lists",
    doc=Doc(
        "Remove members",
        "Lists",
        ref("Empty"),
        params=[
            path_param(),
            query_param(
                "account_ids[]",
                {"type": "array", "items": ID, "maxItems": limits.API_IDS_PER_REQUEST},
            ),
        ],
    ),
)
async def remove_accounts(ctx: Ctx) -> Response:
    lid = ctx.path_id()
    ids = _account_ids(ctx)
    await ctx.rp.lists.get(ctx.uid, lid)
    for member in ids:
        await ctx.rp.lists.remove(ctx.uid, lid, member)
    return JSON({})
