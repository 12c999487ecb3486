"""Blocks and mutes: Mastodon's routes for them. The rules are
redpoll/relations/relations.py's; what they hide, redpoll/relations/visibility.py decides."""

from __future__ import annotations

from starlette.responses import Response

from ..core import limits
from ..core.errors import ValidationError
from ..render import entities
from .accounts import relationship_of
from .context import Ctx
from .contract import (
    ACCOUNTS_REF,
    BOOL,
    INT,
    PAGE,
    Doc,
    array,
    obj,
    path_param,
    query_param,
    ref,
    request_body,
)
from .responses import JSON, link_header
from .routing import endpoint


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/block",
    auth="required",
    scope="write:blocks",
    doc=Doc(
        "Block an account: follows both ways end, neither sees the other",
        "Accounts",
        ref("Relationship"),
        params=[path_param()],
    ),
)
async def block(ctx: Ctx) -> Response:
    target = ctx.path_id()
    await ctx.rp.relations.block(ctx.uid, target)
    return JSON(await relationship_of(ctx, target))


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/unblock",
    auth="required",
    scope="write:blocks",
    doc=Doc("Unblock an account", "Accounts", ref("Relationship"), params=[path_param()]),
)
async def unblock(ctx: Ctx) -> Response:
    target = ctx.path_id()
    await ctx.rp.relations.unblock(ctx.uid, target)
    return JSON(await relationship_of(ctx, target))


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/mute",
    auth="required",
    scope="write:mutes",
    doc=Doc(
        "Mute an account (duration seconds, 0 = until unmuted; notifications too "
        "unless notifications=false)",
        "Accounts",
        ref("Relationship"),
        params=[path_param()],
        body=request_body(
            {
                "duration": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": limits.MUTE_DURATION_MAX_S,
                },
                "notifications": BOOL,
            }
        ),
    ),
)
async def mute(ctx: Ctx) -> Response:
    """``duration`` seconds (0 or absent: until unmuted), ``notifications``
    (default true: their notifications are hidden too)."""
    target = ctx.path_id()
    p = ctx.params
    seconds = p.number("duration")
    if seconds is not None and not float(seconds).is_integer():
        raise ValidationError("duration", "must be a whole number of seconds")
    duration = int(seconds or 0)
    notes = p.bool("notifications", True) if p.has("notifications") else True
    await ctx.rp.relations.mute(ctx.uid, target, duration, notes)
    return JSON(await relationship_of(ctx, target))


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/unmute",
    auth="required",
    scope="write:mutes",
    doc=Doc("Unmute an account", "Accounts", ref("Relationship"), params=[path_param()]),
)
async def unmute(ctx: Ctx) -> Response:
    target = ctx.path_id()
    await ctx.rp.relations.unmute(ctx.uid, target)
    return JSON(await relationship_of(ctx, target))


async def _accounts_page(ctx: Ctx, read) -> Response:
    """``read``: one of the engine's account pages, (accounts, marks)."""
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    users, marks = await read(ctx.uid, max_id=p.cursor("max_id"), limit=p.raw("limit"))
    headers = link_header(ctx, marks, key=lambda c: c, prev=False) if marks else {}
    return JSON([entities.account(u, ctx.base) for u in users], headers=headers)


@endpoint(
    "GET",
    "/api/v1/blocks",
    auth="required",
    scope="read:blocks",
    doc=Doc(
        "Accounts you block, newest block first (cursors are block ids)",
        "Accounts",
        ACCOUNTS_REF,
        paged=True,
        params=PAGE,
    ),
)
async def blocks(ctx: Ctx) -> Response:
    return await _accounts_page(ctx, ctx.rp.relations.blocked_accounts)


@endpoint(
    "GET",
    "/api/v1/mutes",
    auth="required",
    scope="read:mutes",
    doc=Doc(
        "Accounts you mute now, newest mute first (cursors are mute ids), each with "
        "when its mute ends",
        "Accounts",
        array(ref("MutedAccount")),
        paged=True,
        params=PAGE,
    ),
)
async def mutes(ctx: Ctx) -> Response:
    """Mastodon's MutedAccount: the Account with ``mute_expires_at`` (null:
    until unmuted)."""
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    users, marks, ends = await ctx.rp.relations.muted_accounts(
        ctx.uid, max_id=p.cursor("max_id"), limit=p.raw("limit")
    )
    headers = link_header(ctx, marks, key=lambda c: c, prev=False) if marks else {}
    return JSON(
        [
            entities.account(u, ctx.base)
            | {"mute_expires_at": entities.iso(ends[u.id]) if ends.get(u.id) else None}
            for u in users
        ],
        headers=headers,
    )


# --- a member's domain blocks ----------------------------------------------------------------
_DOMAIN = request_body({"domain": {"type": "string", "maxLength": 253}}, required=("domain",))


@endpoint(
    "GET",
    "/api/v1/domain_blocks",
    auth="required",
    scope="read:blocks",
    doc=Doc(
        "The domains you block, newest first",
        "Accounts",
        {"type": "array", "items": {"type": "string"}},
        paged=True,
        params=PAGE,
    ),
)
async def domain_blocks(ctx: Ctx) -> Response:
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    found, cursor = await ctx.rp.relations.blocked_domains(
        ctx.uid, max_score=p.cursor("max_id"), limit=p.raw("limit")
    )
    headers = link_header(ctx, [cursor], key=lambda c: c, prev=False) if cursor else {}
    return JSON(found, headers=headers)


@endpoint(
    "GET",
    "/api/v1/domain_blocks/preview",
    auth="required",
    scope=("write:blocks", "follow"),
    doc=Doc(
        "What blocking a domain would end (Mastodon 4.3): how many of its accounts you "
        "follow and how many follow you",
        "Accounts",
        obj({"following_count": INT, "followers_count": INT}),
        params=[query_param("domain", {"type": "string", "maxLength": 253}, required=True)],
    ),
)
async def domain_block_preview(ctx: Ctx) -> Response:
    following, followers = await ctx.rp.relations.domain_block_preview(
        ctx.uid, ctx.params.str("domain", required=True, max_chars=253)
    )
    return JSON({"following_count": following, "followers_count": followers})


@endpoint(
    "POST",
    "/api/v1/domain_blocks",
    auth="required",
    scope="write:blocks",
    doc=Doc(
        "Block a domain: its accounts' statuses and notifications hidden from you, "
        "your follows of them and theirs of you ended, your posts not sent there",
        "Accounts",
        {"type": "object"},
        body=_DOMAIN,
    ),
)
async def block_domain(ctx: Ctx) -> Response:
    await ctx.rp.relations.block_domain(
        ctx.uid, ctx.params.str("domain", required=True, max_chars=253)
    )
    return JSON({})


@endpoint(
    "DELETE",
    "/api/v1/domain_blocks",
    auth="required",
    scope="write:blocks",
    doc=Doc("Unblock a domain", "Accounts", {"type": "object"}, body=_DOMAIN),
)
async def unblock_domain(ctx: Ctx) -> Response:
    await ctx.rp.relations.unblock_domain(
        ctx.uid, ctx.params.str("domain", required=True, max_chars=253)
    )
    return JSON({})


# --- follow requests (locked accounts) ---------------------------------------------------
@endpoint(
    "GET",
    "/api/v1/follow_requests",
    auth="required",
    scope="read:follows",
    doc=Doc(
        "Pending requests to follow you (a locked account), newest first (cursors are request ids)",
        "Accounts",
        ACCOUNTS_REF,
        paged=True,
        params=PAGE,
    ),
)
async def follow_requests_list(ctx: Ctx) -> Response:
    """Pending requests to follow the caller, newest first (by request ids)."""
    return await _accounts_page(ctx, ctx.rp.relations.follow_requesters)


@endpoint(
    "POST",
    "/api/v1/follow_requests/{id}/authorize",
    auth="required",
    scope="write:follows",
    doc=Doc(
        "Let an account that asked follow you",
        "Accounts",
        ref("Relationship"),
        params=[path_param()],
    ),
)
async def authorize(ctx: Ctx) -> Response:
    requester = ctx.path_id()
    await ctx.rp.relations.authorize_follow(ctx.uid, requester)
    return JSON(await relationship_of(ctx, requester))


@endpoint(
    "POST",
    "/api/v1/follow_requests/{id}/reject",
    auth="required",
    scope="write:follows",
    doc=Doc(
        "Refuse an account's request to follow you",
        "Accounts",
        ref("Relationship"),
        params=[path_param()],
    ),
)
async def reject(ctx: Ctx) -> Response:
    requester = ctx.path_id()
    await ctx.rp.relations.reject_follow(ctx.uid, requester)
    return JSON(await relationship_of(ctx, requester))


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/remove_from_followers",
    auth="required",
    scope="write:follows",
    doc=Doc(
        "Make an account stop following you", "Accounts", ref("Relationship"), params=[path_param()]
    ),
)
async def remove_from_followers(ctx: Ctx) -> Response:
    """Make an account stop following the caller."""
    follower = ctx.path_id()
    await ctx.rp.accounts.get_user(follower)
    await ctx.rp.relations.unfollow(follower, ctx.uid)
    return JSON(await relationship_of(ctx, follower))
