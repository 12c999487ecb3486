"""Write a database in the layout of the code on PYTHONPATH, as a dump of
keys (DUMP payloads, base64, with their time to live) in JSON: what
tests/engine/test_migrations.py opens with today's code.

    git archive f1be097 redpoll | tar -x -C /tmp/redpoll-f1be097
    PYTHONPATH=/tmp/redpoll-f1be097 python tests/engine/layouts/make_layout.py \
        tests/engine/layouts/f1be097.json
    PYTHONPATH=/tmp/redpoll-f1be097 python tests/engine/layouts/make_layout.py \
        tests/engine/layouts/f1be097-cluster.json --cluster

(the second on a 3-master cluster of embedded servers: the keys that
release writes there, its public timeline's shards among them).

It runs the engine of that release on an embedded server of its own:
accounts (display names to search for), follows, a list, replies of each
visibility (one deleted), mutes (one without notifications), favourites,
a boost, a bookmark, federation key pairs, a remote account kept (and
followed); jobs drained. The engine's public methods are called, but for
keeping the remote account (federation.remote.keep, as the inbox does
when another server's actor is fetched: no server to fetch it from here).
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import tempfile

import redis
from redis.cluster import RedisCluster

from redpoll import Redpoll, Settings
from redpoll.federation import remote
from redpoll.storage.server import EmbeddedCluster, EmbeddedServer


async def build(url: str, cluster: bool) -> dict:
    settings = Settings(
        redis_url=url, cluster=cluster, public_url="http://127.0.0.1:1", federation_loopback=True
    )
    rp = await Redpoll.open(settings)
    try:
        alice = await rp.accounts.sign_up("alice", display_name="Early Bird")
        bob = await rp.accounts.sign_up("bob", display_name="Night Owl")
        carol = await rp.accounts.sign_up("carol", display_name="Song Thrush")
        dave = await rp.accounts.sign_up("dave", display_name="Redpoll Fan")
        for who in (bob, carol, dave):
            await rp.relations.follow(who.id, alice.id)
        await rp.relations.follow(alice.id, bob.id)
        first = await rp.statuses.post(alice.id, "hello #birds")
        replies = {
            "public": await rp.statuses.post(bob.id, "hi alice", in_reply_to=first.id),
            "unlisted": await rp.statuses.post(
                dave.id, "quietly", {"visibility": "unlisted"}, in_reply_to=first.id
            ),
            "private": await rp.statuses.post(
                carol.id, "followers only", {"visibility": "private"}, in_reply_to=first.id
            ),
            "deleted": await rp.statuses.post(bob.id, "oops", in_reply_to=first.id),
        }
        await rp.statuses.delete(replies["deleted"].id, bob.id)
        second = await rp.statuses.post(bob.id, "a second thread")
        await rp.statuses.post(alice.id, "and a reply to it", in_reply_to=second.id)
        await rp.statuses.favourite(bob.id, first.id)
        await rp.statuses.boost(carol.id, first.id)
        await rp.statuses.bookmark(dave.id, first.id)
        await rp.relations.mute(alice.id, carol.id)
        await rp.relations.mute(bob.id, dave.id, 0, False)
        far = await remote.keep(
            rp.store,
            remote.parse_actor(
                {
                    "id": "https://far.example/users/erin",
                    "type": "Person",
                    "preferredUsername": "erin",
                    "inbox": "https://far.example/users/erin/inbox",
                    "publicKey": {
                        "id": "https://far.example/users/erin#main-key",
                        "publicKeyPem": (await rp.federation.actor_document("bob"))["publicKey"][
                            "publicKeyPem"
                        ],
                    },
                }
            ),
        )
        chums = await rp.lists.create(alice.id, "chums")
        await rp.lists.add(alice.id, chums.id, bob.id)
        # the key pairs that sign federation: an account's, the server's
        pems = {
            login: (await rp.federation.actor_document(login))["publicKey"]["publicKeyPem"]
            for login in ("alice", "bob")
        }
        pems["instance"] = (await rp.federation.instance_actor_document())["publicKey"][
            "publicKeyPem"
        ]
        await rp.drain()
        return {
            "users": {u.login: u.id for u in (alice, bob, carol, dave)},
            "remote": far.id,
            "first": first.id,
            "second": second.id,
            "replies": {k: s.id for k, s in replies.items()},
            "list": chums.id,
            "public_keys": pems,
        }
    finally:
        await rp.close()


def dump(url: str, cluster: bool) -> list[dict]:
    client = RedisCluster.from_url(url) if cluster else redis.Redis.from_url(url)
    out = []
    for key in sorted(client.scan_iter(count=1000)):
        payload = client.dump(key)
        if payload is None:
            continue
        ttl = client.pttl(key)
        out.append(
            {
                "key": key.decode(),
                "ttl_ms": ttl if ttl > 0 else 0,
                "dump": base64.b64encode(payload).decode(),
            }
        )
    return out


def main(path: str, cluster: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = (EmbeddedCluster(tmp) if cluster else EmbeddedServer(tmp)).start()
        try:
            made = asyncio.run(build(server.url, cluster))
            keys = dump(server.url, cluster)
        finally:
            server.stop()
    with open(path, "w") as f:
        json.dump({"made": made, "keys": keys}, f, indent=0, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], "--cluster" in sys.argv[2:])
