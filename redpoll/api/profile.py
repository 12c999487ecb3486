"""Editing one's profile: PATCH /api/v1/accounts/update_credentials, and
removing the avatar or header (DELETE /api/v1/profile/avatar, /header)."""

from __future__ import annotations

import re

from starlette.responses import Response

from ..core import limits
from ..core.errors import ValidationError
from ..relations import visibility
from ..render import entities
from .context import Ctx
from .contract import BOOL, PROFILE_FIELD, Doc, obj, ref, request_body
from .params import Params, parse_params
from .responses import JSON
from .routing import endpoint

TOO_BIG = (
    f"Request body too large: an avatar and a header of up to "
    f"{limits.MEDIA_IMAGE_MAX_BYTES} bytes each are accepted"
)

_FIELD_KEY = re.compile(r"fields_attributes\[(\d{1,3})\]\[(name|value)\]")


def _fields(p: Params) -> list[tuple[str, str]] | None:
    """``fields_attributes`` as forms send it (``fields_attributes[0][name]``)
    or as JSON (a list of {name, value}, or an object keyed by index)."""
    rows: dict[int, dict] = {}
    for key, value in p.data.items():
        match = _FIELD_KEY.fullmatch(key)
        if match:
            rows.setdefault(int(match.group(1)), {})[match.group(2)] = value
    raw = p.raw("fields_attributes")
    if raw is not None:
        if isinstance(raw, dict):
            items = []
            for k, v in raw.items():
                if not (isinstance(k, str) and (k.isascii() and k.isdigit()) and len(k) <= 3):
                    raise ValidationError("fields_attributes", "keys must be row numbers")
                items.append((int(k), v))
        elif isinstance(raw, list):
            items = list(enumerate(raw))
        else:
            raise ValidationError("fields_attributes", "must be a list of {name, value}")
        for index, row in items:
            if not isinstance(row, dict):
                raise ValidationError("fields_attributes", "each row is {name, value}")
            rows.setdefault(index, {}).update(row)
    if not rows:
        return None
    if len(rows) > limits.PROFILE_FIELDS_MAX:
        raise ValidationError("fields_attributes", f"at most {limits.PROFILE_FIELDS_MAX} fields")
    out = []
    for index in sorted(rows):
        row = rows[index]
        name, value = row.get("name", ""), row.get("value", "")
        if name is None:
            name = ""
        if value is None:
            value = ""
        if not isinstance(name, str) or not isinstance(value, str):
            raise ValidationError("fields_attributes", "names and values are strings")
        out.append((name, value))
    return out


def _refuse_unless(p: Params, name: str, ok) -> None:
    value = p.raw(name)
    if value is None or value == "":
        return
    if not ok(value):
        raise ValidationError(name, "is not supported yet; only the default")


@endpoint(
    "PATCH",
    "/api/v1/accounts/update_credentials",
    auth="required",
    scope="write:accounts",
    params=False,
    doc=Doc(
        "Change your profile; locked: follows need your approval; source[privacy] is "
        "the visibility of posts that name none, source[quote_policy] who may quote "
        "them (other posting defaults: 422); attribution_domains[] the websites "
        "allowed to credit you; "
        "avatar and header images as multipart form data",
        "Accounts",
        ref("CredentialAccount"),
        body=request_body(
            {
                "display_name": {"type": "string", "maxLength": limits.DISPLAY_NAME_MAX_CHARS},
                "note": {"type": "string", "maxLength": limits.BIO_MAX_CHARS},
                "locked": BOOL,
                "bot": BOOL,
                "discoverable": BOOL,
                "indexable": BOOL,
                "source[privacy]": {"enum": ["public", "unlisted", "private", "direct"]},
                "source[quote_policy]": {"enum": ["public", "followers", "nobody"]},
                "attribution_domains[]": {
                    "type": "array",
                    "maxItems": limits.ATTRIBUTION_DOMAINS_MAX,
                    "items": {"type": "string", "maxLength": limits.ATTRIBUTION_DOMAIN_MAX_CHARS},
                },
                "fields_attributes": {
                    "type": "array",
                    "maxItems": limits.PROFILE_FIELDS_MAX,
                    "items": obj({"name": PROFILE_FIELD, "value": PROFILE_FIELD}),
                },
            }
        ),
    ),
)
async def update_credentials(ctx: Ctx) -> Response:
    """display_name, note, bot, discoverable, locked, fields, the default
    visibility and quote policy, the attribution domains, and an ``avatar`` and ``header`` image (multipart) are
    stored; what redpoll cannot honour yet (hiding collections; other
    posting defaults) is refused with a 422 naming it, and nothing is
    written."""
    files: dict[str, bytes] = {}
    ctx.params = p = await parse_params(
        ctx.request, files, limits.PROFILE_UPLOAD_MAX_BODY_BYTES, TOO_BIG
    )
    unknown = sorted(set(files) - {"avatar", "header"})
    if unknown:
        raise ValidationError(unknown[0], "is not a file this endpoint takes (avatar, header)")
    if p.bool("hide_collections"):
        raise ValidationError("hide_collections", "is not supported yet")
    privacy = p.raw("source[privacy]")
    source = p.raw("source")
    if privacy is None and isinstance(source, dict):  # a JSON body nests it
        privacy = source.get("privacy")
    if privacy in ("", None):
        privacy = None
    elif privacy not in visibility.ALL:
        raise ValidationError("source[privacy]", "must be one of " + ", ".join(visibility.ALL))
    _refuse_unless(p, "source[sensitive]", lambda v: str(v).lower() in ("false", "0"))
    _refuse_unless(p, "source[language]", lambda v: False)
    quote_policy = p.raw("source[quote_policy]")
    if quote_policy is None and isinstance(source, dict):
        quote_policy = source.get("quote_policy")
    domains = p.raw("attribution_domains")
    if isinstance(domains, str):
        domains = [domains] if domains else []
    changes = {
        "display_name": p.str("display_name", max_chars=limits.DISPLAY_NAME_MAX_CHARS),
        "bio": p.str("note", max_chars=limits.BIO_MAX_CHARS),
        "bot": p.bool("bot") if p.has("bot") else None,
        "discoverable": p.bool("discoverable") if p.has("discoverable") else None,
        "fields": _fields(p),
        "privacy": privacy,
        "locked": p.bool("locked") if p.has("locked") else None,
        "indexable": p.bool("indexable") if p.has("indexable") else None,
        "quote_policy": quote_policy or None,
        "attribution_domains": domains,
    }
    if p.raw("display_name") == "":
        changes["display_name"] = ""
    if p.raw("note") == "":
        changes["bio"] = ""
    user = await ctx.rp.accounts.update_credentials(ctx.uid, changes, files)
    return JSON(entities.credential_account(user, ctx.base, await ctx.rp.admin.role_of(user)))


async def _remove(ctx: Ctx, kind: str) -> Response:
    user = await ctx.rp.accounts.remove_profile_image(ctx.uid, kind)
    return JSON(entities.credential_account(user, ctx.base, await ctx.rp.admin.role_of(user)))


@endpoint(
    "DELETE",
    "/api/v1/profile/avatar",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Remove your avatar (the default is shown again)", "Accounts", ref("CredentialAccount")
    ),
)
async def delete_avatar(ctx: Ctx) -> Response:
    return await _remove(ctx, "avatar")


@endpoint(
    "DELETE",
    "/api/v1/profile/header",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Remove your header image (the default is shown again)",
        "Accounts",
        ref("CredentialAccount"),
    ),
)
async def delete_header(ctx: Ctx) -> Response:
    return await _remove(ctx, "header")
