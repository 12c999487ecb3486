"""What of some statuses a viewer may see, with the counts and flags of
each, in one round trip: the check every page (redpoll.reading.pages) and
the notifications shown (redpoll.reading.notification_view) make at the
moment they show something."""

from __future__ import annotations

from ..conversations import thread_mutes
from ..core import keys
from ..core.models import Status
from ..filters import rules
from ..polls import polls
from ..records import state
from ..records.state import StatusState
from ..relations import visibility
from ..storage.store import Store

Checked = tuple[list[Status], dict[int, StatusState]]


async def checked(
    store: Store,
    viewer: int | None,
    statuses: list[Status],
    *,
    muted: bool = False,
    filters: list | None = None,
) -> Checked:
    """What of ``statuses`` the viewer may see (redpoll.relations.visibility) and the
    counts and flags of each (redpoll.records.state; a poll's votes:
    redpoll.polls), in one round trip. ``muted``: accounts the viewer mutes
    are left out too. ``filters``: a list that gets the version of the
    viewer's filters (read in the same round trip;
    redpoll.filters.rules.version_command)."""
    if not statuses:
        return [], {}
    # a page's authors were read with it (current at the rev it read)
    vis, decide = visibility.check(
        viewer, statuses, muted=muted, authors=getattr(statuses, "authors", None)
    )
    sids = [s.id for s in statuses]
    counts, parse = state.state_check(viewer, sids, getattr(statuses, "counts", None))
    votes, parse_polls = polls.state_reads(viewer, statuses)  # a poll's votes, beside them
    more = [rules.version_command(viewer)] if filters is not None and viewer is not None else []
    # the threads the viewer muted, among those the records name (an older
    # reply that does not name its thread shows unmuted here)
    threads = [thread_mutes.thread_of(s) or 0 for s in statuses] if viewer is not None else []
    mutes = [("SMISMEMBER", keys.thread_mutes(viewer), *threads)] if threads else []
    replies = await store.batch(vis + counts + votes + more + mutes)
    muted_threads = replies.pop() if mutes else []
    if more:
        filters.append(replies.pop())
    states = dict(zip(sids, parse(replies[len(vis) : len(vis) + len(counts)])))
    if votes:
        for sid, poll in parse_polls(replies[len(vis) + len(counts) :]).items():
            states[sid] = states[sid]._replace(poll=poll)
    for sid, flag in zip(sids, muted_threads):
        if flag:
            states[sid] = states[sid]._replace(muted=True)
    return decide(replies[: len(vis)]), states
