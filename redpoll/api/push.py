"""Web Push subscriptions (/api/v1/push/subscription): one per access
token, set, read, changed and removed with that token (scope ``push``);
the notifications are sent by the workers (redpoll.push.delivery)."""

from __future__ import annotations

from starlette.responses import Response

from ..core.errors import ValidationError
from ..gateway import auth as gateway_auth
from ..push.subscriptions import ALERTS, POLICIES, Subscription
from .context import Ctx
from .contract import BOOL, EMPTY, STR, Doc, obj, ref
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint

PATH = "/api/v1/push/subscription"
TAG = "Push"
ALERTS_SCHEMA = {"type": "object", "properties": {k: BOOL for k in ALERTS}}
POLICY = {"enum": list(POLICIES)}
DATA = {"type": "object", "properties": {"alerts": ALERTS_SCHEMA, "policy": POLICY}}
CREATE_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["subscription"],
                "properties": {
                    "subscription": {
                        "type": "object",
                        "required": ["endpoint", "keys"],
                        "properties": {
                            "endpoint": STR,
                            "standard": BOOL,
                            "keys": obj({"p256dh": STR, "auth": STR}),
                        },
                    },
                    "data": DATA,
                    "policy": POLICY,
                },
            }
        }
    },
}
UPDATE_BODY = {
    "required": False,
    "content": {
        "application/json": {
            "schema": {"type": "object", "properties": {"data": DATA, "policy": POLICY}}
        }
    },
}


async def entity(ctx: Ctx, sub: Subscription) -> dict:
    """Mastodon's WebPushSubscription."""
    return {
        "id": str(sub.id),
        "endpoint": sub.endpoint,
        "standard": sub.standard,
        "alerts": {k: sub.alerts.get(k, False) for k in ALERTS},
        "policy": sub.policy,
        "server_key": await ctx.rp.push.vapid_key(),
    }


def _data(ctx: Ctx) -> tuple[object, object]:
    """(alerts, policy) as sent: ``data[alerts]``, ``data[policy]`` (or a
    top-level ``policy``, as Mastodon.py sends it)."""
    data = ctx.params.tree("data") or {}
    policy = data.get("policy")
    if policy in (None, ""):
        policy = ctx.params.raw("policy")
    return data.get("alerts"), policy


@endpoint(
    "POST",
    PATH,
    auth="required",
    scope="push",
    doc=Doc(
        "Subscribe this access token to Web Push (replacing its subscription)",
        TAG,
        ref("WebPushSubscription"),
        body=CREATE_BODY,
    ),
)
async def create(ctx: Ctx) -> Response:
    sub = ctx.params.tree("subscription") or {}
    keys = sub.get("keys") or {}
    if not isinstance(keys, dict):
        raise ValidationError("subscription[keys]", "must be an object")
    if sub.get("endpoint") in (None, ""):
        raise ValidationError("subscription[endpoint]", "is missing")
    for name in ("p256dh", "auth"):
        if keys.get(name) in (None, ""):
            raise ValidationError(f"subscription[keys][{name}]", "is missing")
    standard = sub.get("standard")
    alerts, policy = _data(ctx)
    secret, _ = gateway_auth.bearer_token(ctx.request.scope)
    made = await ctx.rp.push.subscribe(
        ctx.token,
        secret or "",
        endpoint=sub.get("endpoint"),
        p256dh=keys.get("p256dh"),
        auth_key=keys.get("auth"),
        alerts=alerts,
        policy=policy,
        standard=_flag(standard),
        base=ctx.base,
    )
    return JSON(await entity(ctx, made))


def _flag(value) -> bool:
    if value in (None, "") or value is False:
        return False
    if value is True or (isinstance(value, str) and value.lower() in ("true", "1", "on", "yes")):
        return True
    if isinstance(value, str) and value.lower() in ("false", "0", "off", "no"):
        return False
    raise ValidationError("subscription[standard]", "must be a boolean")


@endpoint(
    "GET",
    PATH,
    auth="required",
    scope="push",
    doc=Doc("This access token's Web Push subscription", TAG, ref("WebPushSubscription")),
)
async def show(ctx: Ctx) -> Response:
    sub = await ctx.rp.push.subscription(ctx.token)
    if sub is None:
        raise ApiError(404, NOT_FOUND)
    return JSON(await entity(ctx, sub))


@endpoint(
    "PUT",
    PATH,
    auth="required",
    scope="push",
    doc=Doc(
        "Change the alerts (those named) and the policy of this access token's "
        "Web Push subscription",
        TAG,
        ref("WebPushSubscription"),
        body=UPDATE_BODY,
    ),
)
async def update(ctx: Ctx) -> Response:
    alerts, policy = _data(ctx)
    sub = await ctx.rp.push.update(ctx.token, alerts, policy)
    if sub is None:
        raise ApiError(404, NOT_FOUND)
    return JSON(await entity(ctx, sub))


@endpoint(
    "DELETE",
    PATH,
    auth="required",
    scope="push",
    doc=Doc("Remove this access token's Web Push subscription", TAG, EMPTY),
)
async def remove(ctx: Ctx) -> Response:
    await ctx.rp.push.remove(ctx.token)
    return JSON({})
