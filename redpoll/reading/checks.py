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
from ..quotes import keys as quote_keys
from ..quotes import quotes
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
    quoting, quote_reads, parse_quotes = quote_check(viewer, statuses)
    replies = await store.batch(vis + counts + votes + more + mutes + quote_reads)
    quote_replies = replies[len(replies) - len(quote_reads) :]
    del replies[len(replies) - len(quote_reads) :]
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
    for sid, fields in parse_quotes(quote_replies).items():
        states[sid] = states[sid]._replace(**fields)
    return decide(replies[: len(vis)]), states


def quote_check(viewer: int | None, statuses: list[Status]):
    """The reads of what quotes show (redpoll.quotes), beside the counts:
    each status's accepted quotes (quotes_count), whether the viewer follows
    the authors whose followers may quote them (QuoteApproval's
    current_user), and whether each quote was revoked, or is pending or
    rejected (a quote across servers: redpoll.quotes.set_state). Returns the quoting
    statuses, the commands and the parser of their replies (fields of
    StatusState by status id)."""
    quoting = [(s, q) for s in statuses if (q := quotes.quoted_id(s)) is not None]
    asks = list(dict.fromkeys(s.user_id for s in statuses if quotes.needs_follow(viewer, s)))
    commands: list[tuple] = [("ZCARD", quote_keys.quotes(s.id)) for s in statuses]
    commands += [("SISMEMBER", quote_keys.revoked(q), s.id) for s, q in quoting]
    commands += [("HGET", quote_keys.states(q), s.id) for s, q in quoting]
    if asks and viewer is not None:
        commands.append(("ZMSCORE", keys.following(viewer), *asks))

    def parse(replies: list) -> dict[int, dict]:
        counts = replies[: len(statuses)]
        revoked = replies[len(statuses) : len(statuses) + len(quoting)]
        held = replies[len(statuses) + len(quoting) : len(statuses) + 2 * len(quoting)]
        followed = (
            {a for a, score in zip(asks, replies[-1]) if score is not None} if asks else set()
        )
        out = {}
        for s, count in zip(statuses, counts):
            out[s.id] = {
                "quotes": int(count or 0),
                "quote_policy": quotes.policy(s),
                "quote_approval": quotes.decision(viewer, s, s.user_id in followed),
            }
        for (s, q), gone, kept in zip(quoting, revoked, held):
            shown = kept.decode() if isinstance(kept, bytes) else kept
            shown = quotes.REVOKED if gone else (shown or quotes.ACCEPTED)
            out[s.id] |= {"quoted": q, "quote_state": shown}
        return out

    return quoting, commands, parse
