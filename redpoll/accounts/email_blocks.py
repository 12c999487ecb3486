"""E-mail blocks, as Mastodon's: a blocked e-mail domain (and every domain
under it) and a blocked canonical address (lower-cased, the dots and any
``+`` part of its local part dropped, then SHA-256: Mastodon's
EmailHelper) refuse a sign-up with that address (422, nothing written).

Both are hashes in the slot {blocks} (keys.EMAIL_DOMAIN_BLOCKS,
keys.CANONICAL_EMAIL_BLOCKS); a block is added by one script
(block_put.lua: the check, its id and the write in one step), removed by
one HDEL, and a sign-up's check is one round trip. The admin API's calls
check the actor's role (``manage_blocks``) and log their action."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass

from ..admin import audit, roles, staff
from ..core import keys, limits
from ..core.errors import Conflict, NotFound, ValidationError
from ..core.models import now_ms
from ..storage.store import Store

HISTORY_DAYS = 7


class EmailBlockNotFound(NotFound):
    """No e-mail block by that id."""


@dataclass(frozen=True, slots=True)
class Block:
    id: int
    #: the domain, or the canonical address's hash
    value: str
    at: int
    #: sign-ups refused per day, newest first: (day start in epoch seconds, count)
    history: tuple[tuple[int, int], ...] = ()


def canonical(email: str) -> str:
    user, _, domain = email.lower().partition("@")
    return f"{user.replace('.', '').split('+', 1)[0]}@{domain}"


def canonical_hash(email: str) -> str:
    return hashlib.sha256(canonical(email).encode()).hexdigest()


def _domain(value) -> str:
    if not isinstance(value, str):
        raise ValidationError("domain", "must be a domain name")
    domain = value.strip().lower().rstrip(".")
    if not domain or any(c in domain for c in "/@ #") or len(domain) > 253:
        raise ValidationError("domain", f"{value[:80]!r} is not a domain name")
    return domain


def _parents(domain: str) -> list[str]:
    parts = domain.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def _day(at_s: float) -> int:
    return int(at_s) // 86_400 * 86_400


async def refused(store: Store, email: str) -> bool:
    """Whether a sign-up with ``email`` is refused by a block (counting it in
    the refusing domain block's history). One round trip to check."""
    domain = email.rsplit("@", 1)[-1].lower()
    names = _parents(domain)
    found, by_hash = await store.batch(
        [
            ("HMGET", keys.EMAIL_DOMAIN_BLOCKS, *names),
            ("HEXISTS", keys.CANONICAL_EMAIL_BLOCKS, canonical_hash(email)),
        ]
    )
    hit = next((json.loads(v) for v in found if v is not None), None)
    if hit is not None:
        day = _day(time.time())
        key = keys.email_block_history(int(hit["id"]))
        await store.batch([("HINCRBY", key, day, 1), ("EXPIRE", key, (HISTORY_DAYS + 1) * 86_400)])
        return True
    return bool(by_hash)


async def _all(store: Store, key: str) -> list[Block]:
    raw = await store.hgetall(key)
    out = []
    for member, value in raw.items():
        if member.decode() == keys.BLOCK_SEQ:
            continue
        data = json.loads(value)
        out.append(Block(int(data["id"]), member.decode(), int(data["at"])))
    return sorted(out, key=lambda b: -b.id)


async def _with_history(store: Store, found: list[Block]) -> list[Block]:
    rows = await store.batch([("HGETALL", keys.email_block_history(b.id)) for b in found])
    today = _day(time.time())
    days = [today - i * 86_400 for i in range(HISTORY_DAYS)]
    out = []
    for b, raw in zip(found, rows):
        if isinstance(raw, list):  # RESP2
            raw = dict(zip(raw[0::2], raw[1::2]))
        counts = {int(k): int(v) for k, v in (raw or {}).items()}
        out.append(Block(b.id, b.value, b.at, tuple((d, counts.get(d, 0)) for d in days)))
    return out


async def _one(store: Store, key: str, bid) -> Block:
    for b in await _all(store, key):
        if str(b.id) == str(bid):
            return b
    raise EmailBlockNotFound(f"e-mail block {bid} does not exist")


async def _add(store: Store, key: str, member: str, field: str) -> Block:
    at = now_ms()
    if await store.hlen(key) > limits.EMAIL_BLOCKS_MAX:
        raise ValidationError(field, f"at most {limits.EMAIL_BLOCKS_MAX} blocks")
    try:
        bid = await store.run("block_put", [key], [member, keys.BLOCK_SEQ, at])
    except Conflict:
        raise ValidationError(field, "has already been taken") from None
    return Block(int(bid), member, at)


async def _may(store: Store, actor: int | None) -> None:
    roles.require(await staff.role_of(store, actor), "manage_blocks")


# --- e-mail domain blocks ----------------------------------------------------------------
async def domain_blocks(store: Store, actor: int | None) -> list[Block]:
    await _may(store, actor)
    return await _with_history(store, await _all(store, keys.EMAIL_DOMAIN_BLOCKS))


async def domain_block(store: Store, actor: int | None, bid) -> Block:
    found = await _one(store, keys.EMAIL_DOMAIN_BLOCKS, bid)
    await _may(store, actor)
    return (await _with_history(store, [found]))[0]


async def block_domain(store: Store, actor: int | None, domain) -> Block:
    await _may(store, actor)
    found = await _add(store, keys.EMAIL_DOMAIN_BLOCKS, _domain(domain), "domain")
    await audit.record(store, actor, "create", "EmailDomainBlock", found.id, found.value)
    return (await _with_history(store, [found]))[0]


async def unblock_domain(store: Store, actor: int | None, bid) -> Block:
    found = await _one(store, keys.EMAIL_DOMAIN_BLOCKS, bid)
    await _may(store, actor)
    await store.hdel(keys.EMAIL_DOMAIN_BLOCKS, found.value)
    await store.delete(keys.email_block_history(found.id))
    await audit.record(store, actor, "destroy", "EmailDomainBlock", found.id, found.value)
    return found


# --- canonical e-mail blocks -------------------------------------------------------------
async def canonical_blocks(store: Store, actor: int | None) -> list[Block]:
    await _may(store, actor)
    return await _all(store, keys.CANONICAL_EMAIL_BLOCKS)


async def canonical_block(store: Store, actor: int | None, bid) -> Block:
    found = await _one(store, keys.CANONICAL_EMAIL_BLOCKS, bid)
    await _may(store, actor)
    return found


async def test_canonical(store: Store, actor: int | None, email) -> list[Block]:
    """The canonical blocks that match ``email`` (none or one)."""
    await _may(store, actor)
    if not isinstance(email, str) or "@" not in email:
        raise ValidationError("email", "must be an e-mail address")
    digest = canonical_hash(email)
    return [b for b in await _all(store, keys.CANONICAL_EMAIL_BLOCKS) if b.value == digest]


async def block_canonical(store: Store, actor: int | None, email=None, digest=None) -> Block:
    """Block an address (canonicalized, hashed) or a hash given as is."""
    await _may(store, actor)
    if isinstance(email, str) and email:
        if "@" not in email:
            raise ValidationError("email", "must be an e-mail address")
        digest = canonical_hash(email)
    elif not (
        isinstance(digest, str)
        and len(digest) == 64
        and all(c in "0123456789abcdef" for c in digest)
    ):
        raise ValidationError("canonical_email_hash", "must be a SHA-256 hex digest")
    found = await _add(store, keys.CANONICAL_EMAIL_BLOCKS, digest, "canonical_email_hash")
    await audit.record(store, actor, "create", "CanonicalEmailBlock", found.id, found.value)
    return found


async def unblock_canonical(store: Store, actor: int | None, bid) -> Block:
    found = await _one(store, keys.CANONICAL_EMAIL_BLOCKS, bid)
    await _may(store, actor)
    await store.hdel(keys.CANONICAL_EMAIL_BLOCKS, found.value)
    await audit.record(store, actor, "destroy", "CanonicalEmailBlock", found.id, found.value)
    return found
