"""IP blocks, as Mastodon's: a network (an address or a CIDR range) with a
severity. ``sign_up_block`` and ``no_access`` refuse sign-ups from it (403,
as Mastodon); ``no_access`` refuses every request from it (the HTTP edge
asks :func:`no_access_networks`, kept per process for
limits.IP_BLOCKS_KEPT_S); ``sign_up_requires_approval`` makes a sign-up
from it wait for a moderator's approval, whatever the registration mode
(redpoll.accounts.auth). A block may expire (``expires_in``): an expired one
refuses nothing and is left out of the lists.

One hash in the slot {blocks} (keys.IP_BLOCKS): a block is written by one
script (ip_block_put.lua: two blocks never hold one network), removed by
one HDEL; a sign-up's check is one read. The admin API's calls check the
actor's role (``manage_blocks``) and log their action."""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass

from ..admin import audit, roles, staff
from ..core import keys, limits, validate
from ..core.errors import Conflict, NotFound, ValidationError
from ..core.models import now_ms
from ..storage.store import Store

SEVERITIES = ("sign_up_requires_approval", "sign_up_block", "no_access")
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
#: the severities that refuse a sign-up here
REFUSE_SIGN_UP = ("sign_up_block", "no_access")


class IpBlockNotFound(NotFound):
    """No IP block by that id."""


@dataclass(frozen=True, slots=True)
class IpBlock:
    id: int
    network: str
    severity: str
    comment: str
    at: int
    expires_at: int | None

    def active(self, now: int) -> bool:
        return self.expires_at is None or self.expires_at > now


def _network(value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("ip", "can't be blank")
    try:
        return str(ipaddress.ip_network(value.strip(), strict=False))
    except ValueError:
        raise ValidationError("ip", f"{value[:60]!r} is not an IP address or range") from None


def _severity(value) -> str:
    if value not in SEVERITIES:
        raise ValidationError("severity", "must be one of " + ", ".join(SEVERITIES))
    return value


def _expiry(expires_in) -> int | None:
    if expires_in is None or expires_in == "":
        return None
    seconds = validate.an_id(expires_in, "expires_in")
    return now_ms() + seconds * 1000


async def _all(store: Store) -> list[IpBlock]:
    raw = await store.hgetall(keys.IP_BLOCKS)
    now = now_ms()
    out = []
    for member, value in raw.items():
        if member.decode() == keys.BLOCK_SEQ:
            continue
        d = json.loads(value)
        found = IpBlock(
            int(d["id"]),
            member.decode(),
            d["severity"],
            d.get("comment") or "",
            int(d["at"]),
            int(d["expires_at"]) if d.get("expires_at") else None,
        )
        if found.active(now):
            out.append(found)
    return sorted(out, key=lambda b: -b.id)


async def sign_up_refused(store: Store, ip: str) -> bool:
    """Whether a block refuses sign-ups from ``ip``."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:  # (not an address: a test client's name)
        return False
    return any(
        b.severity in REFUSE_SIGN_UP and address in ipaddress.ip_network(b.network)
        for b in await _all(store)
    )


async def sign_up_needs_approval(store: Store, ip: str | None) -> bool:
    """Whether a ``sign_up_requires_approval`` block holds ``ip``."""
    try:
        address = ipaddress.ip_address(ip or "")
    except ValueError:
        return False
    return any(
        b.severity == "sign_up_requires_approval" and address in ipaddress.ip_network(b.network)
        for b in await _all(store)
    )


async def no_access_networks(store: Store) -> list[Network]:
    """The networks of the ``no_access`` blocks in force."""
    return [ipaddress.ip_network(b.network) for b in await _all(store) if b.severity == "no_access"]


def within(ip: str, networks: list[Network]) -> bool:
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return any(address in n for n in networks)


async def _may(store: Store, actor: int | None) -> None:
    roles.require(await staff.role_of(store, actor), "manage_blocks")


async def blocks(store: Store, actor: int | None) -> list[IpBlock]:
    await _may(store, actor)
    return await _all(store)


async def block(store: Store, actor: int | None, bid) -> IpBlock:
    for found in await _all(store):
        if str(found.id) == str(bid):
            await _may(store, actor)
            return found
    raise IpBlockNotFound(f"IP block {bid} does not exist")


def _parse(raw: str, network: str) -> IpBlock:
    d = json.loads(raw)
    return IpBlock(
        int(d["id"]),
        network,
        d["severity"],
        d.get("comment") or "",
        int(d["at"]),
        int(d["expires_at"]) if d.get("expires_at") else None,
    )


async def create(
    store: Store, actor: int | None, ip, severity, comment=None, expires_in=None
) -> IpBlock:
    await _may(store, actor)
    network, severity = _network(ip), _severity(severity)
    comment = validate.text(
        comment or "", "comment", limits.ADMIN_COMMENT_MAX_CHARS, allow_empty=True
    )
    expires_at = _expiry(expires_in)
    if await store.hlen(keys.IP_BLOCKS) > limits.EMAIL_BLOCKS_MAX:
        raise ValidationError("ip", f"at most {limits.EMAIL_BLOCKS_MAX} blocks")
    body = {"severity": severity, "comment": comment, "at": now_ms(), "expires_at": expires_at}
    try:
        raw = await store.run(
            "ip_block_put", [keys.IP_BLOCKS], ["create", network, keys.BLOCK_SEQ, json.dumps(body)]
        )
    except Conflict:
        raise ValidationError("ip", "has already been taken") from None
    found = _parse(raw, network)
    await audit.record(store, actor, "create", "IpBlock", found.id, network)
    return found


async def update(store: Store, actor: int | None, bid, **changes) -> IpBlock:
    was = await block(store, actor, bid)
    network = _network(changes["ip"]) if changes.get("ip") is not None else was.network
    severity = (
        _severity(changes["severity"]) if changes.get("severity") is not None else was.severity
    )
    comment = was.comment
    if changes.get("comment") is not None:
        comment = validate.text(
            changes["comment"], "comment", limits.ADMIN_COMMENT_MAX_CHARS, allow_empty=True
        )
    expires_at = _expiry(changes["expires_in"]) if "expires_in" in changes else was.expires_at
    body = {"severity": severity, "comment": comment, "at": was.at, "expires_at": expires_at}
    args = ["update", network, keys.BLOCK_SEQ, json.dumps(body), was.id, was.network]
    try:
        raw = await store.run("ip_block_put", [keys.IP_BLOCKS], args)
    except Conflict:
        raise ValidationError("ip", "has already been taken") from None
    except NotFound:
        raise IpBlockNotFound(f"IP block {bid} does not exist") from None
    found = _parse(raw, network)
    await audit.record(store, actor, "update", "IpBlock", found.id, network)
    return found


async def remove(store: Store, actor: int | None, bid) -> IpBlock:
    found = await block(store, actor, bid)
    await store.hdel(keys.IP_BLOCKS, found.network)
    await audit.record(store, actor, "destroy", "IpBlock", found.id, found.network)
    return found
