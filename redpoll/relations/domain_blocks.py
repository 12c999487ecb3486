"""A member's domain blocks (Mastodon's AccountDomainBlock): a server whose
accounts a member wants to hear nothing from.

What a block means, as Mastodon: the domain's statuses are left out of
every timeline and stream the member reads where mutes apply (home, lists,
public, tags: redpoll.relations.visibility asks :func:`blocked_in` of each
status's author), its accounts' notifications are not shown, the
member's follows of its accounts end and its accounts' follows of the
member and their pending requests are refused (the federation package's
cleanup, run by a job: redpoll.federation.member_blocks), and the
member's posts are no longer sent there. The block itself is one ZADD
on the member's slot; the cleanup after it is idempotent.

A domain is its host as this server keeps remote accounts' (``name@host``:
the host lowercased, with its port if it has one), so a block matches the
accounts of that host exactly (not its subdomains, as Mastodon's member
blocks)."""

from __future__ import annotations

from ..bus import events
from ..core import keys, limits, validate
from ..core.errors import LimitReached, ValidationError
from ..core.models import now_us
from ..storage.store import Store


def normalize(value) -> str:
    """A domain as blocks keep it: lowercase, IDNA (punycode), no scheme,
    path or user; ValidationError otherwise."""
    text = validate.text(value if value is not None else "", "domain", 253).strip().lower()
    text = text.removeprefix("https://").removeprefix("http://").rstrip("/").rstrip(".")
    host, _, port = text.partition(":")
    if not host or any(c in text for c in "/@ ?#") or (port and not port.isdigit()):
        raise ValidationError("domain", f"{value!r} is not a domain")
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValidationError("domain", f"{value!r} is not a domain") from None
    return f"{host}:{port}" if port else host


def domain_of(login: str) -> str:
    """The domain of an account's login (``name@host``); '' for a local one."""
    return login.rpartition("@")[2].lower() if "@" in login else ""


async def block(store: Store, uid: int, domain) -> tuple[str, bool]:
    """``uid`` blocks ``domain``: (the domain as kept, whether it is new).
    At most limits.DOMAIN_BLOCKS_MAX (LimitReached). One script (atomic)."""
    host = normalize(domain)
    added = await store.run(
        "domain_block_add", [keys.domain_blocks(uid)], [host, now_us(), limits.DOMAIN_BLOCKS_MAX]
    )
    if added == -1:
        raise LimitReached(f"at most {limits.DOMAIN_BLOCKS_MAX} domains can be blocked")
    # the member's open streams read their blocks again at once (with their
    # content filters: redpoll.stream.service.filters_changed); again on a repeat
    await events.filters_changed(store, uid)
    return host, added == 1


async def unblock(store: Store, uid: int, domain) -> bool:
    gone = bool(await store.zrem(keys.domain_blocks(uid), normalize(domain)))
    await events.filters_changed(store, uid)
    return gone


async def page(
    store: Store, uid: int, *, max_score=None, limit=None
) -> tuple[list[str], int | None]:
    """``uid``'s blocked domains, newest first, and the next page's cursor."""
    limit = validate.page_limit(limit, limits.ACCOUNTS_PAGE_DEFAULT, limits.ACCOUNTS_PAGE_MAX)
    top = f"({int(max_score)}" if max_score else "+inf"
    rows = await store.zrevrangebyscore(
        keys.domain_blocks(uid), top, "-inf", start=0, num=limit, withscores=True
    )
    cursor = int(rows[-1][1]) if len(rows) == limit else None
    return [m.decode() for m, _ in rows], cursor


def read(uid: int) -> tuple:
    """The command reading ``uid``'s blocked domains (for a caller's batch;
    :func:`parse` its reply)."""
    return ("ZRANGE", keys.domain_blocks(uid), 0, limits.DOMAIN_BLOCKS_MAX - 1)


def parse(reply) -> frozenset[str]:
    return frozenset(d.decode() if isinstance(d, bytes) else d for d in reply or ())


async def blocked(store: Store, uid: int) -> frozenset[str]:
    """Every domain ``uid`` blocks (at most limits.DOMAIN_BLOCKS_MAX)."""
    [reply] = await store.batch([read(uid)])
    return parse(reply)


def blocked_in(domains: frozenset[str], login: str) -> bool:
    """Whether the account ``login`` is on one of ``domains``."""
    return bool(domains) and "@" in login and domain_of(login) in domains
