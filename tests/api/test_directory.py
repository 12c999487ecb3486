"""The profile directory through Mastodon.py against a real ``redpoll
serve``: order active (latest status first, then those that never posted)
and new, offset and limit, and who is left out: an account that is not
discoverable, a suspended one, one the viewer blocks, mutes or is blocked
by; on one server and on the cluster."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from mastodon import Mastodon

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]

SCOPES = ["read", "write", "follow"]


def people(base: str, n: int) -> list[tuple[Mastodon, str, str]]:
    cid, secret = Mastodon.create_app("directory", api_base_url=base, scopes=SCOPES)
    out = []
    for _ in range(n):
        login = "u" + uuid.uuid4().hex[:10]
        m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
        m.create_account(
            login, "correct horse battery", f"{login}@example.com", agreement=True, scopes=SCOPES
        )
        out.append((m, login, str(m.me()["id"])))
    return out


def call(m: Mastodon, name: str, *args, **kwargs):
    return asyncio.to_thread(getattr(m, name), *args, **kwargs)


def ids(accounts) -> list[str]:
    return [str(a["id"]) for a in accounts]


async def test_the_directory_orders_and_leaves_out(srv, rp):
    (
        (viewer, _, v),
        (ann, _, a),
        (bob, _, b),
        (cat, _, c),
        (dan, _, d),
        (eve, _, e),
    ) = await asyncio.to_thread(people, srv.base, 6)
    (fay, _, f), (gus, _, g) = await asyncio.to_thread(people, srv.base, 2)
    await call(bob, "status_post", "first")
    await call(ann, "status_post", "second")
    await call(dan, "status_post", "third")
    await rp.drain()

    # everyone discoverable by default: newest first, or latest status first
    # and then those that never posted, newest first
    new = ids(await call(viewer, "directory", order="new", limit=80))
    assert new == [g, f, e, d, c, b, a, v]
    active = ids(await call(viewer, "directory", order="active", limit=80))
    assert active == [d, a, b, g, f, e, c, v]
    assert ids(await call(viewer, "directory", order="new", offset=2, limit=3)) == [e, d, c]
    assert ids(await call(viewer, "directory", local=True, limit=2)) == [d, a]

    # left out: not discoverable, suspended, blocked either way, muted
    await call(eve, "account_update_credentials", discoverable=False)
    await rp.admin.act(None, int(c), "suspend")
    await call(viewer, "account_block", f)
    await call(gus, "account_block", v)
    await call(viewer, "account_mute", d)
    await rp.drain()
    assert ids(await call(viewer, "directory", order="new", limit=80)) == [b, a, v]
    assert ids(await call(viewer, "directory", limit=80)) == [a, b, v]
    # without a token: only the accounts' own choices count
    r = await asyncio.to_thread(
        httpx.get, srv.base + "/api/v1/directory", params={"order": "new"}, timeout=30
    )
    assert r.status_code == 200 and ids(r.json()) == [g, f, d, b, a, v]
    r = await asyncio.to_thread(
        httpx.get, srv.base + "/api/v1/directory", params={"order": "old"}, timeout=30
    )
    assert r.status_code == 422
