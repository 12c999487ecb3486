"""Pages as a viewer is shown them: what of a read the viewer may see, with
everything rendering needs beside it (counts and flags, authors, the
originals boosts wrap), read in as few round trips as the reads allow.

The HTTP layer renders a :class:`Shown` without reading anything itself:
a status entity needs the status, its author and its state; a boost's
entity wraps its original's (when the viewer may see the original; a boost
whose original is gone or hidden is left out).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..collections.collections import Collection
from ..conversations import conversation, direct_messages
from ..conversations.direct_messages import Conversation
from ..core import limits, validate
from ..core.models import Page, Status, User
from ..filters import rules
from ..notifications import notifications, requests
from ..notifications.notifications import Notification
from ..records import statuses as statuses_
from ..records.state import StatusState
from ..records.users import get_users
from ..relations import visibility
from ..storage.store import Store
from . import notification_view
from .checks import checked


@dataclass
class Shown:
    """What a viewer is shown of some statuses.

    ``statuses``: the ones the viewer may see, in order; ``states``: the
    counts and flags of each (and of each original), by status id;
    ``users``: the authors of ``statuses`` and of the originals (and any
    other accounts the read was asked for), by id, unknown ones left out;
    ``originals``: the statuses the boosts among ``statuses`` wrap, by id,
    those the viewer may see; ``read``: the statuses as read, before
    anything was left out (a page's Link header pages on them);
    ``cursors``: a page's own cursors (favourites and bookmarks page by the
    time they were marked), one per status read, or None."""

    statuses: list[Status]
    states: dict[int, StatusState]
    users: dict[int, User]
    originals: dict[int, Status] = field(default_factory=dict)
    read: Sequence = ()
    cursors: list | None = None
    #: the statuses the accepted quotes among ``statuses`` and ``originals``
    #: show, by id: those the viewer may see now (their states in ``states``)
    quoted: dict[int, Status] = field(default_factory=dict)
    #: the collections notifications name that the viewer is shown, by id
    #: (redpoll.reading.notification_view)
    collections: dict[int, Collection] = field(default_factory=dict)


async def filtered(
    store: Store,
    viewer: int | None,
    statuses: list[Status],
    states: dict[int, StatusState],
    originals: dict[int, Status],
    context: str | None,
    version: list,
) -> list[Status]:
    """The viewer's filters (redpoll.filters.rules) applied to ``statuses``
    (boosts by the ``originals`` they wrap): those a ``hide`` filter meets
    left out, the others' ``filtered`` put in ``states`` (a boost's in its
    original's, which its entity shows)."""
    if viewer is None or not statuses:
        return statuses
    active = await (
        rules.active_at(store, viewer, version[0]) if version else rules.active(store, viewer)
    )
    if not active:
        return statuses
    kept = []
    for s in statuses:
        original = originals.get(s.reblog_of) if s.reblog_of else None
        result = active.apply(s, original, context=context, viewer=viewer)
        if result is None:
            kept.append(s)
        elif not result.hidden:
            key = original.id if original is not None else s.id
            if key in states:
                states[key] = states[key]._replace(filtered=result.json())
            kept.append(s)
    return kept


async def complete(
    store: Store,
    viewer: int | None,
    statuses: list[Status],
    states: dict[int, StatusState],
    *,
    authors: dict[int, User] | None = None,
    also_users: Iterable[int] = (),
    context: str | None = None,
    version: list | None = None,
) -> Shown:
    """``statuses`` (checked visible already, with their ``states``) with
    what rendering them needs: the originals their boosts wrap that the
    viewer may see, with their states (one round trip after reading them),
    and the authors of both that ``authors`` (records this request read
    already) does not hold, with ``also_users``, in one read. The viewer's
    filters in ``context`` are applied (:func:`filtered`; ``version``: their
    version as :func:`checked` read it)."""
    users = dict(authors or {})
    originals: dict[int, Status] = {}
    wrapped = list(dict.fromkeys(o for s in statuses if (o := s.reblog_of)))
    if wrapped:
        seen, more = await checked(store, viewer, await statuses_.get_statuses(store, wrapped))
        originals = {s.id: s for s in seen}
        states = {**states, **more}
    statuses = await filtered(store, viewer, statuses, states, originals, context, version or [])
    quoted, states = await quoted_shown(store, viewer, [*statuses, *originals.values()], states)
    wanted = [
        uid
        for uid in dict.fromkeys(
            (
                *(s.user_id for s in statuses),
                *(s.user_id for s in originals.values()),
                *(s.user_id for s in quoted.values()),
                *also_users,
            )
        )
        if uid not in users
    ]
    if wanted:
        users.update({u.id: u for u in await get_users(store, wanted)})
    return Shown(statuses, states, users, originals, quoted=quoted)


async def quoted_shown(
    store: Store,
    viewer: int | None,
    statuses: list[Status],
    states: dict[int, StatusState],
    *,
    nested: bool = True,
) -> tuple[dict[int, Status], dict[int, StatusState]]:
    """The statuses the accepted quotes among ``statuses`` show, decided
    now by the one visibility decision (redpoll.relations.visibility, as
    :func:`checked` asks it): one the viewer may not see makes its quote's
    state ``unauthorized``, a deleted one ``deleted`` (Mastodon's Quote
    states), and neither is shown. Returns them by id, and ``states`` with
    theirs and the quotes' states; ``nested``: the quotes those make are
    decided too (shown as ShallowQuotes: a hidden one names no id)."""
    wanted = list(
        dict.fromkeys(
            st.quoted
            for s in statuses
            if (st := states.get(s.id)) is not None and st.quote_state == "accepted"
        )
    )
    if not wanted:
        return {}, states
    found = await statuses_.get_statuses(store, wanted)
    seen, more = await checked(store, viewer, found)
    shown = {s.id: s for s in seen}
    present = {s.id for s in found}
    states = {**more, **states}
    for s in statuses:
        st = states.get(s.id)
        if st is None or st.quote_state != "accepted" or st.quoted in shown:
            continue
        gone = "deleted" if st.quoted not in present else "unauthorized"
        states[s.id] = st._replace(quote_state=gone)
    if nested:
        _, states = await quoted_shown(store, viewer, seen, states, nested=False)
    return shown, states


async def show(
    store: Store,
    viewer: int | None,
    statuses: list[Status],
    *,
    also_users: Iterable[int] = (),
    context: str | None = None,
) -> Shown:
    """``statuses`` as the viewer is shown them where they were asked for
    (by id, a thread, a notification, a search): no mutes applied.
    ``also_users``: more accounts to read with the authors; ``context``: the
    filters' context (redpoll.filters.rules)."""
    version: list = []
    shown, states = await checked(store, viewer, statuses, filters=version)
    out = await complete(
        store, viewer, shown, states, also_users=also_users, context=context, version=version
    )
    out.read = statuses
    return out


async def timeline(
    store: Store,
    viewer: int | None,
    statuses: list[Status],
    *,
    muted: bool = False,
    read: Sequence | None = None,
    cursors: list | None = None,
    context: str | None = None,
) -> Shown:
    """A page of statuses as the viewer is shown it. ``muted``: accounts the
    viewer mutes are left out too (the home, list, public and tag
    timelines; not a profile); the authors a :class:`~redpoll.core.models.Page`
    brought along are not read again. ``read``: what the Link header pages
    on, when not ``statuses``; ``cursors``: the page's own cursors;
    ``context``: the filters' context (redpoll.filters.rules)."""
    version: list = []
    shown, states = await checked(store, viewer, statuses, muted=muted, filters=version)
    out = await complete(
        store,
        viewer,
        shown,
        states,
        authors=getattr(statuses, "authors", None),
        context=context,
        version=version,
    )
    out.read, out.cursors = (statuses if read is None else read), cursors
    return out


def has_media(status: Status) -> bool:
    """Whether ``status`` has attachments of its own (a boost has none)."""
    return bool(status.extra.get("media"))


def of_origin_rule(origin: str | None) -> Callable[[Status], bool] | None:
    """``origin`` "local": statuses of this server; "remote": of other
    servers (they carry the ``uri`` of their origin); None: every one."""
    if origin is None:
        return None
    remote = origin == "remote"
    return lambda s: bool(s.extra.get("uri")) == remote


def _kept(page: Page, keep: Callable[[Status], bool] | None) -> Page:
    """The statuses of ``page`` that ``keep`` keeps, with what the read
    brought along."""
    if keep is None:
        return page
    return Page(
        [s for s in page if keep(s)], getattr(page, "authors", {}), getattr(page, "counts", None)
    )


def without_silenced(out: Shown) -> Shown:
    """A public or hashtag page without the statuses of accounts a moderator
    silenced (redpoll.moderation.admin_accounts), as Mastodon's public and
    tag feeds leave them out; the Link header still pages on what was read."""
    if any(u.silenced for u in out.users.values()):
        out.statuses = [
            s for s in out.statuses if not (u := out.users.get(s.user_id)) or not u.silenced
        ]
    return out


async def of_origin(
    store: Store, viewer: int | None, page: Page, origin: str | None, *, context: str
) -> Shown:
    """A public or hashtag page (mutes applied) of ``origin`` "local"
    (statuses of this server) or "remote" (of other servers: they carry the
    ``uri`` of their origin) or, None, both. The Link header pages on what
    was read, so a page short of the other origin's statuses pages on.
    (With ``only_media`` the engine reads such a page with :func:`filled`.)"""
    if origin is None:
        return without_silenced(await timeline(store, viewer, page, muted=True, context=context))
    kept = _kept(page, of_origin_rule(origin))
    return without_silenced(
        await timeline(store, viewer, kept, muted=True, read=page, context=context)
    )


async def filled(
    store: Store,
    viewer: int | None,
    read: Callable[..., Awaitable[Page]],
    cursors: dict,
    *,
    keep: Callable[[Status], bool] | None = None,
    reads: int = limits.HIDDEN_REFILL_READS,
    context: str = "home",
) -> Shown:
    """A page (``read(**cursors)`` reads one) as :func:`timeline` gives it
    (mutes applied), but reading on past what is not shown (muted or
    blocked accounts, private statuses of an ended follow, and what
    ``keep``, when given, does not keep) so that a page is still full: at
    most ``reads`` more reads, downward only (a ``min_id``/``since_id`` page
    is what it is). A page still short after them pages on (its Link) from
    the last status read. The home and list pages read this way, and the
    public and hashtag pages with ``only_media`` (``keep``: has_media, and
    the origin asked for)."""
    page = await read(**cursors)
    limit = validate.page_limit(cursors.get("limit"))
    version: list = []
    shown, known = await checked(store, viewer, _kept(page, keep), muted=True, filters=version)
    if "min_id" in cursors or "since_id" in cursors:
        out = await complete(
            store,
            viewer,
            shown,
            known,
            authors=getattr(page, "authors", None),
            context=context,
            version=version,
        )
        out.read = page
        return out
    everything, authors = list(page), dict(getattr(page, "authors", {}))
    for _ in range(reads):
        if len(shown) >= limit or len(page) < limit:
            break  # full, or the timeline's end
        page = await read(**{**cursors, "max_id": page[-1].id})
        everything += page
        authors.update(getattr(page, "authors", {}))
        more, more_known = await checked(store, viewer, _kept(page, keep), muted=True)
        shown, known = shown + more, known | more_known
    shown = shown[:limit]
    if len(shown) == limit:  # the Link goes on from the last one shown
        everything = [s for s in everything if s.id >= shown[-1].id]
    out = await complete(
        store, viewer, shown, known, authors=authors, context=context, version=version
    )
    out.read = Page(everything, authors)
    return out


async def profile(
    store: Store,
    viewer: int | None,
    page: Page,
    *,
    no_replies: bool = False,
    no_reblogs: bool = False,
    only_media: bool = False,
) -> Shown:
    """A profile page as the viewer is shown it (no mutes applied);
    ``no_replies`` leaves out replies to others (as Mastodon: replies to
    oneself, threads, stay), ``no_reblogs`` leaves out boosts,
    ``only_media`` statuses without attachments. The Link header pages on
    what was read."""
    if not (no_replies or no_reblogs or only_media):
        return await timeline(store, viewer, page, context="account")
    kept = [
        s
        for s in page
        if not (no_reblogs and s.reblog_of)
        and not (no_replies and s.replies_to_other)
        and not (only_media and not has_media(s))
    ]
    return await timeline(store, viewer, kept, read=page, context="account")


async def by_id(store: Store, viewer: int | None, sids: list[int]) -> Shown:
    """The statuses ``sids`` the viewer may see (unknown ones left out), as
    :func:`timeline` gives them."""
    return await timeline(store, viewer, await statuses_.get_statuses(store, sids))


async def one(store: Store, viewer: int | None, sid) -> Shown:
    """The status ``sid`` (StatusNotFound when there is none), as
    :func:`timeline` gives it: ``statuses`` is empty when the viewer may not
    see it."""
    return await timeline(store, viewer, [await statuses_.get_status(store, sid)])


async def marked(store: Store, viewer: int, rows: list[tuple[int, int]]) -> Shown:
    """Favourites or bookmarks: ``rows`` are (status id, mark) as their page
    read them; the page goes on by the marks."""
    found = await statuses_.get_statuses(store, [sid for sid, _ in rows])
    return await timeline(store, viewer, found, cursors=[mark for _, mark in rows])


async def thread(store: Store, viewer: int | None, sid) -> tuple[Shown, frozenset[int]]:
    """The thread around the status ``sid`` (StatusNotFound when the viewer
    may not see it): its ancestors then its descendants as the viewer is
    shown them (:func:`show`), and the ids of the ancestors."""
    status = await visibility.require(store, viewer, await statuses_.get_status(store, sid))
    ancestors, descendants = await conversation.context(store, status)
    found = await statuses_.get_statuses(store, [*ancestors, *descendants])
    return await show(store, viewer, found, context="thread"), frozenset(ancestors)


async def accounts(store: Store, rows: list[tuple[int, int]]) -> tuple[list[User], list[int]]:
    """A page of (user id, mark) rows (blocks, mutes, follow requests): the
    accounts that still exist, in order, and every row's mark (the page goes
    on by them)."""
    found = {u.id: u for u in await get_users(store, [uid for uid, _ in rows])}
    return [found[uid] for uid, _ in rows if uid in found], [mark for _, mark in rows]


async def conversations(
    store: Store, viewer: int, convs: list[Conversation]
) -> tuple[Shown, dict[int, Status]]:
    """What direct conversations show: their last statuses as the viewer is
    shown them (:func:`show`), read with the accounts taking part in them
    (``users``), and every last status read, by id (the accounts of one the
    viewer may no longer see still show)."""
    found = await statuses_.get_statuses(store, [c.last_status for c in convs])
    people = {uid for s in found for uid in direct_messages.participants(s)} - {viewer}
    shown = await show(store, viewer, found, also_users=sorted(people))
    return shown, {s.id: s for s in found}


async def notes_shown(
    store: Store, owner: int, notes: Sequence[Notification]
) -> tuple[list[Notification], Shown]:
    """The notifications shown to ``owner`` now (redpoll.reading.notification_view),
    and the statuses they name as the owner is shown them, read with the
    accounts that acted (``users``: those that still exist)."""
    found = await notification_view.seen(store, owner, notes, states=True)
    actors = list(dict.fromkeys(n.actor for n in found.notes))
    statuses = list(found.statuses.values())
    # their visibility, counts and flags were read in this request a moment ago
    out = await complete(
        store,
        owner,
        statuses,
        found.states,
        also_users=actors,
        context="notifications",
        version=found.version,
    )
    out.read = statuses
    out.collections = found.collections
    return found.notes, out


async def notification_page(
    store: Store, owner: int, **query
) -> tuple[list[Notification], list[Notification], Shown]:
    """A page of notifications (redpoll.notifications.notifications.page): as read (the
    Link header pages on it), those shown (:func:`notes_shown`) and what
    they name."""
    notes = await notifications.page(store, owner, **query)
    return (notes, *await notes_shown(store, owner, notes))


async def notification(store: Store, owner: int, nid) -> tuple[list[Notification], Shown]:
    """One notification (NotificationNotFound when there is none), as
    :func:`notes_shown` gives it: none when it is not shown now."""
    return await notes_shown(store, owner, [await notifications.get(store, owner, nid)])


async def side_lists(
    store: Store, owner: int, account_ids: Iterable[int], status_ids: Iterable[int]
) -> tuple[list[int], Shown]:
    """The accounts and statuses grouped notifications name, each once: the
    ids of the accounts not hidden from ``owner`` (in order), and the
    statuses as the owner is shown them, read with those accounts
    (``users``: those that still exist)."""
    account_ids = list(account_ids)
    hidden = await notification_view.hidden_actors(store, owner, account_ids)
    shown_ids = [a for a in dict.fromkeys(account_ids) if a not in hidden]
    found = await statuses_.get_statuses(store, list(dict.fromkeys(status_ids)))
    return shown_ids, await show(store, owner, found, also_users=shown_ids, context="notifications")


async def notification_groups(
    store: Store, owner: int, **query
) -> tuple[list[notifications.Group], list[int], Shown]:
    """A page of notification groups (redpoll.notifications.notifications.group_page) and
    what they name (:func:`side_lists`)."""
    groups = await notifications.group_page(store, owner, **query)
    ids, shown = await side_lists(
        store,
        owner,
        [a for g in groups for a in (g.first.actor, *g.sample_account_ids)],
        [g.first.status for g in groups if g.first.status],
    )
    shown.collections = await notification_view.collections_shown(
        store, owner, [g.first for g in groups]
    )
    return groups, ids, shown


async def notification_group(
    store: Store, owner: int, group_key, most: int
) -> tuple[notifications.WholeGroup, list[int], Shown]:
    """One notification group whole, its newest ``most`` notifications
    (NotificationNotFound when there is none), and what it names
    (:func:`side_lists`)."""
    whole = await notifications.group(store, owner, group_key, most)
    first = whole.notifications[0]
    ids, shown = await side_lists(
        store, owner, [n.actor for n in whole.notifications], [first.status] if first.status else []
    )
    shown.collections = await notification_view.collections_shown(store, owner, [first])
    return whole, ids, shown


# --- notification requests ---------------------------------------------------------------
async def requests_shown(
    store: Store, owner: int, found: Sequence[requests.Request]
) -> tuple[list[requests.Request], Shown]:
    """The requests of ``found`` shown to ``owner`` now, in order (their
    sender exists and is not hidden from the owner: redpoll.reading.notification_view),
    and their last statuses as the owner is shown them (one deleted or no
    longer visible is not among ``shown.statuses``: it renders as null)."""
    ids, shown = await side_lists(
        store,
        owner,
        [r.actor for r in found],
        [r.last_status for r in found if r.last_status],
    )
    keep = set(ids)
    return [r for r in found if r.actor in keep and r.actor in shown.users], shown


async def notification_requests(
    store: Store, owner: int, *, max_id=None, since_id=None, min_id=None, limit=None
) -> tuple[list[requests.Request], list[requests.Request], Shown]:
    """A page of notification requests: as read (the Link header pages on
    it) and those shown now, reading on past hidden ones up to
    limits.NOTIFICATION_REQUESTS_SCAN_MAX requests."""
    size = validate.page_limit(
        limit, limits.NOTIFICATION_REQUESTS_PAGE_DEFAULT, limits.NOTIFICATION_REQUESTS_PAGE_MAX
    )
    read: list[requests.Request] = []
    kept: list[requests.Request] = []
    cursors = {"max_id": max_id, "since_id": since_id, "min_id": min_id}
    upward = min_id not in (None, "")
    while len(kept) < size and len(read) < limits.NOTIFICATION_REQUESTS_SCAN_MAX:
        batch = await requests.read(store, owner, **cursors, size=size)
        if not batch:
            break
        read.extend(batch)
        shown_now, _ = await requests_shown(store, owner, batch)
        kept.extend(shown_now)
        if len(batch) < size:
            break
        if upward:  # the batch is newest first: go on above its newest
            cursors["min_id"] = batch[0].id
        else:
            cursors["max_id"] = batch[-1].id
    if upward:  # the nearest to min_id are the page
        kept = sorted(kept, key=lambda r: r.id)[:size][::-1]
        read = sorted(read, key=lambda r: -r.id)
    else:
        kept = kept[:size]
    if len(kept) >= size:  # a full page pages on from its own ends
        read = kept
    shown_requests, shown = await requests_shown(store, owner, kept)
    return read, shown_requests, shown


async def notification_request(
    store: Store, owner: int, rid
) -> tuple[list[requests.Request], Shown]:
    """One request (RequestNotFound when there is none), as
    :func:`requests_shown` gives it: none when it is not shown now."""
    return await requests_shown(store, owner, [await requests.get(store, owner, rid)])


async def policy_summary(store: Store, owner: int) -> tuple[int, int]:
    """(pending requests, notifications they hold) of the owner's first
    limits.NOTIFICATION_REQUEST_COUNT_MAX requests shown now (Mastodon's
    summary, which counts at most that many)."""
    found = await requests.read(store, owner, size=limits.NOTIFICATION_REQUEST_COUNT_MAX)
    shown, _ = await requests_shown(store, owner, found)
    return len(shown), sum(r.count for r in shown)
