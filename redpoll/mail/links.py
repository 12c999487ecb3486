"""Single-use links: a random secret in the mail (``<uid>.<secret>``, 256
bits), only its sha256 kept, in the account's links hash (keys.links) by
purpose, with its expiry and the address it was sent to. A new link of a
purpose replaces the one before (the older mail's link stops working), and
using one deletes it in the same script that makes its change
(link_use.lua), so a link works at most once. A link is made when its mail
is sent (redpoll.mail.delivery): the secret never reaches the database or
the job queue in the clear."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from secrets import token_urlsafe

from ..core import keys as core_keys
from ..core import limits
from ..core.models import now_ms
from ..storage.store import Store
from . import keys

TTL_S = {"confirm": limits.CONFIRMATION_TTL_S, "reset": limits.PASSWORD_RESET_TTL_S}
_RAW = re.compile(r"([1-9][0-9]{0,18})\.([A-Za-z0-9_-]{43})")


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Link:
    uid: int
    purpose: str
    address: str
    #: the stored value as read: link_use.lua uses the link only if unchanged
    value: str


async def issue(store: Store, uid: int, purpose: str, address: str) -> str:
    """A new link of ``purpose`` for ``uid`` (replacing the one before),
    sent to ``address``: the token to put in the mail. One transaction on
    one key (the field and the hash's TTL, the longest a link lives)."""
    secret = token_urlsafe(32)
    expires = now_ms() + TTL_S[purpose] * 1000
    pipe = store.pipeline(transaction=True)
    pipe.hset(keys.links(uid), purpose, f"{_digest(secret)}\n{expires}\n{address}")
    pipe.expire(keys.links(uid), max(TTL_S.values()))
    await pipe.execute()
    return f"{uid}.{secret}"


async def find(store: Store, raw, purpose: str, now: int | None = None) -> Link | None:
    """The link ``raw`` names if it is the account's current one of
    ``purpose`` and has not expired (``now``: ms, the clock by default);
    None otherwise. Reads only."""
    if not isinstance(raw, str) or len(raw) > 100:
        return None
    m = _RAW.fullmatch(raw)
    if m is None:
        return None
    uid, secret = int(m.group(1)), m.group(2)
    value = await store.hget(keys.links(uid), purpose)
    if value is None:
        return None
    digest, expires, address = value.decode().split("\n", 2)
    if not hmac.compare_digest(digest, _digest(secret)):
        return None
    if int(expires) <= (now_ms() if now is None else now):
        return None
    return Link(uid, purpose, address, value.decode())


async def use(
    store: Store, link: Link, set_secrets: dict[str, str], drop_secrets: tuple[str, ...] = ()
) -> bool:
    """Use ``link`` once and change the account's secrets with it (one
    script); False, with nothing written, if it was used or replaced since
    it was read."""
    args: list = [link.purpose, link.value, len(set_secrets)]
    for name, value in set_secrets.items():
        args += [name, value]
    args += list(drop_secrets)
    done = await store.run("link_use", [keys.links(link.uid), core_keys.secrets(link.uid)], args)
    return bool(done)


async def pending(store: Store, uid: int) -> str | None:
    """The address an e-mail change of ``uid`` waits to confirm, if any."""
    raw = await store.hget(keys.links(uid), "pending")
    return raw.decode() if raw is not None else None


async def set_pending(store: Store, uid: int, address: str) -> None:
    """A change to ``address`` awaits confirmation; the confirmation link
    sent before stops working (its mail named another address, or the
    sign-up's, which the new link confirms as well). One transaction."""
    pipe = store.pipeline(transaction=True)
    pipe.hset(keys.links(uid), "pending", address)
    pipe.hdel(keys.links(uid), "confirm")
    pipe.expire(keys.links(uid), max(TTL_S.values()))
    await pipe.execute()
