"""E-mail against a real ``redpoll serve`` sending through a real SMTP
server (aiosmtpd, tests/support/smtp.py): a sign-up is unconfirmed (403
where Mastodon's require_user! runs) until the link it is mailed is
followed, the confirmation resent through Mastodon.py; the forgotten
password's pages (the same answer for any address, the link single-use,
every session signed out); the e-mail change (nothing written when the
password is wrong or the address taken, effective only when the new
address's link is followed, the old one told); the per-address limit."""

from __future__ import annotations

import os
import re
import uuid

import httpx
import pytest
import redis
from mastodon import Mastodon, MastodonAPIError
from redis.cluster import RedisCluster
from support.cli import own_env, redpoll
from support.mastodon import serve_env
from support.smtp import free_port, link_in, smtp, text_of, token_of  # noqa: F401

from redpoll.accounts import auth
from redpoll.api.process import ServeProcess
from redpoll.core import keys
from redpoll.core.errors import ConfigError
from redpoll.core.settings import Settings

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def mail_api(server, smtp):  # noqa: F811
    port = free_port()
    env = serve_env(
        server,
        **smtp.env(),
        REDPOLL_PUBLIC_URL=f"http://127.0.0.1:{port}",
        REDPOLL_INSTANCE_TITLE="Mail Poll",
        REDPOLL_RATE_MAIL_ADDRESS="4/1800",
    )
    with ServeProcess(env, args=["--port", str(port)]) as srv:
        yield srv
        assert srv.process.poll() is None, srv.logs()[-3000:]


@pytest.fixture
def http(mail_api):
    with httpx.Client(base_url=mail_api.url, timeout=30) as client:
        yield client


def new_app(api) -> tuple[str, str]:
    return Mastodon.create_app("mail-test", api_base_url=api.url, scopes=["read", "write"])


def register(api, app, prefix="m") -> tuple[Mastodon, str, str]:
    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    m = Mastodon(client_id=app[0], client_secret=app[1], api_base_url=api.url)
    m.create_account(
        name, PASSWORD, f"{name}@example.com", agreement=True, scopes=["read", "write"]
    )
    return m, name, f"{name}@example.com"


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def confirm(http, smtp, address, count=1) -> None:  # noqa: F811
    page = http.get(link_in(smtp.wait_for(address, count)))
    assert page.status_code == 200, page.text


def password_token(http, app, username, password=PASSWORD) -> httpx.Response:
    return http.post(
        "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": app[0],
            "client_secret": app[1],
            "username": username,
            "password": password,
            "scope": "read write",
        },
    )


def token_marked(server, token: str) -> bool:
    """Whether the token still carries the mark of an unconfirmed account."""
    url, cluster, _ = server
    client = (RedisCluster if cluster else redis.Redis).from_url(url)
    try:
        return bool(client.hexists(keys.token(auth.digest(token)), "chk"))
    finally:
        client.close()


def test_a_sign_up_is_limited_until_its_address_is_confirmed(mail_api, smtp, http, server):  # noqa: F811
    app = new_app(mail_api)
    m, name, address = register(mail_api, app)
    token = m.access_token
    # Mastodon's require_user!: 403 with its words where a functional login is needed
    for call in (m.account_verify_credentials, lambda: m.status_post("hello"), m.timeline_home):
        with pytest.raises(MastodonAPIError) as err:
            call()
        assert err.value.args[1] == 403
    for method, path in (
        ("GET", "/api/v1/accounts/verify_credentials"),
        ("POST", "/api/v1/statuses"),
    ):
        r = http.request(method, path, headers=bearer(token), data={"status": "x"})
        assert r.status_code == 403
        assert r.json() == {"error": "Your login is missing a confirmed e-mail address"}
    # nor does its token open a stream
    with http.stream("GET", "/api/v1/streaming/user", headers=bearer(token)) as r:
        assert r.status_code == 401
    # what needs no functional login still works, and says where it stands
    assert http.get("/api/v1/timelines/public", headers=bearer(token)).status_code == 200
    assert http.get("/api/v1/emails/check_confirmation", headers=bearer(token)).json() is False
    state = http.get("/api/v1/redpoll/email", headers=bearer(token)).json()
    assert state == {
        "email": address,
        "unconfirmed_email": None,
        "confirmed": False,
        "enabled": True,
    }
    first = smtp.wait_for(address)
    assert first["Subject"] == "Confirm your e-mail address for Mail Poll"
    assert f"@{name}" in text_of(first)
    assert "Mail Poll" in first.get_body(preferencelist=("html",)).get_content()
    # resent through Mastodon.py: a new link; the first stops working
    m.email_resend_confirmation()
    second = smtp.wait_for(address, 2)
    assert link_in(second) != link_in(first)
    assert link_in(first).startswith(mail_api.url + "/auth/confirmation?confirmation_token=")
    old = http.get(link_in(first))
    assert old.status_code == 400 and "does not work" in old.text
    page = http.get(link_in(second))
    assert page.status_code == 200 and address in page.text
    assert "text/html" in page.headers["content-type"]
    # the stream sees the confirmation first, and drops the token's mark as
    # the REST API does (the next request pays no read)
    assert token_marked(server, token)
    with http.stream("GET", "/api/v1/streaming/user", headers=bearer(token)) as r:
        assert r.status_code == 200
    assert not token_marked(server, token)
    assert m.account_verify_credentials()["username"] == name
    assert m.status_post("hello, confirmed")["content"]
    assert http.get("/api/v1/emails/check_confirmation", headers=bearer(token)).json() is True
    assert http.get(link_in(second)).status_code == 400  # once
    # confirmed: resending is refused as Mastodon refuses it
    with pytest.raises(MastodonAPIError) as err:
        m.email_resend_confirmation()
    assert err.value.args[1] == 403
    assert "awaiting confirmation" in str(err.value)


def test_only_the_sign_up_app_resends_and_a_new_address_can_be_given(mail_api, smtp, http):  # noqa: F811
    app = new_app(mail_api)
    m, name, address = register(mail_api, app)
    other_app = new_app(mail_api)
    other = password_token(http, other_app, address)
    assert other.status_code == 200  # an unconfirmed account can sign in...
    r = http.post("/api/v1/emails/confirmations", headers=bearer(other.json()["access_token"]))
    assert r.status_code == 403, r.text
    assert "originally signed-up with" in r.json()["error"]
    taken_by = register(mail_api, app, "t")[2]
    r = http.post(
        "/api/v1/emails/confirmations", headers=bearer(m.access_token), data={"email": taken_by}
    )
    assert r.status_code == 422 and r.json()["details"]["email"][0]["error"] == "ERR_TAKEN"
    fixed = f"fixed-{name}@example.com"
    r = http.post(
        "/api/v1/emails/confirmations", headers=bearer(m.access_token), data={"email": fixed}
    )
    assert r.status_code == 200, r.text
    confirm(http, smtp, fixed)
    assert http.get("/api/v1/emails/check_confirmation", headers=bearer(m.access_token)).json()
    assert password_token(http, app, fixed).status_code == 200
    assert password_token(http, app, address).status_code == 400  # the old address is gone


def _answer(page: str, address: str) -> str:
    return page.replace(address, "ADDRESS")


def test_forgotten_password_mails_a_single_use_link_that_signs_out_everything(
    mail_api,
    smtp,  # noqa: F811
    http,
):
    app = new_app(mail_api)
    m, name, address = register(mail_api, app)
    confirm(http, smtp, address)
    other = password_token(http, app, name).json()["access_token"]
    form = http.get("/auth/password/new")
    assert form.status_code == 200 and "action=/auth/password" in form.text
    sign_in = http.get(
        "/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": app[0],
            "redirect_uri": "urn:ietf:wg:oauth:2.0:oob",
        },
    )
    assert "href=/auth/password/new" in sign_in.text
    known = http.post("/auth/password", data={"email": address})
    nobody = f"nobody-{name}@example.com"
    unknown = http.post("/auth/password", data={"email": nobody})
    assert known.status_code == unknown.status_code == 200
    assert _answer(known.text, address) == _answer(unknown.text, nobody)  # nothing told
    msg = smtp.wait_for(address, 2)
    assert msg["Subject"] == "Reset your password on Mail Poll"
    link = link_in(msg)
    assert link.startswith(mail_api.url + "/auth/password/edit?reset_password_token=")
    edit = http.get(link)
    assert edit.status_code == 200 and "New password again" in edit.text
    raw = token_of(link)
    # refused, nothing written: passwords that differ, one too short, a made-up link
    r = http.post(
        "/auth/password/edit",
        data={
            "reset_password_token": raw,
            "password": "new secret one",
            "password_confirmation": "x",
        },
    )
    assert r.status_code == 422 and "differ" in r.text
    r = http.post(
        "/auth/password/edit",
        data={"reset_password_token": raw, "password": "short", "password_confirmation": "short"},
    )
    assert r.status_code == 422 and "shorter than" in r.text
    r = http.post(
        "/auth/password/edit",
        data={"reset_password_token": "1.nope", "password": "new secret one"},
    )
    assert r.status_code == 400
    assert http.get("/api/v1/accounts/verify_credentials", headers=bearer(other)).status_code == 200
    assert password_token(http, app, name).status_code == 200
    done = http.post(
        "/auth/password/edit",
        data={
            "reset_password_token": raw,
            "password": "new secret one",
            "password_confirmation": "new secret one",
        },
    )
    assert done.status_code == 200 and "Password changed" in done.text
    for token in (other, m.access_token):  # every session signed out
        assert (
            http.get("/api/v1/accounts/verify_credentials", headers=bearer(token)).status_code
            == 401
        )
    assert password_token(http, app, name).status_code == 400
    assert password_token(http, app, name, "new secret one").status_code == 200
    again = http.post(
        "/auth/password/edit",
        data={"reset_password_token": raw, "password": "newer secret two"},
    )
    assert again.status_code == 400  # the link worked once
    assert http.get(link).status_code == 400
    assert smtp.to(nobody) == []


def test_requests_for_one_address_are_limited(mail_api, smtp, http):  # noqa: F811
    address = f"limited-{uuid.uuid4().hex[:8]}@example.com"
    answers = [http.post("/auth/password", data={"email": address}).status_code for _ in range(5)]
    assert answers == [200, 200, 200, 200, 429]


def test_changing_the_address_takes_effect_when_the_new_one_confirms(mail_api, smtp, http):  # noqa: F811
    app = new_app(mail_api)
    m, name, address = register(mail_api, app)
    confirm(http, smtp, address)
    taken = register(mail_api, app, "t")[2]
    token = bearer(m.access_token)
    new = f"new-{name}@example.com"
    wrong = http.post(
        "/api/v1/redpoll/email", headers=token, data={"current_password": "nope nope", "email": new}
    )
    assert wrong.status_code == 422 and "current_password" in wrong.json()["details"]
    r = http.post(
        "/api/v1/redpoll/email", headers=token, data={"current_password": PASSWORD, "email": taken}
    )
    assert r.status_code == 422 and r.json()["details"]["email"][0]["error"] == "ERR_TAKEN"
    r = http.post(
        "/api/v1/redpoll/email", headers=token, data={"current_password": PASSWORD, "email": "x"}
    )
    assert r.status_code == 422
    state = http.get("/api/v1/redpoll/email", headers=token).json()
    assert state["email"] == address and state["unconfirmed_email"] is None  # nothing written
    assert smtp.to(new) == [] and len(smtp.to(address)) == 1
    r = http.post(
        "/api/v1/redpoll/email", headers=token, data={"current_password": PASSWORD, "email": new}
    )
    assert r.status_code == 200, r.text
    assert r.json() == {
        "email": address,
        "unconfirmed_email": new,
        "confirmed": True,
        "enabled": True,
    }
    told = smtp.wait_for(address, 2)
    assert told["Subject"] == "Your e-mail address on Mail Poll is being changed"
    assert new in text_of(told) and "token=" not in text_of(told)
    mail = smtp.wait_for(new)
    assert mail["Subject"] == "Confirm your new e-mail address for Mail Poll"
    assert password_token(http, app, new).status_code == 400  # not yet
    assert password_token(http, app, address).status_code == 200
    page = http.get(link_in(mail))
    assert page.status_code == 200 and new in page.text
    state = http.get("/api/v1/redpoll/email", headers=token).json()
    assert state == {"email": new, "unconfirmed_email": None, "confirmed": True, "enabled": True}
    assert password_token(http, app, new).status_code == 200
    assert password_token(http, app, address).status_code == 400
    assert http.get(link_in(mail)).status_code == 400  # once
    # the old address is free again
    reuse = Mastodon(client_id=app[0], client_secret=app[1], api_base_url=mail_api.url)
    reuse.create_account(
        "r" + uuid.uuid4().hex[:8], PASSWORD, address, agreement=True, scopes=["read", "write"]
    )


def test_the_start_up_log_says_e_mail_is_on(mail_api):
    assert re.search(r"e-mail on: SMTP 127\.0\.0\.1:\d+ \(none\)", mail_api.logs())


def test_smtp_settings_are_checked_together():
    good = {
        "REDPOLL_SMTP_HOST": "smtp.example",
        "REDPOLL_SMTP_FROM": "Social <n@social.example>",
        "REDPOLL_PUBLIC_URL": "https://social.example",
    }
    s = Settings.from_env(good)
    assert (s.smtp_port, s.smtp_security, s.mail) == (587, "starttls", True)
    assert Settings.from_env(good | {"REDPOLL_SMTP_SECURITY": "tls"}).smtp_port == 465
    assert "secret" not in repr(
        Settings.from_env(good | {"REDPOLL_SMTP_USERNAME": "u", "REDPOLL_SMTP_PASSWORD": "secret"})
    )
    assert not Settings.from_env({}).mail
    for env, says in (
        ({"REDPOLL_SMTP_PORT": "25"}, "REDPOLL_SMTP_HOST is not"),
        ({k: v for k, v in good.items() if k != "REDPOLL_SMTP_FROM"}, "REDPOLL_SMTP_FROM must"),
        ({k: v for k, v in good.items() if k != "REDPOLL_PUBLIC_URL"}, "REDPOLL_PUBLIC_URL must"),
        (good | {"REDPOLL_SMTP_SECURITY": "ssl"}, "none, starttls, tls"),
        (good | {"REDPOLL_SMTP_PORT": "0"}, "REDPOLL_SMTP_PORT"),
        (good | {"REDPOLL_SMTP_USERNAME": "u"}, "go together"),
        (good | {"REDPOLL_SMTP_FROM": "nobody"}, "is not an address"),
        (good | {"REDPOLL_RATE_MAIL_IP": "lots"}, "REDPOLL_RATE_MAIL_IP"),
    ):
        with pytest.raises(ConfigError, match=says):
            Settings.from_env(env)


def test_serve_stops_at_start_on_a_half_set_smtp_in_one_line(server, tmp_path):
    url, cluster, _ = server
    env = own_env(
        tmp_path, REDIS_URL=url, REDPOLL_CLUSTER="1" if cluster else "0", REDPOLL_SMTP_HOST="x"
    )
    done = redpoll(["serve", "--port", "0"], env, timeout=60)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "REDPOLL_SMTP_FROM must be set with REDPOLL_SMTP_HOST" in lines[-1], done.stderr


def test_with_e_mail_off_the_server_runs_as_before(server, smtp):  # noqa: F811
    with ServeProcess(serve_env(server)) as srv, httpx.Client(base_url=srv.url) as http:
        assert "e-mail off (REDPOLL_SMTP_HOST is not set)" in srv.logs()
        app = new_app(srv)
        m, name, address = register(srv, app)
        assert m.account_verify_credentials()["username"] == name  # confirmed
        assert http.get("/api/v1/emails/check_confirmation", headers=bearer(m.access_token)).json()
        r = http.post("/api/v1/emails/confirmations", headers=bearer(m.access_token))
        assert r.status_code == 403
        sign_in = http.get(
            "/oauth/authorize",
            params={
                "response_type": "code",
                "client_id": app[0],
                "redirect_uri": "urn:ietf:wg:oauth:2.0:oob",
            },
        )
        assert "Forgot your password" not in sign_in.text
        assert "sends no e-mail" in http.get("/auth/password/new").text
        assert "sends no e-mail" in http.post("/auth/password", data={"email": address}).text
        r = http.post(
            "/api/v1/redpoll/email",
            headers=bearer(m.access_token),
            data={"current_password": PASSWORD, "email": f"new-{address}"},
        )
        assert r.status_code == 422
        assert (
            http.get("/api/v1/redpoll/email", headers=bearer(m.access_token)).json()["enabled"]
            is False
        )
    assert smtp.to(address) == []


def test_an_approved_sign_up_is_mailed_and_then_signs_in(mail_api, smtp, http, server):  # noqa: F811
    url, cluster, _ = server
    env = dict(os.environ, REDIS_URL=url, REDPOLL_CLUSTER="1" if cluster else "0")

    def cli(*args: str) -> None:
        done = redpoll(["admin", *args], env)
        assert done.returncode == 0, done.stderr[-2000:]

    scopes = ["read", "write", "admin:read", "admin:write"]
    app = Mastodon.create_app("mail-approval", api_base_url=mail_api.url, scopes=scopes)
    mod_name = f"mod{uuid.uuid4().hex[:8]}"
    mod = Mastodon(client_id=app[0], client_secret=app[1], api_base_url=mail_api.url)
    mod.create_account(mod_name, PASSWORD, f"{mod_name}@example.com", agreement=True, scopes=scopes)
    confirm(http, smtp, f"{mod_name}@example.com")
    cli("role", mod_name, "moderator")
    cli("registrations", "approval")
    try:
        m, name, address = register(mail_api, app, "wait")
        # unconfirmed and waiting: the address is asked first, as Mastodon's require_user!
        me = http.get("/api/v1/accounts/verify_credentials", headers=bearer(m.access_token))
        assert me.json() == {"error": "Your login is missing a confirmed e-mail address"}
        confirm(http, smtp, address)  # the address is confirmed while the account waits
        me = http.get("/api/v1/accounts/verify_credentials", headers=bearer(m.access_token))
        assert (me.status_code, me.json()) == (
            403,
            {"error": "Your login is currently pending approval"},
        )
        [waiting] = [a for a in mod.admin_accounts_v2(status="pending") if a.username == name]
        assert waiting.confirmed is True and waiting.approved is False
        mod.admin_account_approve(waiting.id)
        told = smtp.wait_for(address, 2)
        assert told["Subject"] == "Your account on Mail Poll was approved"
        assert mail_api.url in text_of(told)
        me = http.get("/api/v1/accounts/verify_credentials", headers=bearer(m.access_token))
        assert me.status_code == 200 and me.json()["username"] == name
    finally:
        cli("registrations", "open")


def test_a_malformed_link_gets_the_page_not_json(mail_api, http):
    """The mails' pages answer a token no link could carry (a NUL) with
    their own HTML page, as any other bad link."""
    for method, path, data in (
        ("GET", "/auth/password/edit?reset_password_token=a%00b", None),
        ("GET", "/auth/confirmation?confirmation_token=a%00b", None),
        ("POST", "/auth/password/edit", {"reset_password_token": "a\x00b", "password": "x" * 12}),
    ):
        r = http.request(method, path, data=data)
        assert r.status_code == 400, (path, r.text)
        assert r.headers["content-type"].startswith("text/html"), (path, r.headers)
        assert "does not work" in r.text
