"""HTTP signatures as Mastodon makes them, the fetch guard against private
addresses, and delivery's retries and unavailable hosts, on a real server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from http_message_signatures import HTTPMessageSigner, HTTPMessageVerifier, HTTPSignatureKeyResolver
from http_message_signatures.algorithms import RSA_V1_5_SHA256
from support.federation import OTHER, actor_doc, fed  # noqa: F401

from redpoll.core import limits
from redpoll.federation import client, delivery, documents, domains, inbox, remote, signing
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import DeliverJob, InboxJob
from redpoll.net import safety

PAIR = signing.KeyPair.generate()
URL = "https://peer.example/users/ann/inbox"


def signed_request(body: bytes = b'{"type":"Follow"}') -> dict:
    headers = signing.sign(
        PAIR,
        "https://me.example/users/me#main-key",
        "POST",
        URL,
        body,
        {"content-type": "application/activity+json"},
    )
    return headers


def test_a_signed_request_verifies_and_names_its_key():
    body = b'{"type":"Follow"}'
    headers = signed_request(body)
    signed = signing.parse(headers["signature"])
    assert signed.key_id == "https://me.example/users/me#main-key"
    assert signed.names == ["(request-target)", "host", "date", "digest"]
    signing.verify(signed, PAIR.public_pem, "POST", "/users/ann/inbox", headers, body)


@pytest.mark.parametrize("change", ["body", "key", "path", "date", "no digest"])
def test_what_breaks_a_signature(change):
    body = b'{"type":"Follow"}'
    headers = signed_request(body)
    signed = signing.parse(headers["signature"])
    pem, path = PAIR.public_pem, "/users/ann/inbox"
    now = None
    if change == "body":
        body = b'{"type":"Block"}'
    elif change == "key":
        pem = OTHER.public_pem
    elif change == "path":
        path = "/users/bob/inbox"
    elif change == "date":
        now = datetime.now(UTC) + timedelta(seconds=limits.FED_SIGNATURE_MAX_AGE_S + 60)
    elif change == "no digest":
        signed = signing.Signed(
            signed.key_id, ["(request-target)", "host", "date"], signed.signature
        )
    with pytest.raises(signing.SignatureError):
        signing.verify(signed, pem, "POST", path, headers, body, now=now)


def test_a_date_from_the_future_beyond_the_skew_is_refused():
    headers = signed_request()
    signed = signing.parse(headers["signature"])
    early = datetime.now(UTC) - timedelta(seconds=limits.FED_CLOCK_SKEW_S + 60)
    with pytest.raises(signing.SignatureError):
        signing.verify(
            signed,
            PAIR.public_pem,
            "POST",
            "/users/ann/inbox",
            headers,
            b'{"type":"Follow"}',
            now=early,
        )


@pytest.mark.parametrize(
    "url",
    [
        "http://peer.example/x",
        "ftp://peer.example/x",
        "https://user:pw@peer.example/x",
        "https:///nohost",
    ],
)
def test_only_plain_https_urls_are_fetched(url):
    with pytest.raises(safety.Refused):
        safety.check_url(url, loopback=False)


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "10.1.2.3", "192.168.0.9", "169.254.169.254", "::1", "localhost", "100.64.0.1"],
)
async def test_private_and_loopback_addresses_are_refused(host):
    with pytest.raises(safety.Refused):
        await safety.resolve(host, 443, loopback=False)


async def test_the_loopback_setting_allows_them_and_a_fetch_refuses_without_it():
    assert await safety.resolve("127.0.0.1", 80, loopback=True) == "127.0.0.1"
    with pytest.raises(safety.Refused):
        await client.fetch_json("https://127.0.0.1:9/x", loopback=False)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_a_failed_delivery_is_tried_again_later_then_the_host_is_skipped(fed):
    sender = await fed.accounts.sign_up("deliverer")
    inbox = f"http://127.0.0.1:{closed_port()}/inbox"
    host = f"127.0.0.1:{inbox.split(':')[2].split('/')[0]}"
    job = DeliverJob(sender=sender.id, inbox=inbox, body=json.dumps({"type": "Create"}))
    assert await delivery.deliver(fed.store, fed.queue, fed.settings, job) == "retry"
    again = DeliverJob(sender.id, inbox, job.body, 1)
    due = await fed.queue.due_at(again)
    assert due is not None  # queued for later, FED_RETRY_BASE_S ahead
    assert abs(due / 1000 - time.time() - limits.FED_RETRY_BASE_S) < 5
    await fed.queue.cancel_at(again)
    await fed.store.set(fed_keys.host_failures(host), limits.FED_HOST_FAILURES_UNAVAILABLE)
    assert await delivery.deliver(fed.store, fed.queue, fed.settings, again) == "dropped"
    await delivery.heard_from(fed.store, host)
    assert not await delivery.unavailable(fed.store, host)
    last = DeliverJob(sender.id, inbox, job.body, limits.FED_DELIVERY_ATTEMPTS - 1)
    assert await delivery.deliver(fed.store, fed.queue, fed.settings, last) == "given up"
    beyond = DeliverJob(sender.id, inbox, job.body, limits.FED_DELIVERY_ATTEMPTS)
    assert await fed.queue.due_at(beyond) is None  # nothing queued after the last try


def test_retry_delays_grow_and_are_capped():
    delays = [delivery.retry_delay_s(n) for n in range(limits.FED_DELIVERY_ATTEMPTS)]
    assert delays == sorted(delays) and delays[0] == limits.FED_RETRY_BASE_S
    assert max(delays) == limits.FED_RETRY_MAX_S
    assert 2 * 86_400 < sum(delays) < 8 * 86_400  # days of tries, as Mastodon


def test_a_digest_algorithm_name_in_any_case_is_accepted():
    """bovine sends ``sha-256=``; Mastodon ``SHA-256=``: RFC 3230 names are
    case-insensitive. A wrong value in either case still fails."""
    body = b'{"type":"Like"}'
    value = signing.digest(body).split("=", 1)[1]
    for given, ok in (
        (f"sha-256={value}", True),
        (f"SHA-256={value}", True),
        ("sha-256=" + signing.digest(b"other").split("=", 1)[1], False),
        (f"sha-512={value}", False),
    ):
        headers = signing.sign(
            PAIR, "https://me.example/users/me#main-key", "POST", URL, body, {"digest": given}
        )
        signed = signing.parse(headers["signature"])
        if ok:
            signing.verify(signed, PAIR.public_pem, "POST", "/users/ann/inbox", headers, body)
        else:
            with pytest.raises(signing.SignatureError):
                signing.verify(signed, PAIR.public_pem, "POST", "/users/ann/inbox", headers, body)


async def test_a_suspended_domain_is_neither_heard_nor_sent_to_nor_resolved(fed):
    await fed.federation.domain_block("blocked.example")
    body = json.dumps(
        {
            "id": "https://social.blocked.example/a/1",
            "type": "Follow",
            "actor": "https://social.blocked.example/users/x",
            "object": "http://127.0.0.1:1/users/y",
        }
    ).encode()
    headers = signing.sign(
        PAIR,
        "https://social.blocked.example/users/x#main-key",
        "POST",
        "http://127.0.0.1:1/inbox",
        body,
    )
    with pytest.raises(inbox.Refused) as refused:  # before any fetch of its key
        await fed.federation.receive_activity("POST", "/inbox", headers, body)
    assert refused.value.status == 403
    sender = await fed.accounts.sign_up("to_blocked")
    job = DeliverJob(sender.id, "https://social.blocked.example/inbox", "{}")
    assert await delivery.deliver(fed.store, fed.queue, fed.settings, job) == "dropped"
    assert await fed.queue.due_at(DeliverJob(sender.id, job.inbox, "{}", 1)) is None
    with pytest.raises(remote.BadActor):
        await fed.federation.resolve_account("x@social.blocked.example")
    assert [(b.host, b.severity, b.reject_media) for b in await fed.federation.domain_blocks()] == [
        ("blocked.example", "suspend", True)
    ]
    assert await fed.federation.domain_unblock("blocked.example")
    assert await domains.policy(fed.store, "social.blocked.example") is None


async def test_a_silenced_domain_s_public_statuses_are_kept_unlisted(fed):
    await fed.federation.domain_block("quiet.example", "silence")
    assert (await domains.policy(fed.store, "a.quiet.example:8443")).silenced
    loud = await remote.keep(fed.store, remote.parse_actor(actor_doc("loud.example", "l")))
    hush = await remote.keep(fed.store, remote.parse_actor(actor_doc("a.quiet.example", "q")))
    seen = {}
    for who in (loud, hush):
        note_id = f"{who.uri}/statuses/{time.time_ns()}"
        create = {
            "id": f"{note_id}/activity",
            "type": "Create",
            "actor": who.uri,
            "object": {
                "id": note_id,
                "type": "Note",
                "attributedTo": who.uri,
                "content": "<p>hello</p>",
                "to": [documents.PUBLIC],
                "cc": [],
            },
        }
        await inbox.process(
            fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(create))
        )
        sid = int(await fed.store.get(fed_keys.note(note_id)))
        seen[who.login] = (await fed.statuses.get_status(sid)).extra.get("visibility", "public")
    assert seen == {loud.login: "public", hush.login: "unlisted"}
    await fed.federation.domain_unblock("quiet.example")


def test_domain_blocks_from_the_command_line(settings):
    env = {
        **os.environ,
        "REDIS_URL": settings.redis_url,
        "REDPOLL_CLUSTER": "1" if settings.cluster else "0",
    }
    cli = [str(Path(sys.executable).with_name("redpoll")), "admin"]

    def run(*args):
        return subprocess.run(
            cli + list(args), env=env, capture_output=True, text=True, check=True
        ).stdout

    assert "spam.example: suspend" in run("domain-block", "Spam.Example")
    assert "noisy.example: silence, media rejected" in run(
        "domain-block", "noisy.example", "--silence", "--reject-media"
    )
    listed = run("domain-blocks")
    assert "noisy.example silence reject-media" in listed and "spam.example suspend" in listed
    assert "unblocked" in run("domain-unblock", "spam.example")
    assert "spam.example" not in run("domain-blocks")
    run("domain-unblock", "noisy.example")


class _Request:
    """A request as http-message-signatures signs it (method, url, headers)."""

    def __init__(self, method: str, url: str, headers: dict):
        self.method, self.url, self.headers = method, url, headers


class _Keys(HTTPSignatureKeyResolver):
    def __init__(self, pair: signing.KeyPair):
        self.pair = pair

    def resolve_private_key(self, key_id: str):
        return self.pair.private_pem.encode()

    def resolve_public_key(self, key_id: str):
        return self.pair.public_pem.encode()


def rfc9421_request(
    key_id: str,
    url: str,
    body: bytes,
    *,
    created=None,
    covered=("@method", "@target-uri", "content-digest"),
    digest: bool = True,
) -> dict:
    """Headers of a POST signed by http-message-signatures (RFC 9421), an
    implementation that is not Redpoll's."""
    request = _Request("POST", url, {"Content-Type": "application/activity+json"})
    HTTPMessageSigner(signature_algorithm=RSA_V1_5_SHA256, key_resolver=_Keys(PAIR)).sign(
        request,
        key_id=key_id,
        covered_component_ids=covered,
        body=body if digest else None,
        created=created,
    )
    return {k.lower(): v for k, v in request.headers.items()}


async def test_rfc9421_signatures_are_accepted_and_checked(fed):
    host = "nine.example"
    doc = {
        **actor_doc(host, "n"),
        "publicKey": {"id": f"https://{host}/users/n#main-key", "publicKeyPem": PAIR.public_pem},
    }
    who = await remote.keep(fed.store, remote.parse_actor(doc))
    await fed.store.hset(fed_keys.actor(who.id), "fetched", int(time.time() * 1000) + 10**9)
    key_id = f"https://{host}/users/n#main-key"
    url = "http://127.0.0.1:1/inbox"

    def like(n: int) -> bytes:
        return json.dumps(
            {
                "id": f"https://{host}/likes/{time.time_ns()}/{n}",
                "type": "Like",
                "actor": who.uri,
                "object": "http://127.0.0.1:1/users/x/statuses/1",
            }
        ).encode()

    body = like(1)
    assert await fed.federation.receive_activity(
        "POST", "/inbox", rfc9421_request(key_id, url, body), body
    )
    bad = [
        ("another body", lambda: (rfc9421_request(key_id, url, like(2)), like(3))),
        (
            "another target",
            lambda: (rfc9421_request(key_id, "http://127.0.0.1:1/other", b := like(4)), b),
        ),
        (
            "too old",
            lambda: (
                rfc9421_request(
                    key_id,
                    url,
                    b := like(5),
                    created=datetime.now(UTC)
                    - timedelta(seconds=limits.FED_SIGNATURE_MAX_AGE_S + 3600),
                ),
                b,
            ),
        ),
        (
            "the digest not covered",
            lambda: (
                rfc9421_request(
                    key_id, url, b := like(6), covered=("@method", "@target-uri"), digest=False
                ),
                b,
            ),
        ),
    ]
    for why, make in bad:
        headers, sent = make()
        with pytest.raises(inbox.Refused) as refused:
            await fed.federation.receive_activity("POST", "/inbox", headers, sent)
        assert refused.value.status == 401, why


class _Documents(BaseHTTPRequestHandler):
    """Serves the JSON documents of ``docs`` by path (a peer's actors)."""

    docs: dict = {}

    def do_GET(self):
        doc = self.docs.get(self.path)
        body = json.dumps(doc).encode() if doc else b"{}"
        self.send_response(200 if doc else 404)
        self.send_header("Content-Type", "application/activity+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


async def test_a_move_is_recorded_when_the_new_account_names_the_old(fed):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Documents)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{server.server_address[1]}"
    try:
        old = await remote.keep(
            fed.store,
            remote.parse_actor(
                {
                    **actor_doc(host, "old"),
                    "id": f"http://{host}/users/old",
                    "inbox": f"http://{host}/users/old/inbox",
                }
            ),
        )
        new_doc = {
            **actor_doc(host, "new"),
            "id": f"http://{host}/users/new",
            "inbox": f"http://{host}/users/new/inbox",
            "alsoKnownAs": [old.uri],
        }
        stranger = {
            **actor_doc(host, "other"),
            "id": f"http://{host}/users/other",
            "inbox": f"http://{host}/users/other/inbox",
        }
        _Documents.docs = {"/users/new": new_doc, "/users/other": stranger}

        def move(target: str) -> InboxJob:
            return InboxJob(
                uid=old.id,
                activity=json.dumps(
                    {
                        "id": f"{old.uri}#moves/{time.time_ns()}",
                        "type": "Move",
                        "actor": old.uri,
                        "object": old.uri,
                        "target": target,
                    }
                ),
            )

        with pytest.raises(inbox.Refused):  # the target does not name the old account
            await inbox.process(fed.store, fed.queue, fed.settings, move(stranger["id"]))
        assert (await remote.details(fed.store, old.id)).get("moved_to") is None
        await inbox.process(fed.store, fed.queue, fed.settings, move(new_doc["id"]))
        moved_to = int((await remote.details(fed.store, old.id))["moved_to"])
        assert (await fed.accounts.get_user(moved_to)).uri == new_doc["id"]
    finally:
        server.shutdown()


class _Inbox(BaseHTTPRequestHandler):
    """An inbox that keeps what is posted to it (headers and body)."""

    got: list = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).got.append(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


async def test_a_server_that_signs_with_rfc9421_is_sent_rfc9421_signatures(fed):
    nine, plain = (
        ThreadingHTTPServer(("127.0.0.1", 0), type("I", (_Inbox,), {"got": []})) for _ in range(2)
    )
    for server in (nine, plain):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host = f"127.0.0.1:{nine.server_address[1]}"
        doc = {
            **actor_doc(host, "n"),
            "id": f"http://{host}/users/n",
            "inbox": f"http://{host}/users/n/inbox",
            "publicKey": {"id": f"http://{host}/users/n#main-key", "publicKeyPem": PAIR.public_pem},
        }
        who = await remote.keep(fed.store, remote.parse_actor(doc))
        await fed.store.hset(fed_keys.actor(who.id), "fetched", int(time.time() * 1000) + 10**9)
        body = json.dumps(
            {
                "id": f"http://{host}/likes/{time.time_ns()}",
                "type": "Like",
                "actor": who.uri,
                "object": "http://127.0.0.1:1/users/x/statuses/1",
            }
        ).encode()
        assert await fed.federation.receive_activity(
            "POST",
            "/inbox",
            rfc9421_request(doc["publicKey"]["id"], "http://127.0.0.1:1/inbox", body),
            body,
        )
        sender = await fed.accounts.sign_up(f"nine{time.time_ns() % 10**6}")
        sent = json.dumps({"type": "Create", "actor": "x"})
        for server in (nine, plain):
            inbox_url = f"http://127.0.0.1:{server.server_address[1]}/inbox"
            job = DeliverJob(sender.id, inbox_url, sent)
            assert await delivery.deliver(fed.store, fed.queue, fed.settings, job) == "delivered"
        pair = await remote.key_pair(fed.store, sender.id)
        key_id = documents.key_id("http://127.0.0.1:1", sender.login)
        [(headers, got)] = nine.RequestHandlerClass.got
        assert "signature-input" in headers and got == sent.encode()
        # checked by the library itself, as a peer would
        verified = HTTPMessageVerifier(
            signature_algorithm=RSA_V1_5_SHA256, key_resolver=_Keys(pair)
        ).verify(_Request("POST", f"http://{host}/inbox", headers))
        assert verified[0].parameters["keyid"] == key_id
        [(headers, _)] = plain.RequestHandlerClass.got
        assert "signature-input" not in headers
        signed = signing.parse(headers["signature"])
        assert signed.key_id == key_id and "digest" in signed.names
        signing.verify(signed, pair.public_pem, "POST", "/inbox", headers, sent.encode())
    finally:
        nine.shutdown()
        plain.shutdown()
