"""Status entities rendered to JSON once per HTTP process.

A status's record rarely changes after it is posted (an edit,
StatusWrites.update_status, gives it a new version; a delete removes it), so its
entity's JSON is made once and its bytes reused for every page, and every
single-status answer (api/statuses.rendered_entities), that shows it. What does change (counts, the viewer's flags:
``interactions.StatusState``; a poll's votes and whether it ended) is never
kept: the kept bytes stop before the closing brace and each request appends
the state it read. The entity embeds the author's account, which does
change (counts, profile): a kept rendering is used only while the status and
author records it was made from equal the ones the request just read, so
nothing served is staler than the records the request itself read (and a
wiped database that hands out the same status id again is no trap).
"""

from __future__ import annotations

import orjson

from ..core import limits
from ..core.memo import Bounded
from ..core.models import Status, User
from ..records.state import NONE, StatusState
from . import entities


class RenderedStatuses:
    def __init__(
        self,
        limit: int = limits.API_RENDERED_STATUSES,
        accounts: int = limits.API_RENDERED_ACCOUNTS,
    ):
        self._kept: Bounded[tuple[Status, User, bytes]] = Bounded(limit)
        self._accounts: Bounded[tuple[User, bytes]] = Bounded(accounts)

    def account(self, user: User, base: str) -> bytes:
        """The account entity of ``user`` as JSON bytes, kept by the same
        rule as a status's: served only while the record this request read
        equals the one it was made from (a profile edit, a new follower or
        post gives the account a new record, so a new rendering)."""
        key = (user.id, base)
        kept = self._accounts.get(key)
        if kept is not None and (kept[0] is user or kept[0] == user):
            if kept[0] is not user:
                self._accounts.put(key, (user, kept[1]))  # the next identity check passes
            return kept[1]
        # copied, as a head is: orjson's bytes keep its larger output buffer
        body = bytes(memoryview(orjson.dumps(entities.account(user, base))))
        self._accounts.put(key, (user, body))
        return body

    def head(self, status: Status, author: User, base: str) -> bytes:
        """The status entity without its state fields, as JSON bytes cut
        before the closing brace (``entities.state_json`` closes it)."""
        key = (status.id, base)
        kept = self._kept.get(key)
        # unchanged records are most often the very same objects (the engine
        # keeps decoded ones), which makes the check two comparisons
        if (
            kept is not None
            and (kept[0] is status or kept[0] == status)
            and (kept[1] is author or kept[1] == author)
        ):
            if kept[0] is not status or kept[1] is not author:
                # equal records decoded anew (two requests that missed the
                # record memo together, or a read that bypasses it): keep
                # these objects, so that the next page that brings them
                # passes array()'s identity check instead of comparing
                # every field again
                self._kept.put(key, (status, author, kept[2]))
            return kept[2]
        # copied: orjson's bytes keep its whole output buffer (~16 KB here)
        # behind a 1.3 KB entity, 165 MB against 28 MB for 20,000 kept
        body = bytes(
            memoryview(
                orjson.dumps(
                    entities.status(
                        status,
                        entities.account(author, base),
                        base,
                        state=None,
                        sensitized=author.sensitized,
                    )
                )
            )
        )[:-1]
        self._kept.put(key, (status, author, body))
        return body

    def json(
        self, status: Status, author: User, base: str, viewer: bool, state: StatusState = NONE
    ) -> bytes:
        """The status entity as JSON bytes, as ``entities.status`` renders it
        (a quote without its quoted status: ``parts`` takes those)."""
        head = self.head(status, author, base) + _quote_part(state)
        if "poll" in status.extra:  # votes and the clock: rendered per request
            return (
                head
                + entities.poll_json(status, state, viewer)
                + entities.state_json(state._replace(poll=None), viewer)
            )
        return head + entities.state_json(state, viewer)

    def array(
        self,
        statuses: list[Status],
        authors: dict[int, User],
        base: str,
        viewer: bool,
        states: list[StatusState] | None = None,
        whole: dict[int, bytes] | None = None,
    ) -> bytes:
        """A JSON array of status entities (:meth:`parts`)."""
        return b"[" + b",".join(self.parts(statuses, authors, base, viewer, states, whole)) + b"]"

    def parts(
        self,
        statuses: list[Status],
        authors: dict[int, User],
        base: str,
        viewer: bool,
        states: list[StatusState] | None = None,
        whole: dict[int, bytes] | None = None,
        quotes: dict[int, bytes] | None = None,
    ) -> list[bytes]:
        """The JSON entity of each status, in order; ``authors`` by id (a
        status whose author record is gone is shown with what the status
        itself knows); ``states`` in the order of ``statuses`` (none: zero
        counts); ``whole``: entities rendered by the caller, by id (boosts);
        ``quotes``: the ``quote`` fields rendered by the caller, by id
        (entities.quote_json; a status without one shows ``null``)."""
        parts = []
        kept_get = self._kept.get
        state_json = entities.state_json
        for i, status in enumerate(statuses):
            if whole and status.id in whole:
                parts.append(whole[status.id])
                continue
            author = authors.get(status.user_id) or entities.placeholder_user(status)
            kept = kept_get((status.id, base))  # head()'s hit path, inline
            if kept is not None and kept[0] is status and kept[1] is author:
                head = kept[2]
            else:
                head = self.head(status, author, base)
            state = states[i] if states else NONE
            if quotes and status.id in quotes:
                head = head + quotes[status.id]
            else:
                head = head + _quote_part(state)
            if "poll" in status.extra:  # votes and the clock: rendered per request
                parts.append(
                    head
                    + entities.poll_json(status, state, viewer)
                    + state_json(state._replace(poll=None), viewer)
                )
            else:
                parts.append(head + state_json(state, viewer))
        return parts


_NO_QUOTE = b',"quote":null'


def _quote_part(state: StatusState) -> bytes:
    """The ``quote`` field of a status whose caller rendered none: null, or
    its state alone (entities.quote_entity)."""
    if not state.quote_state:
        return _NO_QUOTE
    return entities.quote_json(entities.quote_entity(state, None))
