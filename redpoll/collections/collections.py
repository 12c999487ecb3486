"""Collections (Mastodon 4.6): named lists of accounts a member recommends,
shown on their profile, each account in one with its consent's state.

As Mastodon: the owner creates, updates and deletes a collection (a name of
at most limits.COLLECTION_NAME_MAX_CHARS, a description, a language, a
hashtag, sensitive and discoverable flags; at most
limits.COLLECTIONS_PER_USER of them) and adds and removes its items; an
account may be added when it allows being featured (Mastodon's
AccountPolicy#feature?: a local, discoverable account, neither blocking nor
blocked by the owner, not suspended), once per collection, at most
limits.COLLECTION_ITEMS_MAX pending or accepted; a local account's item is
accepted at once (Mastodon's; a remote account's consent is asked over
ActivityPub there, which this server does not do: it cannot be added). The
featured account may revoke its item (state ``revoked``: it is no longer
shown, and cannot be added again; the owner may remove the item).

The featured account is told (Mastodon 4.6's ``added_to_collection``
notification: its account the owner, its ``collection`` the collection,
never grouped nor pushed, filtered by the notification policy as Mastodon's):
made after the item is written, undone when the owner removes the item;
shown only while the collection is shown to it (redpoll.reading.notification_view).

Writes: every change to a collection is one script over its owner's slot
(collection_put, collection_drop, collection_item: atomic). The two indexes
outside it are written as idempotent steps in an order that never shows
what is not there: the id's owner (``keys.owner_of``) is set before the
collection exists and removed after it is gone, and an account's
``keys.featured_in`` entry is added before its item and removed after it;
a leftover entry (a step that failed between) names nothing the owner's
slot holds and is skipped when read (and dropped then).

Reads: :func:`shown` is the one decision of what a viewer sees of a
collection, made when it is shown: a suspended owner's collection is not
found; the owner sees pending and accepted items, others accepted ones
only; an item whose account is suspended or blocked either way with the
viewer is left out (redpoll.relations.shown_accounts), and item_count
counts what is shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..core import keys as core_keys
from ..core import limits, validate
from ..core.errors import Forbidden, NotFound, UserNotFound, ValidationError
from ..core.models import User, now_ms
from ..core.validate import tag_name
from ..notifications import notifications
from ..records.users import get_users
from ..relations import relations
from ..storage.store import Store
from . import keys

#: The notification the featured account gets (Mastodon 4.6)
ADDED_KIND = "added_to_collection"
#: Mastodon's answers: another's collection, an account that may not be featured
NOT_ALLOWED = "This action is not allowed"
CANNOT_FEATURE = "This account cannot be added to collections"

_LANGUAGE = re.compile(r"[a-z]{2,3}")
#: a record's fields by their hash names
_FIELDS = {"name": "name", "description": "desc", "language": "lang", "tag": "tag"}


@dataclass(frozen=True, slots=True)
class Item:
    id: int
    account: int
    state: str  # pending, accepted, rejected, revoked (Mastodon's states)
    created_at: int  # ms


@dataclass(frozen=True, slots=True)
class Collection:
    id: int
    owner: int
    name: str
    description: str
    language: str | None
    tag: str | None
    sensitive: bool
    discoverable: bool
    created_at: int
    updated_at: int
    items: tuple[Item, ...] = ()


def _s(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _parse(cid: int, owner: int, record: dict, items: dict) -> Collection | None:
    if not record:
        return None
    h = {_s(k): _s(v) for k, v in record.items()}
    parsed = []
    for iid, raw in items.items():
        account, state, at = _s(raw).split("|", 2)
        parsed.append(Item(int(_s(iid)), int(account), state, int(at)))
    parsed.sort(key=lambda i: i.id)  # the order they were added in
    return Collection(
        cid,
        owner,
        h.get("name", ""),
        h.get("desc", ""),
        h.get("lang") or None,
        h.get("tag") or None,
        h.get("sens") == "1",
        h.get("disc") == "1",
        int(h.get("ca", 0)),
        int(h.get("ua", 0)),
        tuple(parsed),
    )


# --- checking the input -----------------------------------------------------------


def _name(value) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValidationError("name", "can't be blank")
    return validate.text(value, "name", limits.COLLECTION_NAME_MAX_CHARS).strip()


def _fields(
    *,
    name=None,
    description=None,
    language=None,
    tag=None,
    sensitive: bool | None = None,
    discoverable: bool | None = None,
    creating: bool,
) -> dict[str, str]:
    """The record's fields to write, checked (ValidationError, nothing
    written); None leaves a field as it is (on create: its default)."""
    out: dict[str, str] = {}
    if creating or name is not None:
        out["name"] = _name(name)
    if description is not None:
        out["desc"] = validate.text(
            description,
            "description",
            limits.COLLECTION_DESCRIPTION_MAX_CHARS,
            allow_empty=True,
        )
    if language is not None:
        lang = validate.text(language, "language", 16, allow_empty=True).strip().lower()
        if lang and not _LANGUAGE.fullmatch(lang):
            raise ValidationError("language", "is not a valid language code")
        out["lang"] = lang
    if tag is not None:
        raw = validate.text(tag, "tag_name", limits.TAG_MAX_CHARS + 1, allow_empty=True)
        raw = raw.strip().lstrip("#")
        try:
            if raw:
                tag_name(raw)  # a usable hashtag; kept as written (Mastodon's display name)
            out["tag"] = raw
        except ValidationError:
            raise ValidationError("tag_name", "is not a usable hashtag") from None
    for field, value in (("sens", sensitive), ("disc", discoverable)):
        if value is not None or creating:
            out[field] = "1" if value else "0"
    return out


async def _featureable(store: Store, owner: int, account: int) -> User:
    """``account`` as ``owner`` may feature it (Mastodon's feature? policy):
    UserNotFound if unknown, Forbidden if it may not be featured."""
    found = await get_users(store, [account])
    if not found:
        raise UserNotFound(f"user {account} does not exist")
    user = found[0]
    if user.suspended or user.uri or not user.discoverable:
        raise Forbidden(CANNOT_FEATURE)
    if account != owner and not await relations.shown_accounts(store, owner, [user]):
        raise Forbidden(CANNOT_FEATURE)  # blocked either way
    return user


# --- reading ----------------------------------------------------------------------


async def _owner(store: Store, cid: int) -> int:
    owner = await store.get(keys.owner_of(cid))
    if owner is None:
        raise NotFound(f"collection {cid} does not exist")
    return int(_s(owner))


async def _read_many(store: Store, pairs: list[tuple[int, int]]) -> list[Collection | None]:
    """Collections by (owner, id), in order (None: not there); one round trip."""
    commands: list[tuple] = []
    for owner, cid in pairs:
        commands += [("HGETALL", keys.record(owner, cid)), ("HGETALL", keys.items(owner, cid))]
    replies = await store.batch(commands)
    return [
        _parse(cid, owner, _pairs(replies[2 * n]), _pairs(replies[2 * n + 1]))
        for n, (owner, cid) in enumerate(pairs)
    ]


def _pairs(reply) -> dict:
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[::2], reply[1::2]))  # a flat RESP2 reply


async def read(store: Store, pairs: list[tuple[int, int]]) -> dict[int, Collection]:
    """The collections named by (owner, id) that are there, by id, as stored
    (one round trip; not yet :func:`shown`). A pair whose id is another
    owner's names nothing."""
    found = await _read_many(store, pairs)
    return {c.id: c for c in found if c is not None}


async def get(store: Store, cid) -> Collection:
    """The collection as stored (NotFound if none); not yet :func:`shown`."""
    cid = validate.an_id(cid, "id")
    owner = await _owner(store, cid)
    found = (await _read_many(store, [(owner, cid)]))[0]
    if found is None:
        raise NotFound(f"collection {cid} does not exist")
    return found


async def shown(
    store: Store, found: list[Collection], viewer: int | None
) -> list[tuple[Collection, list[User]]]:
    """The collections as ``viewer`` may be shown them, each with the
    accounts of its shown items (the decision made when shown: module doc);
    a suspended owner's collections are left out."""
    owners = {u.id: u for u in await get_users(store, {c.owner for c in found})}
    kept = []
    for c in found:
        owner = owners.get(c.owner)
        if owner is None or owner.suspended:
            continue
        states = ("pending", "accepted") if viewer == c.owner else ("accepted",)
        kept.append(replace(c, items=tuple(i for i in c.items if i.state in states)))
    # every featured account at once: one read of the records, one of the blocks
    wanted = list(dict.fromkeys(i.account for c in kept for i in c.items))
    users = {
        u.id: u
        for u in await relations.shown_accounts(store, viewer, await get_users(store, wanted))
    }
    out = []
    for c in kept:
        items = tuple(i for i in c.items if i.account in users)
        out.append((replace(c, items=items), [users[i.account] for i in items]))
    return out


async def view(store: Store, cid, viewer: int | None) -> tuple[Collection, list[User]]:
    """One collection as ``viewer`` sees it (Mastodon's show): NotFound if it
    or its owner is gone or suspended, Forbidden if its owner blocks the
    viewer (Mastodon's CollectionPolicy#show?)."""
    found = await get(store, cid)
    seen = await shown(store, [found], viewer)
    if not seen:
        raise NotFound(f"collection {cid} does not exist")
    if viewer is not None and viewer != found.owner:
        if await store.zscore(core_keys.blocking(found.owner), viewer) is not None:
            raise Forbidden(NOT_ALLOWED)
    return seen[0]


async def of_account(
    store: Store, uid, viewer: int | None, *, offset=None, limit=None
) -> list[tuple[Collection, list[User]]]:
    """``uid``'s collections, newest first, as ``viewer`` sees them: the
    owner all, others the discoverable ones (Mastodon's profile list);
    Forbidden if ``uid`` blocks the viewer, UserNotFound if unknown or
    suspended."""
    uid = validate.an_id(uid, "id")
    found = await get_users(store, [uid])
    if not found or found[0].suspended:
        raise UserNotFound(f"user {uid} does not exist")
    if viewer is not None and viewer != uid:
        if await store.zscore(core_keys.blocking(uid), viewer) is not None:
            raise Forbidden(NOT_ALLOWED)
    start = _offset(offset)
    size = validate.page_limit(limit, limits.COLLECTIONS_PAGE_DEFAULT, limits.COLLECTIONS_PAGE_MAX)
    ids = [int(_s(i)) for i in await store.zrevrange(keys.collections(uid), 0, -1)]
    read = [c for c in await _read_many(store, [(uid, i) for i in ids]) if c is not None]
    if viewer != uid:
        read = [c for c in read if c.discoverable]
    return await shown(store, read[start : start + size], viewer)


async def featuring(
    store: Store, uid, viewer: int, *, offset=None, limit=None
) -> list[tuple[Collection, list[User]]]:
    """The collections ``uid`` is featured in (accepted), newest addition
    first, as ``uid`` sees them: Mastodon's in_collections, only one's own
    (Forbidden for ``viewer`` another; UserNotFound for an unknown ``uid``);
    owners suspended or blocked either way with ``uid`` left out. Entries the
    owner's slot no longer backs are skipped and dropped (idempotent)."""
    uid = validate.an_id(uid, "id")
    if uid != viewer:
        if not await get_users(store, [uid]):
            raise UserNotFound(f"user {uid} does not exist")
        raise Forbidden(NOT_ALLOWED)
    start = _offset(offset)
    size = validate.page_limit(limit, limits.COLLECTIONS_PAGE_DEFAULT, limits.COLLECTIONS_PAGE_MAX)
    entries = [_s(e) for e in await store.zrevrange(keys.featured_in(uid), 0, -1)]
    pairs = [(int(o), int(c)) for o, c in (e.split(":", 1) for e in entries)]
    read = await _read_many(store, pairs)
    live, stale = [], []
    for entry, c in zip(entries, read):
        if c is not None and any(i.account == uid and i.state == "accepted" for i in c.items):
            live.append(c)
        elif c is None or all(i.account != uid for i in c.items):
            stale.append(entry)
    if stale:
        await store.zrem(keys.featured_in(uid), *stale)
    owners = await get_users(store, {c.owner for c in live})
    kept = {u.id for u in await relations.shown_accounts(store, uid, owners)}
    live = [c for c in live if c.owner in kept]
    return await shown(store, live[start : start + size], uid)


def _offset(value) -> int:
    if value is None or value == "":
        return 0
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValidationError("offset", "must be an integer") from None
    if number < 0:
        raise ValidationError("offset", "must be at least 0")
    return number


# --- the owner's changes ----------------------------------------------------------


async def _own(store: Store, owner: int, cid) -> Collection:
    found = await get(store, cid)
    if found.owner != owner:
        raise Forbidden(NOT_ALLOWED)
    return found


async def create(store: Store, owner, *, account_ids=(), **fields) -> Collection:
    """A new collection of ``owner``'s, with ``account_ids`` as its first
    items; everything is checked before the first write (ValidationError,
    Forbidden, UserNotFound: nothing written)."""
    owner = validate.an_id(owner, "user_id")
    record = _fields(creating=True, **fields)
    accounts = list(dict.fromkeys(validate.an_id(a, "account_ids") for a in account_ids or ()))
    if len(accounts) > limits.COLLECTION_ITEMS_MAX:
        raise ValidationError(
            "collection_items", f"are too many (at most {limits.COLLECTION_ITEMS_MAX})"
        )
    if await store.zcard(keys.collections(owner)) >= limits.COLLECTIONS_PER_USER:
        raise ValidationError(
            "base", f"You cannot have more than {limits.COLLECTIONS_PER_USER} collections"
        )
    for account in accounts:
        await _featureable(store, owner, account)
    cid = await store.incr(keys.SEQ)
    await store.set(keys.owner_of(cid), owner)  # step 1: the id names its owner
    args: list = ["create", cid, now_ms(), limits.COLLECTIONS_PER_USER]
    for k, v in record.items():
        args += [k, v]
    done = _s(
        await store.run("collection_put", [keys.collections(owner), keys.record(owner, cid)], args)
    )
    if done == "FULL":  # a racing create took the last place
        await store.delete(keys.owner_of(cid))
        raise ValidationError(
            "base", f"You cannot have more than {limits.COLLECTIONS_PER_USER} collections"
        )
    for account in accounts:
        await _add(store, owner, cid, account)
    return (await view(store, cid, owner))[0]


async def update(store: Store, owner, cid, **fields) -> Collection:
    """Set the fields given (None: kept); Forbidden if not ``owner``'s."""
    owner = validate.an_id(owner, "user_id")
    found = await _own(store, owner, cid)
    record = _fields(creating=False, **fields)
    args: list = ["update", found.id, now_ms(), 0]
    for k, v in record.items():
        args += [k, v]
    done = _s(
        await store.run(
            "collection_put", [keys.collections(owner), keys.record(owner, found.id)], args
        )
    )
    if done == "NONE":
        raise NotFound(f"collection {cid} does not exist")
    return (await view(store, found.id, owner))[0]


async def delete(store: Store, owner, cid) -> None:
    """The collection and its items in one script, then the indexes that
    name it (idempotent steps)."""
    owner = validate.an_id(owner, "user_id")
    found = await _own(store, owner, cid)
    await _drop(store, owner, found.id)


async def _drop(store: Store, owner: int, cid: int) -> int:
    accounts = await store.run("collection_drop", _item_keys(owner, cid), [cid])
    for account in accounts or ():
        await store.zrem(keys.featured_in(int(_s(account))), f"{owner}:{cid}")
    return await store.delete(keys.owner_of(cid))


async def forget(store: Store, uid: int) -> int:
    """A deleted account's collections (each as :func:`delete` drops one) and
    its index of those it is in (redpoll.moderation's purge); its items in
    others' collections name an account that is gone, never shown again.
    Idempotent; how many keys went."""
    gone = 0
    for raw in await store.zrange(keys.collections(uid), 0, -1):
        gone += await _drop(store, uid, int(_s(raw)))
    return gone + await store.delete(keys.collections(uid), keys.featured_in(uid))


def _item_keys(owner: int, cid: int) -> list[str]:
    return [
        keys.collections(owner),
        keys.record(owner, cid),
        keys.items(owner, cid),
        keys.item_accounts(owner, cid),
    ]


async def _add(store: Store, owner: int, cid: int, account: int) -> Item:
    entry = f"{owner}:{cid}"
    at = now_ms()
    # step 1: the account's index names the collection (skipped if unbacked)
    fresh = await store.zadd(keys.featured_in(account), {entry: at}, nx=True)
    iid = await store.incr(keys.ITEM_SEQ)
    done = _s(
        await store.run(
            "collection_item",
            _item_keys(owner, cid),
            ["add", cid, iid, account, at, limits.COLLECTION_ITEMS_MAX],
        )
    )
    if done != "OK":
        if fresh:
            await store.zrem(keys.featured_in(account), entry)
        if done == "NONE":
            raise NotFound(f"collection {cid} does not exist")
        if done == "TAKEN":
            raise ValidationError("account_id", "has already been taken")
        raise ValidationError(
            "collection_items", f"are too many (at most {limits.COLLECTION_ITEMS_MAX})"
        )
    # step 3: the featured account is told (after the item: at most once, a
    # step cut short before it tells no one; keyed by the item, so a
    # repeated step makes no second one)
    await _tell(store, owner, cid, account, iid, True)
    return Item(iid, account, "accepted", at)


async def _tell(store: Store, owner: int, cid: int, account: int, iid: int, on: bool) -> None:
    """Make (``on``) or undo ``account``'s added_to_collection notification
    of item ``iid`` (notifications.apply: one script on its slot)."""
    op = await store.incr(core_keys.INTERACTION_SEQ)
    await notifications.apply(
        store, account, ADDED_KIND, owner, iid, int(op), on, extra={"collection": str(cid)}
    )


async def add_item(store: Store, owner, cid, account) -> Item:
    """Add ``account`` to ``owner``'s collection (module doc's rule)."""
    owner = validate.an_id(owner, "user_id")
    account = validate.an_id(account, "account_id")
    found = await _own(store, owner, cid)
    await _featureable(store, owner, account)
    return await _add(store, owner, found.id, account)


async def remove_item(store: Store, owner, cid, item) -> None:
    """The owner removes an item (any state); NotFound if it is not there."""
    owner = validate.an_id(owner, "user_id")
    item = validate.an_id(item, "item_id")
    found = await _own(store, owner, cid)
    done = _s(
        await store.run("collection_item", _item_keys(owner, found.id), ["remove", found.id, item])
    )
    if done == "NONE":
        raise NotFound(f"item {item} does not exist")
    account = int(done.split(" ", 1)[1])
    await store.zrem(keys.featured_in(account), f"{owner}:{found.id}")
    await _tell(store, owner, found.id, account, item, False)  # its notification goes too


async def revoke_item(store: Store, uid, cid, item) -> None:
    """The featured account ``uid`` takes itself out of a collection (its
    item becomes ``revoked``); NotFound unless the item is ``uid``'s."""
    uid = validate.an_id(uid, "user_id")
    item = validate.an_id(item, "item_id")
    found = await get(store, cid)
    done = _s(
        await store.run(
            "collection_item", _item_keys(found.owner, found.id), ["revoke", found.id, item, uid]
        )
    )
    if done == "NONE":
        raise NotFound(f"item {item} does not exist")
    await store.zrem(keys.featured_in(uid), f"{found.owner}:{found.id}")
