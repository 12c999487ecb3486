"""Federation's changes of layout (redpoll.storage.migration).

4. ``instance-peers``: the hosts of the remote accounts kept before the set
   of peers (keys.PEERS, /api/v1/instance/peers) existed go into it (every
   account kept since adds its host itself).
7. ``remote-directory``: the remote accounts kept before their
   ``discoverable`` was read from their actor documents are not listed in
   the profile directory until their server says they are (every account
   kept since records what its document says).
"""

from __future__ import annotations

from ..core import keys as core_keys
from ..storage.migration import Migration
from ..storage.store import Store
from . import keys
from .remote import host_of

#: Users read per step.
BATCH = 500


async def add_peers(store: Store, cursor: str, batch: int) -> tuple[str | None, int]:
    """The hosts of the remote accounts among users ``cursor`` ..
    ``cursor + batch - 1`` (user ids, from 1) into the set of peers. SADD:
    idempotent, and safe beside accounts being kept meanwhile (they add
    the same host). How many accounts' hosts it added."""
    first = int(cursor or 1)
    last = int(await store.get(core_keys.USER_SEQ) or 0)
    uids = list(range(first, min(first + batch, last + 1)))
    if not uids:
        return None, 0
    rows = await store.batch([("HGET", core_keys.user(u), "uri") for u in uids])
    hosts = {host_of(uri.decode()) for uri in rows if uri}
    hosts.discard("")
    added = int(await store.sadd(keys.PEERS, *sorted(hosts))) if hosts else 0
    nxt = uids[-1] + 1
    return (str(nxt) if nxt <= last else None), added


async def unlist_remote(store: Store, cursor: str, batch: int) -> tuple[str | None, int]:
    """The remote accounts among users ``cursor`` .. ``cursor + batch - 1``
    with no ``disc`` field: ``disc`` 0. HSETNX: idempotent, and never undoes
    what an actor document kept meanwhile said. How many it changed."""
    first = int(cursor or 1)
    last = int(await store.get(core_keys.USER_SEQ) or 0)
    uids = list(range(first, min(first + batch, last + 1)))
    if not uids:
        return None, 0
    rows = await store.batch([("HMGET", core_keys.user(u), "uri", "disc") for u in uids])
    remote = [u for u, (uri, disc) in zip(uids, rows) if uri and disc is None]
    changed = await store.batch([("HSETNX", core_keys.user(u), "disc", "0") for u in remote])
    nxt = uids[-1] + 1
    return (str(nxt) if nxt <= last else None), sum(int(c) for c in changed)


MIGRATIONS = [
    Migration(
        number=4,
        name="instance-peers",
        about="put the hosts of remote accounts kept before the peers set into it",
        step=add_peers,
        batch=BATCH,
    ),
    Migration(
        number=7,
        name="remote-directory",
        about="leave remote accounts out of the directory until their server lists them",
        step=unlist_remote,
        batch=BATCH,
    ),
]
