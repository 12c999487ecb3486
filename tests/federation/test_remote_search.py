"""Full-text search of another server's public posts, as the inbox keeps
them (both topologies): found by anyone here only when their author's actor
says ``indexable`` (Mastodon's ``toot:indexable``; absent: not), and out of
public search again once an Update says it is not."""

from __future__ import annotations

import pytest
from support.federation import fed, public_note  # noqa: F401

from redpoll.federation import remote, signing
from redpoll.search.search import Query

pytestmark = [pytest.mark.topology, pytest.mark.timeout(120)]

PAIR = signing.KeyPair.generate()


def actor(name: str, indexable: bool | None) -> dict:
    uri = f"https://far.example/users/{name}"
    return {
        **({} if indexable is None else {"indexable": indexable}),
        "id": uri,
        "type": "Person",
        "preferredUsername": name,
        "inbox": f"{uri}/inbox",
        "publicKey": {"id": f"{uri}#main-key", "publicKeyPem": PAIR.public_pem},
    }


async def found(fed, viewer: int, words: str) -> list[int]:
    results = await fed.discovery.search(
        Query(q=words, viewer=viewer, type="statuses", hosts=("127.0.0.1",))
    )
    return [s.id for s in results.statuses]


async def test_a_remote_authors_indexable_decides_public_search(fed):  # noqa: F811
    reader = await fed.accounts.sign_up("reader")
    open_one = await remote.keep(fed.store, remote.parse_actor(actor("open", True)))
    quiet = await remote.keep(fed.store, remote.parse_actor(actor("quiet", None)))
    assert open_one.indexable and not quiet.indexable
    shown = await public_note(fed, open_one, "marmalade skies over the harbour")
    hidden = await public_note(fed, quiet, "marmalade toast for breakfast")
    await fed.drain(timeout=30)
    assert await found(fed, reader.id, "marmalade") == [shown]
    # its server says it is no longer indexable: out of public search
    await remote.keep(fed.store, remote.parse_actor(actor("open", False)))
    await fed.drain(timeout=30)
    assert await found(fed, reader.id, "marmalade") == []
    # and back
    await remote.keep(fed.store, remote.parse_actor(actor("quiet", True)))
    await fed.drain(timeout=30)
    assert await found(fed, reader.id, "marmalade") == [hidden]
