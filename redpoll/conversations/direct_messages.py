"""Direct messages: each user's list of direct conversations.

A direct status belongs to a conversation: the one of the status it
replies to, else its own (``x:conv``, written when the status is, see
posting.prepare). :func:`after_post` puts it at the head of that
conversation for its author (read) and each account it reaches (unread):
``dm_touch.lua`` per participant, idempotent and order-proof, so it runs
inside the post's journal and a replay changes nothing. Who sees the
status is still redpoll.relations.visibility's decision, on every read.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core import keys, limits, validate
from ..core.errors import NotFound
from ..core.models import Status
from ..relations import visibility
from ..storage.store import Store


class ConversationNotFound(NotFound):
    """No such conversation for this user."""


@dataclass(frozen=True, slots=True)
class Conversation:
    id: int
    last_status: int
    unread: bool


def conversation_of(status: Status) -> int:
    return int(status.extra.get("conv", status.id))


def participants(status: Status) -> list[int]:
    """The author and the mentioned (the blocked are never mentioned: the
    conversation module drops them before delivery)."""
    return list(
        dict.fromkeys([status.user_id, *visibility.mentioned_ids(status.extra.get("mentions", ""))])
    )


async def after_post(store: Store, status: Status, reached: list[int]) -> None:
    """Put a direct status at the head of its conversation for its author
    and for ``reached`` (the mentioned it was delivered to). Idempotent."""
    conv = conversation_of(status)
    for uid in dict.fromkeys([status.user_id, *reached]):
        await store.run(
            "dm_touch",
            [keys.dm_conversations(uid), keys.dm_states(uid)],
            [conv, status.id, "0" if uid == status.user_id else "1", limits.DM_CONVERSATIONS_MAX],
        )


async def page(
    store: Store, uid, max_id=None, since_id=None, min_id=None, limit=None
) -> list[Conversation]:
    """The user's conversations, the one with the newest status first,
    paged by last status id."""
    uid = validate.an_id(uid, "user_id")
    limit = validate.page_limit(limit)
    max_id = validate.optional_id(max_id, "max_id")
    since_id = validate.optional_id(since_id, "since_id")
    min_id = validate.optional_id(min_id, "min_id")
    top = f"({int(max_id)}" if max_id else "+inf"
    low = min_id or since_id
    bottom = f"({int(low)}" if low else "-inf"
    if min_id:  # the oldest above min_id, newest first (Mastodon's min_id)
        (rows,) = await store.batch(
            [("ZRANGE", keys.dm_conversations(uid), bottom, top, "BYSCORE", "LIMIT", 0, limit)]
        )
        rows = list(reversed(rows))
    else:
        (rows,) = await store.batch(
            [
                (
                    "ZRANGE",
                    keys.dm_conversations(uid),
                    top,
                    bottom,
                    "BYSCORE",
                    "REV",
                    "LIMIT",
                    0,
                    limit,
                )
            ]
        )
    if not rows:
        return []
    (states,) = await store.batch([("HMGET", keys.dm_states(uid), *rows)])
    out = []
    for conv, state in zip(rows, states):
        if state is None:
            continue
        sid, _, unread = state.decode().partition(":")
        out.append(Conversation(int(conv), int(sid), unread == "1"))
    return out


async def get(store: Store, uid, conv) -> Conversation:
    uid, conv = validate.an_id(uid, "user_id"), validate.an_id(conv, "id")
    (state,) = await store.batch([("HGET", keys.dm_states(uid), conv)])
    if state is None:
        raise ConversationNotFound(f"conversation {conv} does not exist")
    sid, _, unread = state.decode().partition(":")
    return Conversation(conv, int(sid), unread == "1")


async def mark_read(store: Store, uid, conv, unread: bool = False) -> Conversation:
    """Mark a conversation read (or ``unread`` again: Mastodon's
    /conversations/:id/unread); ConversationNotFound if the user has none
    of that id."""
    uid, conv = validate.an_id(uid, "user_id"), validate.an_id(conv, "id")
    if not await store.run("dm_read", [keys.dm_states(uid)], [conv, "1" if unread else "0"]):
        raise ConversationNotFound(f"conversation {conv} does not exist")
    return await get(store, uid, conv)


async def remove(store: Store, uid, conv) -> None:
    """Take a conversation off the user's list (a new status brings it back)."""
    uid, conv = validate.an_id(uid, "user_id"), validate.an_id(conv, "id")
    await get(store, uid, conv)
    pipe = store.pipeline(transaction=True)  # one slot: uid's
    pipe.zrem(keys.dm_conversations(uid), conv)
    pipe.hdel(keys.dm_states(uid), conv)
    await pipe.execute()
