"""What the URLs in entities point at: an account's page (``/@login``), a
status's page (``/@login/:id``) and the default avatar and header images.

``web_page`` answers with the web app's shell (``redpoll.web``), the app
starting on the page; the summary here shows until it does, and to readers
and link previews that run no JavaScript.
"""

from __future__ import annotations

import html
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from .. import web
from ..core.errors import RedpollError
from ..render import entities
from .context import Ctx
from .contract import LOGIN_PARAM, STR, Doc, path_param
from .responses import ApiError
from .routing import route
from .statuses import seen_status

STATIC = Path(__file__).with_name("static")
IMAGES = {name: (STATIC / f"{name}.png").read_bytes() for name in ("avatar", "header")}
IMAGE_HEADERS = {"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"}


@route(
    "GET",
    "/@{login}",
    doc=Doc("An account's page (HTML)", "Pages", STR, ok_type="text/html", params=[LOGIN_PARAM]),
)
@route(
    "GET",
    "/@{login}/{id}",
    doc=Doc(
        "A status's page (HTML)",
        "Pages",
        STR,
        ok_type="text/html",
        params=[LOGIN_PARAM, path_param()],
    ),
)
async def web_page(request: Request) -> Response:
    """``/@login``: the account; ``/@login/:id``: one of its statuses (a
    status id of another account is not found here, as on Mastodon)."""
    ctx = Ctx(request)
    e = html.escape
    try:
        await ctx._ip_hit()
        user = await ctx.rp.accounts.lookup(request.path_params["login"])
        sid = request.path_params.get("id")
        status = None
        if sid is not None:
            status = await seen_status(ctx, ctx.path_id())
            if status.user_id != user.id:
                raise ApiError(404, "Record not found")
    except ApiError as exc:  # rate limit, bad id
        return web.document(
            request,
            "Error" if exc.status != 404 else "Not found",
            f"<p>{e(exc.message)}</p>",
            exc.status,
        )
    except RedpollError:  # no such login (or not a login at all), no such status
        return web.document(request, "Not found", "<p>Nothing here.</p>", 404)
    if user.suspended:  # as the API shows it (entities.suspended_account): the login only
        return web.document(
            request, f"@{user.login}", f"<p>@{e(user.login)}</p><p>This account is suspended.</p>"
        )
    who = (
        f"<p><strong>{e(user.display_name)}</strong> @{e(user.login)}</p>"
        f"{entities.html_text(user.bio) if user.bio else ''}"
        f"<p>{user.posts} posts · {user.following} following · {user.followers} followers</p>"
    )
    if status is None:
        return web.document(request, f"{user.display_name} (@{user.login})", who)
    when = entities.iso(status.created_at)
    return web.document(
        request,
        f"{user.display_name}: status {status.id}",
        f"{who}<article>{entities.html_text(status.text)}"
        f"<p><time datetime={when}>{when}</time></p></article>",
    )


def _image(name: str):
    async def serve(request: Request) -> Response:
        return Response(IMAGES[name], media_type="image/png", headers=IMAGE_HEADERS)

    serve.__name__ = f"{name}_image"
    return serve


PNG = {"type": "string", "format": "binary"}
avatar_image = route(
    "GET",
    "/avatars/original/missing.png",
    doc=Doc("The default avatar", "Pages", PNG, ok_type="image/png"),
)(_image("avatar"))
thumbnail_image = route(
    "GET",
    "/thumbnail.png",
    doc=Doc("The server's thumbnail (instance v1 and v2)", "Pages", PNG, ok_type="image/png"),
)(_image("header"))
header_image = route(
    "GET",
    "/headers/original/missing.png",
    doc=Doc("The default header image", "Pages", PNG, ok_type="image/png"),
)(_image("header"))
