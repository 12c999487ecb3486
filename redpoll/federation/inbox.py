"""The inbox: signed activities from other servers.

:func:`receive` runs in the request: it checks the body's size, the
signature (the signer's key fetched, or fetched again once when it no longer
verifies: keys rotate), that the signer is the activity's actor, and drops
an activity id already taken (SET NX with a TTL); then it queues the
activity (jobs.InboxJob) and the request is answered 202. :func:`process`
runs in a worker, at least once, so each branch is idempotent: follows and
their counts by fed_follow.lua, statuses at most once per note id
(posting.post_claimed keyed by it, then the note index), favourites, boosts
and deletes by their own idempotent calls.

A remote actor acts only on its own host's objects and on this server's:
a Create whose note is attributed to someone else, or a Delete of another
host's note, is dropped.

Polls: a Question is kept as a status with its poll, with the counts its
server sends (again with each Update of it, which is an edit only when more
than the counts changed). A Note that names an option of a local poll and
replies to it is a vote (Mastodon's), counted once per account (once per
option of a multiple-choice poll: polls.vote_one, one script) and never
kept as a status; the poll's next Update is queued after it, again by a
run of the same job (idempotent: the same entry).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from ..accounts import ratelimit
from ..bus.queue import JobQueue
from ..core import limits
from ..core.errors import QueueFull, RedpollError, StatusNotFound
from ..core.models import EXTRA_PREFIX, User, now_ms
from ..core.settings import Settings
from ..interactions import favourites
from ..media import entity as media_entity
from ..net.safety import Refused as Unreachable
from ..polls import polls
from ..posting import boosts, deleting, editing, idempotency, posting
from ..quotes import quotes as quotes_
from ..records import statuses, users, writes
from ..relations import follow_requests, follows, relations, visibility
from ..storage.store import Store
from . import (
    client,
    delivery,
    documents,
    domains,
    emoji,
    followers,
    keys,
    moves,
    outbox,
    quoting,
    relays,
    remote,
    remote_media,
    signing,
)
from .jobs import InboxJob
from .text import html_to_text, sanitize

log = logging.getLogger("redpoll.federation")


class Refused(RedpollError):
    """An activity this server does not take (answered 4xx)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Here:
    """This server as federation sees it: its base URL and whether peers
    may be reached over http and at private addresses."""

    base: str
    loopback: bool

    @classmethod
    def of(cls, settings: Settings) -> Here:
        if not settings.public_url:
            raise Refused("federation needs REDPOLL_PUBLIC_URL", 404)
        return cls(settings.public_url.rstrip("/"), settings.federation_loopback)

    def local_login(self, uri: str) -> str | None:
        """The login of a local actor id, else None."""
        prefix = f"{self.base}/users/"
        if not uri.startswith(prefix):
            return None
        rest = uri[len(prefix) :]
        return rest if rest and "/" not in rest and "#" not in rest else None

    def local_status(self, uri: str) -> int | None:
        """The status id of a local note id (…/users/<login>/statuses/<id>)."""
        prefix = f"{self.base}/users/"
        if not uri.startswith(prefix):
            return None
        parts = uri[len(prefix) :].split("/")
        if len(parts) == 3 and parts[1] == "statuses" and parts[2].isdigit():
            return int(parts[2])
        return None


def _id_of(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("id")
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Signer:
    """Who signed a request, before their key is fetched: the key id, the
    actor it belongs to ('' until :func:`owned` learns it, for a key at its
    own URL), and how to check the signature with a key."""

    key_id: str
    actor_uri: str
    check: Callable[[str], None]
    #: signed as RFC 9421 (else draft-cavage)
    rfc9421: bool = False


def signer_of(
    here: Here, method: str, target: str, headers: Mapping[str, str], body: bytes | None
) -> Signer:
    """The signature of a request (RFC 9421 if it carries one, else
    draft-cavage); Refused (401) if it has none or it is malformed. A
    draft-cavage signature is checked against this server's own host (its
    public URL's), never the Host the request carried: an activity signed
    for another server and replayed here does not verify."""
    try:
        rfc9421 = signing.rfc9421_key_id(headers)
        signed = None if rfc9421 else signing.parse(headers.get("signature"))
    except signing.SignatureError as exc:
        raise Refused(str(exc), 401) from None
    own = {**headers, "host": urlsplit(here.base).netloc}

    def check(pem: str) -> None:
        if rfc9421:
            signing.verify_rfc9421(rfc9421, pem, method, here.base + target, headers, body)
        else:
            assert signed is not None
            signing.verify(signed, pem, method, target, own, body)

    key_id = rfc9421 or (signed.key_id if signed else "")
    return Signer(key_id, key_id.split("#", 1)[0] if "#" in key_id else "", check, bool(rfc9421))


async def owned(store: Store, here: Here, signer: Signer, *, fetch: bool = True) -> Signer:
    """``signer`` with the actor its key belongs to (remote.key_owner: for a
    key at its own URL, its owner's document must name it back); Refused:
    403 for a suspended domain or this server's own host, 401 when the
    owner cannot be learned. ``fetch`` False: only an owner already known."""
    if signer.actor_uri:
        return signer
    host = remote.host_of(signer.key_id)
    if not host or remote.local_uri(here.base, signer.key_id):
        raise Refused("the signature names no key of another server", 401)
    if await domains.suspended(store, host):
        raise Refused("this server does not take requests from that domain", 403)
    try:
        owner = await remote.key_owner(
            store, here.base, signer.key_id, loopback=here.loopback, fetch=fetch
        )
    except (client.FetchFailed, remote.BadActor, Unreachable) as exc:
        raise Refused(f"the signer's key could not be had: {exc}", 401) from None
    return dataclasses.replace(signer, actor_uri=owner or "")


async def authenticate(store: Store, here: Here, signer: Signer) -> User:
    """The account of a request's signer, its signature checked with the key
    kept (fetched again once if it no longer verifies: keys rotate, but a
    key kept less than limits.FED_KEY_REFETCH_S is not fetched again for
    every bad signature); Refused: 403 for a suspended domain, 401 for a
    signature that does not verify or a key that cannot be had. The account
    is the one whose id the key names, never another document's: an
    actor of this server's own host is never a signer."""
    signer = await owned(store, here, signer)
    if remote.local_uri(here.base, signer.actor_uri):
        raise Refused("a local actor does not sign from another server", 401)
    # the domain's block and the kept key, asked together (one round trip on the mux)
    suspended, kept = await asyncio.gather(
        domains.suspended(store, remote.host_of(signer.actor_uri)),
        remote.fresh_key(store, signer.actor_uri),
    )
    if suspended:
        raise Refused("this server does not take requests from that domain", 403)
    try:
        if kept is not None:
            actor, pem, fetched = kept
        else:
            actor = await remote.known_or_fetch(
                store, here.base, signer.actor_uri, loopback=here.loopback
            )
            pem, fetched = (await remote.details(store, actor.id)).get("pem", ""), now_ms()
        try:
            signer.check(pem)
        except signing.SignatureError:
            if now_ms() - fetched < limits.FED_KEY_REFETCH_S * 1000:
                raise
            actor = await remote.known_or_fetch(
                store, here.base, signer.actor_uri, loopback=here.loopback, refresh=True
            )
            signer.check((await remote.details(store, actor.id)).get("pem", ""))
    except signing.SignatureError as exc:
        raise Refused(str(exc), 401) from None
    except (client.FetchFailed, remote.BadActor, Unreachable) as exc:
        raise Refused(f"the signer's key could not be had: {exc}", 401) from None
    if actor.uri != signer.actor_uri:
        raise Refused("the signer's key belongs to another actor", 401)
    return actor


async def receive(
    store: Store,
    queue: JobQueue,
    settings: Settings,
    method: str,
    target: str,
    headers: Mapping[str, str],
    body: bytes,
) -> bool:
    """Check and queue one incoming activity; False if it was a repeat."""
    here = Here.of(settings)
    if len(body) > limits.FED_INBOX_MAX_BYTES:
        raise Refused(f"an activity is at most {limits.FED_INBOX_MAX_BYTES} bytes", 413)
    signer = signer_of(here, method, target, headers, body)
    try:
        activity = json.loads(body)
    except ValueError:
        raise Refused("the body is not JSON") from None
    if not isinstance(activity, dict) or not isinstance(activity.get("type"), str):
        raise Refused("the body is not an activity")
    actor_uri = _id_of(activity.get("actor"))
    deleted = activity.get("type") == "Delete" and _id_of(activity.get("object")) == actor_uri
    # an actor deleted on its server: its key is gone there too, so only an owner known here
    signer = await owned(store, here, signer, fetch=not deleted)
    if not actor_uri or actor_uri != signer.actor_uri:
        raise Refused("the activity's actor is not its signer", 401)
    activity_id = _id_of(activity)
    seen = keys.seen(actor_uri, activity_id or signing.digest(body))
    if deleted:  # (checked with the key kept here: no one else's, whatever its id)
        if await domains.suspended(store, remote.host_of(actor_uri)):
            raise Refused("this server does not take activities from that domain", 403)
        return await _actor_deleted(store, queue, signer.check, actor_uri, seen, body)
    if activity_id and remote.host_of(activity_id) != remote.host_of(actor_uri):
        # (another server's next activity id, squatted, would drop its genuine one)
        raise Refused("an activity's id must be on its actor's host", 403)
    actor = await authenticate(store, here, signer)
    await _admit(store, queue, settings, remote.host_of(actor_uri))
    # heard from its host (it answers again; and takes RFC 9421 if it signed so), and
    # the activity taken once: one round trip
    host = remote.host_of(actor_uri)
    _, first, _ = await asyncio.gather(
        delivery.heard_from(store, host),
        store.set(seen, "1", nx=True, ex=limits.FED_SEEN_TTL_S),
        store.set(keys.rfc9421_host(host), "1", ex=limits.FED_RFC9421_KEPT_S)
        if signer.rfc9421
        else asyncio.sleep(0),
    )
    if not first:
        return False
    await queue.enqueue(InboxJob(uid=actor.id, activity=body.decode()))
    return True


async def _admit(store: Store, queue: JobQueue, settings: Settings, host: str) -> None:
    """Whether one more activity from ``host`` is taken now: at most
    Settings.rate_inbox_host per host (Refused 429), and none while the
    job queue is full (503, as the API answers then)."""
    state = await ratelimit.hit(store, keys.inbox_rate(host), settings.rate_inbox_host)
    if state is not None and state.exceeded:
        raise Refused(
            f"too many activities from {host}; try again after "
            f"{int(state.reset - time.time()) + 1} s",
            429,
        )
    try:
        await queue.check_capacity()
    except QueueFull as exc:
        raise Refused(str(exc), 503) from None


async def _actor_deleted(
    store: Store, queue: JobQueue, check, actor_uri: str, seen: str, body: bytes
) -> bool:
    """An account deleted on its server: its key is gone there too (410), so
    the key kept here decides. One never kept here, or a signature that
    does not verify with the kept key: nothing to do (answered 202, as
    Mastodon, which receives many of these from servers it never knew)."""
    uid = await remote.account_id(store, actor_uri)
    if uid is None:
        return False
    try:
        check((await remote.details(store, uid)).get("pem", ""))
    except signing.SignatureError:
        return False
    if not await store.set(seen, "1", nx=True, ex=limits.FED_SEEN_TTL_S):
        return False
    await queue.enqueue(InboxJob(uid=uid, activity=body.decode()))
    return True


async def process(store: Store, queue: JobQueue, settings: Settings, job: InboxJob) -> None:
    here = Here.of(settings)
    activity = json.loads(job.activity)
    actor = await users.get_user(store, job.uid)
    kind = activity.get("type")
    obj = activity.get("object")
    handler = _HANDLERS.get(kind)
    if handler is None:
        log.info("ignoring a %s activity from %s", kind, actor.uri)
        return
    await handler(store, queue, settings, here, actor, activity, obj)


async def _follow(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    local = await _local_of(store, here, obj)
    if local is None:
        return
    if local.locked and not await store.zscore(keys.remote_followers(local.id), actor.id):
        # a request, answered when the account decides (answer_request)
        await store.hset(keys.follow_request(local.id), str(actor.id), json.dumps(activity))
        await follow_requests.request(store, actor.id, local.id)
        return
    await _accept(store, queue, here, local, actor, activity)


async def _accept(store, queue, here: Here, local: User, actor: User, follow: dict) -> None:
    """Count ``actor`` as a follower of ``local`` and send the Accept
    (again, if the Follow came again: its server may have missed it)."""
    details = await remote.details(store, actor.id)
    inbox = details.get("shared_inbox") or details.get("inbox", "")
    changed = await followers.fed_follow(store, local.id, actor.id, inbox, True)
    me = documents.actor_id(here.base, local.login)
    accept = documents.activity("Accept", f"{me}#accepts/follows/{actor.id}", me, follow)
    await delivery.send(store, queue, local.id, details.get("inbox", ""), accept)
    if changed:
        await followers.notify_follow(store, local.id, actor.id, True)


async def answer_request(
    store: Store, queue: JobQueue, settings: Settings, owner: int, requester: int, accept: bool
) -> bool | None:
    """A locked local account decides on a remote account's follow request:
    it becomes a follower and its server gets an Accept, or its server gets
    a Reject. None if ``requester`` is not a remote account (the local path
    decides); False if no request was pending. Each step is idempotent: the
    request is dropped last, so a call cut short is finished by a retry."""
    here = Here.of(settings) if settings.public_url else None
    raw = await store.hget(keys.follow_request(owner), str(requester))
    if here is None or not (await remote.details(store, requester)):
        return None
    if raw is None or not await follow_requests.pending(store, requester, owner):
        return False
    follow = json.loads(raw)
    local, actor = await users.get_user(store, owner), await users.get_user(store, requester)
    if accept:
        await _accept(store, queue, here, local, actor, follow)
    else:
        me = documents.actor_id(here.base, local.login)
        reject = documents.activity("Reject", f"{me}#rejects/follows/{actor.id}", me, follow)
        details = await remote.details(store, actor.id)
        await delivery.send(store, queue, local.id, details.get("inbox", ""), reject)
    await follow_requests.drop(store, requester, owner)
    await store.hdel(keys.follow_request(owner), str(requester))
    return True


async def _unfollow(store, here: Here, actor: User, follow) -> None:
    local = await _local_of(store, here, follow.get("object") if isinstance(follow, dict) else None)
    if local is not None:
        await _stop_following(store, local, actor)


async def _stop_following(store, local: User, actor: User) -> None:
    """``actor``'s follow of ``local`` ends, or its pending request (each
    step idempotent)."""
    if await store.hdel(keys.follow_request(local.id), str(actor.id)):
        await follow_requests.withdraw(store, actor.id, local.id)  # a request taken back
    await followers.end_remote_follow(store, local.id, actor.id)


async def _undo(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    if not isinstance(obj, dict):
        return  # an Undo naming only an id: nothing kept says what it undid
    if _id_of(obj.get("actor")) not in ("", actor.uri):
        return
    kind = obj.get("type")
    if kind == "Follow":
        await _unfollow(store, here, actor, obj)
    elif kind == "Like":
        sid = here.local_status(_id_of(obj.get("object")))
        if sid is not None:
            await _quietly(favourites.set_favourite(store, queue, actor.id, sid, False))
    elif kind == "Announce":
        sid = await _status_of(store, here, _id_of(obj.get("object")))
        if sid is not None:
            await _quietly(boosts.unboost(store, queue, actor.id, sid))
    elif kind == "Block":
        local = await _local_of(store, here, obj.get("object"))
        if local is not None:
            await relations.unblock(store, actor.id, local.id)


async def _accepted(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    """A remote account accepts a local one's Follow. An unlocked account's
    follow counts from when it was sent; a locked one's was a request here
    until now (follows.follow made it one), and becomes a follow. An
    Accept of a local quote's QuoteRequest: that quote is accepted
    (redpoll.federation.quoting) and its Note sent again."""
    if await _quote_answer(store, queue, here, actor, activity, obj, True):
        return
    if await relays.answered(store, actor.uri, obj, True):
        return  # a relay's answer to this server's Follow (redpoll.federation.relays)
    local = await _local_of(store, here, obj.get("actor") if isinstance(obj, dict) else None)
    if local is None:
        return
    if await follow_requests.pending(store, local.id, actor.id):
        await follows.authorize_request(store, queue, actor.id, local.id)


async def _quote_answer(
    store, queue, here: Here, actor: User, activity, obj, accepted: bool
) -> bool:
    """An Accept or Reject of a QuoteRequest of this server's: handled
    (True), else False (a follow's answer)."""
    kind = obj.get("type") if isinstance(obj, dict) else None
    if kind != "QuoteRequest" and quoting.quoting_of_request(here.base, _id_of(obj)) is None:
        return False
    changed = await quoting.answered(store, here.base, actor.id, activity, obj, accepted)
    if changed is not None:
        await outbox.resend(store, queue, here.base, changed)
    return True


async def _quote_request(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    """A QuoteRequest (Mastodon 4.5's ActivityPub::Activity::QuoteRequest):
    its id on its actor's host, of a local status anyone may see; the
    quote (``instrument``) kept here (known, inlined by its actor's host,
    or fetched), then answered by the local author's policy
    (quoting.answer: Accept with an authorization, or Reject). A request
    for another server's status is not this server's to answer: dropped."""
    if remote.host_of(_id_of(activity)) != remote.host_of(actor.uri):
        raise Refused("a QuoteRequest's id must be on its actor's host", 403)
    sid = here.local_status(_id_of(obj))
    quoted = await statuses.get_status_or_none(store, sid) if sid is not None else None
    if quoted is None or quoted.extra.get("uri") or visibility.of(quoted) not in visibility.OPEN:
        return
    instrument = activity.get("instrument")
    uri = _id_of(instrument)
    quoting_sid = await _status_of(store, here, uri) if uri else None
    if quoting_sid is None and uri and remote.host_of(uri) == remote.host_of(actor.uri):
        try:
            if isinstance(instrument, dict) and instrument.get("type"):
                await keep_note(store, queue, settings, here, actor, instrument)
            else:
                doc = await client.fetch_object(
                    uri,
                    loopback=here.loopback,
                    signer=await remote.instance_signer(store, here.base),
                )
                await keep_note(store, queue, settings, here, actor, doc)
        except (RedpollError, Unreachable) as exc:
            log.info("quote %s not had: %s", uri, exc)
        quoting_sid = await _status_of(store, here, uri)
    found = await statuses.get_status_or_none(store, quoting_sid) if quoting_sid else None
    await quoting.answer(store, queue, here.base, actor.id, activity, quoted, found)


async def _reject(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    if await _quote_answer(store, queue, here, actor, activity, obj, False):
        return
    if await relays.answered(store, actor.uri, obj, False):
        return
    local = await _local_of(store, here, obj.get("actor") if isinstance(obj, dict) else None)
    if local is None:
        return
    await follows.unfollow(store, queue, local.id, actor.id)  # (a pending request goes too)


async def _like(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    """A favourite of a local status the actor may see (a status id guessed
    by a stranger, of a followers-only or direct status, counts nothing)."""
    sid = here.local_status(_id_of(obj))
    status = await statuses.get_status_or_none(store, sid) if sid is not None else None
    if status is not None and await may_see(store, actor, status):
        await _quietly(favourites.set_favourite(store, queue, actor.id, status.id, True))


async def may_see(store: Store, actor: User, status) -> bool:
    """Whether remote ``actor`` may see local ``status``: the one visibility
    decision, where a remote follower of its author (kept apart from local
    follows: followers.fed_follow) is a follower of a followers-only one."""
    followed = frozenset()
    if visibility.of(status) == visibility.PRIVATE:
        if await store.zscore(keys.remote_followers(status.user_id), actor.id) is not None:
            followed = frozenset((status.user_id,))
    return bool(await visibility.visible(store, actor.id, [status], followed=followed))


async def _announce(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    """A boost: of a local status, or of a remote one (kept here already, or
    fetched from its own server now); the boost is the booster's status,
    delivered to its followers here as any boost. From an accepted relay:
    the note is kept (fetched from its server), and that is all (Mastodon's)."""
    uri = _id_of(obj)
    relayed = await relays.is_relay(store, actor.uri)
    sid = await _status_of(store, here, uri)
    if sid is None and uri and not uri.startswith(here.base + "/"):
        sid = await fetch_note(store, queue, settings, here, uri)
    if sid is not None and not relayed:
        await _quietly(boosts.boost(store, queue, settings, actor.id, sid))


async def _status_of(store, here: Here, uri: str) -> int | None:
    """The status a note id names: a local status, or a remote one kept here."""
    sid = here.local_status(uri)
    if sid is None and uri:
        known = await store.get(keys.note(uri))
        sid = int(known) if known else None
    return sid


async def _create(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    if isinstance(obj, dict) and obj.get("type") == "Note" and isinstance(obj.get("name"), str):
        sid = here.local_status(_id_of(obj.get("inReplyTo")))
        if sid is not None and await _vote(store, queue, actor, obj, sid):
            return
    await keep_note(store, queue, settings, here, actor, obj)


async def _vote(store, queue, actor: User, obj: dict, sid: int) -> bool:
    """A Note replying to local status ``sid`` and naming one of its
    poll's options: ``actor``'s vote for it, counted once (polls.vote_one)
    if ``actor`` may see the status and the poll is open; then the poll's
    next Update is queued (again for a repeat: the same one entry). False
    if it is not a vote (no poll there, or a note with text that names no
    option: a reply); a vote that names no option is dropped."""
    status = await statuses.get_status_or_none(store, sid)
    poll = polls.Poll.of(status) if status is not None else None
    if poll is None:
        return False
    title = obj["name"]
    if title not in poll.options and html_to_text(str(obj.get("content") or "")).strip():
        return False
    if _id_of(obj.get("attributedTo")) != actor.uri or (
        _id_of(obj) and remote.host_of(_id_of(obj)) != remote.host_of(actor.uri)
    ):
        raise Refused("a vote must be its actor's own, on its actor's host", 403)
    try:
        if not await may_see(store, actor, status):
            raise StatusNotFound(f"status {sid} does not exist")
        details = await remote.details(store, actor.id)
        await polls.vote_one(
            store, actor.id, sid, title, details.get("shared_inbox") or details.get("inbox", "")
        )
    except RedpollError as exc:  # not its to see, no such option, ended, voted already
        log.info("vote of %s in poll %s not counted: %s", actor.uri, sid, exc)
    await outbox.schedule_poll_update(queue, status)
    return True


def _time_ms(value) -> int | None:
    """An ActivityStreams time (ISO 8601) in ms, or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


@dataclass(frozen=True)
class Question:
    """A remote poll as a Question shows it: the poll to keep, the counts
    its server has (per option, and its voters), and its ``endTime`` (ms;
    None: it names none)."""

    spec: polls.PollSpec
    counts: list[int]
    voters: int
    end_time: int | None = None


def _question(obj: dict) -> Question | None:
    """The poll of a Question (``oneOf``: one choice, ``anyOf``: several),
    or None: not a Question, or one past the bounds (more than
    limits.FED_POLL_OPTIONS_MAX options or a title longer than
    limits.FED_POLL_OPTION_MAX_CHARS: a vote names the whole title, so none
    is cut short). It ends at its ``closed`` or ``endTime``, whichever
    comes first; with neither, after the longest time a poll may run."""
    if obj.get("type") != "Question":
        return None
    multiple = bool(_listed(obj.get("anyOf")))
    items = _listed(obj.get("anyOf") if multiple else obj.get("oneOf"))
    if not items or len(items) > limits.FED_POLL_OPTIONS_MAX:
        return None
    titles, counts = [], []
    for item in items:
        name = item.get("name") if isinstance(item, dict) else None
        if (
            not isinstance(name, str)
            or not name.strip()
            or len(name) > limits.FED_POLL_OPTION_MAX_CHARS
        ):
            return None
        replies = item.get("replies")
        total = replies.get("totalItems") if isinstance(replies, dict) else None
        titles.append(name)
        counts.append(
            total if isinstance(total, int) and not isinstance(total, bool) and total >= 0 else 0
        )
    closed, end_time = obj.get("closed"), _time_ms(obj.get("endTime"))
    ends = [
        t for t in (end_time, now_ms() if closed is True else _time_ms(closed)) if t is not None
    ]
    ends_at = (
        min(ends)
        if ends
        else (_time_ms(obj.get("published")) or now_ms()) + limits.POLL_EXPIRES_MAX_S * 1000
    )
    voters = obj.get("votersCount")
    if not isinstance(voters, int) or isinstance(voters, bool) or voters < 0:
        voters = max(counts) if multiple else sum(counts)
    return Question(
        polls.PollSpec(tuple(titles), 0, multiple, False, ends_at), counts, voters, end_time
    )


async def _tally(store, sid: int, question: Question | None) -> None:
    """The counts a Question's server sends, kept for the poll as the
    status holds it now (poll_tally.lua: for that generation only)."""
    if question is None:
        return
    status = await statuses.get_status_or_none(store, sid)
    poll = polls.Poll.of(status) if status is not None else None
    if poll is not None:
        await polls.tally(store, sid, poll.gen, question.counts, question.voters)


async def keep_note(
    store: Store, queue: JobQueue, settings: Settings, here: Here, actor: User, obj, depth: int = 0
) -> None:
    """Keep a remote note as a status of its author ``actor`` (once per note
    id: posting.post_claimed keyed by it, then the note index), whether it came
    in a Create or was fetched with a thread. A note that quotes another
    (quoting.quote_uri) quotes the status kept here for it (fetched when
    not kept, ``depth`` notes deep at most), pending until its
    ``quoteAuthorization`` is verified (quoting.verify)."""
    if not isinstance(obj, dict) or obj.get("type") not in ("Note", "Article", "Question"):
        return
    uri = _id_of(obj)
    if (
        not uri
        or _id_of(obj.get("attributedTo")) != actor.uri
        or remote.host_of(uri) != remote.host_of(actor.uri)
    ):
        raise Refused("a note must be its actor's own, on its actor's host", 403)
    if await store.get(keys.note(uri)):
        return
    audience = {_id_of(x) for f in ("to", "cc") for x in _listed(obj.get(f))}
    text, mentions = await _mentions(store, here, obj)
    if documents.PUBLIC in audience or "as:Public" in audience or "Public" in audience:
        to = {_id_of(x) for x in _listed(obj.get("to"))}
        visibility = "public" if to & {documents.PUBLIC, "as:Public", "Public"} else "unlisted"
    elif any(a.endswith("/followers") for a in audience):
        visibility = "private"
    elif any(here.local_login(a) for a in audience):
        visibility = "direct"  # to accounts here by name: a direct message
    else:
        return  # addressed to no one here
    extra = {"uri": uri[: limits.EXTRA_VALUE_MAX_BYTES], "visibility": visibility}
    url = remote.link_on(remote.first_url(obj.get("url")), uri)
    if url and len(url) <= limits.EXTRA_VALUE_MAX_BYTES:
        extra["url"] = url
    if isinstance(obj.get("summary"), str) and obj["summary"]:
        extra["spoiler_text"] = html_to_text(obj["summary"])[: limits.EXTRA_VALUE_MAX_BYTES]
    if obj.get("sensitive") is True:
        extra["sensitive"] = "true"
    if len(uri) > limits.EXTRA_VALUE_MAX_BYTES:
        raise Refused("the note's id is too long")
    block = await domains.policy(store, remote.host_of(uri))
    if block is not None and block.silenced and visibility == "public":
        extra["visibility"] = "unlisted"  # a silenced domain: off the public timelines
    reply_to = here.local_status(_id_of(obj.get("inReplyTo")))
    if reply_to is None and _id_of(obj.get("inReplyTo")):
        known = await store.get(keys.note(_id_of(obj.get("inReplyTo"))))
        reply_to = int(known) if known else None
    # (a domain whose media are rejected: its attachments shown as Mastodon, never fetched)
    media = media_entity.remote_items(
        _listed(obj.get("attachment")),
        limits.MEDIA_PER_STATUS,
        rejected=block is not None and block.reject_media,
    )
    # its custom emoji: recorded for its server, their images fetched by a job
    used = emoji.parse(
        obj.get("tag"), uri, [str(obj.get("content") or ""), extra.get("spoiler_text", "")]
    )
    codes = await emoji.keep(store, queue, uri, used)
    if codes:
        extra["emo"] = codes
    question = _question(obj)
    quoted = await _quoted(store, queue, settings, here, obj, depth)
    if quoted is not None:
        extra[quotes_.EXTRA] = str(quoted)
    policy = quoting.policy_of(obj, actor.uri)
    if policy and policy != quotes_.DEFAULT_POLICY:
        extra[quotes_.POLICY_EXTRA] = policy
    status = await idempotency.post_once(
        store,
        queue,
        settings,
        actor.id,
        uri,
        text[: limits.FED_NOTE_MAX_CHARS],
        extra,
        reply_to,
        poll=question.spec if question is not None else None,
        remote=posting.Remote(
            limits.FED_NOTE_MAX_CHARS, mentions, media, sanitize(str(obj.get("content") or ""))
        ),
    )
    # its counts, its images' fetch, then the note index: a run cut short
    # before is run again whole
    await _tally(store, status.id, question)
    await remote_media.queue_attachments(queue, status.id, status.extra.get("media", ""))
    if quoted is not None:  # its approval checked (idempotent: a pending quote only)
        approval = _id_of(obj.get("quoteAuthorization"))
        await quoting.verify(store, here.base, status, approval, loopback=here.loopback)
    await store.set(keys.note(uri), status.id)


async def _quoted(store, queue, settings, here: Here, obj: dict, depth: int) -> int | None:
    """The status kept here for the note ``obj`` quotes: a local one, a
    remote one kept, or fetched from its server now (taken only under its
    own id; at most limits.FED_QUOTE_FETCH_DEPTH deep); None if none."""
    uri = quoting.quote_uri(obj)
    if not uri:
        return None
    sid = await _status_of(store, here, uri)
    if sid is not None or uri.startswith(here.base + "/"):
        return sid
    if depth >= limits.FED_QUOTE_FETCH_DEPTH:
        return None
    return await fetch_note(store, queue, settings, here, uri, depth + 1)


async def fetch_note(
    store: Store, queue: JobQueue, settings: Settings, here: Here, uri: str, depth: int = 0
) -> int | None:
    """The status kept here for another server's note ``uri``: fetched from
    its server now (taken only as the document of its own id, signed by the
    instance actor: client.fetch_object) and kept as its author's (keep_note,
    once per note id); None if it could not be had."""
    try:
        doc = await client.fetch_object(
            uri, loopback=here.loopback, signer=await remote.instance_signer(store, here.base)
        )
        author = await remote.known_or_fetch(
            store, here.base, _id_of(doc.get("attributedTo")), loopback=here.loopback
        )
        await keep_note(store, queue, settings, here, author, doc, depth)
    except (RedpollError, Unreachable) as exc:
        log.info("note %s not had: %s", uri, exc)
    return await _status_of(store, here, uri)


async def status_of(store: Store, settings: Settings, uri: str) -> int | None:
    """The status a note id names here (local, or kept), without fetching."""
    return await _status_of(store, Here.of(settings), uri)


async def _mentions(store: Store, here: Here, obj: dict) -> tuple[str, frozenset[str]]:
    """The note's text, its mentions written out in full (Mastodon shows
    ``@name`` and names ``@name@host`` in its tags), and the logins here of
    the accounts its Mention tags name: local ones by their login, remote
    ones kept here as ``name@host``. Only these count as mentions."""
    text = html_to_text(str(obj.get("content") or ""))
    logins: set[str] = set()
    for tag in _listed(obj.get("tag")):
        if not isinstance(tag, dict) or tag.get("type") != "Mention":
            continue
        href, name = _id_of(tag.get("href")), str(tag.get("name") or "")
        local = here.local_login(href)
        if local is not None:
            login = local
        else:
            uid = await remote.account_id(store, href)
            if uid is None:
                continue  # someone not known here: not a mention of anyone here
            login = (await users.get_user(store, uid)).login
        short = "@" + name.lstrip("@").split("@", 1)[0] if name else ""
        full = "@" + login
        if name and name != full:
            text = text.replace(name, full) if "@" in name.lstrip("@") else text
        if short and short != full:
            text = re.sub(re.escape(short) + r"(?![\w@])", full, text)
        logins.add(login.lower())
    return text, frozenset(logins)


async def _delete(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    uri = _id_of(obj)
    if uri and remote.host_of(uri) == remote.host_of(actor.uri):
        # a QuoteAuthorization its author takes back: the quote it approved revoked
        if await quoting.revoked(store, actor.id, uri) is not None:
            return
    if uri == actor.uri:  # the account itself: closed here, its statuses hidden with it
        await remote.close(store, actor.id)
        return
    if not uri or remote.host_of(uri) != remote.host_of(actor.uri):
        return
    known = await store.get(keys.note(uri))
    if known is None:
        return
    try:
        await deleting.delete_status(store, queue, int(known), actor.id)
    except RedpollError:
        pass  # gone already, or not this actor's (delete_status checks the author)


async def _update(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    if isinstance(obj, dict) and obj.get("type") in remote.ACTOR_TYPES and _id_of(obj) == actor.uri:
        await remote.keep(store, remote.parse_actor(obj))
        return
    if not isinstance(obj, dict) or obj.get("type") not in ("Note", "Article", "Question"):
        return
    uri = _id_of(obj)
    known = await store.get(keys.note(uri)) if uri else None
    if known is None or remote.host_of(uri) != remote.host_of(actor.uri):
        return  # an edit of a note not kept here, or not its actor's
    text, _ = await _mentions(store, here, obj)
    text = text[: limits.FED_NOTE_MAX_CHARS]
    summary = obj.get("summary") if isinstance(obj.get("summary"), str) else ""
    spoiler = html_to_text(summary)[: limits.SPOILER_TEXT_MAX_CHARS]
    question = _question(obj)
    status = await statuses.get_status_or_none(store, int(known))
    if status is None or status.user_id != actor.id:
        return
    if obj.get("type") != "Question" or _edited(
        status, text, spoiler, obj.get("sensitive") is True, question
    ):
        try:  # editing checks the author: only the note's own may edit it
            await editing.edit(
                store,
                queue,
                actor.id,
                int(known),
                text,
                spoiler_text=spoiler,
                sensitive=obj.get("sensitive") is True,
                max_chars=limits.FED_NOTE_MAX_CHARS,
                poll=question.spec if question is not None else None,
                html=sanitize(str(obj.get("content") or "")),
            )
        except RedpollError as exc:
            log.info("edit of %s not taken: %s", uri, exc)
    # its custom emoji as the edit names them (idempotent: the same value written)
    used = emoji.parse(obj.get("tag"), uri, [str(obj.get("content") or ""), summary])
    codes = await emoji.keep(store, queue, uri, used)
    if codes != status.extra.get("emo", ""):
        try:
            await writes.of(store).update_status(int(known), {EXTRA_PREFIX + "emo": codes})
        except StatusNotFound:
            pass
    await _tally(store, int(known), question)  # (a Question's counts: not an edit)
    policy = quoting.policy_of(obj, actor.uri) or quotes_.DEFAULT_POLICY
    await quotes_.take_policy(store, status, policy)  # who may quote it now
    approval = _id_of(obj.get("quoteAuthorization"))
    if approval and quotes_.quoted_id(status) is not None:  # its quote approved since
        await quoting.verify(store, here.base, status, approval, loopback=here.loopback)
    closed = _closed_at(obj) if question is not None else None
    if closed is not None:  # closed by its server before its end: it ends here too
        status = await statuses.get_status_or_none(store, int(known))  # (as the edit left it)
        if status is not None:
            await polls.close(store, queue, status, closed)


def _closed_at(obj: dict) -> int | None:
    """When a Question says it closed (ms): its ``closed`` time, or now for
    ``closed: true`` (as Mastodon), never later than now; None if open."""
    closed = obj.get("closed")
    if closed is True:
        return now_ms()
    at = _time_ms(closed)
    return None if at is None else min(at, now_ms())


def _edited(status, text: str, spoiler: str, sensitive: bool, question: Question | None) -> bool:
    """Whether an Update of a Question changes more than its counts: its
    text, content warning, sensitivity, or its poll's options, kind or
    ``endTime`` (an edit sets it anew; a poll that ended here stays ended;
    ``closed`` alone is no edit: polls.close ends it)."""
    before, asked = polls.Poll.of(status), question.spec if question is not None else None
    had = status.extra.get("spoiler_text", "")[: limits.SPOILER_TEXT_MAX_CHARS].strip()
    if status.text != text or had != spoiler.strip():
        return True
    if not spoiler and sensitive != (status.extra.get("sensitive") == "true"):
        return True
    if before is None or asked is None:
        return (before is None) != (asked is None)
    end = question.end_time if question is not None else None
    return (
        before.options != asked.options
        or before.multiple != asked.multiple
        or (end is not None and not before.expired() and abs(before.expires_at - end) > 1000)
    )


async def _block(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    """A remote account blocks a local one: the block as between local
    accounts (no follows either way, neither sees the other), and its
    follow of the local account ends."""
    local = await _local_of(store, here, obj)
    if local is None:
        return
    await relations.block(store, queue, actor.id, local.id)
    await _stop_following(store, local, actor)


async def _local_of(store, here: Here, value) -> User | None:
    login = here.local_login(_id_of(value))
    if login is None:
        return None
    try:
        return await users.lookup(store, login)
    except RedpollError:
        return None


def _listed(value) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


async def _quietly(call) -> None:
    """An interaction with a status that is gone, or not visible to the
    actor: dropped, as Mastodon drops it."""
    try:
        await call
    except RedpollError:
        pass


async def _move(store, queue, settings, here: Here, actor: User, activity, obj) -> None:
    """An account moved to another (Mastodon's Move): taken only from the
    old account itself, to another account, of another server, not on a
    suspended domain, whose actor (fetched now) names the old one among its
    ``alsoKnownAs``; then recorded and its local followers, blocks and
    mutes carried over by a job (redpoll.federation.moves), once."""
    target = _id_of(activity.get("target"))
    if _id_of(obj) != actor.uri or not target:
        raise Refused("a Move moves its own actor, to a target", 403)
    if target == actor.uri:
        raise Refused("an account cannot move to itself")
    if target.startswith(here.base + "/"):
        raise Refused("a Move to an account of this server is not taken", 403)
    if await domains.suspended(store, remote.host_of(target)):
        raise Refused("the new account's domain is suspended here", 403)
    try:
        doc = await client.fetch_object(
            target, loopback=here.loopback, signer=await remote.instance_signer(store, here.base)
        )
    except client.WrongDocument as exc:  # (refused, not retried: it would answer the same)
        raise Refused(f"the Move's target is no account: {exc}", 403) from None
    if actor.uri not in [_id_of(x) for x in _listed(doc.get("alsoKnownAs"))]:
        raise Refused("the new account does not name the old one (alsoKnownAs)", 403)
    try:
        new = await remote.keep(store, remote.parse_actor(doc, fetched_from=target))
    except remote.BadActor as exc:  # (refused, not retried: it would fail the same way)
        raise Refused(f"the Move's target is no account: {exc}", 403) from None
    if new.id == actor.id or new.suspended:
        raise Refused("the new account is the old one, or closed", 403)
    move_id = _id_of(activity) or signing.digest(json.dumps(activity, sort_keys=True).encode())
    if not await moves.accept(store, queue, actor, new, move_id):
        log.info("a second Move of %s (to %s) taken as nothing", actor.uri, new.uri)


_HANDLERS = {
    "Follow": _follow,
    "Undo": _undo,
    "Accept": _accepted,
    "Reject": _reject,
    "Like": _like,
    "Announce": _announce,
    "Create": _create,
    "Delete": _delete,
    "Update": _update,
    "Move": _move,
    "Block": _block,
    "QuoteRequest": _quote_request,
}
