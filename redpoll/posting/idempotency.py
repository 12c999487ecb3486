"""Posting at most once per Idempotency-Key (Mastodon's header on POST /api/v1/statuses).

``keys.idempotency(shard, uid, digest)`` holds ``<status id>:<journal entry>``
for ``limits.IDEMPOTENCY_WINDOW_S``. It is set in the same atomic step that
queues the post's journal (posting.post_claimed, job_hold_once.lua): the key's
hash tag is the job shard the journal goes to, chosen from the user and the
key, so the two are in one slot on a cluster too. A request cut short at any
point therefore left either nothing (a retry posts) or the claim and the
journal (a retry returns that status, finishing its creation if needed);
never a status without its claim.
"""

from __future__ import annotations

import zlib
from typing import Any

from ..accounts.auth import digest
from ..bus.queue import JobQueue
from ..core import keys, limits, validate
from ..core.errors import ValidationError
from ..core.models import Status
from ..core.settings import Settings
from ..storage.store import Store
from . import posting


def check_key(key: Any) -> str:
    key = validate.text(key, "Idempotency-Key", limits.IDEMPOTENCY_KEY_MAX_CHARS)
    if not key.isprintable():
        raise ValidationError("Idempotency-Key", "must be printable")
    return key


def shard(uid: int, key_digest: str) -> int:
    """The job shard of a post made under this key (fixed by user and key, so
    every retry finds the same claim)."""
    return zlib.crc32(f"{uid}:{key_digest}".encode()) % limits.JOB_SHARDS


async def post_once(
    store: Store,
    queue: JobQueue,
    settings: Settings,
    uid: int,
    key: str,
    text,
    extra=None,
    in_reply_to=None,
    media=(),
    poll=None,
    *,
    remote: posting.Remote | None = None,
    allowed_mentions: frozenset[int] | None = None,
) -> Status:
    uid = validate.an_id(uid, "author_id")
    dig = digest(check_key(key))
    n = shard(uid, dig)
    return await posting.post_claimed(
        store,
        queue,
        settings,
        uid,
        keys.idempotency(n, uid, dig),
        n,
        text,
        extra,
        in_reply_to,
        media,
        poll,
        remote=remote,
        allowed_mentions=allowed_mentions,
    )
