"""A relay built on bovine (support.bovine: its test server, a real signing
peer that verifies what it receives with its own checker) followed by a
real ``redpoll serve`` on the test's database (both topologies): the admin
adds it with ``redpoll admin relay-add``; bovine verifies the Follow signed
by this server's actor; bovine's signed Accept enables it; a local public
post reaches bovine; bovine's signed Announce of another server's note puts
that note in the federated timeline (Mastodon.py), not as a boost; removing
the relay sends the Undo, which bovine verifies too."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from bovine.activitystreams import factories_for_actor_object
from support.bovine import Bovine, post_as_bovine
from support.federation import Instance, Peer, eventually

from redpoll.federation import documents

pytestmark = [pytest.mark.topology, pytest.mark.timeout(300)]


def test_a_relay_on_bovine_followed_its_announces_in_the_federated_timeline(settings, tmp_path):
    db = {"REDIS_URL": settings.redis_url, "REDPOLL_CLUSTER": "1" if settings.cluster else "0"}
    bovine = Bovine(tmp_path)
    server = Instance(tmp_path, "relayed", **db)
    writer = Peer()
    try:
        with server.proc:
            env = {**os.environ, **db, "REDPOLL_PUBLIC_URL": server.url}

            def admin(*args: str) -> str:
                cli = [str(Path(sys.executable).with_name("redpoll")), "admin", *args]
                done = subprocess.run(cli, env=env, capture_output=True, text=True, check=True)
                return done.stdout

            relay = bovine.config.create_actor_object()
            activities, _ = factories_for_actor_object(relay, id_generator=bovine.config.make_id)
            ada = server.person(f"ada{uuid.uuid4().hex[:6]}")
            assert ": pending" in admin("relay-add", relay["inbox"])
            follows = eventually(
                lambda: [(s, d) for s, d in bovine.received() if d.get("type") == "Follow"],
                what="bovine verifying the relay Follow",
            )
            signer, follow = follows[0]
            assert signer == f"{server.url}/actor" == follow["actor"]
            assert follow["object"] == documents.PUBLIC

            # bovine accepts (signed by its actor): the relay is enabled
            accept = activities.accept(follow).build()
            assert post_as_bovine(bovine, f"{server.url}/actor/inbox", accept) == 202
            eventually(
                lambda: f"accepted ({relay['id']})" in admin("relays"), what="the relay enabled"
            )

            # a local public post reaches the relay
            status = ada.status_post("for the relay")
            eventually(
                lambda: [
                    d
                    for _, d in bovine.received()
                    if d.get("type") == "Create" and d["object"]["id"] == status["uri"]
                ],
                what="the post at the relay",
            )

            # the relay announces another server's note: in the federated timeline
            author = writer.actor("writer")
            note_id = f"{author}/statuses/{time.time_ns()}"
            writer.docs[note_id.removeprefix(writer.base)] = {
                "@context": documents.CONTEXT,
                "id": note_id,
                "type": "Note",
                "attributedTo": author,
                "content": "<p>relayed from far away</p>",
                "to": [documents.PUBLIC],
                "cc": [],
            }
            announce = activities.announce(note_id).as_public().build()
            assert post_as_bovine(bovine, f"{server.url}/inbox", announce) == 202
            shown = eventually(
                lambda: [
                    s for s in ada.timeline_public(remote=True, limit=40) if s["uri"] == note_id
                ],
                what="the relayed note in the federated timeline",
            )
            assert shown[0]["reblog"] is None
            assert shown[0]["account"]["acct"] == f"writer@{writer.base.split('://')[1]}"
            assert "relayed from far away" in shown[0]["content"]

            # removed: bovine verifies the Undo of the Follow
            assert ": removed" in admin("relay-remove", relay["inbox"])
            undos = eventually(
                lambda: [d for _, d in bovine.received() if d.get("type") == "Undo"],
                what="bovine verifying the Undo",
            )
            assert undos[0]["object"]["id"] == follow["id"]
            assert "no relays" in admin("relays")
    finally:
        writer.close()
        bovine.stop()
