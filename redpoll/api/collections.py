"""Collections (Mastodon 4.6): /api/v1/collections, their items, an
account's collections and those one is in. The rules, and what a viewer is
shown of one, are redpoll/collections/collections.py's."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.responses import Response

from ..collections.collections import Collection
from ..core import limits
from ..core.models import User
from ..render import entities
from .context import Ctx
from .contract import BOOL, ID, STR, Doc, array, obj, path_param, query_param, ref, request_body
from .responses import JSON
from .routing import endpoint

COLLECTION_REF = ref("Collection")
WRAPPED = obj({"collection": COLLECTION_REF})
WITH_ACCOUNTS = obj({"collection": COLLECTION_REF, "accounts": array(ref("Account"))})
LISTED = obj({"collections": array(COLLECTION_REF)})
FIELDS = {
    "name": {"type": "string", "maxLength": limits.COLLECTION_NAME_MAX_CHARS},
    "description": {"type": "string", "maxLength": limits.COLLECTION_DESCRIPTION_MAX_CHARS},
    "language": STR,
    "tag_name": STR,
    "sensitive": BOOL,
    "discoverable": BOOL,
}
OFFSET_PAGE = [
    query_param("offset", {"type": "integer", "minimum": 0}, "Collections to skip"),
    query_param(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": limits.COLLECTIONS_PAGE_MAX},
        f"Page size (default {limits.COLLECTIONS_PAGE_DEFAULT}, "
        f"at most {limits.COLLECTIONS_PAGE_MAX})",
    ),
]


def _links(ctx: Ctx, count: int) -> dict:
    """Mastodon's Link header of an offset page: next when the page is full,
    prev past the first (offset and limit were checked by the domain)."""
    q = ctx.request.query_params
    offset = int(q.get("offset") or 0)
    size = min(int(q.get("limit") or limits.COLLECTIONS_PAGE_DEFAULT), limits.COLLECTIONS_PAGE_MAX)
    keep = {k: v for k, v in q.items() if k != "offset"}
    url = f"{ctx.base}{ctx.request.scope['path']}?"
    links = []
    if count >= size:
        links.append(f'<{url}{urlencode({**keep, "offset": offset + size})}>; rel="next"')
    if offset > 0:
        links.append(f'<{url}{urlencode({**keep, "offset": max(offset - size, 0)})}>; rel="prev"')
    return {"Link": ", ".join(links)} if links else {}


def collection_entity(ctx: Ctx, c: Collection) -> dict:
    """Mastodon's Collection (redpoll.render.entities.collection)."""
    return entities.collection(c, ctx.base)


def _with_accounts(ctx: Ctx, shown: tuple[Collection, list[User]]) -> dict:
    c, users = shown
    return {
        "collection": collection_entity(ctx, c),
        "accounts": [entities.account(u, ctx.base) for u in users],
    }


def _fields(ctx: Ctx) -> dict:
    p = ctx.params
    return {
        "name": p.raw("name"),
        "description": p.raw("description"),
        "language": p.raw("language"),
        "tag": p.raw("tag_name"),
        "sensitive": p.bool("sensitive") if p.has("sensitive") else None,
        "discoverable": p.bool("discoverable") if p.has("discoverable") else None,
    }


@endpoint(
    "POST",
    "/api/v1/collections",
    auth="required",
    scope="write:collections",
    doc=Doc(
        f"Create a collection of accounts (422: invalid, or "
        f"{limits.COLLECTIONS_PER_USER} owned already; 403: an account that "
        "may not be featured)",
        "Collections",
        WRAPPED,
        body=request_body(
            {**FIELDS, "account_ids": array(ID)},
            ("name",),
        ),
    ),
)
async def create_collection(ctx: Ctx) -> Response:
    accounts = ctx.params.ids("account_ids", max_count=limits.COLLECTION_ITEMS_MAX + 1)
    c = await ctx.rp.collections.create(ctx.uid, account_ids=accounts, **_fields(ctx))
    return JSON({"collection": collection_entity(ctx, c)})


@endpoint(
    "GET",
    "/api/v1/collections/{id}",
    auth="optional",
    scope="read:collections",
    doc=Doc(
        "A collection and the accounts in it, as you may see them",
        "Collections",
        WITH_ACCOUNTS,
        params=[path_param()],
    ),
)
async def show_collection(ctx: Ctx) -> Response:
    return JSON(_with_accounts(ctx, await ctx.rp.collections.view(ctx.path_id(), ctx.viewer)))


@endpoint(
    "PATCH",
    "/api/v1/collections/{id}",
    auth="required",
    scope="write:collections",
    doc=Doc(
        "Update one of your collections (omitted fields are kept)",
        "Collections",
        WRAPPED,
        params=[path_param()],
        body=request_body(FIELDS),
    ),
)
async def update_collection(ctx: Ctx) -> Response:
    c = await ctx.rp.collections.update(ctx.uid, ctx.path_id(), **_fields(ctx))
    return JSON({"collection": collection_entity(ctx, c)})


@endpoint(
    "DELETE",
    "/api/v1/collections/{id}",
    auth="required",
    scope="write:collections",
    doc=Doc("Delete one of your collections", "Collections", ref("Empty"), params=[path_param()]),
)
async def delete_collection(ctx: Ctx) -> Response:
    await ctx.rp.collections.delete(ctx.uid, ctx.path_id())
    return JSON({})


@endpoint(
    "POST",
    "/api/v1/collections/{id}/items",
    auth="required",
    scope="write:collections",
    doc=Doc(
        "Add an account to one of your collections (403: it may not be "
        f"featured; 422: in it already, or {limits.COLLECTION_ITEMS_MAX} items)",
        "Collections",
        obj({"collection_item": ref("CollectionItem")}),
        params=[path_param()],
        body=request_body({"account_id": ID}, ("account_id",)),
    ),
)
async def add_item(ctx: Ctx) -> Response:
    account = ctx.params.str("account_id", required=True, max_chars=20)
    item = await ctx.rp.collections.item(ctx.uid, ctx.path_id(), "add", account)
    return JSON({"collection_item": entities.collection_item(item)})


@endpoint(
    "DELETE",
    "/api/v1/collections/{id}/items/{item_id}",
    auth="required",
    scope="write:collections",
    doc=Doc(
        "Remove an item from one of your collections",
        "Collections",
        ref("Empty"),
        params=[path_param(), path_param("item_id")],
    ),
)
async def remove_item(ctx: Ctx) -> Response:
    await ctx.rp.collections.item(ctx.uid, ctx.path_id(), "remove", ctx.path_id("item_id"))
    return JSON({})


@endpoint(
    "POST",
    "/api/v1/collections/{id}/items/{item_id}/revoke",
    auth="required",
    scope="write:collections",
    doc=Doc(
        "Take yourself out of another's collection (your item becomes revoked)",
        "Collections",
        ref("Empty"),
        params=[path_param(), path_param("item_id")],
    ),
)
async def revoke_item(ctx: Ctx) -> Response:
    await ctx.rp.collections.item(ctx.uid, ctx.path_id(), "revoke", ctx.path_id("item_id"))
    return JSON({})


@endpoint(
    "GET",
    "/api/v1/accounts/{id}/collections",
    auth="optional",
    scope="read:collections",
    doc=Doc(
        "An account's collections, newest first (others see the discoverable ones)",
        "Collections",
        LISTED,
        paged=True,
        params=[path_param(), *OFFSET_PAGE],
    ),
)
async def account_collections(ctx: Ctx) -> Response:
    p = ctx.params
    shown = await ctx.rp.collections.of_account(
        ctx.path_id(), ctx.viewer, offset=p.raw("offset"), limit=p.raw("limit")
    )
    return JSON(
        {"collections": [collection_entity(ctx, c) for c, _ in shown]},
        headers=_links(ctx, len(shown)),
    )


@endpoint(
    "GET",
    "/api/v1/accounts/{id}/in_collections",
    auth="required",
    scope="read:collections",
    doc=Doc(
        "The collections you are featured in (403 for another account)",
        "Collections",
        LISTED,
        paged=True,
        params=[path_param(), *OFFSET_PAGE],
    ),
)
async def in_collections(ctx: Ctx) -> Response:
    p = ctx.params
    shown = await ctx.rp.collections.featuring(
        ctx.path_id(), ctx.uid, offset=p.raw("offset"), limit=p.raw("limit")
    )
    return JSON(
        {"collections": [collection_entity(ctx, c) for c, _ in shown]},
        headers=_links(ctx, len(shown)),
    )
