"""Domain blocks, set by ``redpoll admin domain-block``: what this server
takes from and sends to another server. ``suspend``: nothing either way (its
signed requests are refused, nothing is delivered or fetched there, its
handles do not resolve); ``silence``: its public statuses are kept as
unlisted (its accounts' followers here still see them, the public and
hashtag timelines do not); ``reject_media``: its statuses' attachments are
not kept. A block covers the host's subdomains too (as Mastodon's)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..core.errors import ValidationError
from ..core.models import now_ms
from ..storage.store import Store
from . import keys

SEVERITIES = ("suspend", "silence", "noop")


@dataclass(frozen=True)
class Block:
    host: str
    severity: str
    reject_media: bool
    at: int

    @property
    def suspended(self) -> bool:
        return self.severity == "suspend"

    @property
    def silenced(self) -> bool:
        return self.severity == "silence"


def _host(value: str) -> str:
    host = value.strip().lower().rstrip(".")
    if not host or "/" in host or "@" in host or " " in host:
        raise ValidationError("domain", f"{value!r} is not a host name")
    return host


async def block(
    store: Store, host: str, severity: str = "suspend", reject_media: bool = False
) -> Block:
    """Block (or change the block of) ``host``; one HSET, idempotent."""
    if severity not in SEVERITIES:
        raise ValidationError("severity", "must be one of " + ", ".join(SEVERITIES))
    found = Block(_host(host), severity, reject_media or severity == "suspend", now_ms())
    await store.hset(
        keys.DOMAIN_BLOCKS,
        found.host,
        json.dumps(
            {"severity": found.severity, "reject_media": found.reject_media, "at": found.at}
        ),
    )
    return found


async def unblock(store: Store, host: str) -> bool:
    return bool(await store.hdel(keys.DOMAIN_BLOCKS, _host(host)))


async def blocks(store: Store) -> list[Block]:
    raw = await store.hgetall(keys.DOMAIN_BLOCKS)
    out = []
    for host, value in raw.items():
        data = json.loads(value)
        out.append(
            Block(
                host.decode(),
                data["severity"],
                bool(data.get("reject_media")),
                int(data.get("at", 0)),
            )
        )
    return sorted(out, key=lambda b: b.host)


async def policy(store: Store, host: str) -> Block | None:
    """The block that covers ``host`` (a host[:port]; its parent domains'
    blocks cover it), or None. One round trip."""
    name = host.lower().rsplit(":", 1)[0] if host.count(":") == 1 else host.lower()
    parts = name.split(".")
    candidates = [".".join(parts[i:]) for i in range(len(parts))] + (
        [host.lower()] if host != name else []
    )
    found = await store.hmget(keys.DOMAIN_BLOCKS, candidates)
    for candidate, value in zip(candidates, found):
        if value is not None:
            data = json.loads(value)
            return Block(
                candidate, data["severity"], bool(data.get("reject_media")), int(data.get("at", 0))
            )
    return None


async def suspended(store: Store, host: str) -> bool:
    found = await policy(store, host)
    return found is not None and found.suspended
