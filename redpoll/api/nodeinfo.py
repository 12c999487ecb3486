"""NodeInfo (nodeinfo.diaspora.software): what software this server runs and
how much it is used, read by apps that detect a server's kind before they
sign in to it (Whalebird and other megalodon-based apps) and by fediverse
crawlers. The software is named redpoll; ``metadata.upstream`` names the
Mastodon API it speaks, which is how such apps decide to talk Mastodon to it.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..core.version import __version__
from ..gateway import links
from ..render.entities import MASTODON_VERSION
from .contract import BOOL, INT, STR, Doc, obj
from .instance import cached_usage
from .responses import JSON
from .routing import route

SCHEMAS = ("2.0", "2.1")

DISCOVERY = obj({"links": {"type": "array", "items": obj({"rel": STR, "href": STR})}})
DOCUMENT = obj(
    {
        "version": STR,
        "software": obj({"name": STR, "version": STR}),
        "protocols": {"type": "array", "items": STR},
        "services": obj({"inbound": {"type": "array"}, "outbound": {"type": "array"}}),
        "openRegistrations": BOOL,
        "usage": obj(
            {
                "users": obj({"total": INT, "activeMonth": INT, "activeHalfyear": INT}),
                "localPosts": INT,
            }
        ),
        "metadata": {"type": "object"},
    }
)


@route(
    "GET",
    "/.well-known/nodeinfo",
    doc=Doc("Where this server's NodeInfo documents are", "Instance", DISCOVERY),
)
async def discovery(request: Request) -> Response:
    base = links.base_url(request.scope, request.app.state.settings.public_url)
    return JSON(
        {
            "links": [
                {
                    "rel": f"http://nodeinfo.diaspora.software/ns/schema/{v}",
                    "href": f"{base}/nodeinfo/{v}",
                }
                for v in SCHEMAS
            ]
        }
    )


async def _document(request: Request, version: str) -> Response:
    usage = (await cached_usage(request.app.state.rp))["usage"]
    software: dict[str, str | None] = {"name": "redpoll", "version": __version__}
    if version == "2.1":
        software |= {"repository": None, "homepage": None}
    return JSON(
        {
            "version": version,
            "software": software,
            # ActivityPub when this server knows its address (redpoll.federation)
            "protocols": ["activitypub"] if request.app.state.settings.public_url else [],
            "services": {"inbound": [], "outbound": []},
            "openRegistrations": True,
            "usage": usage,
            "metadata": {
                "nodeName": "Redpoll",
                "upstream": {"name": "mastodon", "version": MASTODON_VERSION},
            },
        }
    )


@route(
    "GET",
    "/nodeinfo/2.0",
    doc=Doc(
        "NodeInfo 2.0: software, usage (accounts active in the last month and "
        "half-year), registrations",
        "Instance",
        DOCUMENT,
    ),
)
async def nodeinfo_20(request: Request) -> Response:
    return await _document(request, "2.0")


@route("GET", "/nodeinfo/2.1", doc=Doc("NodeInfo 2.1", "Instance", DOCUMENT))
async def nodeinfo_21(request: Request) -> Response:
    return await _document(request, "2.1")
