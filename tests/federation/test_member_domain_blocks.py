"""A member's domain blocks, through Mastodon.py against a real ``redpoll
serve`` on the test's database (both topologies), the remote accounts and
their notes kept here by the inbox as a peer's activities would be: the
domain's statuses leave the member's home and public timelines, its
notifications are not shown, the follows both ways end (the peer is sent
the Undo and the Reject), its pending requests are refused, and the
member's posts are no longer sent there."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from mastodon import MastodonAPIError
from support.federation import HERE, fed, public_note  # noqa: F401
from support.mastodon import LOOSE, accounts  # noqa: F401
from support.streams import StreamProc  # noqa: F401

from redpoll.bus.queue import decode
from redpoll.core import keys, limits
from redpoll.federation import followers, inbox, outbox, remote, signing
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import DeliverJob, DomainBlockJob, InboxJob
from redpoll.relations import domain_blocks

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]

PAIR = signing.KeyPair.generate()


def actor(host: str, name: str, discoverable: bool | None = None) -> dict:
    uri = f"https://{host}/users/{name}"
    return {
        **({} if discoverable is None else {"discoverable": discoverable}),
        "id": uri,
        "type": "Person",
        "preferredUsername": name,
        "inbox": f"{uri}/inbox",
        "endpoints": {"sharedInbox": f"https://{host}/inbox"},
        "publicKey": {"id": f"{uri}#main-key", "publicKeyPem": PAIR.public_pem},
    }


@pytest.fixture(scope="module")
def fedsrv(server, tmp_path_factory):
    """A real ``redpoll serve`` on the test's database that federates as
    ``HERE`` (its peers are played in process)."""
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


def preview(srv, m, domain: str) -> dict:
    """GET /api/v1/domain_blocks/preview as ``m``."""
    answer = httpx.get(
        f"{srv.base}/api/v1/domain_blocks/preview",
        params={"domain": domain},
        headers={"Authorization": f"Bearer {m.access_token}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


async def queued(fed, kind: str) -> list[dict]:
    """The activities of ``kind`` queued for delivery."""
    out = []
    for stream in keys.all_job_streams():
        for _, fields in await fed.store.xrange(stream):
            job = decode(fields)
            if isinstance(job, DeliverJob) and json.loads(job.body).get("type") == kind:
                out.append(json.loads(job.body))
    return out


async def test_a_blocked_domain_is_heard_from_no_more(fedsrv, fed):
    me, friend = await asyncio.to_thread(accounts, fedsrv.base, 2)
    me_id = int(me.me()["id"])
    bad = await remote.keep(fed.store, remote.parse_actor(actor("bad.example", "loud", True)))
    fan = await remote.keep(fed.store, remote.parse_actor(actor("bad.example", "fan", False)))
    asker = await remote.keep(fed.store, remote.parse_actor(actor("bad.example", "asker")))
    good = await remote.keep(fed.store, remote.parse_actor(actor("good.example", "fine", True)))
    me.account_follow(bad.id)
    me.account_follow(good.id)
    bad_sid, good_sid = (
        await public_note(fed, bad, "from bad"),
        await public_note(fed, good, "from good"),
    )
    local = me.status_post("mine")
    # a remote follower, and a pending request (me locked for the moment)
    await followers.fed_follow(fed.store, me_id, fan.id, "https://bad.example/inbox", True)
    me.account_update_credentials(locked=True)
    follow = {
        "id": "https://bad.example/follows/1",
        "type": "Follow",
        "actor": asker.uri,
        "object": f"{HERE}/users/{me.me()['username']}",
    }
    await inbox.process(
        fed.store, fed.queue, fed.settings, InboxJob(uid=asker.id, activity=json.dumps(follow))
    )
    me.account_update_credentials(locked=False)
    # a notification from the domain, and one from elsewhere
    await fed.statuses.favourite(bad.id, int(local["id"]))
    await fed.statuses.favourite(good.id, int(local["id"]))
    await asyncio.to_thread(lambda: None)
    home = [int(s["id"]) for s in me.timeline_home()]
    assert bad_sid in home and good_sid in home
    assert {n["account"]["acct"] for n in me.notifications(types=["favourite"])} == {
        bad.login,
        good.login,
    }
    assert me.account_relationships([bad.id])[0]["domain_blocking"] is False
    # the directory lists the remote accounts that chose to be listed
    listed = {int(a["id"]) for a in me.directory(order="new", limit=80)}
    assert {bad.id, good.id} <= listed and fan.id not in listed and asker.id not in listed

    # what a block would end (Mastodon 4.3's preview): one follow, one follower
    assert preview(fedsrv, me, "BAD.example") == {"following_count": 1, "followers_count": 1}
    assert preview(fedsrv, me, "good.example") == {"following_count": 1, "followers_count": 0}
    assert preview(fedsrv, me, "none.example") == {"following_count": 0, "followers_count": 0}
    with httpx.Client(base_url=fedsrv.base, timeout=30) as c:
        bad_input = c.get(
            "/api/v1/domain_blocks/preview",
            params={"domain": "not a domain"},
            headers={"Authorization": f"Bearer {me.access_token}"},
        )
        assert bad_input.status_code == 422
        assert c.get("/api/v1/domain_blocks/preview?domain=x.example").status_code == 401

    me.domain_block("BAD.example")
    assert me.domain_blocks() == ["bad.example"]
    assert preview(fedsrv, me, "bad.example") == {"following_count": 0, "followers_count": 0}
    assert me.account_relationships([bad.id])[0]["domain_blocking"] is True
    assert friend.account_relationships([bad.id])[0]["domain_blocking"] is False
    home = [int(s["id"]) for s in me.timeline_home()]
    assert bad_sid not in home and good_sid in home
    public = [int(s["id"]) for s in me.timeline_public()]
    assert bad_sid not in public and good_sid in public
    assert bad_sid in [int(s["id"]) for s in friend.timeline_public()]  # others still see it
    listed = {int(a["id"]) for a in me.directory(order="new", limit=80)}
    assert good.id in listed and bad.id not in listed
    assert bad.id in {int(a["id"]) for a in friend.directory(order="new", limit=80)}
    assert [n["account"]["acct"] for n in me.notifications(types=["favourite"])] == [good.login]
    # the follows both ways and the request end; their servers are told
    assert not me.account_relationships([bad.id])[0]["following"]
    assert me.account_relationships([good.id])[0]["following"]
    assert await fed.store.zscore(fed_keys.remote_followers(me_id), fan.id) is None
    assert me.follow_requests() == []
    rejects = await queued(fed, "Reject")
    assert {r["object"]["actor"] for r in rejects} >= {fan.uri, asker.uri}
    assert any(u["object"]["object"] == bad.uri for u in await queued(fed, "Undo"))
    # the member's posts go there no more (to a mention on that domain either)
    mine = await fed.statuses.get_status(
        int(me.status_post(f"hi @{bad.login} and @{good.login}")["id"])
    )
    targets = await outbox._targets(fed.store, mine, await outbox.mentioned(fed.store, HERE, mine))
    assert targets and not [t for t in targets if "bad.example" in t]
    # again: nothing more to do; then lifted
    me.domain_block("bad.example")
    assert me.domain_blocks() == ["bad.example"]
    me.domain_unblock("bad.example")
    assert me.domain_blocks() == []
    assert bad_sid in [int(s["id"]) for s in me.timeline_public()]


async def test_domain_blocks_page_and_refuse_what_is_no_domain(fedsrv, fed):
    [me] = await asyncio.to_thread(accounts, fedsrv.base, 1)
    for n in range(3):
        me.domain_block(f"d{n}.example")
    first = me.domain_blocks(limit=2)
    assert first == ["d2.example", "d1.example"]
    assert me.fetch_next(first) == ["d0.example"]
    for bad in ("", "not a domain", "user@host.example", "host.example/path"):
        with pytest.raises(MastodonAPIError) as refused:
            me.domain_block(bad)
        assert refused.value.args[1] == 422
    assert len(me.domain_blocks()) == 3
    me.domain_block("https://Bücher.example/")  # a URL's host, in punycode
    assert me.domain_blocks()[0] == "xn--bcher-kva.example"
    assert limits.DOMAIN_BLOCKS_MAX >= 100


async def test_a_block_cut_short_before_its_cleanup_is_finished_by_the_worker(fed):
    me = await fed.accounts.sign_up("blocker")
    bad = await remote.keep(fed.store, remote.parse_actor(actor("cut.example", "gone")))
    fan = await remote.keep(fed.store, remote.parse_actor(actor("cut.example", "fan")))
    await fed.relations.follow(me.id, bad.id)
    await followers.fed_follow(fed.store, me.id, fan.id, "https://cut.example/inbox", True)
    # the call dies after its journal and the block, before the cleanup
    await fed.queue.hold(DomainBlockJob(me.id, "cut.example"))
    await domain_blocks.block(fed.store, me.id, "cut.example")
    assert await fed.relations.is_following(me.id, bad.id)
    await fed.drain(timeout=30)  # the journal is claimed and replayed
    assert not await fed.relations.is_following(me.id, bad.id)
    assert await fed.store.zscore(fed_keys.remote_followers(me.id), fan.id) is None
    # a journal whose block was lifted meanwhile does nothing
    await fed.relations.follow(me.id, bad.id)
    await fed.queue.hold(DomainBlockJob(me.id, "cut.example"))
    await fed.relations.unblock_domain(me.id, "cut.example")
    await fed.drain(timeout=30)
    assert await fed.relations.is_following(me.id, bad.id)
