"""Accounts: registration, credentials, lookup, follows, relationships."""

from __future__ import annotations

from starlette.responses import Response

from ..accounts import auth
from ..conversations import conversation
from ..core import limits
from ..core.errors import Conflict, UserNotFound, ValidationError
from ..relations.relationship import Relationship
from ..render import entities
from .context import Ctx
from .contract import (
    ACCOUNT_REF,
    ACCOUNTS_REF,
    BOOL,
    ID,
    PAGE,
    STATUSES_REF,
    STR,
    Doc,
    array,
    obj,
    path_param,
    query_param,
    ref,
    request_body,
)
from .oauth import token_entity
from .responses import JSON, NOT_FOUND, ApiError, link_header
from .routing import endpoint
from .statuses import render_statuses, timeline_response

#: Mastodon's answer to a user's token at sign-up (Api::BaseController's
#: require_client_credentials!)
APP_TOKEN_ONLY = "This method requires an client credentials authentication"


@endpoint(
    "POST",
    "/api/v1/accounts",
    auth="required",
    scope="write:accounts",
    user=False,
    doc=Doc(
        "Register an account (app token with write:accounts; a user's token: 403); "
        "returns a user token. Registrations closed: 403 unless a valid invite_code "
        "came; every invalid field at once in a 422's details",
        "Accounts",
        ref("Token"),
        body=request_body(
            {
                "username": STR,
                "email": STR,
                "password": STR,
                "agreement": {"type": ["boolean", "string"]},
                "locale": STR,
                "reason": STR,
                "invite_code": STR,
                "time_zone": STR,
                "date_of_birth": STR,
            },
            ("username", "email", "password", "agreement"),
        ),
    ),
)
async def register(ctx: Ctx) -> Response:
    if ctx.authed.uid is not None:  # Mastodon's rule: only an app token registers accounts
        raise ApiError(403, APP_TOKEN_ONLY)
    await ctx.limit("signup", ctx.settings.rate_signup)
    if await ctx.rp.admin.sign_up_refused_from(ctx.ip):  # an IP block (Mastodon: 403)
        raise ApiError(403, "This action is not allowed")
    p = ctx.params
    p.str("locale", max_chars=16)
    p.str("time_zone", max_chars=100)
    p.str("date_of_birth", max_chars=20)
    try:
        agreed = p.bool("agreement")
    except ValidationError:  # not a boolean: not accepted (ERR_ACCEPTED)
        agreed = False
    form = auth.SignUp(
        p.raw("username"),
        p.raw("email"),
        p.raw("password"),
        agreement=agreed,
        reason=p.raw("reason"),
        invite_code=p.raw("invite_code"),
        ip=ctx.ip,
    )
    try:
        user, issued = await ctx.rp.auth.register_with_token(
            ctx.authed.client_id, ctx.authed.scopes, form
        )
    except auth.SignUpInvalid as exc:
        raise ApiError(
            422,
            exc.summary,
            details={
                field: [{"error": code, "description": text} for code, text in found]
                for field, found in exc.errors.items()
            },
        ) from None
    if issued is None:  # the app was removed while its token lived
        raise ApiError(401, "The access token is invalid")
    access, created = issued
    return JSON(
        token_entity(access, ctx.authed.scopes, created), headers={"Cache-Control": "no-store"}
    )


@endpoint(
    "GET",
    "/api/v1/accounts/verify_credentials",
    auth="required",
    scope=("read:accounts", "profile"),
    doc=Doc("The token's account", "Accounts", ref("CredentialAccount")),
)
async def verify_credentials(ctx: Ctx) -> Response:
    user, count = await ctx.rp.accounts.credentials(ctx.uid)
    role = await ctx.rp.admin.role_of(user)
    return JSON(entities.credential_account(user, ctx.base, role, follow_requests=count))


@endpoint(
    "GET",
    "/api/v1/accounts",
    auth="optional",
    scope="read:accounts",
    doc=Doc(
        "Several accounts by id (Mastodon 4.3), in the order asked, each once; ids of "
        "no account, or of one not approved yet, are left out",
        "Accounts",
        ACCOUNTS_REF,
        params=[
            query_param(
                "id[]", {"type": "array", "items": ID, "maxItems": limits.API_IDS_PER_REQUEST}
            )
        ],
    ),
)
async def get_accounts(ctx: Ctx) -> Response:
    ids = list(dict.fromkeys(ctx.params.ids("id")))
    found = {u.id: u for u in await ctx.rp.accounts.get_users(ids) if not u.pending}
    return JSON([entities.account(found[uid], ctx.base) for uid in ids if uid in found])


@endpoint(
    "GET",
    "/api/v1/accounts/{id}",
    auth="optional",
    scope="read:accounts",
    doc=Doc("An account", "Accounts", ACCOUNT_REF, params=[path_param()]),
)
async def get_account(ctx: Ctx) -> Response:
    user = await ctx.rp.accounts.get_user(ctx.path_id())
    if user.pending:  # as Mastodon's check_account_approval: not shown until approved
        raise ApiError(404, NOT_FOUND)
    return JSON(entities.account(user, ctx.base))


@endpoint(
    "GET",
    "/api/v1/accounts/lookup",
    auth="optional",
    scope="read:accounts",
    doc=Doc(
        "Find an account by username",
        "Accounts",
        ACCOUNT_REF,
        params=[query_param("acct", STR, required=True)],
    ),
)
async def lookup(ctx: Ctx) -> Response:
    acct = ctx.params.str("acct", required=True, max_chars=300) or ""
    name, _, domain = acct.lstrip("@").partition("@")
    ours = {(ctx.request.url.hostname or "").lower(), ctx.request.url.netloc.lower()}
    if domain and domain.lower() not in ours:
        # another server's account: the one kept here, if any (no lookup there)
        found = await ctx.rp.federation.kept_remote_account(acct)
        if found is None:
            raise ApiError(404, NOT_FOUND)
        return JSON(entities.account(found, ctx.base))
    try:
        user = await ctx.rp.accounts.lookup(name)
    except ValidationError:
        raise ApiError(404, NOT_FOUND) from None
    if user.pending:
        raise ApiError(404, NOT_FOUND)
    return JSON(entities.account(user, ctx.base))


@endpoint(
    "GET",
    "/api/v1/accounts/{id}/statuses",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "An account's statuses",
        "Accounts",
        STATUSES_REF,
        paged=True,
        params=[
            path_param(),
            *PAGE,
            query_param("pinned", BOOL),
            query_param("only_media", BOOL),
            query_param("exclude_replies", BOOL),
            query_param("exclude_reblogs", BOOL),
            query_param("tagged", STR),
        ],
    ),
)
async def account_statuses(ctx: Ctx) -> Response:
    uid = ctx.path_id()
    p = ctx.params
    tagged = p.str("tagged", max_chars=limits.TAG_MAX_CHARS + 1) or None
    if tagged:
        try:
            tagged = conversation.tag_name(tagged)
        except ValidationError:  # no hashtag has that name: no status carries it (Mastodon)
            return JSON([])
    if p.bool("pinned"):  # the pins, all of them (at most limits.PINS_MAX)
        return timeline_response(ctx, await ctx.rp.timelines.pinned_page(ctx.viewer, uid))
    no_replies, no_reblogs = p.bool("exclude_replies"), p.bool("exclude_reblogs")
    return timeline_response(
        ctx,
        await ctx.rp.timelines.profile_page(
            ctx.viewer,
            uid,
            no_replies=no_replies,
            no_reblogs=no_reblogs,
            only_media=p.bool("only_media"),
            tagged=tagged,
            **p.cursors(),
        ),
    )


def relationship_entity(r: Relationship) -> dict:
    """Mastodon's Relationship entity."""
    return entities.relationship(r.target, r.following, r.followed_by) | {
        "showing_reblogs": r.showing_reblogs,
        "notifying": r.notifying,
        "blocking": r.blocking,
        "blocked_by": r.blocked_by,
        "muting": r.muting,
        "muting_notifications": r.muting_notifications,
        "requested": r.requested,
        "requested_by": r.requested_by,
        "endorsed": r.endorsed,
        "note": r.note,
        "domain_blocking": r.domain_blocking,
    }


async def relationship_of(ctx: Ctx, target: int) -> dict:
    """The caller's Relationship to ``target`` (follows, blocks, mutes)."""
    return relationship_entity(await ctx.rp.relations.relationship(ctx.uid, target))


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/follow",
    auth="required",
    scope="write:follows",
    doc=Doc(
        "Follow an account",
        "Accounts",
        ref("Relationship"),
        params=[path_param()],
        body=request_body({"reblogs": BOOL, "notify": BOOL}),
    ),
)
async def follow(ctx: Ctx) -> Response:
    target = ctx.path_id()
    p = ctx.params
    reblogs = p.bool("reblogs", True) if p.has("reblogs") else None
    notify = p.bool("notify", False) if p.has("notify") else None
    return JSON(
        relationship_entity(
            await ctx.rp.relations.follow_with_options(ctx.uid, target, reblogs, notify)
        )
    )


@endpoint(
    "POST",
    "/api/v1/accounts/{id}/unfollow",
    auth="required",
    scope="write:follows",
    doc=Doc("Unfollow an account", "Accounts", ref("Relationship"), params=[path_param()]),
)
async def unfollow(ctx: Ctx) -> Response:
    target = ctx.path_id()
    await ctx.rp.accounts.get_user(target)
    await ctx.rp.relations.unfollow(ctx.uid, target)
    return JSON(await relationship_of(ctx, target))


@endpoint(
    "GET",
    "/api/v1/accounts/relationships",
    auth="required",
    scope="read:follows",
    doc=Doc(
        "Relationships with the given accounts",
        "Accounts",
        array(ref("Relationship")),
        params=[
            query_param(
                "id[]", {"type": "array", "items": ID, "maxItems": limits.API_IDS_PER_REQUEST}
            )
        ],
    ),
)
async def relationships(ctx: Ctx) -> Response:
    ids = list(dict.fromkeys(ctx.params.ids("id")))
    return JSON(
        [relationship_entity(r) for r in await ctx.rp.relations.relationships(ctx.uid, ids)]
    )


async def _follow_page(ctx: Ctx, which: str) -> Response:
    uid = ctx.path_id()
    await ctx.rp.accounts.get_user(uid)
    p = ctx.params
    for name in ("since_id", "min_id"):
        p.cursor(name)
    page = ctx.rp.relations.followers if which == "followers" else ctx.rp.relations.following
    users, cursor = await page(uid, max_score=p.cursor("max_id"), limit=p.raw("limit") or 40)
    headers = {}
    if users and cursor is not None:
        headers = link_header(ctx, [cursor], key=lambda c: c, prev=False)
    return JSON([entities.account(u, ctx.base) for u in users], headers=headers)


@endpoint(
    "GET",
    "/api/v1/accounts/{id}/followers",
    auth="optional",
    scope="read:accounts",
    doc=Doc(
        "An account's followers, newest first",
        "Accounts",
        ACCOUNTS_REF,
        paged=True,
        params=[path_param(), *PAGE],
    ),
)
async def followers(ctx: Ctx) -> Response:
    return await _follow_page(ctx, "followers")


@endpoint(
    "GET",
    "/api/v1/accounts/{id}/following",
    auth="optional",
    scope="read:accounts",
    doc=Doc(
        "The accounts an account follows, newest first",
        "Accounts",
        ACCOUNTS_REF,
        paged=True,
        params=[path_param(), *PAGE],
    ),
)
async def following(ctx: Ctx) -> Response:
    return await _follow_page(ctx, "following")


@endpoint(
    "GET",
    "/api/v1/accounts/familiar_followers",
    auth="required",
    scope="read:follows",
    doc=Doc(
        "For each account asked about, the accounts one follows that follow it",
        "Accounts",
        array(obj({"id": ID, "accounts": ACCOUNTS_REF})),
        params=[
            query_param(
                "id[]", {"type": "array", "items": ID, "maxItems": limits.API_IDS_PER_REQUEST}
            )
        ],
    ),
)
async def familiar_followers(ctx: Ctx) -> Response:
    ids = list(dict.fromkeys(ctx.params.ids("id")))
    found = await ctx.rp.relations.familiar_followers(ctx.uid, ids)
    return JSON(
        [{"id": str(t), "accounts": [entities.account(u, ctx.base) for u in found[t]]} for t in ids]
    )


@endpoint(
    "GET",
    "/api/v1/accounts/{id}/lists",
    auth="required",
    scope="read:lists",
    doc=Doc(
        "One's lists that hold the account", "Accounts", array(ref("List")), params=[path_param()]
    ),
)
async def account_lists(ctx: Ctx) -> Response:
    target = ctx.path_id()
    await ctx.rp.accounts.get_user(target)
    return JSON(
        [entities.user_list(item) for item in await ctx.rp.lists.containing(ctx.uid, target)]
    )


@endpoint(
    "GET",
    "/api/v1/accounts/{id}/identity_proofs",
    auth="optional",
    scope="read:accounts",
    doc=Doc(
        "Identity proofs (none: Mastodon answers an empty list since 3.5)",
        "Accounts",
        array(obj({})),
        params=[path_param()],
    ),
)
async def identity_proofs(ctx: Ctx) -> Response:
    await ctx.rp.accounts.get_user(ctx.path_id())
    return JSON([])


__all__ = [
    "register",
    "verify_credentials",
    "get_account",
    "lookup",
    "account_statuses",
    "follow",
    "unfollow",
    "relationships",
    "relationship_of",
    "relationship_entity",
    "followers",
    "following",
    "familiar_followers",
    "account_lists",
    "identity_proofs",
    "render_statuses",
    "Conflict",
    "UserNotFound",
]
