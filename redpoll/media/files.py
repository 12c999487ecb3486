"""The names of stored files: a keyed hash of the upload's id and the
file's bytes (``ab/cd/<32 hex>.<ext>``).

* Content-addressed: the same bytes of the same upload always get the same
  name, so writing a file again (a retry, a replay) is a no-op, and a name
  never changes content: it can be cached for ever.
* Never shared: another upload of the same bytes gets another name, so
  deleting one upload's files never takes another's.
* Unguessable: the key (keys.NAME_KEY, drawn once per database) is needed
  to compute a name, even by someone who has the picture; as on Mastodon,
  a file is served to whoever has its URL, and only entities the viewer may
  see hand out that URL.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import weakref

from ..storage.store import Store
from . import keys
from .processing import Output

_KEYS: weakref.WeakKeyDictionary[Store, bytes] = weakref.WeakKeyDictionary()


async def name_key(store: Store) -> bytes:
    """The database's naming key (drawn with SET NX the first time; kept per store)."""
    key = _KEYS.get(store)
    if key is None:
        _, key = await store.batch(
            [("SET", keys.NAME_KEY, secrets.token_hex(32), "NX"), ("GET", keys.NAME_KEY)]
        )
        _KEYS[store] = key
    return key


def name(key: bytes, mid: int, out: Output) -> str:
    digest = hmac.new(
        key, f"{mid}:".encode() + hashlib.sha256(out.data).digest(), hashlib.sha256
    ).hexdigest()[:32]
    return f"{digest[:2]}/{digest[2:4]}/{digest}.{out.ext}"


async def names(store: Store, mid: int, outputs: list[Output]) -> list[str]:
    key = await name_key(store)
    return [name(key, mid, out) for out in outputs]
