"""Instance information (v1 and v2), with statistics cached per process."""

from __future__ import annotations

import hashlib
import time

from starlette.responses import Response

from ..core import limits
from ..core.version import __version__
from ..media.processing import SUPPORTED_MIME_TYPES
from ..render import entities
from ..render.entities import MASTODON_API_VERSION, VERSION
from .context import Ctx
from .contract import INSTANCE_TAG, STR, Doc, array, obj, ref
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint

SOURCE_URL = "https://example.invalid/redpoll"  # no public repository yet
_stats: dict = {"at": -1e9, "usage": None, "rules": []}


async def cached_usage(rp) -> dict:
    """The figures (and rules) the instance entities and NodeInfo show,
    read at most once per limits.INSTANCE_STATS_CACHE_S per process (they
    are among the most requested; /api/v1/instance/rules reads the rules
    fresh): ``usage`` as NodeInfo's, ``rules`` as Rule entities."""
    now = time.monotonic()
    if now - _stats["at"] > limits.INSTANCE_STATS_CACHE_S:
        _stats.update(
            at=now,
            usage=await rp.usage(),
            rules=[rule_entity(r) for r in await rp.instance.rules()],
        )
    return _stats


async def _cached_stats(ctx: Ctx) -> dict:
    cached = await cached_usage(ctx.rp)
    usage = cached["usage"]
    return {
        "users": usage["users"]["total"],
        "statuses": usage["localPosts"],
        "active": usage["users"]["activeMonth"],
        "rules": cached["rules"],
    }


def registrations_entity(signup) -> dict:
    """Mastodon 4.4's ``registrations`` of the v2 instance: the message only
    while closed (HTML), no single sign-on address, no minimum age."""
    return {
        "enabled": signup.enabled,
        "approval_required": signup.approval_required,
        "reason_required": signup.asks_reason,
        "message": entities.html_text(signup.message)
        if not signup.enabled and signup.message
        else None,
        "min_age": None,
        "url": None,
    }


def rule_entity(rule) -> dict:
    """Mastodon's Rule entity."""
    return {"id": str(rule.id), "text": rule.text, "hint": rule.hint}


def _statuses_config() -> dict:
    return {
        "max_characters": limits.STATUS_MAX_CHARS,
        "max_media_attachments": limits.MEDIA_PER_STATUS,
        "characters_reserved_per_url": limits.STATUS_URL_CHARS,
    }


def _media_config() -> dict:
    """Images only (no video or audio yet: their limits are 0)."""
    return {
        "supported_mime_types": SUPPORTED_MIME_TYPES,
        "image_size_limit": limits.MEDIA_IMAGE_MAX_BYTES,
        "image_matrix_limit": limits.MEDIA_IMAGE_MATRIX_MAX,
        "description_limit": limits.MEDIA_DESCRIPTION_MAX_CHARS,
        "video_size_limit": 0,
        "video_frame_rate_limit": 0,
        "video_matrix_limit": 0,
    }


def _polls_config(min_s: int) -> dict:
    return {
        "max_options": limits.POLL_OPTIONS_MAX,
        "max_characters_per_option": limits.POLL_OPTION_MAX_CHARS,
        "min_expiration": min_s,
        "max_expiration": limits.POLL_EXPIRES_MAX_S,
    }


DESCRIPTION = "A Twitter-style social network on Redis, speaking the Mastodon client API."
#: What /api/v1/instance/languages offers: the most used languages on the
#: fediverse (a post may carry any ISO 639 code; these are the ones named).
LANGUAGES = (
    ("en", "English"),
    ("de", "German"),
    ("es", "Spanish"),
    ("fr", "French"),
    ("ja", "Japanese"),
    ("pt", "Portuguese"),
    ("it", "Italian"),
    ("nl", "Dutch"),
    ("pl", "Polish"),
    ("ru", "Russian"),
    ("zh", "Chinese"),
    ("ko", "Korean"),
    ("sv", "Swedish"),
    ("fi", "Finnish"),
    ("uk", "Ukrainian"),
    ("tr", "Turkish"),
    ("ca", "Catalan"),
    ("cs", "Czech"),
    ("da", "Danish"),
    ("no", "Norwegian"),
)


async def _told(ctx: Ctx) -> dict[str, str]:
    """The title, short description and contact address staff set
    (redpoll.instance), else the defaults (REDPOLL_INSTANCE_TITLE, ...)."""
    found = await ctx.rp.instance.instance_settings()
    return {
        "title": found["title"] or ctx.settings.instance_title,
        "short_description": found["short_description"] or DESCRIPTION,
        "email": found["email"],
    }


@endpoint(
    "GET",
    "/api/v1/instance",
    auth="none",
    params=False,
    doc=Doc("Instance information (v1)", INSTANCE_TAG, ref("InstanceV1")),
)
async def instance_v1(ctx: Ctx) -> Response:
    stats = await _cached_stats(ctx)
    signup = await ctx.rp.instance.registrations()  # read fresh: a change shows at once
    told = await _told(ctx)
    everyone = (await ctx.rp.admin.role_table()).everyone
    host = ctx.request.url.netloc
    return JSON(
        {
            "uri": host,
            "title": told["title"],
            "short_description": told["short_description"],
            "description": told["short_description"],
            "email": told["email"],
            "version": VERSION,
            "urls": {"streaming_api": ctx.base.replace("http", "ws", 1)},
            "stats": {
                "user_count": stats["users"],
                "status_count": stats["statuses"],
                "domain_count": 0,
            },
            "thumbnail": f"{ctx.base}/thumbnail.png",
            "languages": ["en"],
            "registrations": signup.enabled,
            "approval_required": signup.approval_required,
            # (Mastodon: whether a member without a role may invite)
            "invites_enabled": everyone.can("invite_users"),
            "configuration": {
                "accounts": {"max_featured_tags": 0},
                "statuses": _statuses_config(),
                "media_attachments": _media_config(),
                "polls": _polls_config(ctx.settings.poll_expires_min_s),
            },
            "contact_account": None,
            "rules": stats["rules"],
        }
    )


@endpoint(
    "GET",
    "/api/v2/instance",
    auth="none",
    params=False,
    doc=Doc("Instance information (v2)", INSTANCE_TAG, ref("InstanceV2")),
)
async def instance_v2(ctx: Ctx) -> Response:
    stats = await _cached_stats(ctx)
    signup = await ctx.rp.instance.registrations()
    told = await _told(ctx)
    return JSON(
        {
            "domain": ctx.request.url.netloc,
            "title": told["title"],
            "version": VERSION,
            "source_url": SOURCE_URL,
            "description": told["short_description"],
            "usage": {"users": {"active_month": stats["active"]}},
            "thumbnail": {"url": f"{ctx.base}/thumbnail.png"},
            "icon": [],
            "languages": ["en"],
            "configuration": {
                "urls": {"streaming": ctx.base.replace("http", "ws", 1)},
                "vapid": {"public_key": await ctx.rp.push.vapid_key()},
                "accounts": {"max_featured_tags": 0, "max_pinned_statuses": limits.PINS_MAX},
                "statuses": _statuses_config(),
                "media_attachments": _media_config(),
                "polls": _polls_config(ctx.settings.poll_expires_min_s),
                "translation": {"enabled": False},
            },
            "registrations": registrations_entity(signup),
            "api_versions": {"mastodon": MASTODON_API_VERSION},  # which, why: render.entities
            # the year whose annual reports may be asked for now (Mastodon 4.6)
            "wrapstodon": ctx.rp.annual.wrapstodon(),
            "contact": {"email": told["email"], "account": None},
            "rules": stats["rules"],
            "redpoll": {"version": __version__},
        }
    )


@endpoint(
    "GET",
    "/api/v1/instance/rules",
    auth="none",
    params=False,
    doc=Doc(
        "The server's rules, in their order (set by redpoll admin rules-add)",
        INSTANCE_TAG,
        array(obj({"id": STR, "text": STR, "hint": STR})),
    ),
)
async def rules(ctx: Ctx) -> Response:
    return JSON([rule_entity(r) for r in await ctx.rp.instance.rules()])


@endpoint(
    "GET",
    "/api/v1/instance/extended_description",
    auth="none",
    params=False,
    doc=Doc(
        "The server's extended description (redpoll admin describe)",
        INSTANCE_TAG,
        obj({"updated_at": {"type": ["string", "null"]}, "content": STR}),
    ),
)
async def extended_description(ctx: Ctx) -> Response:
    content, at = await ctx.rp.instance.description()
    return JSON(
        {
            "updated_at": entities.iso(at) if at else None,
            "content": entities.html_text(content) if content else "",
        }
    )


@endpoint(
    "GET",
    "/api/v1/instance/languages",
    auth="none",
    params=False,
    doc=Doc(
        "Languages a post may be tagged with (ISO 639-1 codes and names)",
        INSTANCE_TAG,
        array(obj({"code": STR, "name": STR})),
    ),
)
async def languages(ctx: Ctx) -> Response:
    return JSON([{"code": code, "name": name} for code, name in LANGUAGES])


@endpoint(
    "GET",
    "/api/v1/instance/peers",
    auth="none",
    params=False,
    doc=Doc(
        "The domains of the servers whose accounts this server knows (less suspended ones)",
        INSTANCE_TAG,
        array(STR),
    ),
)
async def peers(ctx: Ctx) -> Response:
    return JSON(await ctx.rp.instance.peers())


@endpoint(
    "GET",
    "/api/v1/instance/translation_languages",
    auth="none",
    params=False,
    doc=Doc(
        "Languages statuses can be translated from and to: none (no translation service)",
        INSTANCE_TAG,
        {"type": "object", "maxProperties": 0},
    ),
)
async def translation_languages(ctx: Ctx) -> Response:
    return JSON({})


#: Mastodon 4.4's TermsOfService entity (this server publishes none yet)
TERMS_OF_SERVICE = obj(
    {
        "effective_date": STR,
        "effective": {"type": "boolean"},
        "content": STR,
        "succeeded_by": {"type": ["string", "null"]},
    }
)


async def _no_terms(ctx: Ctx) -> Response:
    """Mastodon's answer while a server has published no terms of service
    (TermsOfService.published is empty): 404, Record not found. Clients
    (the official apps' sign-up) then show none."""
    raise ApiError(404, NOT_FOUND)


@endpoint(
    "GET",
    "/api/v1/instance/terms_of_service",
    auth="none",
    params=False,
    doc=Doc(
        "The server's terms of service in force (Mastodon 4.4): none published here, so "
        "404 as Mastodon answers then",
        INSTANCE_TAG,
        TERMS_OF_SERVICE,
    ),
)
async def terms_of_service(ctx: Ctx) -> Response:
    return await _no_terms(ctx)


@endpoint(
    "GET",
    "/api/v1/instance/terms_of_service/{date}",
    auth="none",
    params=False,
    doc=Doc(
        "The terms of service in force on a date (Mastodon 4.4): 404, none published",
        INSTANCE_TAG,
        TERMS_OF_SERVICE,
        params=[
            {
                "name": "date",
                "in": "path",
                "required": True,
                "schema": {"type": "string", "format": "date"},
            }
        ],
    ),
)
async def terms_of_service_on(ctx: Ctx) -> Response:
    return await _no_terms(ctx)


def _shown_to(setting: str, signed_in: bool) -> bool:
    """Mastodon's show_domain_blocks(_rationale): disabled (its default), users, all."""
    return setting == "all" or (setting == "users" and signed_in)


def public_domain(host: str, obfuscate: bool) -> str:
    """A blocked domain as the public list shows it: obfuscated, its middle
    letters starred (dots kept, about a quarter of it shown at each end), as
    Mastodon's DomainBlock#public_domain."""
    if not obfuscate:
        return host
    n = len(host)
    shown = n // 4
    return "".join("*" if shown < i < n - shown and c != "." else c for i, c in enumerate(host))


@endpoint(
    "GET",
    "/api/v1/instance/domain_blocks",
    auth="optional",
    params=False,
    doc=Doc(
        "The servers this one limits or suspends, when its show_domain_blocks setting "
        "lets the caller see them (all; users: signed in): domain (starred when "
        "obfuscated), sha256 digest, severity, and the public comment when "
        "show_domain_blocks_rationale allows; otherwise 404, as Mastodon",
        INSTANCE_TAG,
        array(
            obj(
                {"domain": STR, "digest": STR, "severity": {"enum": ["silence", "suspend"]}},
                {"comment": STR},
            )
        ),
    ),
)
async def domain_blocks(ctx: Ctx) -> Response:
    settings = await ctx.rp.instance.instance_settings()
    signed_in = ctx.viewer is not None
    if not _shown_to(settings.get("show_domain_blocks", ""), signed_in):
        # Mastodon answers a bare 404 (head 404); the same status, with the
        # body every 404 of ours has (the contract's Error)
        raise ApiError(404, NOT_FOUND)
    rationale = _shown_to(settings.get("show_domain_blocks_rationale", ""), signed_in)
    blocks = [
        b for b in await ctx.rp.federation.domain_blocks() if b.severity in ("silence", "suspend")
    ]
    # Mastodon's order: silenced before suspended, then by domain
    blocks.sort(key=lambda b: (b.severity != "silence", b.host))
    out = []
    for b in blocks:
        entry = {
            "domain": public_domain(b.host, b.obfuscate),
            "digest": hashlib.sha256(b.host.encode()).hexdigest(),
            "severity": b.severity,
        }
        if rationale:
            entry["comment"] = b.public_comment
        out.append(entry)
    return JSON(out)
