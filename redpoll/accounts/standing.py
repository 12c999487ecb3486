"""An account's standing for what needs a functional login (Mastodon's
``require_user!``): here, whether its e-mail address is confirmed.

An account is unconfirmed while its secrets hash holds ``unconfirmed``
(written by redpoll.mail when e-mail is on and the account signs up); an
account without it is confirmed, so accounts made before e-mail was set up,
or while it is off, count as confirmed. The secrets also keep the app the
account signed up with (``app``: Mastodon lets only that app resend the
confirmation).

Checking the secrets on every request would cost each request a second
round trip, so the check rides on the token: a token issued to an
unconfirmed account carries a ``chk`` mark (auth.issue_token reads the
secrets when it issues one; :func:`mark_unconfirmed` marks the tokens the
account holds already), read in the same step as the token
(auth.authenticate). A marked token's requests read the standing; once the
account is confirmed, the first such read drops the mark (:func:`unmark`).
So a mark may be stale, never missing: a token without one belongs to a
confirmed account (but for a password grant racing the sign-up itself by
the few milliseconds between the account's creation and its marking).
"""

from __future__ import annotations

from ..core import keys
from ..storage.store import Store

#: secrets fields: set while the address awaits confirmation; the client id
#: of the app the account signed up with
UNCONFIRMED = "unconfirmed"
SIGNUP_APP = "app"


async def mark_unconfirmed(store: Store, uid: int, client_id: str) -> None:
    """Make ``uid`` unconfirmed (one HSET on its secrets: atomic), then mark
    the tokens it holds already (each one script: idempotent; a token
    issued after the HSET is marked by auth.issue_token)."""
    await store.hset(keys.secrets(uid), mapping={UNCONFIRMED: "1", SIGNUP_APP: client_id})
    for dig in await store.smembers(keys.user_tokens(uid)):
        await store.run("token_mark", [keys.token(dig.decode())])


async def unconfirmed(store: Store, uid: int) -> bool:
    return await store.hget(keys.secrets(uid), UNCONFIRMED) is not None


async def signup_app(store: Store, uid: int) -> str | None:
    raw = await store.hget(keys.secrets(uid), SIGNUP_APP)
    return raw.decode() if raw is not None else None


async def unmark(store: Store, digest: str) -> None:
    """Drop a token's mark (its account is confirmed): one HDEL, which
    creates nothing if the token is gone."""
    await store.hdel(keys.token(digest), "chk")


async def awaits_confirmation(store: Store, uid: int, digest: str) -> bool:
    """Whether ``uid``'s address still awaits confirmation, asked for a
    marked token (``digest``): once the account is confirmed the token loses
    its mark, so the next request pays no read. The one answer for the REST
    API and the streams alike."""
    if await unconfirmed(store, uid):
        return True
    await unmark(store, digest)
    return False
