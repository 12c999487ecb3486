"""Domain blocks through Mastodon's admin API: the federation's own blocks
(redpoll.federation.domains, which its inbox, delivery and lookups obey
from the next request on), each call checking ``manage_federation`` and
logging its action (redpoll.admin.audit) after the block's one-script write."""

from __future__ import annotations

from ..admin import audit, roles, staff
from ..core import limits, validate
from ..storage.store import Store
from . import domains


async def _may(store: Store, actor: int | None) -> None:
    roles.require(await staff.role_of(store, actor), "manage_federation")


def _comment(value, field: str) -> str:
    return validate.text(value or "", field, limits.ADMIN_COMMENT_MAX_CHARS, allow_empty=True)


async def blocks(store: Store, actor: int | None) -> list[domains.Block]:
    """Newest first (by id), as Mastodon lists them."""
    await _may(store, actor)
    return sorted(await domains.blocks(store), key=lambda b: -b.id)


async def block(store: Store, actor: int | None, bid) -> domains.Block:
    found = await domains.by_id(store, validate.an_id(bid, "id"))
    await _may(store, actor)
    return found


async def create(store: Store, actor: int | None, host, severity=None, **flags) -> domains.Block:
    await _may(store, actor)
    for name in ("private_comment", "public_comment"):
        flags[name] = _comment(flags.get(name), name)
    found = await domains.create(store, host, severity or "silence", **flags)
    await audit.record(store, actor, "create", "DomainBlock", found.id, found.host)
    return found


async def update(store: Store, actor: int | None, bid, **changes) -> domains.Block:
    bid = validate.an_id(bid, "id")
    await domains.by_id(store, bid)  # 404 first, as Mastodon
    await _may(store, actor)
    for name in ("private_comment", "public_comment"):
        if name in changes:
            changes[name] = _comment(changes[name], name)
    found = await domains.update(store, bid, **changes)
    await audit.record(store, actor, "update", "DomainBlock", found.id, found.host)
    return found


async def remove(store: Store, actor: int | None, bid) -> domains.Block:
    bid = validate.an_id(bid, "id")
    await domains.by_id(store, bid)
    await _may(store, actor)
    found = await domains.remove(store, bid)
    await audit.record(store, actor, "destroy", "DomainBlock", found.id, found.host)
    return found


# --- domain allows -----------------------------------------------------------------------
async def allows(store: Store, actor: int | None) -> list[domains.Allow]:
    await _may(store, actor)
    return await domains.allows(store)


async def allow_of(store: Store, actor: int | None, aid) -> domains.Allow:
    found = await domains.allow_by_id(store, validate.an_id(aid, "id"))
    await _may(store, actor)
    return found


async def allow(store: Store, actor: int | None, host) -> domains.Allow:
    """Allow a host (the allow there already, if one is: Mastodon's create)."""
    await _may(store, actor)
    found, new = await domains.allow(store, host)
    if new:
        await audit.record(store, actor, "create", "DomainAllow", found.id, found.host)
    return found


async def remove_allow(store: Store, actor: int | None, aid) -> domains.Allow:
    aid = validate.an_id(aid, "id")
    await domains.allow_by_id(store, aid)
    await _may(store, actor)
    found = await domains.remove_allow(store, aid)
    await audit.record(store, actor, "destroy", "DomainAllow", found.id, found.host)
    return found


async def set_limited(store: Store, actor: int | None, on: bool) -> None:
    """The limited federation mode (only allowed hosts federate) on or off."""
    roles.require(await staff.role_of(store, actor), "manage_federation")
    await domains.set_limited(store, on)
    await audit.record(store, actor, "limited" if on else "unlimited", "Federation", "", "")
