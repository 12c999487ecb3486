"""The web app served at ``/``: a client of Redpoll's own public Mastodon API
and streaming API on the same origin (no private endpoints).

What ``pip install`` puts in place is what is served: plain ES modules, CSS
and an SVG icon in ``redpoll/web/static/`` (package data, no build step).
Every asset lives under ``/assets/<version>/``, where the version is a digest
of the whole static folder, so relative ``import``s between modules stay in
one version and the files can be cached for a year (``immutable``); the HTML
shell (one document for every app path, the router runs in the browser) is
``no-cache`` and carries a Content-Security-Policy that allows only this
origin: scripts, styles, images and fetch/WebSocket connections; images,
video and audio also from where media is kept (an S3 bucket) and, with
federation on, from other servers (a remote status's attachments are shown
from their own URLs).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..core import limits
from ..core.settings import Settings
from . import compress

STATIC = Path(__file__).with_name("static")
TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}


def _load() -> tuple[str, dict[str, bytes]]:
    files = {
        p.name: p.read_bytes()
        for p in sorted(STATIC.iterdir())
        if p.is_file() and p.suffix in TYPES
    }
    total = sum(len(b) for b in files.values())
    if total > limits.WEB_ASSETS_MAX_BYTES:  # the page budget, checked at import
        raise RuntimeError(f"web assets are {total} bytes, over {limits.WEB_ASSETS_MAX_BYTES}")
    h = hashlib.sha256()
    for name, body in files.items():
        h.update(name.encode() + b"\0" + body + b"\0")
    return h.hexdigest()[:16], files


VERSION, FILES = _load()
ASSETS = f"/assets/{VERSION}"

#: a module's static imports of its siblings (``import … from './x.js'``;
#: ``import('./x.js')``, a module loaded when needed, is not one)
_IMPORTS = re.compile(r"""(?:\bfrom|^import)\s+'\./([\w-]+\.js)'""", re.M)


def _static_graph(entry: str) -> list[str]:
    """``entry`` and every module it imports, directly or not, nearest first."""
    seen = [entry]
    for name in seen:
        for found in _IMPORTS.findall(FILES[name].decode()):
            if found not in seen:
                seen.append(found)
    return seen


#: what the shell tells the browser to fetch at once (``modulepreload``):
#: every module the app's first screen imports, so that the import graph's
#: depth (app.js, then views.js, then status.js, then media.js ...) is not a
#: chain of round trips; ``import()``-ed modules (moderation) are not among them
PRELOADED = _static_graph("early.js") + [
    m for m in _static_graph("app.js") if m not in _static_graph("early.js")
]


def csp(media: str = "") -> str:
    """The shell's Content-Security-Policy: everything from this origin only,
    but images, video and audio also from ``media`` (:func:`media_sources`)."""
    extra = f" {media}" if media else ""
    return (
        f"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:{extra}; "
        f"media-src 'self'{extra}; connect-src 'self'; manifest-src 'self'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    )


def media_sources(settings: Settings | None) -> str:
    """Where a status's images, videos and sounds may come from besides this
    origin: the S3 bucket's public address, and, with federation on, other
    servers (their attachments are shown from their own URLs: https, and
    http where federation may use it)."""
    if settings is None:
        return ""
    out = []
    if settings.s3_public_url:
        parts = urlsplit(settings.s3_public_url)
        out.append(f"{parts.scheme}://{parts.netloc}")
    if settings.public_url:
        out.append("https:")
        if settings.federation_loopback:
            out.append("http:")
    return " ".join(out)


CSP = csp()
SHELL_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def shell_headers(settings: Settings | None) -> dict[str, str]:
    """The shell's headers on a server with these settings."""
    media = media_sources(settings)
    return {**SHELL_HEADERS, "Content-Security-Policy": csp(media)} if media else SHELL_HEADERS


ASSET_HEADERS = {
    "Cache-Control": "public, max-age=31536000, immutable",
    "X-Content-Type-Options": "nosniff",
}


#: the page's background in each scheme (style.css's --bg), the colour of a
#: phone's browser bar; the manifest's theme is the logo's red
THEME_LIGHT, THEME_DARK, BRAND = "#f4f5f7", "#111318", "#c8102e"


def _manifest() -> bytes:
    """The web app manifest: what a browser needs to install the app (its
    name, icons, colours, where it starts, standalone)."""

    def icon(name: str, size: int, purpose: str = "any") -> dict[str, str]:
        return {
            "src": f"{ASSETS}/{name}",
            "sizes": f"{size}x{size}",
            "type": TYPES[Path(name).suffix],
            "purpose": purpose,
        }

    doc = {
        "name": "Redpoll",
        "short_name": "Redpoll",
        "description": "A small social network: post, follow people, talk.",
        "id": "/",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "theme_color": BRAND,
        "background_color": THEME_LIGHT,
        "icons": [
            icon("icon-192.png", 192),
            icon("icon-512.png", 512),
            icon("icon-maskable-512.png", 512, "maskable"),
            {
                "src": f"{ASSETS}/icon.svg",
                "sizes": "any",
                "type": "image/svg+xml",
                "purpose": "any",
            },
        ],
        "shortcuts": [
            {"name": "Notifications", "url": "/notifications"},
            {"name": "Explore", "url": "/explore"},
        ],
    }
    return json.dumps(doc, indent=1).encode()


MANIFEST = _manifest()


def _document(title: str, fallback: str) -> bytes:
    """The HTML shell; ``fallback`` (escaped HTML) shows until the app starts,
    and to a reader without JavaScript."""
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        "<meta name=color-scheme content='light dark'>"
        f"<title>{html.escape(title)}</title>"
        f"<link rel=icon href='{ASSETS}/icon.svg' type='image/svg+xml'>"
        f"<link rel=apple-touch-icon href='{ASSETS}/apple-touch-icon.png'>"
        "<link rel=manifest href='/manifest.webmanifest'>"
        f"<meta name=theme-color content='{THEME_LIGHT}' media='(prefers-color-scheme: light)'>"
        f"<meta name=theme-color content='{THEME_DARK}' media='(prefers-color-scheme: dark)'>"
        f"<link rel=stylesheet href='{ASSETS}/style.css'>"
        f"<link rel=stylesheet href='{ASSETS}/account.css'>"
        + "".join(f"<link rel=modulepreload href='{ASSETS}/{name}'>" for name in PRELOADED)
        + f"<script type=module src='{ASSETS}/early.js'></script>"
        f"<script type=module src='{ASSETS}/app.js'></script>"
        "</head><body><a class=skip href='#main'>Skip to content</a>"
        f"<div id=app><div class=fallback>{fallback}</div></div>"
        "<noscript>Redpoll's web app needs JavaScript; any Mastodon client works too.</noscript>"
        "</body></html>"
    ).encode()


SHELL = _document("Redpoll", "<p class=loading>Loading Redpoll…</p>")


def document(request: Request, title: str, fallback: str, status: int = 200) -> Response:
    """The app's shell with a server-rendered summary of the page (an account,
    a status) for readers and link previews that run no JavaScript."""
    return HTMLResponse(
        _document(f"{title} · Redpoll", fallback),
        status_code=status,
        headers=shell_headers(_settings(request)),
    )


def _settings(request: Request) -> Settings | None:
    return getattr(request.app.state, "settings", None)


async def shell(request: Request) -> Response:
    headers = shell_headers(_settings(request))
    if request.method == "HEAD":
        return Response(b"", media_type="text/html; charset=utf-8", headers=headers)
    return HTMLResponse(SHELL, headers=headers)


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    body = FILES.get(name)
    if body is None or request.path_params["version"] != VERSION:
        # an old version's file is gone: a reload fetches the new shell
        return Response(
            b"Not found",
            status_code=404,
            media_type="text/plain",
            headers={"Cache-Control": "no-store"},
        )
    return compress.answer(
        request, f"{VERSION}/{name}", body, TYPES[Path(name).suffix], ASSET_HEADERS
    )


#: Paths the browser-side router shows (one shell document for all of them);
#: ``/@login`` and ``/@login/:id``, the account and status pages, are the
#: API's (redpoll.api.pages.web_page), which answer the same shell with a
#: summary.
APP_PATHS = (
    "/",
    "/signin",
    "/signup",
    "/invite/{code}",
    "/oauth/callback",
    "/home",
    "/notifications",
    "/notifications/mentions",
    "/notifications/requests",
    "/notifications/requests/{id}",
    "/conversations",
    "/scheduled",
    "/explore",
    "/explore/posts",
    "/explore/tags",
    "/explore/links",
    "/explore/people",
    "/public",
    "/public/local",
    "/tags/{tag}",
    "/lists",
    "/lists/{id}",
    "/search",
    "/settings",
    "/settings/invites",
    "/settings/warnings",
    "/settings/{section}",
    "/moderation",
    "/moderation/{section}",
    "/moderation/{section}/{id}",
    "/bookmarks",
    "/favourites",
    "/@{login}/followers",
    "/@{login}/following",
    "/@{login}/tagged/{tag}",
    "/@{login}/with_replies",
    "/@{login}/media",
    "/@{login}/{id}/reblogs",
    "/@{login}/{id}/favourites",
    "/about",
)


#: The service worker (static/sw.js) is served at the root, not under the
#: versioned assets: a worker's scope is the folder of its script, and its
#: URL must stay the same for the browser to update it (so: no-cache).
WORKER_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}


async def service_worker(request: Request) -> Response:
    return compress.answer(
        request, f"{VERSION}/sw.js", FILES["sw.js"], TYPES[".js"], WORKER_HEADERS
    )


#: the manifest and /favicon.ico stay at their addresses (browsers ask for
#: them there): kept for an hour, not a year, then revalidated by the
#: static folder's version as their ETag
ETAG = f'"{VERSION}"'
ROOT_HEADERS = {
    "Cache-Control": "public, max-age=3600",
    "ETag": ETAG,
    "X-Content-Type-Options": "nosniff",
}


def _at_root(request: Request, name: str, body: bytes, media_type: str) -> Response:
    if ETAG in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=ROOT_HEADERS)
    return compress.answer(request, f"{VERSION}/{name}", body, media_type, ROOT_HEADERS)


async def manifest(request: Request) -> Response:
    return _at_root(request, "manifest", MANIFEST, "application/manifest+json")


async def favicon(request: Request) -> Response:
    return _at_root(request, "favicon.ico", FILES["favicon.ico"], TYPES[".ico"])


def routes() -> list[Route]:
    """The app's routes: its assets, the service worker, the manifest, the
    favicon and the shell of every path it shows."""
    out = [
        Route("/assets/{version}/{name}", asset, methods=["GET", "HEAD"]),
        Route("/sw.js", service_worker, methods=["GET", "HEAD"]),
        Route("/manifest.webmanifest", manifest, methods=["GET", "HEAD"]),
        Route("/favicon.ico", favicon, methods=["GET", "HEAD"]),
    ]
    out += [Route(path, shell, methods=["GET", "HEAD"]) for path in APP_PATHS]
    return out
