"""Relays (Mastodon's) on the test's database (both topologies): an admin
adds one by its inbox URL with ``redpoll admin relay-add`` (the command as an
operator runs it), this server's actor sends the relay a Follow of the
public collection, the relay's Accept enables it (another host's does not),
local public posts go to it (not unlisted ones, not before), the notes its
actor Announces are kept (in the federated timeline, no boost), and
``relay-remove`` sends the Undo of the Follow. The relay is a peer played
by the test on loopback (support.federation.Peer), its activities applied
by the inbox as a worker would."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from mastodon import Mastodon
from support.federation import HERE, Peer, fed  # noqa: F401
from support.mastodon import LOOSE
from support.streams import StreamProc

from redpoll.bus import events
from redpoll.federation import documents, inbox, outbox, remote
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import InboxJob

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]


@pytest.fixture
def relay():
    one = Peer()
    yield one
    one.close()


@pytest.fixture
def writer():
    one = Peer()
    yield one
    one.close()


def admin(settings, *args: str) -> str:
    env = {
        **os.environ,
        "REDIS_URL": settings.redis_url,
        "REDPOLL_CLUSTER": "1" if settings.cluster else "0",
        "REDPOLL_PUBLIC_URL": HERE,
        "REDPOLL_FEDERATION_LOOPBACK": "1",
    }
    cli = [str(Path(sys.executable).with_name("redpoll")), "admin", *args]
    return subprocess.run(cli, env=env, capture_output=True, text=True, check=True).stdout


async def send(fed, who, activity: dict) -> None:
    await inbox.process(
        fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(activity))
    )


async def posted(fed, status) -> None:
    """What the worker's outbox does with a post's event, then its deliveries."""
    await outbox.handle(fed.store, fed.queue, HERE, events.update_event(status).encode())
    await fed.drain()


async def test_a_relay_followed_its_announces_kept_and_removed(fed, settings, relay, writer):
    inbox_url = f"{relay.base}/inbox"
    relay_actor = relay.actor("relay")
    ada = await fed.accounts.sign_up("ada_relayed")
    assert "no relays" in admin(settings, "relays")
    added = admin(settings, "relay-add", inbox_url)
    assert f"{inbox_url}: pending" in added
    await fed.drain()
    # (at least once: a delivery may come twice, under the same id)
    [follow] = list({a["id"]: a for a in relay.received if a["type"] == "Follow"}.values())
    assert follow["actor"] == documents.instance_actor_id(HERE)
    assert follow["object"] == documents.PUBLIC
    signed = {
        (d["headers"]["signature"].split(",")[0], d["path"])
        for d in relay.deliveries
        if d["body"] == follow
    }
    assert signed == {(f'keyId="{documents.instance_actor_id(HERE)}#main-key"', "/inbox")}
    # before the relay accepts, nothing is relayed
    await posted(fed, await fed.statuses.post(ada.id, "not yet relayed"))
    assert {a["type"] for a in relay.received} == {"Follow"}

    # an Accept from another host's actor: still pending
    other = await remote.fetch_actor(fed.store, HERE, writer.actor("mallory"), loopback=True)
    await send(
        fed,
        other,
        {"id": f"{other.uri}#a/1", "type": "Accept", "actor": other.uri, "object": follow},
    )
    assert "pending" in admin(settings, "relays")
    # the relay's Accept: enabled
    who = await remote.fetch_actor(fed.store, HERE, relay_actor, loopback=True)
    await send(
        fed,
        who,
        {"id": f"{relay_actor}#a/1", "type": "Accept", "actor": relay_actor, "object": follow},
    )
    listed = admin(settings, "relays")
    assert f"{inbox_url} accepted ({relay_actor})" in listed

    # local public posts go to it; unlisted ones do not
    public = await fed.statuses.post(ada.id, "relayed to the fediverse")
    await posted(fed, public)
    await posted(fed, await fed.statuses.post(ada.id, "quietly", {"visibility": "unlisted"}))
    creates = [a for a in relay.received if a["type"] == "Create"]
    assert {c["object"]["id"] for c in creates} == {documents.note_id(HERE, ada.login, public.id)}

    # the relay announces another server's note: kept, in the federated timeline, no boost
    author = writer.actor("writer")
    note_id = f"{author}/statuses/{time.time_ns()}"
    writer.docs[note_id.removeprefix(writer.base)] = {
        "@context": documents.CONTEXT,
        "id": note_id,
        "type": "Note",
        "attributedTo": author,
        "content": "<p>from far away</p>",
        "to": [documents.PUBLIC],
        "cc": [],
    }
    announce = {
        "id": f"{relay_actor}#announces/1",
        "type": "Announce",
        "actor": relay_actor,
        "object": note_id,
        "to": [documents.PUBLIC],
    }
    await send(fed, who, announce)
    sid = int(await fed.store.get(fed_keys.note(note_id)))
    timeline = [s.id for s in await fed.timelines.public()]
    assert sid in timeline
    kept = await fed.statuses.get_status(sid)
    assert kept.text == "from far away" and kept.user_id != who.id
    assert not [s for s in await fed.timelines.public() if s.reblog_of == sid]
    shown = await fed.timelines.status_page(None, sid)
    assert shown.states[sid].reblogs == 0

    # removed: the Undo of the Follow, and posts no longer go to it
    assert f"{inbox_url}: removed" in admin(settings, "relay-remove", inbox_url)
    await fed.drain()
    [undo] = list({a["id"]: a for a in relay.received if a["type"] == "Undo"}.values())
    assert undo["object"]["id"] == follow["id"] and undo["object"]["type"] == "Follow"
    assert undo["actor"] == documents.instance_actor_id(HERE)
    assert "no relays" in admin(settings, "relays")
    before = len(relay.received)
    await posted(fed, await fed.statuses.post(ada.id, "after the relay"))
    assert len(relay.received) == before
    # and its Announces are boosts again, as anyone's
    await send(fed, who, {**announce, "id": f"{relay_actor}#announces/2"})
    assert (await fed.timelines.status_page(None, sid)).states[sid].reblogs == 1


def test_a_relay_url_is_checked(settings):
    with pytest.raises(subprocess.CalledProcessError) as failed:
        admin(settings, "relay-add", "ftp://relay.example/inbox")
    assert "inbox_url" in failed.value.stderr + failed.value.stdout
    with pytest.raises(subprocess.CalledProcessError):
        admin(settings, "relay-remove", "https://never.example/inbox")


ADMIN_SCOPES = ["read", "write", "follow", "admin:read", "admin:write"]


@pytest.fixture(scope="module")
def fedsrv(server, tmp_path_factory):
    url, cluster, _ = server
    proc = StreamProc(
        url,
        cluster,
        tmp_path_factory.mktemp("serve"),
        REDPOLL_PUBLIC_URL=HERE,
        REDPOLL_FEDERATION_LOOPBACK="1",
        **LOOSE,
    ).start()
    yield proc
    proc.stop()


def people(base: str, n: int) -> list[tuple[str, str]]:
    """(login, token) of ``n`` new accounts whose tokens have the admin scopes."""
    cid, secret = Mastodon.create_app("relay-admin", api_base_url=base, scopes=ADMIN_SCOPES)
    out = []
    for _ in range(n):
        login = "u" + uuid.uuid4().hex[:10]
        m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
        m.create_account(
            login,
            "correct horse battery",
            f"{login}@example.com",
            agreement=True,
            scopes=ADMIN_SCOPES,
        )
        out.append((login, m.access_token))
    return out


async def test_relays_through_the_admin_api(fedsrv, fed, relay):
    (boss, boss_token), (_, member_token) = await asyncio.to_thread(people, fedsrv.base, 2)
    await fed.admin.set_role(None, boss, "admin")
    api = f"{fedsrv.base}/api/v1/redpoll/admin/relays"
    inbox_url = f"{relay.base}/inbox"

    def call(method: str, url: str, token: str, **kw) -> httpx.Response:
        return httpx.request(method, url, headers={"Authorization": f"Bearer {token}"}, **kw)

    assert (
        await asyncio.to_thread(call, "POST", api, member_token, json={"inbox_url": inbox_url})
    ).status_code == 403
    bad = await asyncio.to_thread(call, "POST", api, boss_token, json={"inbox_url": "javascript:x"})
    assert bad.status_code == 422
    made = await asyncio.to_thread(call, "POST", api, boss_token, json={"inbox_url": inbox_url})
    assert made.status_code == 200, made.text
    entity = made.json()
    assert (
        entity["inbox_url"] == inbox_url and entity["state"] == "pending" and not entity["enabled"]
    )
    listed = (await asyncio.to_thread(call, "GET", api, boss_token)).json()
    assert [r["id"] for r in listed] == [entity["id"]]
    assert (await asyncio.to_thread(call, "GET", api, member_token)).status_code == 403
    gone = await asyncio.to_thread(call, "DELETE", f"{api}/{entity['id']}", boss_token)
    assert gone.status_code == 200 and gone.json()["id"] == entity["id"]
    assert (
        await asyncio.to_thread(call, "DELETE", f"{api}/{entity['id']}", boss_token)
    ).status_code == 404
    assert (await asyncio.to_thread(call, "GET", api, boss_token)).json() == []
    await fed.drain()
    kinds = {a["type"] for a in relay.received}
    assert kinds == {"Follow", "Undo"}
    logged = [e for e in await fed.admin.audit_log() if e.type == "Relay"]
    assert {(e.action, e.name) for e in logged} == {("create", inbox_url), ("destroy", inbox_url)}
