"""Two-factor sign-in against a real ``redpoll serve``: set up through the
endpoints the web app calls (a secret shown once, on only after a right
code, recovery codes), the authorize page's second step (a wrong code
refused and limited, a right one works once, a recovery code once), the
password grant refused while it is on (as Mastodon), removal, new recovery
codes, and the admin command that turns it off. A refused step writes
nothing: no code, no token, the account's two-factor state unchanged."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from types import SimpleNamespace

import httpx
import pyotp
import pytest
import redis
from mastodon import Mastodon
from support.cli import admin, ok
from support.mastodon import api, register, serve_env  # noqa: F401
from support.names import unique

from redpoll.core import keys

CB = "https://client.example/cb"
PASSWORD = "correct horse battery"
WAIT_S = 70
MASTODON_INVALID_GRANT = (
    "The provided authorization grant is invalid, expired, revoked, does not match "
    "the redirection URI used in the authorization request, or was issued to another client."
)


@pytest.fixture(scope="module")
def database(server):
    """Where the server keeps its data, as the admin command line reaches it."""
    url, cluster, _ = server
    return SimpleNamespace(redis_url=url, cluster=cluster)


@pytest.fixture(scope="module")
def db(database):
    if database.cluster:
        return redis.RedisCluster.from_url(database.redis_url)
    return redis.Redis.from_url(database.redis_url)


@pytest.fixture(scope="module")
def app(api):
    return Mastodon.create_app(
        "tfa-app", api_base_url=api.url, scopes=["read", "write"], redirect_uris=CB
    )


class Member:
    """One account and its authenticator app: codes of steps never used before."""

    def __init__(self, api, app):
        self.api = api
        self.name = unique("tfa")
        self.token = register(api, app, self.name, scopes=("read", "write")).access_token
        self.id = int(self.get("/api/v1/accounts/verify_credentials").json()["id"])
        self.secret = ""
        self.last_step = -1

    def headers(self) -> dict:
        return {"Authorization": "Bearer " + self.token}

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.api.url + path, headers=self.headers())

    def post(self, path: str, **data) -> httpx.Response:
        return httpx.post(self.api.url + path, data=data, headers=self.headers())

    def code(self) -> str:
        """A code of a step after the last one used, within the server's
        window (now, or one step ahead; past that, wait for the clock)."""
        deadline = time.monotonic() + WAIT_S
        while True:
            now = int(time.time() // 30)
            step = max(self.last_step + 1, now)
            if step <= now + 1:
                break
            assert time.monotonic() < deadline, "the clock did not move on"
            time.sleep(0.5)
        self.last_step = step
        return pyotp.TOTP(self.secret).generate_otp(step)

    def wrong_code(self) -> str:
        totp = pyotp.TOTP(self.secret)
        now = int(time.time() // 30)
        near = {totp.generate_otp(s) for s in range(now - 3, now + 4)}
        return next(c for c in (f"{n:06d}" for n in range(1_000_000)) if c not in near)

    def set_up(self) -> list[str]:
        setup = self.post("/api/v1/redpoll/two_factor/setup")
        assert setup.status_code == 200, setup.text
        self.secret = setup.json()["secret"]
        self.last_step = -1  # a new secret: none of its codes used yet
        done = self.post("/api/v1/redpoll/two_factor/enable", code=self.code())
        assert done.status_code == 200, done.text
        return done.json()["recovery_codes"]


def challenge(verifier: str) -> str:
    return (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )


VERIFIER = secrets.token_urlsafe(48)


def first_step(api, app, name, password=PASSWORD) -> httpx.Response:
    return httpx.post(
        api.url + "/oauth/authorize",
        data={
            "response_type": "code",
            "client_id": app[0],
            "redirect_uri": CB,
            "scope": "read write",
            "state": "s1",
            "code_challenge": challenge(VERIFIER),
            "code_challenge_method": "S256",
            "username": name,
            "password": password,
            "decision": "allow",
        },
    )


def step_token(resp: httpx.Response) -> str:
    assert resp.status_code == 200 and "location" not in resp.headers, resp.text
    found = re.search(r'name=two_factor_token value="([^"]+)"', resp.text)
    assert found, resp.text
    assert "name=password" not in resp.text and "name=username" not in resp.text
    return found.group(1)


def second_step(api, token: str, code: str, **extra) -> httpx.Response:
    return httpx.post(
        api.url + "/oauth/authorize",
        data={"two_factor_token": token, "otp_attempt": code, **extra},
    )


def redeem(api, app, resp: httpx.Response) -> str:
    assert resp.status_code == 302, resp.text
    location = httpx.URL(resp.headers["location"])
    assert str(location).startswith(CB) and location.params["state"] == "s1"
    token = httpx.post(
        api.url + "/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": location.params["code"],
            "client_id": app[0],
            "client_secret": app[1],
            "redirect_uri": CB,
            "code_verifier": VERIFIER,
        },
    )
    assert token.status_code == 200, token.text
    return token.json()["access_token"]


def password_grant(api, app, name, password=PASSWORD) -> httpx.Response:
    return httpx.post(
        api.url + "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": app[0],
            "client_secret": app[1],
            "username": name,
            "password": password,
            "scope": "read",
        },
    )


def state(db, member: Member) -> tuple:
    """What a refused step must leave as it was: the account's secrets and
    its tokens."""
    return db.hgetall(keys.secrets(member.id)), db.smembers(keys.user_tokens(member.id))


def test_set_up_needs_a_right_code_and_the_secret_is_shown_once(api, app, db):
    me = Member(api, app)
    assert me.get("/api/v1/redpoll/two_factor").json() == {
        "enabled": False,
        "recovery_codes_left": 0,
    }
    setup = me.post("/api/v1/redpoll/two_factor/setup")
    assert setup.status_code == 200 and setup.headers["cache-control"] == "no-store"
    body = setup.json()
    me.secret = body["secret"]
    assert re.fullmatch(r"[A-Z2-7]{32}", me.secret)
    assert body["uri"].startswith("otpauth://totp/") and f"secret={me.secret}" in body["uri"]
    assert me.name in body["uri"]
    assert body["qr_svg"].startswith("data:image/svg+xml")

    # a wrong code: still off, and nothing of the account changed
    before = state(db, me)
    wrong = me.post("/api/v1/redpoll/two_factor/enable", code=me.wrong_code())
    assert wrong.status_code == 422 and "code" in wrong.json()["details"]
    assert state(db, me) == before
    assert me.get("/api/v1/redpoll/two_factor").json()["enabled"] is False
    assert password_grant(api, app, me.name).status_code == 200  # still signs in alone

    done = me.post("/api/v1/redpoll/two_factor/enable", code=me.code())
    assert done.status_code == 200, done.text
    codes = done.json()["recovery_codes"]
    assert len(codes) == 10 and len(set(codes)) == 10
    assert all(re.fullmatch(r"[0-9a-f]{5}(-[0-9a-f]{5}){3}", c) for c in codes)
    assert me.get("/api/v1/redpoll/two_factor").json() == {
        "enabled": True,
        "recovery_codes_left": 10,
    }
    # never shown again: not by the status, not by a new set-up (refused)
    again = me.post("/api/v1/redpoll/two_factor/setup")
    assert again.status_code == 422 and me.secret not in again.text
    assert me.secret not in me.get("/api/v1/redpoll/two_factor").text
    # kept sealed: neither the secret nor a recovery code is in the database
    stored = b" ".join(v for v in db.hgetall(keys.secrets(me.id)).values())
    assert me.secret.encode() not in stored
    assert not any(c.replace("-", "").encode() in stored for c in codes)


def test_an_app_token_cannot_set_up_two_factor(api, app):
    resp = httpx.post(
        api.url + "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": app[0],
            "client_secret": app[1],
            "scope": "read write",
        },
    )
    app_token = resp.json()["access_token"]
    refused = httpx.post(
        api.url + "/api/v1/redpoll/two_factor/setup",
        headers={"Authorization": "Bearer " + app_token},
    )
    assert refused.status_code == 422 and "secret" not in refused.text


def test_sign_in_asks_for_a_code_after_the_password_and_each_code_works_once(api, app, db):
    me = Member(api, app)
    recovery = me.set_up()

    # a wrong password: no second step
    wrong = first_step(api, app, me.name, password="not the password")
    assert wrong.status_code == 401 and "two_factor_token" not in wrong.text

    token = step_token(first_step(api, app, me.name))
    before = state(db, me)
    refused = second_step(api, token, me.wrong_code())
    assert refused.status_code == 401 and "Invalid code." in refused.text
    assert "location" not in refused.headers
    # the step's form takes a code, never a password (nothing to check it against)
    also = second_step(api, token, "", username=me.name, password=PASSWORD)
    assert also.status_code == 401 and "location" not in also.headers
    assert state(db, me) == before

    code = me.code()
    signed_in = redeem(api, app, second_step(api, token, code))
    assert (
        httpx.get(
            api.url + "/api/v1/accounts/verify_credentials",
            headers={"Authorization": "Bearer " + signed_in},
        ).json()["username"]
        == me.name
    )
    # the step is used: gone, whatever the code
    used = second_step(api, token, me.wrong_code())
    assert used.status_code == 400 and "expired or was already used" in used.text

    # the same code again, in a new sign-in: refused (replay)
    token = step_token(first_step(api, app, me.name))
    before = state(db, me)
    replay = second_step(api, token, code)
    assert replay.status_code == 401 and "Invalid code." in replay.text
    assert state(db, me) == before

    # a recovery code: works once (as typed, in capitals, without its dashes)
    redeem(api, app, second_step(api, token, recovery[0].upper().replace("-", "")))
    token = step_token(first_step(api, app, me.name))
    again = second_step(api, token, recovery[0])
    assert again.status_code == 401 and "Invalid code." in again.text
    assert me.get("/api/v1/redpoll/two_factor").json()["recovery_codes_left"] == 9
    redeem(api, app, second_step(api, token, recovery[1]))


def test_wrong_codes_are_limited_per_step_and_per_account(api, app, db):
    me = Member(api, app)
    me.set_up()
    before = state(db, me)

    token = step_token(first_step(api, app, me.name))
    for _ in range(5):
        assert second_step(api, token, me.wrong_code()).status_code == 401
    # out of tries: the step is gone, even for a right code (which stays unused)
    gone = second_step(api, token, me.code())
    assert gone.status_code == 400 and "expired or was already used" in gone.text
    me.last_step -= 1

    token = step_token(first_step(api, app, me.name))
    for _ in range(4):
        assert second_step(api, token, me.wrong_code()).status_code == 401
    # ten codes for the account in five minutes (the set-up's one with them):
    # the next is refused, from any step
    token = step_token(first_step(api, app, me.name))
    limited = second_step(api, token, me.code())
    assert limited.status_code == 429 and "Too many requests" in limited.text
    assert state(db, me) == before  # no code spent, no token


def test_the_password_grant_is_refused_while_two_factor_is_on(api, app, db):
    me = Member(api, app)
    codes = me.set_up()
    before = state(db, me)
    refused = password_grant(api, app, me.name)
    assert refused.status_code == 400
    # Mastodon's answer, the same as for a wrong password
    assert refused.json() == {"error": "invalid_grant", "error_description": MASTODON_INVALID_GRANT}
    assert password_grant(api, app, me.name, "not the password").json() == refused.json()
    assert state(db, me) == before

    # new recovery codes: the password is needed; the old codes stop working
    wrong = me.post("/api/v1/redpoll/two_factor/recovery_codes", password="not it")
    assert wrong.status_code == 422 and "password" in wrong.json()["details"]
    assert state(db, me) == before
    fresh = me.post("/api/v1/redpoll/two_factor/recovery_codes", password=PASSWORD)
    assert fresh.status_code == 200 and len(fresh.json()["recovery_codes"]) == 10
    token = step_token(first_step(api, app, me.name))
    assert second_step(api, token, codes[0]).status_code == 401

    # removal: a wrong code or password is refused and changes nothing
    before = state(db, me)
    for bad in ({"code": me.wrong_code()}, {"password": "not it"}, {}):
        resp = me.post("/api/v1/redpoll/two_factor/disable", **bad)
        assert resp.status_code == 422, (bad, resp.text)
    assert state(db, me) == before
    assert me.post("/api/v1/redpoll/two_factor/disable", code=me.code()).status_code == 200
    assert me.get("/api/v1/redpoll/two_factor").json()["enabled"] is False
    assert password_grant(api, app, me.name).status_code == 200
    # and the password alone signs in on the authorize page again
    assert first_step(api, app, me.name).status_code == 302

    # on again, then off with the password (Mastodon's way)
    me.set_up()
    assert password_grant(api, app, me.name).status_code == 400
    assert me.post("/api/v1/redpoll/two_factor/disable", password=PASSWORD).status_code == 200
    assert password_grant(api, app, me.name).status_code == 200


def test_an_admin_turns_a_members_two_factor_off(api, app, database):
    me = Member(api, app)
    me.set_up()
    assert password_grant(api, app, me.name).status_code == 400
    out = ok(admin(database, "disable-two-factor", me.name))
    assert "turned off" in out
    assert password_grant(api, app, me.name).status_code == 200
    assert me.get("/api/v1/redpoll/two_factor").json()["enabled"] is False
    assert "was not on" in ok(admin(database, "disable-two-factor", me.name))
    log = ok(admin(database, "audit-log"))
    assert f"disable_2fa User {me.name}" in log
    assert log.count(f"disable_2fa User {me.name}") == 1
