"""Posting at most once per Idempotency-Key (Mastodon's header on POST /api/v1/statuses).

``idem:{uid}:<digest of key>`` holds ``pending`` while the first request
posts, then the new status id for ``limits.IDEMPOTENCY_WINDOW_S``. Each step
is one Redis command on one key, so it is cluster safe:

1. SET NX with a short TTL claims the key (exactly one concurrent request wins);
2. the winner posts, then SETs the status id with the full window. If posting
   fails it deletes the claim; if it dies, the claim expires by itself
   (``CLAIM_TTL_S``) and a retry of the request posts.
3. A loser waits for the id and returns that status instead of posting.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from . import keys, limits, validate
from .auth import digest
from .errors import Busy, ValidationError
from .models import Status

if TYPE_CHECKING:
    from .engine import Redpoll

#: A claim whose poster died is given up after this long.
CLAIM_TTL_S = 30
PENDING = b"pending"
#: How long a duplicate request waits for the first one to finish.
WAIT_S = 10.0


def check_key(key: Any) -> str:
    key = validate.text(key, "Idempotency-Key", limits.IDEMPOTENCY_KEY_MAX_CHARS)
    if not key.isprintable():
        raise ValidationError("Idempotency-Key", "must be printable")
    return key


async def post_once(rp: "Redpoll", uid: int, key: str, text, extra=None,
                    in_reply_to=None) -> Status:
    client = rp.store.client
    name = keys.idempotency(uid, digest(check_key(key)))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while True:
        if await client.set(name, PENDING, nx=True, ex=CLAIM_TTL_S):
            try:
                status = await rp.post(uid, text, extra, in_reply_to)
            except BaseException:
                await client.delete(name)
                raise
            await client.set(name, status.id, ex=limits.IDEMPOTENCY_WINDOW_S)
            return status
        held = await client.get(name)
        if held is not None and held != PENDING:
            return await rp.get_status(int(held))
        if loop.time() > deadline:
            raise Busy("a request with this Idempotency-Key is still being processed")
        await asyncio.sleep(0.05)
