"""What other servers send counts on the admin dashboard: each status that
comes from a peer is counted for its domain (the instance_statuses measure,
the servers dimension), once however often the same Create arrives, and not
among the local statuses of the instance activity. Notes arrive signed
from a peer on loopback (both topologies)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest
from support.federation import HERE, fed  # noqa: F401
from support.peers import Host

from redpoll.federation import documents, inbox, remote, signing
from redpoll.federation.jobs import InboxJob

pytestmark = pytest.mark.topology


@pytest.fixture
def host():
    one = Host()
    yield one
    one.close()


async def _create(fed, who, n: int) -> None:
    note_id = f"{who.uri}/statuses/{time.time_ns()}-{n}"
    note = {
        "id": note_id,
        "type": "Note",
        "attributedTo": who.uri,
        "content": f"<p>note {n}</p>",
        "to": [documents.PUBLIC],
        "cc": [],
    }
    create = {"id": f"{note_id}/c", "type": "Create", "actor": who.uri, "object": note}
    for _ in range(2):  # delivered twice: counted once
        await inbox.process(
            fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(create))
        )


async def test_statuses_from_a_peer_count_for_its_domain(fed, host):
    pair = signing.KeyPair.generate()
    who = await remote.fetch_actor(fed.store, HERE, host.actor("writer", pair), loopback=True)
    domain = who.login.rsplit("@", 1)[1]
    for n in range(3):
        await _create(fed, who, n)
    owner = await fed.accounts.sign_up("boss")
    await fed.admin.set_role(None, "boss", "owner")
    today = datetime.now(UTC).strftime("%Y-%m-%d")

    [measure] = await fed.admin.measures(
        owner.id, ["instance_statuses"], today, today, {"instance_statuses": {"domain": domain}}
    )
    assert (measure.key, measure.total, measure.previous_total) == ("instance_statuses", 3, 0)
    [other] = await fed.admin.measures(
        owner.id,
        ["instance_statuses"],
        today,
        today,
        {"instance_statuses": {"domain": "x.example"}},
    )
    assert other.total == 0
    [(key, rows)] = await fed.admin.dimensions(owner.id, ["servers"], today, today)
    assert key == "servers" and [(r.key, r.value) for r in rows] == [(domain, 3)]
    # not a local status
    assert (await fed.instance.activity())[0].statuses == 0
