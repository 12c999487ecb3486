"""Accounts: registration, credentials, lookup, follows, relationships."""
from __future__ import annotations

from starlette.responses import Response

from .. import auth
from ..errors import Conflict, LoginTaken, UserNotFound, ValidationError
from ..render import entities
from ..relationship import Relationship
from .http import JSON, NOT_FOUND, ApiError, Ctx, endpoint, link_header
from .oauth import token_entity
from .statuses import render_statuses, timeline_response

_FIELD_OF = {"login": "username", "username": "username", "email": "email",
             "password": "password", "agreement": "agreement"}


def _registration_error(field: str, code: str, message: str) -> ApiError:
    return ApiError(422, f"Validation failed: {message}",
                    details={field: [{"error": code, "description": message}]})


@endpoint(auth="required", scope="write:accounts", user=False)
async def register(ctx: Ctx) -> Response:
    if ctx.token.uid is not None:  # Mastodon's rule: only an app token registers accounts
        raise ApiError(403, "This method requires an app token, not a user's token")
    await ctx.limit("signup", ctx.settings.rate_signup)
    p = ctx.params
    try:
        if not p.bool("agreement"):
            raise _registration_error("agreement", "ERR_ACCEPTED", "Agreement must be accepted")
        for name in ("username", "email", "password"):
            if not p.has(name):
                raise _registration_error(name, "ERR_BLANK", f"{name} can't be blank")
        p.str("locale", max_chars=16)
        p.str("reason", max_chars=1000)
        user, issued = await ctx.rp.register_with_token(ctx.token.client_id, ctx.token.scopes,
                                                        p.raw("username"), p.raw("email"),
                                                        p.raw("password"))
    except LoginTaken:
        raise _registration_error("username", "ERR_TAKEN", "Username has already been taken") from None
    except auth.EmailTaken:
        raise _registration_error("email", "ERR_TAKEN", "E-mail has already been taken") from None
    except ValidationError as exc:
        field = _FIELD_OF.get(exc.field, exc.field)
        raise _registration_error(field, "ERR_INVALID", exc.message) from None
    if issued is None:  # the app was removed while its token lived
        raise ApiError(401, "The access token is invalid")
    access, created = issued
    return JSON(token_entity(access, ctx.token.scopes, created),
                headers={"Cache-Control": "no-store"})


@endpoint(auth="required", scope=("read:accounts", "profile"))
async def verify_credentials(ctx: Ctx) -> Response:
    user, count = await ctx.rp.credentials(ctx.uid)
    return JSON(entities.credential_account(user, ctx.base, follow_requests=count))


@endpoint(auth="optional", scope="read:accounts")
async def get_account(ctx: Ctx) -> Response:
    user = await ctx.rp.get_user(ctx.path_id())
    return JSON(entities.account(user, ctx.base))


@endpoint(auth="optional", scope="read:accounts")
async def lookup(ctx: Ctx) -> Response:
    acct = ctx.params.str("acct", required=True, max_chars=300)
    name, _, domain = acct.lstrip("@").partition("@")
    if domain and domain.lower() != (ctx.request.url.hostname or "").lower():
        raise ApiError(404, NOT_FOUND)
    try:
        user = await ctx.rp.lookup(name)
    except ValidationError:
        raise ApiError(404, NOT_FOUND) from None
    return JSON(entities.account(user, ctx.base))


@endpoint(auth="optional", scope="read:statuses")
async def account_statuses(ctx: Ctx) -> Response:
    uid = ctx.path_id()
    p = ctx.params
    if p.bool("pinned"):  # redpoll has no pins
        await ctx.rp.get_user(uid)
        return JSON([])
    no_replies, no_reblogs = p.bool("exclude_replies"), p.bool("exclude_reblogs")
    return timeline_response(ctx, await ctx.rp.profile_page(
        ctx.viewer, uid, no_replies=no_replies, no_reblogs=no_reblogs,
        only_media=p.bool("only_media"), **p.cursors()))


def relationship_entity(r: Relationship) -> dict:
    """Mastodon's Relationship entity."""
    return entities.relationship(r.target, r.following, r.followed_by) | {
        "showing_reblogs": r.showing_reblogs, "notifying": r.notifying,
        "blocking": r.blocking, "blocked_by": r.blocked_by, "muting": r.muting,
        "muting_notifications": r.muting_notifications,
        "requested": r.requested, "requested_by": r.requested_by}


async def relationship_of(ctx: Ctx, target: int) -> dict:
    """The caller's Relationship to ``target`` (follows, blocks, mutes)."""
    return relationship_entity(await ctx.rp.relationship(ctx.uid, target))


@endpoint(auth="required", scope="write:follows")
async def follow(ctx: Ctx) -> Response:
    target = ctx.path_id()
    p = ctx.params
    reblogs = p.bool("reblogs", True) if p.has("reblogs") else None
    notify = p.bool("notify", False) if p.has("notify") else None
    return JSON(relationship_entity(
        await ctx.rp.follow_with_options(ctx.uid, target, reblogs, notify)))


@endpoint(auth="required", scope="write:follows")
async def unfollow(ctx: Ctx) -> Response:
    target = ctx.path_id()
    await ctx.rp.get_user(target)
    await ctx.rp.unfollow(ctx.uid, target)
    return JSON(await relationship_of(ctx, target))


@endpoint(auth="required", scope="read:follows")
async def relationships(ctx: Ctx) -> Response:
    ids = list(dict.fromkeys(ctx.params.ids("id")))
    return JSON([relationship_entity(r) for r in await ctx.rp.relationships(ctx.uid, ids)])


async def _follow_page(ctx: Ctx, which: str) -> Response:
    uid = ctx.path_id()
    await ctx.rp.get_user(uid)
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    page = ctx.rp.followers if which == "followers" else ctx.rp.following
    users, cursor = await page(uid, max_score=p.cursor("max_id"), limit=p.raw("limit") or 40)
    headers = {}
    if users and cursor is not None:
        headers = link_header(ctx, [cursor], key=lambda c: c, prev=False)
    return JSON([entities.account(u, ctx.base) for u in users], headers=headers)


@endpoint(auth="optional", scope="read:accounts")
async def followers(ctx: Ctx) -> Response:
    return await _follow_page(ctx, "followers")


@endpoint(auth="optional", scope="read:accounts")
async def following(ctx: Ctx) -> Response:
    return await _follow_page(ctx, "following")


__all__ = ["register", "verify_credentials", "get_account", "lookup", "account_statuses",
           "follow", "unfollow", "relationships", "relationship_of", "relationship_entity", "followers", "following", "render_statuses",
           "Conflict", "UserNotFound"]
