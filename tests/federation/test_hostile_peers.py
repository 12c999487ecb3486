"""What a hostile server can try against the inbox and the documents this
server fetches, played by the test: documents planted on a victim's host,
keys at their own URLs, squatted activity ids, local URIs posing as
remote actors, signatures made for another server, forged requests that
would make this server fetch keys again and again, floods from one host,
and values no client should be handed (``javascript:`` URLs, markup in
usernames). Against a real engine on the test's database (both
topologies), the peers real HTTP servers on loopback."""

from __future__ import annotations

import json
import time

import pytest
from support.federation import HERE, fed  # noqa: F401
from support.peers import Host

from redpoll import Redpoll
from redpoll.core import limits
from redpoll.federation import documents, followers, inbox, remote, signing
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import InboxJob
from redpoll.net import safety
from redpoll.polls import polls

pytestmark = pytest.mark.topology


@pytest.fixture
def host():
    one = Host()
    yield one
    one.close()


def signed(
    pair: signing.KeyPair, key_id: str, activity: dict, *, url: str = f"{HERE}/inbox"
) -> tuple[dict, bytes]:
    body = json.dumps(activity).encode()
    return signing.sign(
        pair, key_id, "POST", url, body, {"content-type": "application/activity+json"}
    ), body


async def refused(fed, headers, body) -> int:
    with pytest.raises(inbox.Refused) as caught:
        await fed.federation.receive_activity("POST", "/inbox", headers, body)
    return caught.value.status


def like(actor: str, n: int | str = "") -> dict:
    host = actor.split("/users/", 1)[0]
    return {
        "id": f"{host}/likes/{time.time_ns()}{n}",
        "type": "Like",
        "actor": actor,
        "object": f"{HERE}/users/nobody/statuses/1",
    }


async def kept_pem(fed, uri: str) -> str:
    uid = await remote.account_id(fed.store, uri)
    return (await remote.details(fed.store, uid)).get("pem", "")


# --- documents are taken only under their own id -------------------------------------------------
async def test_a_document_planted_on_the_victim_s_host_does_not_replace_its_key(fed, host):
    victim_key, attacker_key = signing.KeyPair.generate(), signing.KeyPair.generate()
    victim = host.actor("victim", victim_key)
    await remote.fetch_actor(fed.store, HERE, victim, loopback=True)
    # an upload on the victim's host, claiming to be the victim, with the attacker's key
    planted = host.put(
        "/uploads/evil.json",
        {
            "id": victim,
            "type": "Person",
            "preferredUsername": "victim",
            "inbox": f"{victim}/inbox",
            "publicKey": {
                "id": f"{host.base}/uploads/evil.json#main-key",
                "owner": victim,
                "publicKeyPem": attacker_key.public_pem,
            },
        },
    )
    # signed as the planted document (its id is not the URL it was fetched from)
    headers, body = signed(attacker_key, f"{planted}#main-key", like(planted))
    assert await refused(fed, headers, body) == 401
    # the planted file as a key at its own URL, for an activity of the victim
    headers, body = signed(attacker_key, planted, like(victim))
    assert await refused(fed, headers, body) == 401
    assert await kept_pem(fed, victim) == victim_key.public_pem
    # the victim's own key still verifies; the attacker's, as the victim, does not
    headers, body = signed(victim_key, f"{victim}#main-key", like(victim, 1))
    assert await fed.federation.receive_activity("POST", "/inbox", headers, body)
    headers, body = signed(attacker_key, f"{victim}#main-key", like(victim, 2))
    assert await refused(fed, headers, body) == 401


async def test_an_actor_document_of_another_id_or_media_type_is_not_kept(fed, host):
    pair = signing.KeyPair.generate()
    real = host.actor("real", pair)
    doc, _ = host.docs["/users/real"]
    elsewhere = host.put("/copy/real", doc)  # the same document at another URL
    with pytest.raises(remote.client.WrongDocument):
        await remote.fetch_actor(fed.store, HERE, elsewhere, loopback=True)
    # a link to it (a WebFinger href, say) is followed to its own id
    assert (
        await remote.fetch_actor(fed.store, HERE, elsewhere, loopback=True, id_known=False)
    ).uri == real
    for media in ("text/plain", "application/json", "text/html"):
        plain = host.actor("plain", pair)
        host.docs["/users/plain"] = (host.docs["/users/plain"][0], media)
        with pytest.raises(remote.client.WrongDocument):
            await remote.fetch_actor(fed.store, HERE, plain, loopback=True)
    assert await remote.account_id(fed.store, f"{host.base}/users/plain") is None
    host.docs["/users/plain"] = (
        host.docs["/users/plain"][0],
        'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
    )
    assert (await remote.fetch_actor(fed.store, HERE, plain, loopback=True)).uri == plain


async def test_an_announced_note_is_kept_only_from_its_own_id(fed, host):
    pair = signing.KeyPair.generate()
    booster, author = host.actor("booster", pair), host.actor("author", pair)
    note = {
        "id": f"{author}/statuses/1",
        "type": "Note",
        "attributedTo": author,
        "content": "<p>forged</p>",
        "to": [documents.PUBLIC],
        "cc": [],
    }
    planted = host.put("/uploads/note.json", note)  # claims another id
    who = await remote.fetch_actor(fed.store, HERE, booster, loopback=True)
    announce = {
        "id": f"{booster}/boosts/1",
        "type": "Announce",
        "actor": booster,
        "object": planted,
        "to": [documents.PUBLIC],
    }
    await inbox.process(
        fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(announce))
    )
    assert await fed.store.get(fed_keys.note(note["id"])) is None
    assert await fed.store.get(fed_keys.note(planted)) is None


# --- keys at their own URL (GoToSocial's) ---------------------------------------------------------
async def test_a_key_at_its_own_url_is_taken_when_its_owner_names_it(fed, host):
    pair = signing.KeyPair.generate()
    key_id = f"{host.base}/users/gts/main-key"
    actor = host.actor("gts", pair, key_id=key_id)
    host.put("/users/gts/main-key", {"id": key_id, "owner": actor, "publicKeyPem": pair.public_pem})
    headers, body = signed(pair, key_id, like(actor))
    assert await fed.federation.receive_activity("POST", "/inbox", headers, body)
    # learned once: the next activity fetches neither the key nor the actor
    fetched = len(host.gets)
    headers, body = signed(pair, key_id, like(actor, 1))
    assert await fed.federation.receive_activity("POST", "/inbox", headers, body)
    assert len(host.gets) == fetched
    # a key document naming an owner whose document names another key
    other = signing.KeyPair.generate()
    liar_key = f"{host.base}/keys/liar"
    host.put("/keys/liar", {"id": liar_key, "owner": actor, "publicKeyPem": other.public_pem})
    headers, body = signed(other, liar_key, like(actor, 2))
    assert await refused(fed, headers, body) == 401


# --- activity ids belong to their actor's host ----------------------------------------------------
async def test_another_server_cannot_squat_an_activity_id(fed, host):
    pair = signing.KeyPair.generate()
    squatter_host = Host()
    try:
        honest = host.actor("honest", pair)
        squatter = squatter_host.actor("squatter", pair)
        note_id = f"{honest}/statuses/{time.time_ns()}"

        def create(actor: str) -> dict:
            return {
                "id": f"{note_id}/activity",
                "type": "Create",
                "actor": actor,
                "object": {
                    "id": note_id if actor == honest else f"{squatter}/n/1",
                    "type": "Note",
                    "attributedTo": actor,
                    "content": "<p>hi</p>",
                    "to": [documents.PUBLIC],
                    "cc": [],
                },
            }

        headers, body = signed(pair, f"{squatter}#main-key", create(squatter))
        assert await refused(fed, headers, body) == 403
        headers, body = signed(
            pair,
            f"{squatter}#main-key",
            {"id": f"{note_id}#delete", "type": "Delete", "actor": squatter, "object": note_id},
        )
        assert await refused(fed, headers, body) == 403
        # the honest server's own Create is taken, and is not a repeat
        headers, body = signed(pair, f"{honest}#main-key", create(honest))
        assert await fed.federation.receive_activity("POST", "/inbox", headers, body)
        assert not await fed.federation.receive_activity(
            "POST", "/inbox", headers, body
        )  # now it is
    finally:
        squatter_host.close()


# --- this server's own actors are never remote ----------------------------------------------------
async def test_a_local_actor_is_never_taken_as_a_remote_one(fed, host):
    carol = await fed.accounts.sign_up("carol")
    local = f"{HERE}/users/{carol.login}"
    pair = signing.KeyPair.generate()
    headers, body = signed(pair, f"{local}#main-key", like(local))
    assert await refused(fed, headers, body) == 401
    headers, body = signed(pair, f"{HERE}/keys/carol", like(local))
    assert await refused(fed, headers, body) == 401
    # a WebFinger answer of another host pointing at a local actor
    name = host.name
    host.put(
        f"/.well-known/webfinger?resource=acct:carol@{name}",
        {
            "subject": f"acct:carol@{name}",
            "links": [{"rel": "self", "type": "application/activity+json", "href": local}],
        },
        media="application/jrd+json",
    )
    with pytest.raises(remote.BadActor):
        await remote.resolve_handle(fed.store, HERE, f"carol@{name}", loopback=True)
    assert await remote.account_id(fed.store, local) is None
    assert await remote.kept_account(fed.store, f"carol@{name}") is None
    assert await remote.kept_account(fed.store, "carol@127.0.0.1:1") is None


# --- a signature made for another server ---------------------------------------------------------
async def test_an_activity_signed_for_another_server_does_not_verify_here(fed, host):
    pair = signing.KeyPair.generate()
    actor = host.actor("relayed", pair)
    headers, body = signed(
        pair, f"{actor}#main-key", like(actor), url="https://other.example/inbox"
    )
    headers["host"] = "other.example"  # replayed here with the other server's Host
    assert await refused(fed, headers, body) == 401
    # what was signed for this server verifies whatever Host a proxy passes on
    headers, body = signed(pair, f"{actor}#main-key", like(actor, 1))
    headers["host"] = "internal-name:8080"
    assert await fed.federation.receive_activity("POST", "/inbox", headers, body)


# --- forged requests do not make this server fetch keys again and again -------------------------
async def test_forged_signatures_do_not_fetch_the_key_each_time(fed, host):
    pair, forger = signing.KeyPair.generate(), signing.KeyPair.generate()
    actor = host.actor("often", pair)
    headers, body = signed(pair, f"{actor}#main-key", like(actor))
    assert await fed.federation.receive_activity("POST", "/inbox", headers, body)
    before = host.gets.count("/users/often")
    for n in range(10):
        headers, body = signed(forger, f"{actor}#main-key", like(actor, n))
        assert await refused(fed, headers, body) == 401
    assert host.gets.count("/users/often") == before


# --- one host's flood is bounded -----------------------------------------------------------------
async def test_one_host_s_activities_are_bounded_with_a_429(settings, host):
    rp = await Redpoll.open(
        settings.with_(public_url=HERE, federation_loopback=True, rate_inbox_host=(5, 3600))
    )
    try:
        pair = signing.KeyPair.generate()
        actor = host.actor("flood", pair)
        for n in range(5):
            headers, body = signed(pair, f"{actor}#main-key", like(actor, n))
            assert await rp.federation.receive_activity("POST", "/inbox", headers, body)
        headers, body = signed(pair, f"{actor}#main-key", like(actor, "x"))
        with pytest.raises(inbox.Refused) as caught:
            await rp.federation.receive_activity("POST", "/inbox", headers, body)
        assert caught.value.status == 429 and "try again after" in str(caught.value)
    finally:
        await rp.close()


# --- what clients are handed ----------------------------------------------------------------------
def test_remote_urls_are_http_on_the_actor_s_host_and_usernames_as_mastodon_takes_them():
    base = {
        "id": "https://peer.example/users/ann",
        "type": "Person",
        "preferredUsername": "ann",
        "inbox": "https://peer.example/users/ann/inbox",
        "publicKey": {"id": "https://peer.example/users/ann#main-key", "publicKeyPem": "pem"},
    }
    for bad in ("javascript:alert(1)", "https://evil.example/@ann", "data:text/html,x"):
        assert remote.parse_actor({**base, "url": bad}).url == base["id"]
    assert (
        remote.parse_actor({**base, "url": "https://peer.example/@ann"}).url
        == "https://peer.example/@ann"
    )
    icons = {
        "javascript:alert(1)": "",
        "/files/a.png": "https://peer.example/files/a.png",
        "https://cdn.example/a.png": "https://cdn.example/a.png",
    }
    for icon, kept in icons.items():
        assert remote.parse_actor({**base, "icon": {"type": "Image", "url": icon}}).avatar == kept
    for name in ('ev<b>il</b> x"y', "a b", "", "-dash", "x" * 101, "ann@other"):
        with pytest.raises(remote.BadActor):
            remote.parse_actor({**base, "preferredUsername": name})
    for name in ("ann", "Ann_1", "a.b-c", "_"):
        assert remote.parse_actor({**base, "preferredUsername": name}).username == name
    with pytest.raises(remote.BadActor):  # a key published for another owner
        remote.parse_actor(
            {**base, "publicKey": {**base["publicKey"], "owner": "https://peer.example/users/bob"}}
        )


async def test_a_note_s_url_is_kept_only_on_its_host(fed, host):
    pair = signing.KeyPair.generate()
    who = await remote.fetch_actor(fed.store, HERE, host.actor("linker", pair), loopback=True)
    kept = {}
    for n, url in enumerate(
        ("javascript:alert(1)", "https://evil.example/x", f"{host.base}/@linker/1")
    ):
        note_id = f"{who.uri}/statuses/{time.time_ns()}"
        create = {
            "id": f"{note_id}/activity",
            "type": "Create",
            "actor": who.uri,
            "object": {
                "id": note_id,
                "type": "Note",
                "attributedTo": who.uri,
                "url": url,
                "content": f"<p>{n}</p>",
                "to": [documents.PUBLIC],
                "cc": [],
            },
        }
        await inbox.process(
            fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(create))
        )
        sid = int(await fed.store.get(fed_keys.note(note_id)))
        kept[url] = (await fed.statuses.get_status(sid)).extra.get("url")
    assert kept == {
        "javascript:alert(1)": None,
        "https://evil.example/x": None,
        f"{host.base}/@linker/1": f"{host.base}/@linker/1",
    }


@pytest.mark.parametrize(
    "spelling",
    [
        "64:ff9b::7f00:1",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b::a00:1",
        "2002:7f00:1::",
        "2002:a9fe:a9fe::1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    ],
)
def test_nat64_6to4_and_teredo_spellings_of_private_addresses_are_not_public(spelling):
    assert not safety.public_address(spelling)


def test_their_spellings_of_public_addresses_are():
    assert safety.public_address("64:ff9b::808:808")
    assert safety.public_address("2002:808:808::1")


# --- likes and votes of statuses the actor may not see ---------------------------------------
async def test_a_stranger_s_like_or_vote_of_a_followers_only_status_counts_nothing(fed, host):
    pair = signing.KeyPair.generate()
    stranger = await remote.fetch_actor(
        fed.store, HERE, host.actor("stranger", pair), loopback=True
    )
    follower = await remote.fetch_actor(
        fed.store, HERE, host.actor("follower", pair), loopback=True
    )
    ada = await fed.accounts.sign_up("ada")
    await followers.fed_follow(fed.store, ada.id, follower.id, f"{host.base}/inbox", True)
    private = await fed.statuses.post(ada.id, "for followers", extra={"visibility": "private"})
    poll = await fed.statuses.post(
        ada.id, "which?", extra={"visibility": "private"}, poll=polls.spec(["x", "y"], 600, False)
    )
    direct = await fed.statuses.post(ada.id, "@nobody hi", extra={"visibility": "direct"})

    async def take(who, activity):
        await inbox.process(
            fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(activity))
        )

    def note_of(sid: int) -> str:
        return f"{HERE}/users/ada/statuses/{sid}"

    for who in (stranger, follower):
        for sid in (private.id, direct.id):
            await take(
                who,
                {
                    "id": f"{who.uri}#likes/{sid}",
                    "type": "Like",
                    "actor": who.uri,
                    "object": note_of(sid),
                },
            )
        vote = f"{who.uri}#votes/{poll.id}"
        await take(
            who,
            {
                "id": f"{vote}/activity",
                "type": "Create",
                "actor": who.uri,
                "object": {
                    "id": vote,
                    "type": "Note",
                    "name": "x",
                    "attributedTo": who.uri,
                    "to": [f"{HERE}/users/ada"],
                    "inReplyTo": note_of(poll.id),
                },
            },
        )
    liked, _ = await fed.statuses.favourited_by(private.id)
    assert [u.id for u in liked] == [follower.id]  # a follower's, not a stranger's
    assert (await fed.statuses.favourited_by(direct.id))[0] == []
    votes = (await fed.statuses.poll_states([poll]))[poll.id]
    assert votes.counts == (1, 0) and votes.voters == 1
    kinds = [(n.type, n.actor) for n in await fed.notifications.listed(ada.id)]
    assert ("favourite", stranger.id) not in kinds and ("favourite", follower.id) in kinds


# --- redirects ----------------------------------------------------------------------------------
async def test_redirects_are_followed_within_bounds_and_vouch_only_for_their_own_host(fed, host):
    pair = signing.KeyPair.generate()
    real = host.actor("moved", pair)
    host.redirects["/@moved"] = "/users/moved"  # a relative Location, on the same host
    assert (
        await remote.fetch_actor(
            fed.store, HERE, f"{host.base}/@moved", loopback=True, id_known=False
        )
    ).uri == real
    host.redirects["/users/old-name"] = real  # an id that redirects: not that id's document
    with pytest.raises(remote.client.WrongDocument):
        await remote.fetch_actor(fed.store, HERE, f"{host.base}/users/old-name", loopback=True)
    # a redirect to another host, whose document claims this host's id
    other = Host()
    try:
        victim = f"{host.base}/users/victim"
        other.put(
            "/evil.json",
            {
                "id": victim,
                "type": "Person",
                "preferredUsername": "victim",
                "inbox": f"{victim}/inbox",
                "publicKey": {"id": f"{victim}#main-key", "publicKeyPem": pair.public_pem},
            },
        )
        host.redirects["/users/victim"] = f"{other.base}/evil.json"
        with pytest.raises(remote.client.WrongDocument):
            await remote.fetch_actor(fed.store, HERE, victim, loopback=True)
        assert await remote.account_id(fed.store, victim) is None
    finally:
        other.close()
    # a loop, and a hop the guard refuses
    host.redirects["/loop"] = "/loop"
    with pytest.raises(remote.client.FetchFailed, match="redirects"):
        await remote.client.fetch_json(f"{host.base}/loop", loopback=True)
    assert host.gets.count("/loop") == limits.FED_FETCH_REDIRECTS + 1
    host.redirects["/away"] = "ftp://example.org/x"
    with pytest.raises(safety.Refused):
        await remote.client.fetch_json(f"{host.base}/away", loopback=True)
