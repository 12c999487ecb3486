"""The conversation around a status: replies, mentions, hashtags.

At post time :func:`prepare` reads the status's text and reply target and
returns what the status records about them (its ``in_reply_to_id``,
``in_reply_to_account_id``, ``mentions`` and ``tags`` extras); it only reads,
so a post refused here (unknown parent, too many mentions) writes nothing.
After the status exists, :func:`after_post` links it into the conversation:
the parent's replies and count (public and unlisted replies only:
:func:`counts_as_reply`), the hashtag timelines and name index, the
homes of the mentioned and of the hashtags' followers, and the ``mention``
and ``status`` (follow with notify=true) notifications. Every one of those
steps is idempotent (deliver.lua, reply_link.lua, notify.lua, ZADD), and it
runs inside the post's held fan-out job, whose replay by a worker runs it
again, so a post cut short still ends fully linked. :func:`after_delete` undoes the same, idempotently,
and takes back the notifications about the status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core import keys, limits, validate
from ..core.errors import StatusNotFound, ValidationError
from ..core.models import Status
from ..core.validate import normalize_tag as normalize_tag  # (their home: core)
from ..core.validate import tag_name as tag_name
from ..notifications import notifications
from ..records.statuses import read_statuses
from ..relations import visibility
from ..storage.store import Store
from ..timelines import fanout, home_rule, placement
from . import direct_messages
from . import tag_history as tags_history

#: a mention and a hashtag in a status's text (also where its content links them)
#: ``@login``, or ``@name@host`` for an account of another server (kept
#: here under that login: redpoll.federation.remote)
MENTION = re.compile(
    r"(?<![\w@/])@([A-Za-z0-9_]{1,"
    + str(limits.LOGIN_MAX_CHARS)
    + r"}(?:@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::\d{1,5})?)?)(?![\w@])"
)
TAG = re.compile(r"(?<![\w#/&])#(\w{1," + str(limits.TAG_MAX_CHARS) + r"})(?!\w)")


def parse(text: str) -> tuple[list[str], list[str]]:
    """(mentioned logins, hashtag names) in order of appearance, once each;
    a hashtag needs a letter (``#2024`` is not one), as Mastodon."""
    logins = list(dict.fromkeys(m.lower() for m in MENTION.findall(text)))
    tags = list(dict.fromkeys(normalize_tag(t) for t in TAG.findall(text) if not t.isdigit()))
    return logins, tags


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a status records about its place in the conversation."""

    in_reply_to_id: int | None = None
    in_reply_to_account_id: int | None = None
    mentions: tuple[tuple[int, str], ...] = ()  # (user id, login)
    tags: tuple[str, ...] = ()
    #: the parent's direct conversation (its ``conv`` extra), if it has one
    parent_conversation: int | None = None
    #: the thread it belongs to: its first status (its parent's ``thread``
    #: extra, or the parent itself); None for a status that replies to nothing
    thread: int | None = None

    def to_extra(self) -> dict[str, str]:
        out = {}
        if self.in_reply_to_id:
            out["in_reply_to_id"] = str(self.in_reply_to_id)
            out["in_reply_to_account_id"] = str(self.in_reply_to_account_id)
            out["thread"] = str(self.thread or self.in_reply_to_id)
        if self.mentions:
            out["mentions"] = " ".join(f"{uid}:{login}" for uid, login in self.mentions)
        if self.tags:
            out["tags"] = " ".join(self.tags)
        return out

    @classmethod
    def of(cls, status: Status) -> Conversation:
        x = status.extra
        mentions = []
        for item in x.get("mentions", "").split():
            uid, _, login = item.partition(":")
            mentions.append((int(uid), login))
        reply = x.get("in_reply_to_id")
        return cls(
            int(reply) if reply else None,
            int(x["in_reply_to_account_id"]) if reply else None,
            tuple(mentions),
            tuple(x.get("tags", "").split()),
            thread=int(x["thread"]) if x.get("thread") else None,
        )


async def prepare(
    store: Store, author_id: int, text: str, in_reply_to=None, *, only: frozenset[str] | None = None
) -> Conversation:
    """Read what the new status will record; StatusNotFound for a missing
    parent, ValidationError past the caps. Reads only. ``only``: the logins
    that may count as mentions (a remote status's, named by its tags)."""
    logins, tags = parse(text)
    if only is not None:
        logins = [login for login in logins if login in only]
    if len(logins) > limits.MENTIONS_PER_STATUS:
        raise ValidationError("text", f"mentions more than {limits.MENTIONS_PER_STATUS} accounts")
    if len(tags) > limits.TAGS_PER_STATUS:
        raise ValidationError("text", f"carries more than {limits.TAGS_PER_STATUS} hashtags")
    parent = validate.optional_id(in_reply_to, "in_reply_to_id")
    commands: list[tuple] = [("GET", keys.login(login)) for login in logins]
    if parent:
        commands.append(("HMGET", keys.status(parent), "uid", "deleted", "x:conv", "x:thread"))
    replies = await store.batch(commands)
    parent_author = parent_conv = parent_thread = None
    if parent:
        uid, deleted, parent_conv, parent_thread = replies.pop()
        if uid is None or deleted is not None:
            raise StatusNotFound(f"status {parent} does not exist")
        parent_author = int(uid)
    claims = [
        (login, int(claim.split(b":", 1)[0]))
        for login, claim in zip(logins, replies)
        if claim is not None
    ]
    exists = await store.batch([("HGET", keys.user(uid), "login") for _, uid in claims])
    mentions = tuple(
        (uid, real.decode()) for (_, uid), real in zip(claims, exists) if real is not None
    )
    return Conversation(
        parent,
        parent_author,
        mentions,
        tuple(tags),
        int(parent_conv) if parent_conv else None,
        int(parent_thread) if parent_thread else None,
    )


async def _tag_followers(store: Store, tags) -> list[int]:
    """Followers of ``tags`` (at most limits.TAG_FOLLOWERS_DELIVERED_MAX a
    tag, drawn at random), each once."""
    if not tags:
        return []
    members = await store.batch(
        [("SRANDMEMBER", keys.tag_followers(t), limits.TAG_FOLLOWERS_DELIVERED_MAX) for t in tags]
    )
    return list(dict.fromkeys(int(m) for group in members for m in group))


async def _into_homes(store: Store, status: Status, mentioned: list[int], tags) -> list[int]:
    """Offer ``status`` to the homes of those it mentions and of its tags'
    followers, each as the home rule decides (redpoll.timelines.home_rule:
    its reason, blocks); the mentioned whose homes took it."""
    taking = await fanout.offer(store, home_rule.Candidate.of(status, home_rule.MENTION), mentioned)
    if tags:
        fans = [u for u in await _tag_followers(store, tags) if u not in set(mentioned)]
        await fanout.offer(store, home_rule.Candidate.of(status, home_rule.TAG), fans)
    return taking


async def _notifiers(store: Store, status: Status) -> list[int]:
    """Who gets a ``status`` notification for it: followers with notify=true,
    for a post or a reply to oneself (as Mastodon, not for replies to others)."""
    if status.replies_to_other is not None or status.reblog_of:
        return []
    if status.extra.get("visibility") == "direct":  # only the mentioned may see it
        return []
    members = await store.srandmember(keys.notifiers(status.user_id), limits.STATUS_NOTIFY_MAX)
    if not members:
        return []
    # only those who follow the author now (the set is kept with the follow,
    # but a follower gone since must not hear of a post)
    since = await store.batch([("ZMSCORE", keys.followers(status.user_id), *members)])
    return [int(m) for m, at in zip(members, since[0]) if at is not None]


async def tag_posts(store: Store, status: Status, on: bool, tags=None) -> None:
    """``status`` in (``on``) or out of its author's sets of ``tags`` (its
    own, by default): what featured tags count (redpoll.conversations.featured_tags).
    Only public and unlisted statuses count (Mastodon's rule), so a status of
    another visibility is only ever taken out. One script on the author's
    slot (tag_posts.lua), idempotent."""
    names = list(tags if tags is not None else Conversation.of(status).tags)
    if not names or (on and visibility.of(status) not in visibility.OPEN):
        return
    uid = status.user_id
    await store.run(
        "tag_posts",
        [keys.tags_used(uid), *(keys.tag_posts(uid, n) for n in names)],
        ["1" if on else "0", status.id, status.created_at, limits.TAGS_USED_KEPT, *names],
    )


def counts_as_reply(status: Status) -> bool:
    """Whether its parent's ``replies_count`` counts it: public and unlisted
    replies only, as Mastodon (a followers-only or direct reply must not
    show anyone that it exists)."""
    return visibility.of(status) in visibility.OPEN


async def _reply_link(store: Store, status: Status, parent: int, link: bool) -> None:
    await store.run(
        "reply_link",
        [keys.replies(parent), keys.replies_counted(parent), keys.status_counts(parent)],
        [status.id, 1 if link else 0, 1 if counts_as_reply(status) else 0],
    )


async def private_mentions_of(store: Store, status: Status, recipients: list[int]) -> set[int]:
    """Those of ``recipients`` for whom ``status`` is a private mention not
    in response (Mastodon 4.3's notification policy): a direct status that
    answers no direct status of theirs, up its thread (at most
    limits.NOTIFICATION_RESPONSE_DEPTH_MAX replies up), that mentions its
    author."""
    if visibility.of(status) != "direct" or not recipients:
        return set()
    answered: set[int] = set()
    sid = Conversation.of(status).in_reply_to_id
    for _ in range(limits.NOTIFICATION_RESPONSE_DEPTH_MAX):
        if not sid:
            break
        found = await read_statuses(store, [sid])
        if not found:
            break
        parent = found[0]
        conv = Conversation.of(parent)
        if visibility.of(parent) == "direct" and any(
            uid == status.user_id for uid, _ in conv.mentions
        ):
            answered.add(parent.user_id)
        sid = conv.in_reply_to_id
    return {uid for uid in recipients if uid not in answered}


async def after_post(store: Store, status: Status) -> None:
    """Link a new status into its conversation (idempotent; see the module)."""
    conv = Conversation.of(status)
    sid = status.id
    for uid in await _notifiers(store, status):
        op = await store.incr(keys.INTERACTION_SEQ)
        await notifications.apply(store, uid, "status", status.user_id, sid, op, True, status=sid)
    if not (conv.in_reply_to_id or conv.mentions or conv.tags):
        if status.extra.get("visibility") == "direct":
            await direct_messages.after_post(store, status, [])
        return
    if conv.in_reply_to_id:
        await _reply_link(store, status, conv.in_reply_to_id, True)
    await tag_posts(store, status, True)
    if conv.tags and status.extra.get("visibility", "public") == "public":
        await store.batch([("ZADD", keys.TAG_NAMES, 0, t) for t in conv.tags])
        await tags_history.count_use(store, conv.tags, sid, status.user_id, status.created_at)
        await placement.of(store).deliver_besides(
            sid, [keys.tag_timeline(t) for t in conv.tags], limits.TAG_TIMELINE_CAP
        )
    # nothing reaches across a block: the home rule's answer for the mentioned
    mentioned = await _into_homes(
        store, status, [uid for uid, _ in conv.mentions if uid != status.user_id], conv.tags
    )
    private = await private_mentions_of(store, status, mentioned)
    for uid in mentioned:
        op = await store.incr(keys.INTERACTION_SEQ)
        await notifications.apply(
            store,
            uid,
            "mention",
            status.user_id,
            sid,
            op,
            True,
            status=sid,
            private_mention=uid in private,
        )
    if status.extra.get("visibility") == "direct":
        await direct_messages.after_post(store, status, mentioned)


async def after_delete(store: Store, status: Status) -> None:
    """Take a deleted status out of its conversation (idempotent)."""
    conv = Conversation.of(status)
    sid = status.id
    if conv.in_reply_to_id:
        await _reply_link(store, status, conv.in_reply_to_id, False)
    await tag_posts(store, status, False)
    if conv.tags:
        await placement.of(store).undeliver(sid, [keys.tag_timeline(t) for t in conv.tags])
    offered = [uid for uid, _ in conv.mentions] + await _tag_followers(store, conv.tags)
    await fanout.withdraw(store, sid, offered)
    for uid, _ in conv.mentions:
        op = await store.incr(keys.INTERACTION_SEQ)
        await notifications.apply(store, uid, "mention", status.user_id, sid, op, False)
    for uid in await _notifiers(store, status):
        op = await store.incr(keys.INTERACTION_SEQ)
        await notifications.apply(store, uid, "status", status.user_id, sid, op, False)
    # the author's favourite notifications about it (boosts take theirs along)
    fans = await store.zrange(
        keys.favourited_by(sid), 0, limits.NOTIFICATIONS_UNDONE_PER_DELETE - 1
    )
    for fan in fans:
        op = await store.incr(keys.INTERACTION_SEQ)
        await notifications.apply(store, status.user_id, "favourite", int(fan), sid, op, False)


async def after_edit(store: Store, before: Status, after: Status) -> None:
    """An edit changed the hashtags or mentions of a status (its record
    already holds the new ones): out of the tag timelines and homes of those
    it no longer names (and their mention notifications undone), into the
    tag timelines (public statuses) and homes of those it names anew, with a
    mention notification, as after_post; nothing across a block.
    Idempotent. Tag history and followed-tag homes are left as posted, and
    a direct conversation keeps the participants it was posted with."""
    old, new = Conversation.of(before), Conversation.of(after)
    sid, author = after.id, after.user_id
    gone_tags = [t for t in old.tags if t not in new.tags]
    added_tags = [t for t in new.tags if t not in old.tags]
    old_uids = {uid for uid, _ in old.mentions}
    new_uids = {uid for uid, _ in new.mentions}
    gone = [uid for uid in old_uids - new_uids if uid != author]
    added = [uid for uid in new_uids - old_uids if uid != author]
    await tag_posts(store, after, False, gone_tags)
    await tag_posts(store, after, True, added_tags)
    if gone_tags:
        await placement.of(store).undeliver(sid, [keys.tag_timeline(t) for t in gone_tags])
    await fanout.withdraw(store, sid, gone)
    for uid in gone:
        op = await store.incr(keys.INTERACTION_SEQ)
        await notifications.apply(store, uid, "mention", author, sid, op, False)
    if added_tags and after.extra.get("visibility", "public") == "public":
        await store.batch([("ZADD", keys.TAG_NAMES, 0, t) for t in added_tags])
        await placement.of(store).deliver_besides(
            sid, [keys.tag_timeline(t) for t in added_tags], limits.TAG_TIMELINE_CAP
        )
    if added:  # nothing reaches across a block: the home rule's answer
        added = await fanout.offer(store, home_rule.Candidate.of(after, home_rule.MENTION), added)
        private = await private_mentions_of(store, after, added)
        for uid in added:
            op = await store.incr(keys.INTERACTION_SEQ)
            await notifications.apply(
                store,
                uid,
                "mention",
                author,
                sid,
                op,
                True,
                status=sid,
                private_mention=uid in private,
            )


# --- reading a thread ---------------------------------------------------------------------
async def context(store: Store, status: Status) -> tuple[list[int], list[int]]:
    """(ancestor ids oldest first, descendant ids depth-first in posting
    order), bounded by limits.CONTEXT_ANCESTORS_MAX / _DESCENDANTS_MAX."""
    ancestors: list[int] = []
    parent = Conversation.of(status).in_reply_to_id
    while parent and len(ancestors) < limits.CONTEXT_ANCESTORS_MAX:
        found = await read_statuses(store, [parent])
        if not found:
            break
        ancestors.append(parent)
        parent = Conversation.of(found[0]).in_reply_to_id
    ancestors.reverse()
    # descendants: one batch per level of the tree, then depth-first order
    children: dict[int, list[int]] = {}
    level, seen = [status.id], 0
    while level and seen < limits.CONTEXT_DESCENDANTS_MAX:
        rows = await store.batch(
            [("ZRANGE", keys.replies(sid), 0, limits.CONTEXT_DESCENDANTS_MAX - 1) for sid in level]
        )
        nxt = []
        for sid, row in zip(level, rows):
            kids = [int(x) for x in row]
            children[sid] = kids
            nxt += kids
            seen += len(kids)
        level = nxt
    order: list[int] = []
    stack = list(reversed(children.get(status.id, [])))
    while stack and len(order) < limits.CONTEXT_DESCENDANTS_MAX:
        sid = stack.pop()
        order.append(sid)
        stack += reversed(children.get(sid, []))
    return ancestors, order


async def search_tags(store: Store, prefix: str, limit: int = limits.TAG_SEARCH_MAX) -> list[str]:
    """Hashtag names that start with ``prefix`` (normalized, '#' optional), in
    name order, at most ``limit``: for search (compat's /api/v2/search)."""
    prefix = normalize_tag(prefix)
    if not prefix or "[" in prefix or "(" in prefix:
        return []
    # the upper bound as bytes: a str "\xff" would be sent as UTF-8 c3 bf,
    # below every name that goes on with a character past U+00FF
    names = await store.zrangebylex(
        keys.TAG_NAMES,
        f"[{prefix}",
        b"[" + prefix.encode() + b"\xff",
        start=0,
        num=min(limit, limits.TAG_SEARCH_MAX),
    )
    return [n.decode() for n in names]
