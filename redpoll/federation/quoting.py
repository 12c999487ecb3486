"""Quote posts across servers, as Mastodon 4.5 has them (FEP-044f).

The quote's record and its state are redpoll.quotes' (a quote across
servers is ``pending`` until accepted: quotes.record, quotes.set_state);
this module is what other servers are sent and shown of it, and what is
taken from them.

- **A local quote of a remote status**: the Note names what it quotes in
  ``quote``, ``quoteUri`` and ``_misskey_quote`` (Mastodon's three), and,
  once approved, the ``quoteAuthorization`` its author's server issued; a
  ``QuoteRequest`` goes to that author's inbox (:func:`request`). Their
  ``Accept`` (whose ``result`` is the authorization) makes it accepted and
  the Note is sent again as an Update; a ``Reject`` makes it rejected; a
  ``Delete`` of the authorization revokes it.
- **A remote quote of a local status**: the ``QuoteRequest`` is answered
  by the local author's quote approval policy (the one decision of
  redpoll.quotes, a remote follower counting as a follower): automatic, an
  ``Accept`` with the URL of a ``QuoteAuthorization`` this server publishes
  (:func:`authorization`, while the quote stays accepted); otherwise a
  ``Reject`` (Redpoll has no manual approval). A revocation here sends the
  ``Delete`` of that authorization (:func:`send_revocation`).
- **A remote quote of a remote status** (a third server's, or of this
  server's): accepted only when its ``quoteAuthorization`` is verified
  (:func:`verify`): fetched under its own id, a ``QuoteAuthorization`` on
  the quoted author's host, ``attributedTo`` the quoted author,
  ``interactionTarget`` the quoted note, ``interactingObject`` the quote;
  one this server issued is read from the quote's own state. An author's
  quote of their own note needs none.

What a viewer is shown of any of them is decided when shown, as for local
quotes (redpoll.reading).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from ..bus.queue import JobQueue
from ..core import limits
from ..core.errors import RedpollError, StatusNotFound, UserNotFound
from ..core.models import Status
from ..net.safety import Refused as Unreachable
from ..quotes import quotes
from ..records import statuses, users
from ..relations import visibility
from ..storage.store import Store
from . import client, delivery, documents, keys, remote

log = logging.getLogger("redpoll.federation")

FEP = "https://w3id.org/fep/044f"
#: Mastodon's names of what a note quotes, in the order it reads them
QUOTE_FIELDS = ("quote", "_misskey_quote", "quoteUrl", "quoteUri")
#: (the JSON-LD terms of quotes and interaction policies: documents.CONTEXT)
REQUEST_CONTEXT: list[Any] = [documents.AS, {"QuoteRequest": f"{FEP}#QuoteRequest"}]
AUTHORIZATION_CONTEXT: list[Any] = [
    documents.AS,
    {
        "QuoteAuthorization": f"{FEP}#QuoteAuthorization",
        "gts": "https://gotosocial.org/ns#",
        "interactingObject": {"@id": "gts:interactingObject"},
        "interactionTarget": {"@id": "gts:interactionTarget"},
    },
]


def _id_of(value: Any) -> str:
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("id")
    return value if isinstance(value, str) else ""


def object_uri(base: str, status: Status) -> str:
    """A status's ActivityPub id: its own server's, or this one's."""
    return status.extra.get("uri") or documents.note_id(base, status.login, status.id)


def authorization_id(base: str, quoted_login: str, quoting: int) -> str:
    """The URL of the QuoteAuthorization this server publishes for the
    quote status ``quoting`` (kept here) makes of a status of local
    ``quoted_login`` (Mastodon's ``/users/:name/quote_authorizations/:id``)."""
    return f"{documents.actor_id(base, quoted_login)}/quote_authorizations/{quoting}"


def request_id(base: str, login: str, quoting: int) -> str:
    """The id of the QuoteRequest local ``login`` sends for its status ``quoting``."""
    return f"{documents.actor_id(base, login)}#quote_requests/{quoting}"


def quoting_of_request(base: str, uri: str) -> int | None:
    """The local status a QuoteRequest id of this server names, else None."""
    head, sep, tail = uri.partition("#quote_requests/")
    if not sep or not tail.isdigit() or not head.startswith(f"{base}/users/"):
        return None
    return int(tail)


# --- what this server's notes say ----------------------------------------------------------


def interaction_policy(base: str, status: Status) -> dict:
    """Mastodon's ``interactionPolicy`` of a note: who may quote it
    without approval (the public, its author's followers, or, when no one
    else may, its author alone)."""
    policy = quotes.policy(status)
    approved = {
        "public": [documents.PUBLIC],
        "followers": [f"{documents.actor_id(base, status.login)}/followers"],
    }.get(policy) or [documents.actor_id(base, status.login)]
    return {"canQuote": {"automaticApproval": approved}}


async def note_fields(store: Store, base: str, status: Status) -> dict:
    """The quote fields of a local status's Note (none if it quotes
    nothing), and its interaction policy."""
    out: dict[str, Any] = {"interactionPolicy": interaction_policy(base, status)}
    qsid = quotes.quoted_id(status)
    if qsid is None:
        return out
    quoted = await statuses.get_status_or_none(store, qsid)
    if quoted is None or quoted.extra.get("deleted"):
        out["quote"] = {"type": "Tombstone"}
        return out
    uri = object_uri(base, quoted)
    out |= {"quote": uri, "_misskey_quote": uri, "quoteUri": uri}
    if await quotes.state_of(store, qsid, status.id) == quotes.ACCEPTED:
        if quotes.remote(quoted):
            approval = await quotes.approval_of(store, qsid, status.id)
        else:  # a quote of a local status: its author's own (or none needed)
            approval = (
                ""
                if quoted.user_id == status.user_id
                else authorization_id(base, quoted.login, status.id)
            )
        if approval:
            out["quoteAuthorization"] = approval
    return out


async def quoted_inbox(store: Store, status: Status) -> tuple[Status, dict] | None:
    """The remote status a local ``status`` quotes and its author's actor
    details; None when it quotes none, or a local one."""
    qsid = quotes.quoted_id(status)
    if qsid is None or quotes.remote(status):
        return None
    quoted = await statuses.get_status_or_none(store, qsid)
    if quoted is None or not quotes.remote(quoted):
        return None
    details = await remote.details(store, quoted.user_id)
    return (quoted, details) if details.get("uri") else None


async def request(store: Store, queue: JobQueue, base: str, status: Status) -> bool:
    """Send the QuoteRequest of a local ``status`` quoting a remote one to
    its author's inbox (once per post event; the same id again: dropped
    there). Whether one was sent."""
    found = await quoted_inbox(store, status)
    if found is None or await quotes.state_of(store, found[0].id, status.id) != quotes.PENDING:
        return False
    quoted, details = found
    me = documents.actor_id(base, status.login)
    activity = {
        "@context": REQUEST_CONTEXT,
        "id": request_id(base, status.login, status.id),
        "type": "QuoteRequest",
        "actor": me,
        "object": quoted.extra["uri"],
        "instrument": object_uri(base, status),
    }
    await delivery.send(
        store,
        queue,
        status.user_id,
        details.get("inbox") or details.get("shared_inbox", ""),
        activity,
    )
    return True


# --- what this server publishes and answers ------------------------------------------------


async def authorization(store: Store, base: str, login: str, quoting_sid: int) -> dict:
    """The QuoteAuthorization of the quote status ``quoting_sid`` makes of
    a status of local ``login``, while that quote is accepted
    (StatusNotFound otherwise: revoked, or never approved)."""
    quoting = await statuses.get_status(store, quoting_sid)
    qsid = quotes.quoted_id(quoting)
    quoted = await statuses.get_status_or_none(store, qsid) if qsid is not None else None
    if (
        quoted is None
        or quotes.remote(quoted)
        or quoted.login != login
        or not quotes.remote(quoting)
        or await quotes.state_of(store, quoted.id, quoting.id) != quotes.ACCEPTED
    ):
        raise _not_found(quoting_sid)
    return {
        "@context": AUTHORIZATION_CONTEXT,
        "id": authorization_id(base, login, quoting.id),
        "type": "QuoteAuthorization",
        "attributedTo": documents.actor_id(base, login),
        "interactionTarget": object_uri(base, quoted),
        "interactingObject": quoting.extra["uri"],
    }


def _not_found(sid: int) -> StatusNotFound:
    return StatusNotFound(f"no authorized quote {sid}")


async def may_quote(store: Store, actor_id: int, quoted: Status) -> bool:
    """Whether remote account ``actor_id`` may quote local ``quoted`` at
    once: a public or unlisted original status, and its author's policy
    (redpoll.quotes.decision; a remote follower is a follower here)."""
    if quoted.reblog_of or visibility.of(quoted) not in visibility.OPEN:
        return False
    try:
        if (await users.get_user(store, actor_id)).suspended:
            return False  # (an account closed here asks for nothing)
    except UserNotFound:
        return False
    follows = False
    if quotes.needs_follow(actor_id, quoted):
        follows = await store.zscore(keys.remote_followers(quoted.user_id), actor_id) is not None
    return quotes.decision(actor_id, quoted, follows) == "automatic"


async def answer(
    store: Store,
    queue: JobQueue,
    base: str,
    actor_id: int,
    request: dict,
    quoted: Status,
    quoting: Status | None,
) -> bool:
    """Answer the QuoteRequest ``request`` of remote ``actor_id`` for local
    ``quoted``: an Accept with this server's authorization when its author's
    policy lets the actor quote it and ``quoting`` (the quote, kept here)
    is the actor's and quotes it; else a Reject (the kept quote rejected).
    Each step idempotent (the answer's id is fixed by the quote). Whether
    it was accepted."""
    details = await remote.details(store, actor_id)
    inbox = details.get("inbox") or details.get("shared_inbox", "")
    me = documents.actor_id(base, quoted.login)
    request = {k: v for k, v in request.items() if k != "@context"}
    tag = str(quoting.id) if quoting is not None else _tail(_id_of(request))
    fits = (
        quoting is not None
        and quoting.user_id == actor_id
        and quotes.quoted_id(quoting) == quoted.id
    )
    if fits and quoting is not None and await may_quote(store, actor_id, quoted):
        state = await quotes.state_of(store, quoted.id, quoting.id)
        if state != quotes.REVOKED:
            await quotes.set_state(store, quoted, quoting, quotes.ACCEPTED)
            accept = {
                "@context": documents.CONTEXT,
                "id": f"{me}#accepts/quote_requests/{tag}",
                "type": "Accept",
                "actor": me,
                "object": request,
                "result": authorization_id(base, quoted.login, quoting.id),
            }
            await delivery.send(store, queue, quoted.user_id, inbox, accept)
            return True
    if fits and quoting is not None:
        await quotes.set_state(store, quoted, quoting, quotes.REJECTED)
    reject = {
        "@context": documents.CONTEXT,
        "id": f"{me}#rejects/quote_requests/{tag}",
        "type": "Reject",
        "actor": me,
        "object": request,
    }
    await delivery.send(store, queue, quoted.user_id, inbox, reject)
    return False


def _tail(uri: str) -> str:
    """A part of a remote request's id fit for this server's answer's id."""
    return hashlib.sha256(uri.encode()).hexdigest()[:16]


async def send_revocation(store: Store, queue: JobQueue, base: str, quoting_sid: int) -> int:
    """The Delete of the authorization this server issued for the quote
    ``quoting_sid`` (another server's status) makes, its author having
    revoked it: to the quoting author's inbox and to the servers the
    quoted author's posts go to (Mastodon's). How many inboxes."""
    quoting = await statuses.get_status_or_none(store, quoting_sid)
    qsid = quotes.quoted_id(quoting) if quoting is not None else None
    quoted = await statuses.get_status_or_none(store, qsid) if qsid is not None else None
    if quoting is None or quoted is None or quotes.remote(quoted):
        return 0
    if await quotes.state_of(store, quoted.id, quoting.id) != quotes.REVOKED:
        return 0
    approval = authorization_id(base, quoted.login, quoting.id)
    me = documents.actor_id(base, quoted.login)
    activity = {
        "@context": documents.AS,
        "id": f"{approval}#delete",
        "type": "Delete",
        "actor": me,
        "object": approval,
        "to": [documents.PUBLIC],
    }
    details = await remote.details(store, quoting.user_id)
    targets = [details.get("shared_inbox") or details.get("inbox", "")]
    targets += [k.decode() for k in await store.hkeys(keys.inboxes(quoted.user_id))]
    sent = [t for t in dict.fromkeys(targets) if t]
    for inbox in sent:
        await delivery.send(store, queue, quoted.user_id, inbox, activity)
    return len(sent)


# --- what other servers' answers and notes say ---------------------------------------------


async def answered(
    store: Store, base: str, actor_id: int, activity: dict, obj: Any, accepted: bool
) -> Status | None:
    """An Accept (``accepted``) or Reject of a local status's QuoteRequest,
    from the quoted status's author: the quote accepted, with the
    authorization named by the Accept's ``result`` (on the author's host),
    or rejected. The local quoting status when it changed (its Note is sent
    again), else None."""
    request = obj if isinstance(obj, dict) else {"id": _id_of(obj)}
    if isinstance(obj, dict) and obj.get("type") not in ("QuoteRequest", None):
        return None
    sid = quoting_of_request(base, _id_of(request))
    if sid is None and isinstance(obj, dict):
        sid = _local_status(base, _id_of(obj.get("instrument")))
    quoting = await statuses.get_status_or_none(store, sid) if sid is not None else None
    if quoting is None or quotes.remote(quoting):
        return None
    qsid = quotes.quoted_id(quoting)
    quoted = await statuses.get_status_or_none(store, qsid) if qsid is not None else None
    if quoted is None or quoted.user_id != actor_id:
        return None  # only the quoted status's author answers for it
    if isinstance(obj, dict) and _id_of(obj.get("object")) not in ("", quoted.extra.get("uri")):
        return None
    actor_uri = (await remote.details(store, actor_id)).get("uri", "")
    if accepted:
        approval = _id_of(activity.get("result"))
        if (
            not approval.startswith(("https://", "http://"))
            or remote.host_of(approval) != remote.host_of(actor_uri)
            or len(approval) > limits.EXTRA_VALUE_MAX_BYTES
        ):
            return None
        if await quotes.state_of(store, quoted.id, quoting.id) != quotes.PENDING:
            return None  # (Mastodon: only a pending quote is accepted)
        await store.set(keys.quote_approval(approval), f"{quoted.id}:{quoting.id}")
        changed = await quotes.set_state(store, quoted, quoting, quotes.ACCEPTED, approval)
    else:
        changed = await quotes.set_state(store, quoted, quoting, quotes.REJECTED)
    return quoting if changed else None


def _local_status(base: str, uri: str) -> int | None:
    prefix = f"{base}/users/"
    if not uri.startswith(prefix):
        return None
    parts = uri[len(prefix) :].split("/")
    if len(parts) == 3 and parts[1] == "statuses" and parts[2].isdigit():
        return int(parts[2])
    return None


async def revoked(store: Store, actor_id: int, uri: str) -> Status | None:
    """A Delete of the authorization ``uri`` by remote ``actor_id``: the
    quote it approved revoked, if the actor is the quoted author. The
    quoting status when it changed, else None."""
    raw = await store.get(keys.quote_approval(uri)) if uri else None
    if raw is None:
        return None
    qsid, _, sid = (raw.decode() if isinstance(raw, bytes) else raw).partition(":")
    quoted = await statuses.get_status_or_none(store, int(qsid))
    quoting = await statuses.get_status_or_none(store, int(sid))
    if quoted is None or quoting is None or quoted.user_id != actor_id:
        return None
    if await quotes.approval_of(store, quoted.id, quoting.id) != uri:
        return None
    changed = await quotes.set_state(store, quoted, quoting, quotes.REVOKED)
    return quoting if changed else None


def quote_uri(obj: dict) -> str:
    """What a remote note quotes (Mastodon's StatusParser#quote_uri: the
    first of ``quote``, ``_misskey_quote``, ``quoteUrl``, ``quoteUri``)."""
    for name in QUOTE_FIELDS:
        found = _id_of(obj.get(name))
        if found:
            return found
    return ""


def policy_of(obj: dict, author_uri: str) -> str:
    """A remote note's quote approval policy from its ``interactionPolicy``
    (``canQuote.automaticApproval``): public, followers or nobody; "" when
    it names none (quoting it asks its server)."""
    policy = obj.get("interactionPolicy")
    can = policy.get("canQuote") if isinstance(policy, dict) else None
    if not isinstance(can, dict):
        return ""
    raw = can.get("automaticApproval")
    approved = {_id_of(x) for x in (raw if isinstance(raw, list) else [raw])}
    if approved & {documents.PUBLIC, "as:Public", "Public"}:
        return "public"
    if f"{author_uri}/followers" in approved or any(a.endswith("/followers") for a in approved):
        return "followers"
    return "nobody"


async def verify(store: Store, base: str, quoting: Status, approval: str, *, loopback: bool) -> str:
    """The state of the quote remote ``quoting`` makes, its authorization
    ``approval`` checked (Mastodon's VerifyQuoteService): accepted when
    valid; rejected when it cannot be had; left as it was otherwise (a
    forged one: pending). What it is now."""
    qsid = quotes.quoted_id(quoting)
    quoted = await statuses.get_status_or_none(store, qsid) if qsid is not None else None
    if quoted is None:
        return ""
    state = await quotes.state_of(store, quoted.id, quoting.id)
    if state != quotes.PENDING or not approval:
        return state
    if not quotes.remote(quoted):
        return state  # this server's own: accepted by answering the QuoteRequest only
    author = (await remote.details(store, quoted.user_id)).get("uri", "")
    try:
        doc = await client.fetch_object(
            approval, loopback=loopback, signer=await remote.instance_signer(store, base)
        )
    except (RedpollError, Unreachable) as exc:
        log.info("quote authorization %s not had: %s", approval, exc)
        await quotes.set_state(store, quoted, quoting, quotes.REJECTED)
        return quotes.REJECTED
    kinds = doc.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if (
        "QuoteAuthorization" not in kinds
        or _id_of(doc.get("attributedTo")) != author
        or remote.host_of(approval) != remote.host_of(author)
        or _id_of(doc.get("interactionTarget")) != quoted.extra.get("uri")
        or _id_of(doc.get("interactingObject")) != quoting.extra.get("uri")
        or len(approval) > limits.EXTRA_VALUE_MAX_BYTES
    ):
        log.info("quote authorization %s does not authorize %s", approval, quoting.id)
        return state
    await store.set(keys.quote_approval(approval), f"{quoted.id}:{quoting.id}")
    await quotes.set_state(store, quoted, quoting, quotes.ACCEPTED, approval)
    return quotes.ACCEPTED
