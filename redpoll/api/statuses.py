"""Statuses and timelines."""
from __future__ import annotations

import re

import orjson
from starlette.responses import Response

from .. import boosts, idempotency, interactions, limits, validate, visibility
from ..errors import Forbidden, ValidationError
from ..models import Page, Status
from ..render import entities
from .http import JSON, NOT_FOUND, ApiError, Ctx, endpoint, link_header

VISIBILITIES = visibility.ALL


async def seen_status(ctx: Ctx, sid: int) -> Status:
    """The status ``sid`` if the caller may see it (redpoll.visibility);
    404 otherwise, as for a status that does not exist."""
    return await visibility.require(ctx.rp.store, ctx.viewer, await ctx.rp.get_status(sid))


async def states(ctx: Ctx, statuses: list[Status]) -> list[interactions.StatusState]:
    """Counts and the caller's flags for each status (one round trip)."""
    return await interactions.states(ctx.rp.store, ctx.viewer, [s.id for s in statuses])


async def render_boosts(ctx: Ctx, statuses: list[Status]) -> dict[int, dict]:
    """The entities of the boosts among ``statuses``, by id: each wraps its
    original's entity in ``reblog`` and shows the original's counts and
    flags (as Mastodon's clients read them). A boost whose original is gone
    is left out."""
    boosts_ = [s for s in statuses if boosts.original_of(s)]
    if not boosts_:
        return {}
    originals = await ctx.rp.get_statuses(list(dict.fromkeys(boosts.original_of(s)
                                                              for s in boosts_)))
    inner = {int(e["id"]): e for e in await render_statuses(ctx, originals)}
    users = await ctx.rp.get_users(list(dict.fromkeys(s.user_id for s in boosts_)))
    accounts = {u.id: entities.account(u, ctx.base) for u in users}
    out = {}
    for s in boosts_:
        entity = inner.get(boosts.original_of(s))
        if entity is None:
            continue
        account = accounts.get(s.user_id) or entities.account(entities.placeholder_user(s),
                                                              ctx.base)
        outer = entities.status(s, account, ctx.base, viewer=ctx.viewer is not None)
        outer |= {k: entity[k] for k in (*entities.STATE_FIELDS, *entities.VIEWER_FIELDS)
                  if k in entity}
        outer["reblog"] = entity
        out[s.id] = outer
    return out


async def render_statuses(ctx: Ctx, statuses: list[Status], *, with_source: bool = False) -> list[dict]:
    """Statuses with their authors' account entities (one read for all authors)
    and their counts and flags as the caller sees them now; boosts wrap
    their original (render_boosts)."""
    statuses = await visibility.visible(ctx.rp.store, ctx.viewer, statuses)
    if not statuses:
        return []
    wrapped = await render_boosts(ctx, statuses)
    if wrapped or any(boosts.original_of(s) for s in statuses):
        plain = await render_statuses(ctx, [s for s in statuses if not boosts.original_of(s)],
                                      with_source=with_source)
        by_id = {int(e["id"]): e for e in plain} | wrapped
        return [by_id[s.id] for s in statuses if s.id in by_id]
    authors = await ctx.rp.get_users(list(dict.fromkeys(s.user_id for s in statuses)))
    base = ctx.base
    accounts = {u.id: entities.account(u, base) for u in authors}
    viewer = ctx.viewer is not None
    out = []
    for s, state in zip(statuses, await states(ctx, statuses)):
        author = accounts.get(s.user_id)
        if author is None:
            author = accounts[s.user_id] = entities.account(entities.placeholder_user(s), base)
        out.append(entities.status(s, author, base, viewer=viewer, with_source=with_source,
                                   state=state))
    return out


Checked = tuple[list[Status], dict[int, interactions.StatusState]]


async def checked(ctx: Ctx, statuses: list[Status], *, muted: bool = False) -> Checked:
    """What of ``statuses`` the caller may see (redpoll.visibility) and the
    counts and flags of each (redpoll.interactions), in one round trip."""
    if not statuses:
        return [], {}
    # a page's authors were read with it (current at the rev it read)
    vis, decide = visibility.check(ctx.viewer, statuses, muted=muted,
                                   authors=getattr(statuses, "authors", None))
    sids = [s.id for s in statuses]
    counts, parse = interactions.state_check(ctx.viewer, sids,
                                             getattr(statuses, "counts", None))
    replies = await ctx.rp.store.batch(vis + counts)
    return decide(replies[:len(vis)]), dict(zip(sids, parse(replies[len(vis):])))


async def filled_timeline(ctx: Ctx, read, cursors: dict) -> Response:
    """A home or list page as :func:`timeline_response` gives it (mutes
    applied), but reading on past what the caller may not see (muted or
    blocked accounts, private statuses of an ended follow) so that a page is
    still full: at most ``limits.HIDDEN_REFILL_READS`` more reads, downward
    only (a ``min_id``/``since_id`` page is what it is)."""
    page = await read(**cursors)
    limit = validate.page_limit(cursors.get("limit"))
    shown, known = await checked(ctx, page, muted=True)
    if "min_id" in cursors or "since_id" in cursors:
        return await timeline_response(ctx, page, seen=(shown, known))
    everything, authors = list(page), dict(getattr(page, "authors", {}))
    for _ in range(limits.HIDDEN_REFILL_READS):
        if len(shown) >= limit or len(page) < limit:
            break  # full, or the timeline's end
        page = await read(**{**cursors, "max_id": page[-1].id})
        everything += page
        authors.update(getattr(page, "authors", {}))
        more, more_known = await checked(ctx, page, muted=True)
        shown, known = shown + more, known | more_known
    shown = shown[:limit]
    if len(shown) == limit:  # the Link goes on from the last one shown
        everything = [s for s in everything if s.id >= shown[-1].id]
    return await timeline_response(ctx, Page(everything, authors), seen=(shown, known))


async def timeline_response(ctx: Ctx, statuses: list[Status], *, cursors: list | None = None,
                            muted: bool = False, seen: Checked | None = None) -> Response:
    """A page of statuses, from the process's kept renderings (render/rendered.py)
    with the counts and flags read now; authors the page did not bring along
    are read here. ``cursors`` (one per status) go into the Link header
    instead of the status ids (favourites and bookmarks page by their own).
    ``muted``: accounts the caller mutes are left out too (the home, list,
    public and tag timelines; not a profile). ``seen``: :func:`checked`'s
    answer for ``statuses`` when the caller has it already."""
    page = statuses  # the Link header pages on what was read
    statuses, known = seen if seen is not None else await checked(ctx, statuses, muted=muted)
    body = b"[" + b",".join(await rendered_entities(ctx, statuses, known,
                                                     getattr(page, "authors", {}))) + b"]"
    links = (link_header(ctx, cursors, key=lambda c: c) if cursors is not None
             else link_header(ctx, page))
    return Response(body, media_type=JSON.media_type, headers=links)


async def rendered_entities(ctx: Ctx, statuses: list[Status],
                            known: dict[int, interactions.StatusState],
                            authors: dict | None = None) -> list[bytes]:
    """The JSON entities of ``statuses`` (already checked visible, with
    their ``known`` counts and flags: :func:`checked`), in order, from the
    process's kept renderings (render/rendered.py: a kept one is served only
    while the status and author records this request read equal the ones it
    was made from); the authors ``authors`` does not hold are read here.
    Boosts are rendered whole (render_boosts); one whose original is gone is
    left out."""
    authors = authors or {}
    missing = [uid for uid in dict.fromkeys(s.user_id for s in statuses) if uid not in authors]
    if missing:
        authors = {**authors, **{u.id: u for u in await ctx.rp.get_users(missing)}}
    wrapped: dict = {}
    if any(boosts.original_of(s) for s in statuses):  # boosts: rendered whole
        wrapped = await render_boosts(ctx, statuses)
        statuses = [s for s in statuses if not boosts.original_of(s) or s.id in wrapped]
    return ctx.request.app.state.rendered.parts(
        statuses, authors, ctx.base, ctx.viewer is not None, [known[s.id] for s in statuses],
        whole={sid: orjson.dumps(entity) for sid, entity in wrapped.items()})


# --- statuses -------------------------------------------------------------------------------
_LANGUAGE = re.compile(r"[a-z]{2,3}(?:[-_][a-z0-9]{2,8})?")


def _post_options(ctx: Ctx, text_chars: int) -> dict:
    """The documented POST /api/v1/statuses parameters beyond ``status``, as
    the engine's status extras (echoed by the entity). Clients send them all
    with every post, empty or false; what redpoll cannot do is refused with a
    422 naming the parameter, never silently dropped."""
    p = ctx.params
    media = p.raw("media_ids")
    if media not in (None, "", []):  # clients send an empty list with every post
        raise ValidationError("media_ids", "media attachments are not supported")
    if p.has("poll"):
        raise ValidationError("poll", "polls are not supported")
    if p.has("scheduled_at"):
        raise ValidationError("scheduled_at", "scheduled statuses are not supported")
    extra = {}
    visibility = p.str("visibility", max_chars=20)
    if visibility is not None:  # none named: the author's default (posting.prepare)
        if visibility not in VISIBILITIES:
            raise ValidationError("visibility", "must be one of " + ", ".join(VISIBILITIES))
        extra["visibility"] = visibility
    spoiler = (p.str("spoiler_text", max_chars=limits.SPOILER_TEXT_MAX_CHARS) or "").strip()
    if spoiler:
        if len(spoiler) + text_chars > limits.STATUS_MAX_CHARS:
            raise ValidationError("spoiler_text", "the text and the content warning together "
                                                  f"exceed {limits.STATUS_MAX_CHARS} characters")
        extra["spoiler_text"] = spoiler
    if p.bool("sensitive") or spoiler:  # a content warning hides the text (Mastodon)
        extra["sensitive"] = "true"
    language = p.str("language", max_chars=16)
    if language:
        language = language.lower()
        if not _LANGUAGE.fullmatch(language):
            raise ValidationError("language", "must be an ISO 639 language code")
        extra["language"] = language
    return extra


def _location(ctx: Ctx) -> dict:
    """Twitter's statuses/update ``lat`` and ``long``, as the engine's location extra."""
    lat, lon = ctx.params.number("lat"), ctx.params.number("long")
    if lat is None and lon is None:
        return {}
    if lat is None or lon is None:
        raise ValidationError("lat" if lat is None else "long", "lat and long go together")
    if not -90 <= lat <= 90:
        raise ValidationError("lat", "must be between -90 and 90")
    if not -180 <= lon <= 180:
        raise ValidationError("long", "must be between -180 and 180")
    return {"location": f"{lat!r},{lon!r}"}


@endpoint(auth="required", scope="write:statuses")
async def post_status(ctx: Ctx) -> Response:
    text = ctx.params.str("status", required=True, max_chars=100_000)
    extra = _post_options(ctx, len(text)) | _location(ctx)
    reply_to = ctx.params.cursor("in_reply_to_id")  # an unknown one: 404, nothing posted
    if reply_to is not None:  # nor a reply to what the caller may not see
        await seen_status(ctx, reply_to)
    key = ctx.request.headers.get("idempotency-key")
    if key is not None:
        status = await idempotency.post_once(ctx.rp, ctx.uid, key, text, extra, reply_to)
    else:
        status = await ctx.rp.post(ctx.uid, text, extra, reply_to)
    return JSON((await render_statuses(ctx, [status]))[0])


@endpoint(auth="optional", scope="read:statuses")
async def get_status(ctx: Ctx) -> Response:
    """From the kept renderings the timelines use, under the same rule
    (:func:`rendered_entities`); visibility and the counts and flags in one
    round trip (:func:`checked`). A status the caller may not see, or a
    boost whose original is gone, is a 404."""
    status = await ctx.rp.get_status(ctx.path_id())
    shown, known = await checked(ctx, [status])
    entities_ = await rendered_entities(ctx, shown, known) if shown else []
    if not entities_:
        raise ApiError(404, NOT_FOUND)
    return Response(entities_[0], media_type=JSON.media_type)


@endpoint(auth="optional", scope="read:statuses")
async def get_statuses(ctx: Ctx) -> Response:
    ids = list(dict.fromkeys(ctx.params.ids("id")))
    shown, known = await checked(ctx, await ctx.rp.get_statuses(ids))  # as get_status
    return Response(b"[" + b",".join(await rendered_entities(ctx, shown, known)) + b"]",
                    media_type=JSON.media_type)


@endpoint(auth="required", scope="write:statuses")
async def delete_status(ctx: Ctx) -> Response:
    status = await seen_status(ctx, ctx.path_id())
    try:
        await ctx.rp.delete_status(status.id, ctx.uid)
    except Forbidden:  # Mastodon answers 404 for statuses that are not yours
        raise ApiError(404, NOT_FOUND) from None
    return JSON((await render_statuses(ctx, [status], with_source=True))[0])


# --- timelines ------------------------------------------------------------------------------
@endpoint(auth="required", scope="read:statuses")
async def home(ctx: Ctx) -> Response:
    return await filled_timeline(ctx, lambda **c: ctx.rp.home_timeline(ctx.uid, **c),
                                 ctx.params.cursors())


@endpoint(auth="optional", scope="read:statuses")
async def public(ctx: Ctx) -> Response:
    p = ctx.params
    local, remote, only_media = p.bool("local"), p.bool("remote"), p.bool("only_media")
    cursors = p.cursors()
    if (remote and not local) or only_media:  # no remote statuses, no media here
        return JSON([])
    return await timeline_response(ctx, await ctx.rp.public_timeline(**cursors), muted=True)


@endpoint(auth="required", scope="read:lists")
async def list_timeline(ctx: Ctx) -> Response:
    lid = ctx.path_id("list_id")
    return await filled_timeline(ctx, lambda **c: ctx.rp.list_timeline(ctx.uid, lid, **c),
                                 ctx.params.cursors())
