"""Web Push against a push service the test runs itself: a small HTTP
server on loopback that decrypts what it receives with the subscription's
private key, as a browser would (Mastodon.py's ``push_subscription_decrypt_push``
for the draft aesgcm Mastodon's older clients subscribe with; http_ece for
RFC 8291 aes128gcm), and checks the VAPID JWT's signature against the
subscription's ``server_key``. The API is driven by Mastodon.py and httpx
against a real ``redpoll serve``; the jobs run in the test's engine."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
import httpx
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from mastodon import Mastodon, MastodonNotFoundError
from support.mastodon import LOOSE  # noqa: F401
from support.streams import StreamProc  # noqa: F401

from redpoll import Redpoll
from redpoll.accounts.auth import Token
from redpoll.core import keys, limits
from redpoll.core.errors import ValidationError
from redpoll.notifications.jobs import PushJob
from redpoll.push import vapid

pytestmark = [pytest.mark.timeout(240)]
SCOPES = ["read", "write", "follow", "push"]


@pytest.fixture(scope="module")
def psrv(server, tmp_path_factory):
    """``redpoll serve`` that takes loopback push endpoints (tests only)."""
    url, cluster, _ = server
    proc = StreamProc(
        url, cluster, tmp_path_factory.mktemp("serve"), **LOOSE, REDPOLL_FEDERATION_LOOPBACK="1"
    ).start()
    yield proc
    proc.stop()


@pytest.fixture
async def prp(settings):
    """The engine that runs the jobs, allowed to reach the loopback endpoint."""
    engine = await Redpoll.open(dataclasses.replace(settings, federation_loopback=True))
    yield engine
    await engine.close()


# --- the push service ---------------------------------------------------------------------
class PushService:
    """Records every request; answers each endpoint's set status (201)."""

    def __init__(self):
        self.received: list[tuple[str, dict, bytes]] = []
        self.status: dict[str, int] = {}
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                name = self.path.rsplit("/", 1)[-1]
                service.received.append(
                    (name, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                self.send_response(service.status.get(name, 201))
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/push/{name}"

    def to(self, name: str) -> list[tuple[dict, bytes]]:
        return [(h, b) for n, h, b in self.received if n == name]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def service():
    s = PushService()
    yield s
    s.close()


def b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_vapid(headers: dict, server_key: str, endpoint: str) -> dict:
    """The JWT's claims, once its signature is checked against server_key
    (both forms: RFC 8292's ``vapid t=, k=`` and the draft's ``WebPush``
    with the key in Crypto-Key)."""
    auth = headers["authorization"]
    if auth.startswith("vapid "):
        parts = dict(p.strip().split("=", 1) for p in auth[6:].split(","))
        jwt, key = parts["t"], parts["k"]
    else:
        assert auth.startswith("WebPush ")
        jwt = auth[8:]
        key = headers["crypto-key"].split("p256ecdsa=")[1].split(";")[0]
    assert key == server_key
    head, claims, sig = jwt.split(".")
    raw = b64d(sig)
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64d(server_key))
    public.verify(
        encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
        f"{head}.{claims}".encode(),
        ec.ECDSA(hashes.SHA256()),
    )
    claims = json.loads(b64d(claims))
    assert json.loads(b64d(head))["alg"] == "ES256"
    assert claims["aud"] == endpoint.rsplit("/push/", 1)[0] and claims["exp"] > time.time()
    return claims


def distinct(pushes: list[dict]) -> list[dict]:
    """One of each notification: jobs run at least once, and the test's
    short claim time (500 ms) lets a busy machine run a push job twice;
    clients show a notification once (the service worker by its id)."""
    seen: dict[str, dict] = {}
    for p in pushes:
        assert seen.setdefault(p["notification_id"], p) == p
    return list(seen.values())


class Browser:
    """A subscriber's key pair and auth secret, made as a browser makes them."""

    def __init__(self, m: Mastodon, standard: bool = False):
        self.m = m
        self.standard = standard
        self.private, self.public = m.push_subscription_generate_keys()

    def decrypt(self, headers: dict, body: bytes) -> dict:
        if self.standard:
            assert headers["content-encoding"] == "aes128gcm"
            key = ec.derive_private_key(self.private["privkey"], ec.SECP256R1())
            return json.loads(
                http_ece.decrypt(
                    body, private_key=key, auth_secret=self.private["auth"], version="aes128gcm"
                )
            )
        assert headers["content-encoding"] == "aesgcm"
        return dict(
            self.m.push_subscription_decrypt_push(
                body, self.private, headers["encryption"], headers["crypto-key"]
            )
        )

    def json_body(self, endpoint: str, **data) -> dict:
        b64 = lambda raw: base64.urlsafe_b64encode(raw).rstrip(b"=").decode()  # noqa: E731
        return {
            "subscription": {
                "endpoint": endpoint,
                "standard": self.standard,
                "keys": {"p256dh": b64(self.public["pubkey"]), "auth": b64(self.public["auth"])},
            },
            "data": data,
        }


def people(base: str, n: int) -> list[Mastodon]:
    cid, secret = Mastodon.create_app("push-test", api_base_url=base, scopes=SCOPES)
    out = []
    for _ in range(n):
        name = "u" + uuid.uuid4().hex[:10]
        m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
        m.create_account(
            name, "correct horse battery", f"{name}@example.com", agreement=True, scopes=SCOPES
        )
        out.append(m)
    return out


def second_token(base: str, m: Mastodon) -> Mastodon:
    """Another access token of the same account (another client)."""
    me = m.me()
    cid, secret = Mastodon.create_app("push-other", api_base_url=base, scopes=SCOPES)
    other = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
    other.log_in(
        f"{me['username']}@example.com", "correct horse battery", scopes=SCOPES, allow_http=True
    )
    return other


def http(m: Mastodon, base: str) -> httpx.Client:
    return httpx.Client(
        base_url=base, timeout=30, headers={"Authorization": f"Bearer {m.access_token}"}
    )


ALL_ON = dict(
    follow_events=True,
    favourite_events=True,
    reblog_events=True,
    mention_events=True,
    poll_events=True,
    follow_request_events=True,
    status_events=True,
    update_events=True,
    quote_events=True,
    quoted_update_events=True,
)


def subscribe(m: Mastodon, browser: Browser, endpoint: str, **options) -> dict:
    return m.push_subscription_set(endpoint, browser.public, **{**ALL_ON, **options})


# --- the API --------------------------------------------------------------------------------
async def test_subscription_set_read_change_remove_and_the_server_key_everywhere(psrv, prp):
    alice, bob = await asyncio.to_thread(people, psrv.base, 2)
    browser = Browser(alice)
    made = await asyncio.to_thread(
        subscribe, alice, browser, "https://push.example/a", mention_events=False, policy="follower"
    )
    assert made["endpoint"] == "https://push.example/a" and made["policy"] == "follower"
    assert made["standard"] is False
    assert made["alerts"]["mention"] is False and made["alerts"]["favourite"] is True
    with http(alice, psrv.base) as api:  # as sent (Mastodon.py fills in kinds it knows)
        raw = api.get("/api/v1/push/subscription").json()
    assert set(raw["alerts"]) == {
        "mention",
        "status",
        "reblog",
        "follow",
        "follow_request",
        "favourite",
        "poll",
        "update",
        "admin.sign_up",
        "admin.report",
        "quote",
        "quoted_update",
    }
    assert set(raw) == {"id", "endpoint", "standard", "alerts", "policy", "server_key"}
    # one server key: the entity's, the instance's, the application's, the stored one
    key = made["server_key"]
    assert len(b64d(key)) == 65 and b64d(key)[0] == 4
    with httpx.Client(base_url=psrv.base, timeout=30) as plain:
        assert plain.get("/api/v2/instance").json()["configuration"]["vapid"]["public_key"] == key
        app = plain.post(
            "/api/v1/apps", data={"client_name": "x", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob"}
        )
        assert app.json()["vapid_key"] == key
    assert (await vapid.server_key(prp.store)).public == key

    shown = await asyncio.to_thread(alice.push_subscription)
    assert shown["id"] == made["id"] and shown["alerts"] == made["alerts"]
    # another token of the same account has none of its own
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(bob.push_subscription)

    # PUT changes the alerts named and the policy, never the endpoint
    with http(alice, psrv.base) as api:
        changed = api.put(
            "/api/v1/push/subscription",
            json={"data": {"alerts": {"mention": True, "poll": False}, "policy": "followed"}},
        )
        assert changed.status_code == 200, changed.text
        changed = changed.json()
        assert changed["alerts"]["mention"] is True and changed["alerts"]["poll"] is False
        assert changed["alerts"]["favourite"] is True and changed["policy"] == "followed"
        assert changed["endpoint"] == "https://push.example/a" and changed["id"] == made["id"]
        # form-encoded, Rails' nested names
        form = api.put(
            "/api/v1/push/subscription",
            data={"data[alerts][follow]": "false", "data[policy]": "none"},
        ).json()
        assert form["alerts"]["follow"] is False and form["policy"] == "none"

        # a new POST replaces it (a new id), JSON body, standard
        standard = Browser(alice, standard=True)
        again = api.post(
            "/api/v1/push/subscription",
            json=standard.json_body("https://push.example/b", alerts={"favourite": "true"}),
        )
        assert again.status_code == 200, again.text
        again = again.json()
        assert again["id"] != made["id"] and again["standard"] is True
        assert again["alerts"]["favourite"] is True and again["alerts"]["mention"] is False
        assert again["policy"] == "all"
        uid = int((await asyncio.to_thread(alice.me))["id"])
        assert await prp.store.hlen(keys.push_subscriptions(uid)) == 1

        assert api.delete("/api/v1/push/subscription").json() == {}
        assert api.get("/api/v1/push/subscription").status_code == 404
        assert (
            api.put("/api/v1/push/subscription", json={"data": {"policy": "all"}}).status_code
            == 404
        )
        assert api.delete("/api/v1/push/subscription").status_code == 200  # none: still fine


async def test_bad_input_is_422_and_writes_nothing_and_the_scope_is_push(psrv, prp):
    (alice,) = await asyncio.to_thread(people, psrv.base, 1)
    browser = Browser(alice)
    kept = await asyncio.to_thread(subscribe, alice, browser, "https://push.example/kept")
    good = browser.json_body("https://push.example/new")
    bad_key = base64.urlsafe_b64encode(b"\x04" + b"\x01" * 64).decode()  # not on the curve

    def variant(**change) -> dict:
        body = json.loads(json.dumps(good))
        for path, value in change.items():
            node = body
            *head, last = path.split("__")
            for part in head:
                node = node[part]
            node[last] = value
        return body

    bodies = [
        variant(subscription__endpoint="ftp://push.example/x"),
        variant(subscription__endpoint="https://user:pw@push.example/x"),
        variant(
            subscription__endpoint="https://push.example/" + "x" * limits.PUSH_ENDPOINT_MAX_CHARS
        ),
        variant(subscription__endpoint=""),
        variant(subscription__keys__p256dh=bad_key),
        variant(subscription__keys__p256dh="not base64 at all!"),
        variant(subscription__keys__auth=base64.b64encode(b"short").decode()),
        variant(subscription__keys=None),
        variant(subscription__standard="perhaps"),
        variant(data__alerts={"mention": "maybe"}),
        variant(data__alerts=["mention"]),
        variant(data__policy="friends"),
        {"data": {"policy": "all"}},
    ]
    with http(alice, psrv.base) as api:
        for body in bodies:
            answer = api.post("/api/v1/push/subscription", json=body)
            assert answer.status_code == 422, (body, answer.text)
            assert answer.json()["error"].startswith("Validation failed")
        for form in (
            {
                "subscription[endpoint]": "https://push.example/f",
                "subscription[keys][p256dh]": bad_key,
                "subscription[keys][auth]": "x",
            },
            {"subscription[endpoint]": "https://push.example/f", "subscription[keys]": "flat"},
        ):
            assert api.post("/api/v1/push/subscription", data=form).status_code == 422
        assert (
            api.put(
                "/api/v1/push/subscription", json={"data": {"alerts": {"follow": "yes please"}}}
            ).status_code
            == 422
        )
        assert (
            api.put("/api/v1/push/subscription", json={"data": {"policy": "everyone"}}).status_code
            == 422
        )
        # nothing of them was written
        assert api.get("/api/v1/push/subscription").json() == kept
        # http:// is a test setting's: this server allows loopback, so it is taken
        assert (
            api.post(
                "/api/v1/push/subscription",
                json=variant(subscription__endpoint="http://127.0.0.1:9/x"),
            ).status_code
            == 200
        )

    # a token without the push scope: 403
    cid, secret = Mastodon.create_app("no-push", api_base_url=psrv.base, scopes=["read"])
    me = await asyncio.to_thread(alice.me)
    reader = Mastodon(client_id=cid, client_secret=secret, api_base_url=psrv.base)
    await asyncio.to_thread(
        reader.log_in,
        f"{me['username']}@example.com",
        "correct horse battery",
        scopes=["read"],
        allow_http=True,
    )
    with http(reader, psrv.base) as api:
        assert api.get("/api/v1/push/subscription").status_code == 403
        assert api.post("/api/v1/push/subscription", json=good).status_code == 403


async def test_the_server_key_is_made_once_whoever_asks_first(prp):
    keys_made = await asyncio.gather(*(vapid.server_key(prp.store) for _ in range(8)))
    assert len({k for k in keys_made}) == 1
    assert (await vapid.server_key(prp.store)) == keys_made[0]


# --- delivery -----------------------------------------------------------------------------
async def test_mention_favourite_follow_arrive_decrypted_and_signed_both_encodings(
    psrv, prp, service
):
    alice, bob = await asyncio.to_thread(people, psrv.base, 2)
    alice2 = await asyncio.to_thread(second_token, psrv.base, alice)
    legacy, standard = Browser(alice), Browser(alice2, standard=True)
    sub = await asyncio.to_thread(subscribe, alice, legacy, service.url("legacy"))
    with http(alice2, psrv.base) as api:
        body = standard.json_body(
            service.url("standard"), alerts={k: True for k in ("mention", "favourite", "follow")}
        )
        assert api.post("/api/v1/push/subscription", json=body).status_code == 200
    bob_me = await asyncio.to_thread(bob.me)
    alice_me = await asyncio.to_thread(alice.me)
    await asyncio.to_thread(bob.account_update_credentials, display_name="Bob B")

    post = await asyncio.to_thread(alice.status_post, "a post of alice's")
    await asyncio.to_thread(bob.status_post, f"@{alice_me['username']} hello there, alice")
    await asyncio.to_thread(bob.status_favourite, post["id"])
    await asyncio.to_thread(bob.account_follow, alice_me["id"])
    await prp.drain()

    for name, browser, token in (
        ("legacy", legacy, alice.access_token),
        ("standard", standard, alice2.access_token),
    ):
        got = service.to(name)
        pushes = []
        for headers, raw in got:
            check_vapid(headers, sub["server_key"], service.url(name))
            assert int(headers["ttl"]) == limits.PUSH_TTL_S
            pushes.append(browser.decrypt(headers, raw))
        pushes = distinct(pushes)
        assert len(pushes) == 3, (name, pushes)
        by_type = {p["notification_type"]: p for p in pushes}
        assert set(by_type) == {"mention", "favourite", "follow"}
        assert all(p["access_token"] == token for p in pushes)
        assert by_type["mention"]["title"] == "You were mentioned by Bob B"
        assert "hello there, alice" in by_type["mention"]["body"]
        assert by_type["favourite"]["title"] == "Bob B favorited your post"
        assert by_type["favourite"]["body"] == "a post of alice's"
        assert by_type["follow"]["title"] == "Bob B is now following you"
        assert all(p["icon"].endswith(".png") and p["preferred_locale"] == "en" for p in pushes)
        # the ids are the notifications' own
        ids = {n["id"] for n in await asyncio.to_thread(alice.notifications)}
        assert {p["notification_id"] for p in pushes} <= ids
    assert bob_me["id"] != alice_me["id"]


async def test_alerts_and_policy_decide_at_send_time(psrv, prp, service):
    alice, bob, carol = await asyncio.to_thread(people, psrv.base, 3)
    browser = Browser(alice)
    await asyncio.to_thread(
        subscribe, alice, browser, service.url("a"), mention_events=False, policy="followed"
    )
    alice_me, carol_me = await asyncio.gather(
        asyncio.to_thread(alice.me), asyncio.to_thread(carol.me)
    )
    await asyncio.to_thread(alice.account_follow, carol_me["id"])
    post = await asyncio.to_thread(alice.status_post, "like me")
    await asyncio.to_thread(bob.status_post, f"@{alice_me['username']} a mention")  # alert off
    await asyncio.to_thread(carol.status_post, f"@{alice_me['username']} from carol")
    await asyncio.to_thread(bob.status_favourite, post["id"])  # not followed: policy
    await asyncio.to_thread(carol.status_favourite, post["id"])  # followed: pushed
    await prp.drain()
    got = distinct([browser.decrypt(h, b) for h, b in service.to("a")])
    assert [(p["notification_type"], p["title"]) for p in got] == [
        ("favourite", f"{carol_me['display_name'] or carol_me['username']} favorited your post")
    ]

    # the policy is read when sending: none now, so nothing more
    await asyncio.to_thread(alice.push_subscription_update, policy="none", **ALL_ON)
    await asyncio.to_thread(carol.status_reblog, post["id"])
    await prp.drain()
    assert len(distinct([browser.decrypt(h, b) for h, b in service.to("a")])) == 1


async def test_quotes_and_edits_of_quoted_posts_are_pushed(psrv, prp, service):
    alice, bob = await asyncio.to_thread(people, psrv.base, 2)
    browser = Browser(alice)
    made = await asyncio.to_thread(subscribe, alice, browser, service.url("q"))
    assert made["alerts"]["quote"] is True and made["alerts"]["quoted_update"] is True
    bob_name = (await asyncio.to_thread(bob.me))["username"]
    mine = await asyncio.to_thread(alice.status_post, "quote me")
    theirs = await asyncio.to_thread(bob.status_post, "a post alice quotes")
    await asyncio.to_thread(bob.status_post, "look", quoted_status_id=mine["id"])
    await asyncio.to_thread(alice.status_post, "see this", quoted_status_id=theirs["id"])
    await prp.drain()
    await asyncio.to_thread(bob.status_update, theirs["id"], "a post alice quotes, edited")
    await prp.drain()
    got = distinct([browser.decrypt(h, b) for h, b in service.to("q")])
    assert [(p["notification_type"], p["title"]) for p in got] == [
        ("quote", f"{bob_name} quoted your post"),
        ("quoted_update", f"{bob_name} edited a post you have quoted"),
    ]
    # the alert off: no more quotes pushed
    await asyncio.to_thread(alice.push_subscription_update, **{**ALL_ON, "quote_events": False})
    await asyncio.to_thread(bob.status_post, "again", quoted_status_id=mine["id"])
    await prp.drain()
    assert len(distinct([browser.decrypt(h, b) for h, b in service.to("q")])) == 2


async def test_a_blocked_or_muted_account_is_not_pushed(psrv, prp, service):
    alice, bob, carol, dave = await asyncio.to_thread(people, psrv.base, 4)
    browser = Browser(alice)
    await asyncio.to_thread(subscribe, alice, browser, service.url("a"))
    bob_me, dave_me = await asyncio.to_thread(bob.me), await asyncio.to_thread(dave.me)
    post = await asyncio.to_thread(alice.status_post, "fav me")
    await asyncio.to_thread(bob.status_favourite, post["id"])
    await asyncio.to_thread(dave.status_favourite, post["id"])
    await asyncio.to_thread(carol.status_favourite, post["id"])
    # blocked and muted after the notifications were made, before they are sent
    await asyncio.to_thread(alice.account_block, bob_me["id"])
    await asyncio.to_thread(alice.account_mute, dave_me["id"])
    await prp.drain()
    got = distinct([browser.decrypt(h, b) for h, b in service.to("a")])
    carol_name = (await asyncio.to_thread(carol.me))["username"]
    assert [p["title"] for p in got] == [f"{carol_name} favorited your post"]


async def test_gone_removes_the_subscription_and_a_failure_is_retried_later(psrv, prp, service):
    alice, bob, carol = await asyncio.to_thread(people, psrv.base, 3)
    alice_me = await asyncio.to_thread(alice.me)
    uid = int(alice_me["id"])
    await asyncio.to_thread(subscribe, alice, Browser(alice), service.url("gone"))
    service.status["gone"] = 410
    post = await asyncio.to_thread(alice.status_post, "p")
    await asyncio.to_thread(bob.status_favourite, post["id"])
    await prp.drain()
    assert len(service.to("gone")) >= 1
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(alice.push_subscription)
    assert await prp.store.hlen(keys.push_subscriptions(uid)) == 0

    browser = Browser(alice)
    await asyncio.to_thread(subscribe, alice, browser, service.url("flaky"))
    service.status["flaky"] = 500
    await asyncio.to_thread(carol.status_favourite, post["id"])
    await prp.drain()
    failed = len(service.to("flaky"))
    assert failed >= 1
    # queued for later with its backoff, for this subscription only
    [note] = [
        n
        for n in await asyncio.to_thread(alice.notifications)
        if n["account"]["id"] == (await asyncio.to_thread(carol.me))["id"]
    ]
    retry = PushJob(
        uid, int(note["id"]), hashlib.sha256(alice.access_token.encode()).hexdigest(), 1
    )
    due = await prp.queue.due_at(retry)
    assert due is not None
    assert abs(due / 1000 - time.time() - limits.PUSH_RETRY_BASE_S) < 30
    service.status["flaky"] = 201
    assert await prp.queue.promote_due(due + 1) == 1
    await prp.drain()
    assert len(service.to("flaky")) > failed
    pushed = browser.decrypt(*service.to("flaky")[-1])
    assert pushed["notification_id"] == note["id"] and pushed["notification_type"] == "favourite"
    assert await prp.queue.due_at(retry) is None
    assert (await asyncio.to_thread(alice.push_subscription))["endpoint"] == service.url("flaky")


async def test_revoking_the_token_removes_its_subscription(psrv, prp, service):
    alice, bob = await asyncio.to_thread(people, psrv.base, 2)
    alice2 = await asyncio.to_thread(second_token, psrv.base, alice)
    uid = int((await asyncio.to_thread(alice.me))["id"])
    await asyncio.to_thread(subscribe, alice, Browser(alice), service.url("one"))
    await asyncio.to_thread(subscribe, alice2, Browser(alice2), service.url("two"))
    assert await prp.store.hlen(keys.push_subscriptions(uid)) == 2
    await asyncio.to_thread(alice.revoke_access_token, allow_http=True)
    assert await prp.store.hlen(keys.push_subscriptions(uid)) == 1
    post = await asyncio.to_thread(alice2.status_post, "p")
    await asyncio.to_thread(bob.status_favourite, post["id"])
    await prp.drain()
    assert service.to("one") == [] and len(service.to("two")) >= 1


async def test_a_subscription_whose_token_went_another_way_is_dropped_when_sending(
    psrv, prp, service
):
    alice, bob = await asyncio.to_thread(people, psrv.base, 2)
    uid = int((await asyncio.to_thread(alice.me))["id"])
    await asyncio.to_thread(subscribe, alice, Browser(alice), service.url("x"))
    digest = hashlib.sha256(alice.access_token.encode()).hexdigest()
    post = await asyncio.to_thread(alice.status_post, "p")
    await prp.store.delete(keys.token(digest))  # as a revocation cut short would leave it
    await asyncio.to_thread(bob.status_favourite, post["id"])
    await prp.drain()
    assert service.to("x") == []
    assert await prp.store.hlen(keys.push_subscriptions(uid)) == 0


async def test_an_endpoint_at_a_private_address_is_refused_without_the_loopback_setting(
    psrv, rp, service
):
    """The send refuses it (the API's check is the scheme's; the address is
    the guard's, at send time): nothing reaches the loopback service."""
    alice, bob = await asyncio.to_thread(people, psrv.base, 2)
    await asyncio.to_thread(subscribe, alice, Browser(alice), service.url("private"))
    post = await asyncio.to_thread(alice.status_post, "p")
    await asyncio.to_thread(bob.status_favourite, post["id"])
    await rp.drain()  # the engine without federation_loopback
    assert service.to("private") == []


def test_bad_signature_is_caught_by_the_check():
    """The receiving side's VAPID check does fail on another key (so the
    tests above prove the signature)."""
    key, other = vapid.generate(), vapid.generate()
    headers = vapid.headers(key, "http://127.0.0.1:1/push/x", "mailto:a@localhost", standard=True)
    check_vapid(headers, key.public, "http://127.0.0.1:1/push/x")
    forged = {"authorization": headers["authorization"].replace(key.public, other.public)}
    with pytest.raises(InvalidSignature):
        check_vapid(forged, other.public, "http://127.0.0.1:1/push/x")


async def test_subscriptions_per_account_are_bounded_and_a_token_replaces_its_own(prp):
    """limits.PUSH_SUBSCRIPTIONS_MAX of different tokens; one more is a 422
    (ValidationError) writing nothing; a token at the bound replaces its own."""
    user = await prp.accounts.sign_up("pushcap")
    _, public = Mastodon.push_subscription_generate_keys(Mastodon)
    key = base64.b64encode(public["pubkey"]).decode()
    secret = base64.b64encode(public["auth"]).decode()

    def token(i: int) -> Token:
        return Token(hashlib.sha256(f"t{i}".encode()).hexdigest(), user.id, "c", ("push",))

    async def subscribe_as(i: int, url: str):
        return await prp.push.subscribe(
            token(i), f"t{i}", endpoint=url, p256dh=key, auth_key=secret
        )

    for i in range(limits.PUSH_SUBSCRIPTIONS_MAX):
        await subscribe_as(i, f"https://push.example/{i}")
    with pytest.raises(ValidationError):
        await subscribe_as(limits.PUSH_SUBSCRIPTIONS_MAX, "https://push.example/over")
    assert await prp.store.hlen(keys.push_subscriptions(user.id)) == limits.PUSH_SUBSCRIPTIONS_MAX
    assert await prp.push.subscription(token(limits.PUSH_SUBSCRIPTIONS_MAX)) is None
    again = await subscribe_as(0, "https://push.example/again")
    assert again.endpoint == "https://push.example/again"
    assert (await prp.push.subscription(token(0))).id == again.id
