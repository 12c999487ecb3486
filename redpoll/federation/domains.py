"""Domain blocks, set by ``redpoll admin domain-block``: what this server
takes from and sends to another server. ``suspend``: nothing either way (its
signed requests are refused, nothing is delivered or fetched there, its
handles do not resolve); ``silence``: its public statuses are kept as
unlisted (its accounts' followers here still see them, the public and
hashtag timelines do not); ``reject_media``: its statuses' attachments are
not kept; ``noop``: nothing but what its flags say. A block covers the
host's subdomains too (as Mastodon's). Each block has an id (Mastodon's
admin API names blocks by it) and what Mastodon's DomainBlock keeps beside:
``reject_reports``, the private and public comments, ``obfuscate`` (this
server takes no reports from others yet, so ``reject_reports`` is kept and
shown only). Every write is one script (domain_block_put.lua) or one HDEL."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..core.errors import Conflict, NotFound, ValidationError
from ..core.models import now_ms
from ..storage.store import Store
from . import keys

SEVERITIES = ("suspend", "silence", "noop")


class DomainBlockNotFound(NotFound):
    """No domain block by that id."""


class AlreadyBlocked(Conflict):
    """A block of the host, or of a domain it is part of, is there already."""

    def __init__(self, existing: Block):
        super().__init__(f"{existing.host} is blocked already")
        self.existing = existing


@dataclass(frozen=True)
class Block:
    host: str
    severity: str
    reject_media: bool
    at: int
    id: int = 0
    reject_reports: bool = False
    private_comment: str = ""
    public_comment: str = ""
    obfuscate: bool = False

    @property
    def suspended(self) -> bool:
        return self.severity == "suspend"

    @property
    def silenced(self) -> bool:
        return self.severity == "silence"

    def fields(self) -> dict:
        """What is stored (the script adds the id)."""
        return {
            "severity": self.severity,
            "reject_media": self.reject_media,
            "reject_reports": self.reject_reports,
            "private_comment": self.private_comment,
            "public_comment": self.public_comment,
            "obfuscate": self.obfuscate,
            "at": self.at,
        }

    @classmethod
    def parse(cls, host: str, value) -> Block:
        data = json.loads(value)
        return cls(
            host,
            data["severity"],
            bool(data.get("reject_media")),
            int(data.get("at", 0)),
            int(data.get("id") or 0),
            bool(data.get("reject_reports")),
            str(data.get("private_comment") or ""),
            str(data.get("public_comment") or ""),
            bool(data.get("obfuscate")),
        )


def _host(value: str) -> str:
    if not isinstance(value, str):
        raise ValidationError("domain", "must be a host name")
    host = value.strip().lower().rstrip(".")
    if not host or "/" in host or "@" in host or " " in host or "#" in host or len(host) > 253:
        raise ValidationError("domain", f"{value[:80]!r} is not a host name")
    return host


def _covering(host: str) -> list[str]:
    """The host and every domain it is part of (their blocks cover it)."""
    parts = host.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def _severity(severity: str) -> str:
    if severity not in SEVERITIES:
        raise ValidationError("severity", "must be one of " + ", ".join(SEVERITIES))
    return severity


async def _put(store: Store, mode: str, host: str, *args) -> Block:
    raw = await store.run(
        "domain_block_put", [keys.DOMAIN_BLOCKS], [mode, host, keys.DOMAIN_BLOCK_SEQ, *args]
    )
    return Block.parse(host, raw)


async def block(
    store: Store, host: str, severity: str = "suspend", reject_media: bool = False
) -> Block:
    """Block (or change the block of) ``host`` (``redpoll admin domain-block``):
    one script, idempotent; a block changed keeps its id and its other fields."""
    _severity(severity)
    host = _host(host)
    was = await by_host(store, host)
    base = was or Block(host, severity, False, now_ms())
    found = Block(
        host,
        severity,
        reject_media or severity == "suspend",
        base.at,
        base.id,
        base.reject_reports,
        base.private_comment,
        base.public_comment,
        base.obfuscate,
    )
    return await _put(store, "upsert", host, json.dumps(found.fields()))


async def create(
    store: Store,
    host: str,
    severity: str = "silence",
    *,
    reject_media: bool = False,
    reject_reports: bool = False,
    private_comment: str = "",
    public_comment: str = "",
    obfuscate: bool = False,
) -> Block:
    """A new block (Mastodon's admin API): AlreadyBlocked, writing nothing,
    when the host or a domain it is part of is blocked already. One script:
    the check and the write in one step."""
    host = _host(host)
    found = Block(
        host,
        _severity(severity),
        reject_media,
        now_ms(),
        0,
        reject_reports,
        private_comment,
        public_comment,
        obfuscate,
    )
    try:
        return await _put(store, "create", host, json.dumps(found.fields()), *_covering(host))
    except Conflict as exc:
        existing = await policy(store, host)
        if existing is None:  # (lifted since): say what was refused
            raise
        raise AlreadyBlocked(existing) from exc


async def update(store: Store, bid: int, **changes) -> Block:
    """Change the block ``bid``: severity, reject_media, reject_reports, the
    comments, obfuscate (those given); DomainBlockNotFound if it is not there.
    One script, refused if the block went meanwhile."""
    was = await by_id(store, bid)
    if "severity" in changes:
        _severity(changes["severity"])
    merged = {**was.fields(), **changes}
    try:
        return await _put(store, "update", was.host, str(was.id), json.dumps(merged))
    except NotFound:
        raise DomainBlockNotFound(f"domain block {bid} does not exist") from None


async def unblock(store: Store, host: str) -> bool:
    return bool(await store.hdel(keys.DOMAIN_BLOCKS, _host(host)))


async def remove(store: Store, bid: int) -> Block:
    """Lift the block ``bid`` (one HDEL); DomainBlockNotFound if none."""
    was = await by_id(store, bid)
    await store.hdel(keys.DOMAIN_BLOCKS, was.host)
    return was


async def blocks(store: Store) -> list[Block]:
    """Every block, by host. A block kept before blocks had ids gets its id
    here (once: the upsert keeps an id given)."""
    raw = await store.hgetall(keys.DOMAIN_BLOCKS)
    out = []
    for host, value in raw.items():
        name = host.decode()
        if name.startswith(("#", keys.DOMAIN_ALLOW_PREFIX)):  # the sequences, the mode, allows
            continue
        found = Block.parse(name, value)
        if not found.id:
            found = await _put(store, "upsert", name, json.dumps(found.fields()))
        out.append(found)
    return sorted(out, key=lambda b: b.host)


async def by_id(store: Store, bid: int) -> Block:
    """The block with id ``bid`` (a walk of the blocks: a server holds few)."""
    for found in await blocks(store):
        if found.id == bid:
            return found
    raise DomainBlockNotFound(f"domain block {bid} does not exist")


async def by_host(store: Store, host: str) -> Block | None:
    value = await store.hget(keys.DOMAIN_BLOCKS, _host(host))
    return Block.parse(_host(host), value) if value is not None else None


async def policy(store: Store, host: str) -> Block | None:
    """The block that covers ``host`` (a host[:port]; its parent domains'
    blocks cover it), or None; in the limited federation mode, a host not
    allowed is treated as suspended (a Block of severity suspend, id 0).
    One round trip."""
    name = host.lower().rsplit(":", 1)[0] if host.count(":") == 1 else host.lower()
    candidates = _covering(name) + ([host.lower()] if host != name else [])
    found = await store.hmget(
        keys.DOMAIN_BLOCKS,
        [*candidates, keys.FEDERATION_MODE, keys.DOMAIN_ALLOW_PREFIX + name],
    )
    *blocked, mode, allowed = found
    for candidate, value in zip(candidates, blocked):
        if value is not None:
            return Block.parse(candidate, value)
    if mode == b"limited" and allowed is None:
        return Block(name, "suspend", True, 0)
    return None


# --- domain allows and the limited federation mode (Mastodon's) ---------------------------
@dataclass(frozen=True)
class Allow:
    id: int
    host: str
    at: int


def _allows(raw: dict) -> list[Allow]:
    out = []
    for field, value in raw.items():
        name = field.decode()
        if name.startswith(keys.DOMAIN_ALLOW_PREFIX):
            data = json.loads(value)
            out.append(Allow(int(data["id"]), name[1:], int(data["at"])))
    return sorted(out, key=lambda a: -a.id)


async def allows(store: Store) -> list[Allow]:
    """Newest first (the hash holds few: a server's blocks and allows)."""
    return _allows(await store.hgetall(keys.DOMAIN_BLOCKS))


async def allow_by_id(store: Store, aid: int) -> Allow:
    for found in await allows(store):
        if found.id == aid:
            return found
    raise DomainBlockNotFound(f"domain allow {aid} does not exist")


async def allow(store: Store, host: str) -> tuple[Allow, bool]:
    """Allow ``host`` (exactly that host); the allow there already, if one
    is (Mastodon's create). One script (domain_allow_put.lua: the check, the id and
    the write in one step). (The allow, whether it is new.)"""
    host = _host(host)
    field = keys.DOMAIN_ALLOW_PREFIX + host
    try:
        aid = await store.run(
            "domain_allow_put", [keys.DOMAIN_BLOCKS], [field, keys.DOMAIN_ALLOW_SEQ, now_ms()]
        )
    except Conflict:
        value = await store.hget(keys.DOMAIN_BLOCKS, field)
        if value is None:  # (removed meanwhile)
            raise
        return _allows({field.encode(): value})[0], False
    return await allow_by_id(store, int(aid)), True


async def remove_allow(store: Store, aid: int) -> Allow:
    found = await allow_by_id(store, aid)
    await store.hdel(keys.DOMAIN_BLOCKS, keys.DOMAIN_ALLOW_PREFIX + found.host)
    return found


async def limited(store: Store) -> bool:
    return await store.hget(keys.DOMAIN_BLOCKS, keys.FEDERATION_MODE) == b"limited"


async def set_limited(store: Store, on: bool) -> None:
    """The limited federation mode on (only allowed hosts federate) or off."""
    if on:
        await store.hset(keys.DOMAIN_BLOCKS, keys.FEDERATION_MODE, "limited")
    else:
        await store.hdel(keys.DOMAIN_BLOCKS, keys.FEDERATION_MODE)


async def suspended(store: Store, host: str) -> bool:
    found = await policy(store, host)
    return found is not None and found.suspended
