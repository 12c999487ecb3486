"""ActivityPub's side of the HTTP API: WebFinger and host-meta, the actors
of local accounts and of the server, the notes of local statuses, the
collections' sizes, and the inboxes. Served only when REDPOLL_PUBLIC_URL
names this server (an actor's id must not change with the Host a client
used); 404 otherwise. Documents go out as ``application/activity+json``;
a browser asking for an actor's or a note's URL is sent to its page."""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..core import limits
from ..core.errors import RedpollError
from ..federation.inbox import Refused
from ..gateway.body import check_json_depth, read_body
from .contract import LOGIN_PARAM, STR, Doc, obj, path_param, query_param
from .routing import route

AP_TYPE = "application/activity+json"
DOC = obj({"id": STR, "type": STR})


class Activity(Response):
    media_type = AP_TYPE

    def render(self, content) -> bytes:
        return orjson.dumps(content)


def _wants_html(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "text/html" in accept and "json" not in accept


def _error(status: int, message: str) -> Response:
    return Response(orjson.dumps({"error": message}), status, media_type="application/json")


async def _guard(request: Request, call):
    try:
        return await call
    except Refused as exc:
        return _error(exc.status, str(exc))
    except RedpollError as exc:
        return _error(404 if "not" in type(exc).__name__.lower() else 422, str(exc))


@route(
    "GET",
    "/.well-known/webfinger",
    doc=Doc(
        "WebFinger: a local account by acct: or profile URL",
        "Federation",
        obj({"subject": STR, "links": {"type": "array"}}),
        ok_type="application/jrd+json",
        params=[query_param("resource", STR)],
    ),
)
async def webfinger(request: Request) -> Response:
    rp = request.app.state.rp
    resource = request.query_params.get("resource", "")

    async def answer():
        doc = await rp.federation.webfinger(resource)
        return Response(
            orjson.dumps(doc),
            media_type="application/jrd+json",
            headers={"Access-Control-Allow-Origin": "*"},
        )

    return await _guard(request, answer())


@route(
    "GET",
    "/.well-known/host-meta",
    doc=Doc("host-meta: where WebFinger is", "Federation", STR, ok_type="application/xrd+xml"),
)
async def host_meta(request: Request) -> Response:
    rp = request.app.state.rp

    async def answer():
        return Response(await rp.federation.host_meta(), media_type="application/xrd+xml")

    return await _guard(request, answer())


@route(
    "GET",
    "/users/{login}",
    doc=Doc(
        "A local account as an ActivityPub actor (a browser: its page)",
        "Federation",
        DOC,
        ok_type=AP_TYPE,
        params=[LOGIN_PARAM],
    ),
)
async def actor(request: Request) -> Response:
    login = request.path_params["login"]
    if _wants_html(request):
        return RedirectResponse(f"/@{login}", 302)
    rp = request.app.state.rp
    return await _guard(request, _doc(rp.federation.actor_document(login), request))


async def _doc(call, request: Request | None = None) -> Response:
    """The document ``call`` makes; under authorized fetch, only for a
    signed request (redpoll.engine Redpoll.authorize_fetch)."""
    if request is not None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        try:
            await request.app.state.rp.federation.authorize_fetch(
                "GET", target, {k.lower(): v for k, v in request.headers.items()}
            )
        except BaseException:
            call.close()  # (never awaited)
            raise
    return Activity(await call)


@route(
    "GET",
    "/actor",
    doc=Doc("The server's own actor (it signs fetches)", "Federation", DOC, ok_type=AP_TYPE),
)
async def instance_actor(request: Request) -> Response:
    return await _guard(request, _doc(request.app.state.rp.federation.instance_actor_document()))


@route(
    "GET",
    "/users/{login}/statuses/{id}",
    doc=Doc(
        "A public or unlisted status as a Note (a browser: its page)",
        "Federation",
        DOC,
        ok_type=AP_TYPE,
        params=[LOGIN_PARAM, path_param()],
    ),
)
async def note(request: Request) -> Response:
    login, sid = request.path_params["login"], request.path_params["id"]
    if _wants_html(request):
        return RedirectResponse(f"/@{login}/{sid}", 302)
    if not (sid.isascii() and sid.isdigit()):
        return _error(404, "Record not found")
    return await _guard(
        request, _doc(request.app.state.rp.federation.note_document(login, int(sid)), request)
    )


@route(
    "GET",
    "/users/{login}/quote_authorizations/{id}",
    doc=Doc(
        "A QuoteAuthorization this server issued for a quote of a local status (FEP-044f)",
        "Federation",
        DOC,
        ok_type=AP_TYPE,
        params=[LOGIN_PARAM, path_param()],
    ),
)
async def quote_authorization(request: Request) -> Response:
    login, sid = request.path_params["login"], request.path_params["id"]
    if not (sid.isascii() and sid.isdigit()):
        return _error(404, "Record not found")
    rp = request.app.state.rp
    return await _guard(
        request, _doc(rp.federation.quote_authorization_document(login, int(sid)), request)
    )


@route(
    "GET",
    "/users/{login}/statuses/{id}/replies",
    doc=Doc(
        "A note's replies collection (its public and unlisted replies)",
        "Federation",
        DOC,
        ok_type=AP_TYPE,
        params=[LOGIN_PARAM, path_param()],
    ),
)
async def replies(request: Request) -> Response:
    login, sid = request.path_params["login"], request.path_params["id"]
    if not (sid.isascii() and sid.isdigit()):
        return _error(404, "Record not found")
    return await _guard(
        request, _doc(request.app.state.rp.federation.replies_document(login, int(sid)), request)
    )


@route(
    "GET",
    "/users/{login}/collections/featured",
    doc=Doc(
        "An actor's pinned statuses, as Notes",
        "Federation",
        DOC,
        ok_type=AP_TYPE,
        params=[LOGIN_PARAM],
    ),
)
async def featured(request: Request) -> Response:
    return await _guard(
        request,
        _doc(
            request.app.state.rp.federation.collection_document(
                request.path_params["login"], "featured"
            ),
            request,
        ),
    )


@route(
    "GET",
    "/users/{login}/{collection}",
    doc=Doc(
        "An actor's outbox, followers or following, by size",
        "Federation",
        DOC,
        ok_type=AP_TYPE,
        params=[LOGIN_PARAM, path_param("collection")],
    ),
)
async def collection(request: Request) -> Response:
    login, which = request.path_params["login"], request.path_params["collection"]
    if which not in ("outbox", "followers", "following"):
        return _error(404, "Record not found")
    return await _guard(
        request, _doc(request.app.state.rp.federation.collection_document(login, which), request)
    )


@route(
    "POST",
    "/users/{login}/inbox",
    doc=Doc(
        "A local account's inbox: a signed activity",
        "Federation",
        STR,
        ok_status="202",
        params=[LOGIN_PARAM],
    ),
)
@route(
    "POST",
    "/inbox",
    doc=Doc("The shared inbox: a signed activity", "Federation", STR, ok_status="202"),
)
@route(
    "POST",
    "/actor/inbox",
    doc=Doc(
        "The server's own actor's inbox (a relay's answer to its Follow): a signed activity",
        "Federation",
        STR,
        ok_status="202",
    ),
)
async def inbox(request: Request) -> Response:
    rp = request.app.state.rp
    # bounded before anything else (no signature is checked yet): a declared
    # Content-Length over the limit is refused at once, a chunked body as
    # soon as it passes it (413), and a body nesting too deep (400) before
    # any JSON parser sees it
    body = await read_body(
        request,
        limits.FED_INBOX_MAX_BYTES,
        f"an activity is at most {limits.FED_INBOX_MAX_BYTES} bytes",
    )
    check_json_depth(body)
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    headers = {k.lower(): v for k, v in request.headers.items()}

    async def answer():
        await rp.federation.receive_activity("POST", target, headers, body)
        return Response(b"", 202)

    return await _guard(request, answer())
