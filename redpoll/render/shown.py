"""Statuses as a viewer is shown them (redpoll.reading.pages.Shown) made
Mastodon's Status entities: each with its author's account entity and its
counts and flags; a boost wraps its original's entity in ``reblog`` and
shows the original's counts and flags (as Mastodon's clients read them); a
boost whose original the viewer may not see (or that is gone) is left out.
:func:`rendered_pairs` serves plain statuses from the process's kept
renderings (render/rendered.py) and renders boosts whole."""

from __future__ import annotations

from collections.abc import Callable

import orjson

from ..core.models import Status
from ..reading.pages import Shown
from ..records.state import StatusState
from . import entities
from .rendered import RenderedStatuses

#: Renders one status (not a boost) as its entity; its second argument asks
#: for its ``source`` fields (an edit's answer).
Plain = Callable[[Status, bool], dict]


def entity_renderer(shown: Shown, base: str, viewer: bool) -> Plain:
    """The entity of a status of ``shown`` that is no boost, its quote (if
    any) a ShallowQuote (as a quoted status shows its own), each author's
    account entity made once."""
    accounts: dict[int, dict] = {}

    def entity(s: Status, source: bool) -> dict:
        author = accounts.get(s.user_id)
        if author is None:
            author = accounts[s.user_id] = entities.account(
                shown.users.get(s.user_id) or entities.placeholder_user(s), base
            )
        user = shown.users.get(s.user_id)
        return entities.status(
            s,
            author,
            base,
            viewer=viewer,
            with_source=source,
            state=shown.states[s.id],
            sensitized=user is not None and user.sensitized,
        )

    return entity


def plain_renderer(shown: Shown, base: str, viewer: bool) -> Plain:
    """The entity of a status of ``shown`` that is no boost, with its whole
    Quote (:func:`quote_of`)."""
    entity = entity_renderer(shown, base, viewer)

    def plain(s: Status, source: bool) -> dict:
        out = entity(s, source)
        state = shown.states[s.id]
        if state.quote_state:
            out["quote"] = quote_of(shown, state, entity)
        return out

    return plain


def quote_of(shown: Shown, state: StatusState, entity: Plain) -> dict | None:
    """The Quote entity of a status of ``shown`` with ``state``: the quoted
    status rendered by ``entity`` when the quote is accepted and the viewer
    may see it now (redpoll.reading.pages.quoted_shown)."""
    quoted = shown.quoted.get(state.quoted) if state.quote_state == "accepted" else None
    return entities.quote_entity(state, entity(quoted, False) if quoted is not None else None)


def boosted_entity(
    shown: Shown, boost: Status, inner: dict[int, dict], plain: Plain, base: str, viewer: bool
) -> dict | None:
    """The entity of ``boost``, wrapping its original's (rendered by
    ``plain``, kept in ``inner`` by id); None when the original is not in
    ``shown.originals``."""
    oid = boost.reblog_of
    original = shown.originals.get(oid) if oid is not None else None
    if original is None:
        return None
    entity = inner.get(original.id)
    if entity is None:
        entity = inner[original.id] = plain(original, False)
    booster = shown.users.get(boost.user_id) or entities.placeholder_user(boost)
    outer = entities.status(boost, entities.account(booster, base), base, viewer=viewer)
    outer |= {
        k: entity[k] for k in (*entities.STATE_FIELDS, *entities.VIEWER_FIELDS) if k in entity
    }
    outer["reblog"] = entity
    return outer


def status_entities(
    shown: Shown, base: str, viewer: bool, *, with_source: bool = False
) -> list[dict]:
    """The entities of ``shown.statuses``, in order (the module's rule)."""
    plain = plain_renderer(shown, base, viewer)
    inner: dict[int, dict] = {}
    out = []
    for s in shown.statuses:
        if not s.reblog_of:
            out.append(plain(s, with_source))
            continue
        entity = boosted_entity(shown, s, inner, plain, base, viewer)
        if entity is not None:
            out.append(entity)
    return out


def rendered_pairs(
    shown: Shown, base: str, viewer: bool, rendered: RenderedStatuses
) -> list[tuple[Status, bytes]]:
    """Each of ``shown.statuses`` with its JSON entity, in order, from the
    process's kept renderings (``rendered``: a kept one is served only while
    the status and author records this request read equal the ones it was
    made from). Boosts are rendered whole; one whose original is gone is
    left out."""
    statuses = shown.statuses
    whole: dict[int, bytes] = {}
    quotes: dict[int, bytes] = {}  # the Quote of each that quotes: rendered per request
    shallow = entity_renderer(shown, base, viewer)
    for s in statuses:
        state = shown.states.get(s.id)
        if state is not None and state.quote_state:
            quotes[s.id] = entities.quote_json(quote_of(shown, state, shallow))
    if any(s.reblog_of for s in statuses):
        plain = plain_renderer(shown, base, viewer)
        inner: dict[int, dict] = {}
        for s in statuses:
            if s.reblog_of:
                entity = boosted_entity(shown, s, inner, plain, base, viewer)
                if entity is not None:
                    whole[s.id] = orjson.dumps(entity)
        statuses = [s for s in statuses if not s.reblog_of or s.id in whole]
    parts = rendered.parts(
        statuses,
        shown.users,
        base,
        viewer,
        [shown.states[s.id] for s in statuses],
        whole=whole,
        quotes=quotes,
    )
    return list(zip(statuses, parts))
