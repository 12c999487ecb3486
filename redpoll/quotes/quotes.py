"""Quote posts on one server, as Mastodon 4.5 (PostStatusService's quote,
Status::InteractionPolicyConcern, QuotesController, RevokeQuoteService).

A status quotes another by its record's ``x:quote`` extra (the quoted id),
decided when it is posted (:func:`check`): the quoted status must exist and
be one the poster may see (the one visibility decision,
redpoll.relations.visibility), a boost is quoted as its original, and its
quote approval policy (``x:qpol``: public, followers, nobody) must let the
poster quote it automatically; its author always may, and a direct status
may not be quoted at all. Refused: :class:`QuoteRefused` (Mastodon's 404),
nothing written. A private or direct status's own policy is ``nobody``
(Mastodon's downgrade_quote_policy).

The quote's state lives in the quoted status's slot (redpoll.quotes.keys):
accepted quotes in ``quotes:{qsid}``, revoked ones in ``qrev:{qsid}``. It is
recorded by the post journal's first step (quote_record.lua: idempotent,
replayed after a crash) with the ``quote`` notification to the quoted
author (idempotent too). Revoking is one script (quote_revoke.lua: atomic).
What a viewer is shown of a quote is decided when it is shown
(redpoll.reading): revoked, or the quoted status deleted, or one the viewer
may not see, shows no quoted status.

Across servers (Mastodon 4.5, FEP-044f; redpoll.federation.quoting sends
and takes the activities): a quote whose quoting or quoted status is
another server's, by another author, is recorded ``pending``
(``qst:{qsid}``) and shows no quoted status until it is accepted (an Accept
with a QuoteAuthorization, or one verified), or ``rejected``; a revocation
makes it ``revoked`` for good (:func:`set_state`, quote_state.lua: atomic).
A local author's revocation of a quote made on another server queues
:class:`~redpoll.quotes.jobs.QuoteRevokedJob`, by which federation sends the
Delete of its authorization.
"""

from __future__ import annotations

from ..bus.queue import JobQueue
from ..core import keys as core_keys
from ..core import limits, validate
from ..core.errors import Forbidden, NotFound, RedpollError, StatusNotFound, ValidationError
from ..core.models import EXTRA_PREFIX, QUOTE_POLICIES, Status
from ..notifications import notifications
from ..records import statuses, writes
from ..relations import visibility
from ..storage.store import Store
from . import keys
from .jobs import QuoteRevokedJob

#: the extra naming the quoted status
EXTRA = "quote"
#: the extra holding a status's quote approval policy
POLICY_EXTRA = "qpol"
#: Mastodon's quote_approval_policy values
POLICIES = QUOTE_POLICIES
#: the policy of a status that names none (Mastodon's default for a new
#: status); stored as the field's absence, as visibility public is
DEFAULT_POLICY = "public"
#: Mastodon's answer to a quote of a status that is missing or may not be quoted
NOT_FOUND_MESSAGE = "The post you are trying to quote does not appear to exist."
#: Mastodon's answer to a direct status quoting someone it does not mention
NOT_MENTIONED_MESSAGE = "Cannot quote a non-mentioned user in a Private Mention post."
#: the notification kinds: a status of yours was quoted; one you quoted was edited
QUOTE_KIND = "quote"
QUOTED_UPDATE_KIND = "quoted_update"
#: a quote's states (Mastodon's Quote#state, as the API shows them)
ACCEPTED, PENDING, REJECTED, REVOKED = "accepted", "pending", "rejected", "revoked"


class QuoteRefused(StatusNotFound):
    """The status to quote does not exist, or the poster may not see or
    quote it (Mastodon answers both with a 404)."""


class QuoteNotMentioned(ValidationError):
    """A direct status quoting another's that does not mention its author
    (422, Mastodon's message whole)."""

    def __init__(self) -> None:
        RedpollError.__init__(self, NOT_MENTIONED_MESSAGE)
        self.field = "quoted_status_id"


class QuoteNotFound(NotFound):
    """No such quote of that status."""


def quoted_id(status: Status) -> int | None:
    """The id of the status ``status`` quotes, or None."""
    raw = status.extra.get(EXTRA)
    return int(raw) if raw and raw.isdigit() else None


def policy(status: Status) -> str:
    """How ``status`` may be quoted: public, followers or nobody (a boost,
    a private or a direct status: nobody; a public or unlisted one that
    names none: public)."""
    if status.reblog_of or visibility.of(status) not in visibility.OPEN:
        return "nobody"
    value = status.extra.get(POLICY_EXTRA, DEFAULT_POLICY)  # public: the field's absence
    return value if value in POLICIES else "nobody"


def automatic(status: Status) -> list[str]:
    """QuoteApproval's ``automatic``: who may quote it without approval."""
    pol = policy(status)
    return [] if pol == "nobody" else [pol]


def needs_follow(viewer: int | None, status: Status) -> bool:
    """Whether :func:`decision` must know if ``viewer`` follows the author."""
    return viewer is not None and viewer != status.user_id and policy(status) == "followers"


def decision(viewer: int | None, status: Status, follows_author: bool) -> str:
    """QuoteApproval's ``current_user`` (Mastodon's quote_policy_for_account):
    automatic or denied (no manual approval on one server)."""
    if viewer is None or status.reblog_of or visibility.of(status) == visibility.DIRECT:
        return "denied"
    if viewer == status.user_id:  # the author always may quote themselves
        return "automatic"
    pol = policy(status)
    if pol == "public" or (pol == "followers" and follows_author):
        return "automatic"
    return "denied"


def policy_param(value: str | None, vis: str) -> str:
    """The ``quote_approval_policy`` parameter checked: the policy to store
    (a private or direct status's is nobody); unknown values are a 422."""
    if value is None or value == "":
        value = DEFAULT_POLICY
    if value not in POLICIES:
        raise ValidationError("quote_approval_policy", "must be one of " + ", ".join(POLICIES))
    return value if vis in visibility.OPEN else "nobody"


async def quotable(store: Store, author: int, raw_id) -> Status:
    """The status ``author`` may quote under the id ``raw_id`` (a boost's
    original); QuoteRefused otherwise. Reads only."""
    try:
        target = await statuses.get_status(store, validate.an_id(raw_id, "quoted_status_id"))
        if target.reblog_of:  # Mastodon quotes the boosted status (``proper``)
            target = await statuses.get_status(store, target.reblog_of)
    except (StatusNotFound, ValidationError):
        raise QuoteRefused(NOT_FOUND_MESSAGE) from None
    if not await visibility.visible(store, author, [target]):
        raise QuoteRefused(NOT_FOUND_MESSAGE)
    follows = False
    if needs_follow(author, target):
        follows = await store.zscore(core_keys.following(author), target.user_id) is not None
    if decision(author, target, follows) != "automatic":
        raise QuoteRefused(NOT_FOUND_MESSAGE)
    return target


def check_mentions(target: Status, author: int, vis: str, mentioned: set[int]) -> None:
    """Mastodon's safeguard: a direct status quoting another's must mention
    its author (422)."""
    if vis == visibility.DIRECT and target.user_id != author and target.user_id not in mentioned:
        raise QuoteNotMentioned()


def remote(status: Status) -> bool:
    """Whether ``status`` is another server's (it has its own uri)."""
    return bool(status.extra.get("uri"))


async def record(store: Store, status: Status) -> None:
    """The quote of a just-posted ``status`` recorded and the quoted author
    told (a ``quote`` notification) once it is accepted: at once between
    statuses of this server (and an author's quote of their own status);
    ``pending`` when either status is another server's (:func:`set_state`
    decides later). Idempotent (quote_record.lua, notifications.apply): the
    post journal's replay runs it again."""
    qsid = quoted_id(status)
    if qsid is None:
        return
    quoted = await statuses.get_status_or_none(store, qsid)
    if quoted is None:
        return
    across = (remote(status) or remote(quoted)) and quoted.user_id != status.user_id
    author = await store.run(
        "quote_record",
        [core_keys.status(qsid), keys.quotes(qsid), keys.revoked(qsid), keys.states(qsid)],
        [status.id, PENDING if across else ""],
    )
    if author and not remote(quoted):
        await _notify(store, int(author), status)


async def _notify(store: Store, author: int, status: Status) -> None:
    """The ``quote`` notification of local ``author`` (idempotent)."""
    await notifications.apply(
        store, author, QUOTE_KIND, status.user_id, status.id, status.id, True, status=status.id
    )


async def set_state(
    store: Store, quoted: Status, quoting: Status, state: str, approval: str = ""
) -> bool:
    """The quote ``quoting`` makes of ``quoted`` becomes ``state``
    (accepted, rejected, revoked; revoked for good), with the URI of the
    authorization that approved it when another server issued it. One
    script (quote_state.lua: atomic); the quoted author, if local, is told
    of an accepted quote (idempotent). Whether it changed now."""
    changed = await store.run(
        "quote_state",
        [
            core_keys.status(quoted.id),
            keys.quotes(quoted.id),
            keys.revoked(quoted.id),
            keys.states(quoted.id),
            keys.approvals(quoted.id),
        ],
        [quoting.id, state, approval],
    )
    if state == ACCEPTED and not remote(quoted):
        await _notify(store, quoted.user_id, quoting)
    return bool(changed)


async def state_of(store: Store, qsid: int, quoting: int) -> str:
    """The state of the quote status ``quoting`` makes of ``qsid``: one of
    accepted, pending, rejected, revoked; "" when none is recorded."""
    accepted, gone, state = await store.batch(
        [
            ("ZSCORE", keys.quotes(qsid), quoting),
            ("SISMEMBER", keys.revoked(qsid), quoting),
            ("HGET", keys.states(qsid), quoting),
        ]
    )
    if gone:
        return REVOKED
    if state:
        return state.decode() if isinstance(state, bytes) else str(state)
    return ACCEPTED if accepted is not None else ""


async def approval_of(store: Store, qsid: int, quoting: int) -> str:
    """The URI of the authorization another server issued for the quote
    ``quoting`` makes of ``qsid`` ("" when none)."""
    raw = await store.hget(keys.approvals(qsid), str(quoting))
    return (raw.decode() if isinstance(raw, bytes) else raw) or ""


async def forget(store: Store, status: Status) -> None:
    """A deleted status's traces (idempotent): its quote of another out of
    that one's quotes, and its own quotes' records."""
    qsid = quoted_id(status)
    if qsid is not None:
        await store.zrem(keys.quotes(qsid), status.id)
        author = await store.hget(core_keys.status(qsid), "uid")
        if author is not None:  # its quote notification taken back
            await notifications.apply(
                store, int(author), QUOTE_KIND, status.user_id, status.id, status.id, False
            )
    # one command over the keys of one slot
    await store.delete(
        keys.quotes(status.id),
        keys.revoked(status.id),
        keys.states(status.id),
        keys.approvals(status.id),
    )


async def owned(store: Store, uid: int, sid) -> Status:
    """The status ``sid`` if it is ``uid``'s: StatusNotFound when missing,
    Forbidden when another's."""
    status = await statuses.get_status(store, sid)
    if status.user_id != uid:
        raise Forbidden("This action is not allowed")
    return status


async def revoke(store: Store, uid: int, sid, quoting_sid) -> Status:
    """``uid`` revokes the quote ``quoting_sid`` makes of their status
    ``sid`` (Mastodon's RevokeQuoteService): the quoting status, which now
    shows no quoted status. QuoteNotFound when it quotes something else."""
    await owned(store, uid, sid)
    quoting = await statuses.get_status(store, quoting_sid)
    if quoted_id(quoting) != int(sid):
        raise QuoteNotFound(f"status {quoting.id} does not quote {sid}")
    await store.run("quote_revoke", [keys.quotes(int(sid)), keys.revoked(int(sid))], [quoting.id])
    await store.hdel(keys.states(int(sid)), str(quoting.id))  # (revoked wins: read first)
    if remote(quoting):  # its server is sent the Delete of the authorization (a job)
        await JobQueue(store).enqueue(QuoteRevokedJob(sid=quoting.id, author=uid, quoted=int(sid)))
    return quoting


async def quoting_page(
    store: Store, uid: int, sid, *, max_id=None, since_id=None, min_id=None, limit=None
) -> list[int]:
    """The accepted quotes of ``uid``'s status ``sid`` (only its author may
    list them: Forbidden otherwise), newest first: quoting status ids."""
    status = await owned(store, uid, sid)
    top = validate.optional_id(max_id, "max_id")
    low = validate.optional_id(min_id, "min_id")
    since = validate.optional_id(since_id, "since_id")
    size = validate.page_limit(limit, limits.PAGE_DEFAULT, limits.PAGE_MAX)
    hi = f"({top}" if top else "+inf"
    if low is not None:  # the page just newer than min_id, oldest first, returned newest first
        rows = await store.zrangebyscore(keys.quotes(status.id), f"({low}", hi, start=0, num=size)
        return [int(m) for m in reversed(rows)]
    lo = f"({since}" if since is not None else "-inf"
    rows = await store.zrevrangebyscore(keys.quotes(status.id), hi, lo, start=0, num=size)
    return [int(m) for m in rows]


async def set_policy(store: Store, uid: int, sid, value: str | None) -> Status:
    """PUT /api/v1/statuses/:id/interaction_policy: ``uid``'s status ``sid``
    gets the quote approval policy ``value`` (a private or direct status
    keeps nobody). One script (writes.update_status: atomic)."""
    status = await owned(store, uid, sid)
    if status.reblog_of:
        raise Forbidden("This action is not allowed")
    chosen = policy_param(value, visibility.of(status))
    if policy(status) != chosen:
        await writes.of(store).update_status(status.id, {EXTRA_PREFIX + POLICY_EXTRA: chosen})
    return await statuses.get_status(store, status.id)


async def take_policy(store: Store, status: Status, value: str) -> bool:
    """Another server's status ``status`` now says how it may be quoted
    (``value``: public, followers, nobody; its Update's interactionPolicy):
    kept if it changed (writes.update_status: atomic). Whether it did."""
    if not remote(status) or value not in POLICIES:
        return False
    if visibility.of(status) not in visibility.OPEN or policy(status) == value:
        return False
    await writes.of(store).update_status(status.id, {EXTRA_PREFIX + POLICY_EXTRA: value})
    return True


async def after_edit(store: Store, status: Status, at: int) -> None:
    """A ``quoted_update`` notification for the author of each accepted
    quote of the edited ``status`` (bounded), keyed by the edit's time
    ``at``: a replay of the same edit makes none more (idempotent)."""
    quoting = await store.zrevrange(
        keys.quotes(status.id), 0, limits.QUOTED_UPDATE_NOTIFIED_MAX - 1
    )
    if not quoting:
        return
    rows = await store.batch(
        [("HMGET", core_keys.status(int(q)), "uid", EXTRA_PREFIX + "uri") for q in quoting]
    )
    # (a quote made on another server: its author is told there, not here)
    authors = [uid for uid, uri in rows if uid is not None and not uri]
    for author in dict.fromkeys(int(a) for a in authors):
        await notifications.apply(
            store, author, QUOTED_UPDATE_KIND, status.user_id, at, at, True, status=status.id
        )
