"""The documents other servers read of this one: WebFinger, host-meta, the
actors of local accounts and of the server, notes of local statuses (only
what anyone may see: the one visibility decision for a viewer who is no
one), and the sizes of the collections."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from ..core import keys as core_keys
from ..core import limits
from ..core.errors import StatusNotFound, UserNotFound
from ..core.settings import Settings
from ..pins import pins
from ..records import statuses, users
from ..relations import visibility
from ..storage.store import Store
from . import documents, quoting, remote
from .inbox import Here
from .outbox import note_of


async def _local(store: Store, login: str):
    user = await users.lookup(store, login)
    if user.remote or user.suspended:
        raise UserNotFound(f"no user with login {login!r}")
    return user


async def webfinger(store: Store, settings: Settings, resource: str) -> dict:
    here = Here.of(settings)
    host = urlsplit(here.base).netloc
    resource = unquote(resource.strip())
    login = None
    if resource.startswith("acct:"):
        name, _, at = resource[5:].lstrip("@").rpartition("@")
        if at.lower() == host.lower():
            login = name
    else:
        login = here.local_login(resource)
        if login is None and resource.startswith(f"{here.base}/@"):
            login = resource[len(f"{here.base}/@") :]
    if not login:
        raise UserNotFound(f"{resource!r} is not an account of this server")
    user = await _local(store, login)
    return documents.webfinger(user.login, host, here.base)


def host_meta(settings: Settings) -> str:
    return documents.host_meta(Here.of(settings).base)


async def actor(store: Store, settings: Settings, login: str) -> dict:
    here = Here.of(settings)
    user = await _local(store, login)
    pair = await remote.key_pair(store, user.id)
    return documents.person(user, here.base, pair.public_pem)


async def instance_actor(store: Store, settings: Settings) -> dict:
    here = Here.of(settings)
    return documents.instance_actor(here.base, (await remote.instance_key(store)).public_pem)


async def note(store: Store, settings: Settings, login: str, sid: int) -> dict:
    here = Here.of(settings)
    user = await _local(store, login)
    status = await visibility.require(store, None, await statuses.get_status(store, sid))
    if status.user_id != user.id or status.reblog_of is not None:
        raise StatusNotFound(f"status {sid} does not exist")
    doc = await note_of(store, here.base, status)
    replies = f"{doc['id']}/replies"
    doc["replies"] = {
        "id": replies,
        "type": "Collection",
        "first": {
            "type": "CollectionPage",
            "partOf": replies,
            "items": await _reply_ids(store, here.base, sid),
        },
    }
    return {"@context": documents.CONTEXT, **doc}


async def replies(store: Store, settings: Settings, login: str, sid: int) -> dict:
    """A note's replies collection: the ids of its public and unlisted
    replies, oldest first (at most limits.FED_REPLIES_LISTED)."""
    here = Here.of(settings)
    await note(store, settings, login, sid)  # the note itself, if anyone may see it
    uri = f"{documents.note_id(here.base, login, sid)}/replies"
    return {
        "@context": documents.AS,
        "id": uri,
        "type": "Collection",
        "first": {
            "type": "CollectionPage",
            "partOf": uri,
            "items": await _reply_ids(store, here.base, sid),
        },
    }


async def _reply_ids(store: Store, base: str, sid: int) -> list[str]:
    ids = [
        int(x)
        for x in await store.zrange(
            core_keys.replies_counted(sid), 0, limits.FED_REPLIES_LISTED - 1
        )
    ]
    out = []
    for status in await statuses.get_statuses(store, ids):
        if status is not None and status.extra.get("visibility", "public") in (
            "public",
            "unlisted",
        ):
            out.append(status.extra.get("uri") or documents.note_id(base, status.login, status.id))
    return out


async def collection(store: Store, settings: Settings, login: str, which: str) -> dict:
    here = Here.of(settings)
    user = await _local(store, login)
    me = documents.actor_id(here.base, user.login)
    if which == "featured":  # the pinned statuses, listed (Mastodon's featured collection)
        shown = [
            await note_of(store, here.base, st)
            for st in await pins.pinned(store, user.id)
            if st.extra.get("visibility", "public") in ("public", "unlisted")
        ]
        return {
            "@context": documents.CONTEXT,
            "id": f"{me}/collections/featured",
            "type": "OrderedCollection",
            "totalItems": len(shown),
            "orderedItems": shown,
        }
    total = {"outbox": user.posts, "followers": user.followers, "following": user.following}[which]
    return documents.collection(f"{me}/{which}", total)


async def quote_authorization(store: Store, settings: Settings, login: str, sid: int) -> dict:
    """The QuoteAuthorization of the quote remote status ``sid`` makes of a
    status of local ``login``, while it stays accepted (quoting.authorization)."""
    here = Here.of(settings)
    await _local(store, login)
    return await quoting.authorization(store, here.base, login, sid)
