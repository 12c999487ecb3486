"""Who may sign up, through Mastodon.py (and plain HTTP where Mastodon.py
has no argument for it) against a real ``redpoll serve``: the registration
modes set by ``redpoll admin registrations`` and shown by the instance
entities, pending accounts approved or rejected through the admin API, the
moderators' admin.sign_up notification, invites (made, used up, expired,
revoked, counted atomically), every invalid field of a sign-up at once,
and the rules a report names; on one server and on the cluster. Each
refusal is checked to have written nothing."""

from __future__ import annotations

import asyncio
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from mastodon import Mastodon, MastodonAPIError, MastodonIllegalArgumentError, MastodonNotFoundError
from support.cli import admin, ok

pytestmark = [pytest.mark.topology, pytest.mark.timeout(300)]

PASSWORD = "correct horse battery"
SCOPES = ["read", "write", "follow", "admin:read", "admin:write"]
PENDING = "Your login is currently pending approval"


def name(prefix: str = "u") -> str:
    return prefix + uuid.uuid4().hex[:10]


class App:
    """One OAuth app and its app token (what a client signs up with)."""

    def __init__(self, base: str):
        self.base = base
        self.id, self.secret = Mastodon.create_app("signup-test", api_base_url=base, scopes=SCOPES)
        r = httpx.post(
            base + "/oauth/token",
            data={
                "grant_type": "client_credentials",
                "client_id": self.id,
                "client_secret": self.secret,
                "scope": " ".join(SCOPES),
            },
            timeout=30,
        )
        self.token = r.json()["access_token"]

    def mastodon(self, token: str | None = None) -> Mastodon:
        return Mastodon(
            client_id=self.id, client_secret=self.secret, access_token=token, api_base_url=self.base
        )

    def sign_up(self, login: str, **extra) -> httpx.Response:
        form = {
            "username": login,
            "email": f"{login}@example.com",
            "password": PASSWORD,
            "agreement": "true",
            "locale": "en",
            **extra,
        }
        return httpx.post(
            self.base + "/api/v1/accounts",
            data={k: v for k, v in form.items() if v is not None},
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=30,
        )

    def password_grant(self, login: str, scope: str = "read write") -> httpx.Response:
        return httpx.post(
            self.base + "/oauth/token",
            data={
                "grant_type": "password",
                "client_id": self.id,
                "client_secret": self.secret,
                "username": login,
                "password": PASSWORD,
                "scope": scope,
            },
            timeout=30,
        )


def get(base: str, path: str, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(base + path, headers=headers, timeout=30)


def member(app: App, login: str | None = None) -> tuple[Mastodon, str]:
    login = login or name()
    m = app.mastodon()
    m.create_account(login, PASSWORD, f"{login}@example.com", agreement=True, scopes=SCOPES)
    return m, login


async def set_mode(srv, mode: str, *more: str) -> str:
    return ok(await asyncio.to_thread(admin, srv, "registrations", mode, *more))


@pytest.fixture
async def app(srv, rp):
    """An app on a server whose registrations are open again after the test."""
    made = await asyncio.to_thread(App, srv.base)
    try:
        yield made
    finally:
        await rp.instance.set_registrations(None, "open", "", False)


async def free_login(rp, login: str) -> bool:
    return not await rp.store.exists(f"login:{{{login.lower()}}}")


async def test_instance_entities_say_the_mode_set_from_the_command_line(srv, rp, app):
    v1 = (await asyncio.to_thread(get, srv.base, "/api/v1/instance")).json()
    assert (v1["registrations"], v1["approval_required"], v1["invites_enabled"]) == (
        True,
        False,
        True,
    )
    v2 = (await asyncio.to_thread(get, srv.base, "/api/v2/instance")).json()["registrations"]
    assert v2 == {
        "enabled": True,
        "approval_required": False,
        "reason_required": False,
        "message": None,
        "min_age": None,
        "url": None,
    }
    said = await set_mode(srv, "closed", "--message", "Back soon <b>friends</b>")
    assert said.startswith("closed")
    m = app.mastodon()
    shown = await asyncio.to_thread(m.instance_v2)
    assert shown.registrations.enabled is False and shown.registrations.approval_required is False
    assert "Back soon &lt;b&gt;friends&lt;/b&gt;" in shown.registrations.message  # escaped HTML
    v1 = (await asyncio.to_thread(get, srv.base, "/api/v1/instance")).json()
    assert v1["registrations"] is False and v1["approval_required"] is False
    assert "approval, reason required" in await set_mode(srv, "approval", "--reason-required")
    shown = await asyncio.to_thread(m.instance_v2)
    assert shown.registrations.enabled is True and shown.registrations.approval_required is True
    assert shown.registrations.reason_required is True and shown.registrations.message is None
    v1 = (await asyncio.to_thread(get, srv.base, "/api/v1/instance")).json()
    assert v1["registrations"] is True and v1["approval_required"] is True
    # the operator's changes are in the audit log, as other admin actions
    log = ok(await asyncio.to_thread(admin, srv, "audit-log", "--json"))
    assert log.count('"target_id": "registrations_mode"') == 2
    assert (await rp.instance.registrations()).mode == "approval"
    # a member's role may not change it (manage_settings)
    with pytest.raises(Exception) as exc:
        await rp.instance.set_registrations(1, "open")
    assert "not allowed" in str(exc.value)
    bad = await asyncio.to_thread(admin, srv, "registrations", "sometimes")
    assert bad.returncode != 0


async def test_closed_registrations_refuse_sign_up_as_mastodon_and_write_nothing(srv, rp, app):
    await set_mode(srv, "closed")
    login = name()
    r = await asyncio.to_thread(app.sign_up, login)
    assert (r.status_code, r.json()) == (403, {"error": "This action is not allowed"})
    with pytest.raises(MastodonIllegalArgumentError, match="This action is not allowed"):
        await asyncio.to_thread(member, app, name())
    assert await free_login(rp, login)
    assert not await rp.store.exists(f"email:{{{login}@example.com}}")
    # an invite code that is no invite does not open them
    r = await asyncio.to_thread(app.sign_up, login, invite_code="nosuchcode")
    assert r.status_code == 403 and await free_login(rp, login)
    # the operator still creates accounts (a local address too, as tootctl)
    out = ok(
        await asyncio.to_thread(
            admin, srv, "create-user", "admin", "admin@localhost", "--password", PASSWORD
        )
    )
    assert out.startswith("@admin created")
    await set_mode(srv, "open")
    assert (await asyncio.to_thread(app.sign_up, login)).status_code == 200


async def test_every_invalid_field_is_reported_at_once_and_nothing_is_written(srv, rp, app):
    taken = name()
    assert (await asyncio.to_thread(app.sign_up, taken)).status_code == 200
    login = name()
    r = await asyncio.to_thread(
        app.sign_up,
        "bad name!",
        email="nope",
        password="short",
        agreement="false",
    )
    assert r.status_code == 422
    body = r.json()
    details = body["details"]
    assert {f: [e["error"] for e in found] for f, found in details.items()} == {
        "username": ["ERR_INVALID"],
        "email": ["ERR_INVALID"],
        "password": ["ERR_TOO_SHORT"],
        "agreement": ["ERR_ACCEPTED"],
    }
    assert details["agreement"][0]["description"] == "must be accepted"
    assert body["error"].startswith("Validation failed: Username must contain only letters")
    # taken, reserved, too long and blank, each with Mastodon's code
    cases = [
        ({"username": taken.upper()}, "username", "ERR_TAKEN"),
        ({"email": f"{taken}@example.com"}, "email", "ERR_TAKEN"),
        ({"username": "Admin"}, "username", "ERR_RESERVED"),
        ({"username": "x" * 31}, "username", "ERR_TOO_LONG"),
        ({"password": ""}, "password", "ERR_BLANK"),
        ({"email": "admin@localhost"}, "email", "ERR_INVALID"),
    ]
    for extra, field, code in cases:
        r = await asyncio.to_thread(app.sign_up, login, **extra)
        assert r.status_code == 422, (extra, r.text)
        assert [e["error"] for e in r.json()["details"][field]] == [code], (extra, r.json())
    # Mastodon.py's detailed error carries the same
    m = app.mastodon()
    token, err = await asyncio.to_thread(
        m.create_account,
        taken,
        PASSWORD,
        f"{login}@example.com",
        agreement=True,
        scopes=SCOPES,
        return_detailed_error=True,
    )
    assert token is None and err.details.username[0].error == "ERR_TAKEN"
    # none of it wrote anything: the login and the e-mail are free
    assert await free_login(rp, login)
    assert not await rp.store.exists(f"email:{{{login}@example.com}}")
    assert (await asyncio.to_thread(app.sign_up, login)).status_code == 200
    # a user's token may not register anyone (Mastodon: client credentials only)
    user_token = (await asyncio.to_thread(app.password_grant, login)).json()["access_token"]
    r = await asyncio.to_thread(
        lambda: httpx.post(
            srv.base + "/api/v1/accounts",
            headers={"Authorization": f"Bearer {user_token}"},
            data={
                "username": name(),
                "email": f"{name()}@example.com",
                "password": PASSWORD,
                "agreement": "true",
            },
            timeout=30,
        )
    )
    assert (r.status_code, r.json()) == (
        403,
        {"error": "This method requires an client credentials authentication"},
    )


async def test_approval_mode_keeps_accounts_pending_until_a_moderator_decides(srv, rp, app):
    mod, mod_login = await asyncio.to_thread(member, app)
    await rp.admin.set_role(None, mod_login, "moderator")
    plain, _ = await asyncio.to_thread(member, app)
    await set_mode(srv, "approval", "--reason-required")
    login = name()
    # the reason is required: refused without one, nothing written
    r = await asyncio.to_thread(app.sign_up, login)
    assert r.status_code == 422 and r.json()["details"]["reason"][0]["error"] == "ERR_BLANK"
    assert await free_login(rp, login)
    r = await asyncio.to_thread(app.sign_up, login, reason="I love birds")
    assert r.status_code == 200
    token = r.json()["access_token"]
    # the account's token and its password are refused with Mastodon's message
    r = await asyncio.to_thread(get, srv.base, "/api/v1/accounts/verify_credentials", token)
    assert (r.status_code, r.json()) == (403, {"error": PENDING})
    r = await asyncio.to_thread(app.password_grant, login)
    assert (r.status_code, r.json()) == (403, {"error": PENDING})
    # the OAuth sign-in page says so too
    r = await asyncio.to_thread(
        lambda: httpx.post(
            srv.base + "/oauth/authorize",
            data={
                "response_type": "code",
                "client_id": app.id,
                "redirect_uri": "urn:ietf:wg:oauth:2.0:oob",
                "scope": "read",
                "username": login,
                "password": PASSWORD,
            },
            timeout=30,
        )
    )
    assert r.status_code == 403 and PENDING in r.text
    # nobody sees it yet (Mastodon: 404 until approved)
    r = await asyncio.to_thread(get, srv.base, f"/api/v1/accounts/lookup?acct={login}")
    assert r.status_code == 404
    # moderators are told (admin.sign_up), members are not
    mod_api = app.mastodon(mod.access_token)
    found = None
    deadline = time.monotonic() + 60
    while found is None and time.monotonic() < deadline:
        notes = await asyncio.to_thread(mod_api.notifications, types=["admin.sign_up"])
        found = next((n for n in notes if n.account.username == login), None)
    assert found is not None and found.type == "admin.sign_up"
    grouped = await asyncio.to_thread(mod_api.grouped_notifications, types=["admin.sign_up"])
    assert any(g.type == "admin.sign_up" for g in grouped.notification_groups)
    assert not await asyncio.to_thread(
        app.mastodon(plain.access_token).notifications, types=["admin.sign_up"]
    )
    # the pending list (v1 and v2) shows it, with its reason
    pending = await asyncio.to_thread(mod_api.admin_accounts_v2, status="pending")
    [shown] = [a for a in pending if a.username == login]
    assert shown.approved is False and shown.invite_request == "I love birds"
    r = await asyncio.to_thread(get, srv.base, f"/api/v1/accounts/{shown.id}")
    assert r.status_code == 404
    v1 = await asyncio.to_thread(mod_api.admin_accounts, status="pending")
    assert login in {a["username"] for a in v1}
    active = await asyncio.to_thread(
        mod_api.admin_accounts_v2, status="pending", username=mod_login
    )
    assert active == []
    # approved: it signs in, and the token it got at sign-up works
    done = await asyncio.to_thread(mod_api.admin_account_approve, shown.id)
    assert done.approved is True
    r = await asyncio.to_thread(get, srv.base, "/api/v1/accounts/verify_credentials", token)
    assert r.status_code == 200 and r.json()["username"] == login
    assert (await asyncio.to_thread(app.password_grant, login)).status_code == 200
    r = await asyncio.to_thread(get, srv.base, f"/api/v1/accounts/{shown.id}")
    assert r.status_code == 200 and r.json()["username"] == login
    assert shown.id not in {
        a.id for a in await asyncio.to_thread(mod_api.admin_accounts_v2, status="pending")
    }
    # approving again is refused, as Mastodon refuses an account not pending
    with pytest.raises(MastodonAPIError):
        await asyncio.to_thread(mod_api.admin_account_approve, shown.id)
    # a member may not approve
    other = name()
    assert (await asyncio.to_thread(app.sign_up, other, reason="me too")).status_code == 200
    [waiting] = [
        a
        for a in await asyncio.to_thread(mod_api.admin_accounts_v2, status="pending")
        if a.username == other
    ]
    with pytest.raises(MastodonAPIError):
        await asyncio.to_thread(app.mastodon(plain.access_token).admin_account_approve, waiting.id)
    # rejected: the account goes, its login and e-mail free once purged
    await asyncio.to_thread(mod_api.admin_account_reject, waiting.id)
    await rp.drain()
    deadline = time.monotonic() + 120
    while not await free_login(rp, other):
        assert time.monotonic() < deadline, "the rejected account was not removed"
        await asyncio.sleep(0.2)
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(mod_api.admin_account, waiting.id)
    log = ok(await asyncio.to_thread(admin, srv, "audit-log", "--json"))
    assert '"action": "approve"' in log and '"action": "reject"' in log


def _invite(base: str, token: str, **form) -> httpx.Response:
    return httpx.post(
        base + "/api/v1/redpoll/invites",
        data=form,
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


async def test_invites_let_one_in_while_closed_and_are_used_up_atomically(srv, rp, app):
    inviter, inviter_login = await asyncio.to_thread(member, app)
    made = (
        await asyncio.to_thread(
            _invite, srv.base, inviter.access_token, max_uses="1", expires_in="3600"
        )
    ).json()
    assert made["valid"] is True and made["uses"] == 0 and made["max_uses"] == 1
    assert made["url"] == f"{srv.base}/invite/{made['code']}"
    code = made["code"]
    await set_mode(srv, "closed")
    # the public check the invite page asks
    r = await asyncio.to_thread(get, srv.base, f"/api/v1/redpoll/invites/{code}")
    assert r.json()["valid"] is True
    assert (
        await asyncio.to_thread(get, srv.base, "/api/v1/redpoll/invites/nope")
    ).status_code == 404
    login = name()
    r = await asyncio.to_thread(app.sign_up, login, invite_code=code)
    assert r.status_code == 200, r.text
    # invited: approved at once, even in approval mode, and its inviter known
    token = r.json()["access_token"]
    me = await asyncio.to_thread(get, srv.base, "/api/v1/accounts/verify_credentials", token)
    assert me.status_code == 200
    owner_login = name()
    await asyncio.to_thread(
        admin, srv, "create-user", owner_login, f"{owner_login}@example.com", "--password", PASSWORD
    )
    ok(await asyncio.to_thread(admin, srv, "role", owner_login, "owner"))
    owner = app.mastodon(
        (await asyncio.to_thread(app.password_grant, owner_login, " ".join(SCOPES))).json()[
            "access_token"
        ]
    )
    shown = await asyncio.to_thread(owner.admin_account, me.json()["id"])
    assert shown.approved is True
    invited = await asyncio.to_thread(
        owner.admin_accounts_v2, invited_by=(await asyncio.to_thread(inviter.me)).id
    )
    assert [a.username for a in invited] == [login]
    # used up: refused with a clear error, nothing written
    again = name()
    r = await asyncio.to_thread(app.sign_up, again, invite_code=code)
    assert r.status_code == 422
    assert r.json()["details"]["invite_code"] == [
        {"error": "ERR_INVALID", "description": "This invite has been used up"}
    ]
    assert await free_login(rp, again)
    listed = (
        await asyncio.to_thread(get, srv.base, "/api/v1/redpoll/invites", inviter.access_token)
    ).json()
    assert [(i["code"], i["uses"], i["valid"]) for i in listed] == [(code, 1, False)]
    # revoked: expired now, refused; only its maker (or a role that manages invites) revokes
    second = (await asyncio.to_thread(_invite, srv.base, inviter.access_token)).json()
    assert second["max_uses"] is None and second["expires_at"] is None
    await set_mode(srv, "open")
    someone, _ = await asyncio.to_thread(member, app)
    r = await asyncio.to_thread(
        lambda: httpx.delete(
            srv.base + f"/api/v1/redpoll/invites/{second['code']}",
            headers={"Authorization": f"Bearer {someone.access_token}"},
            timeout=30,
        )
    )
    assert r.status_code == 403
    await set_mode(srv, "approval")
    r = await asyncio.to_thread(
        lambda: httpx.delete(
            srv.base + f"/api/v1/redpoll/invites/{second['code']}",
            headers={"Authorization": f"Bearer {inviter.access_token}"},
            timeout=30,
        )
    )
    assert r.status_code == 200 and r.json()["valid"] is False
    late = name()
    r = await asyncio.to_thread(app.sign_up, late, invite_code=second["code"], reason="x")
    assert r.status_code == 422
    assert r.json()["details"]["invite_code"][0]["description"] == "This invite has expired"
    assert await free_login(rp, late)
    # bad expiry or uses: 422, nothing made
    before = len(listed) + 1
    for form in ({"max_uses": "0"}, {"expires_in": "-5"}, {"max_uses": "many"}):
        assert (
            await asyncio.to_thread(_invite, srv.base, inviter.access_token, **form)
        ).status_code == 422
    now = (
        await asyncio.to_thread(get, srv.base, "/api/v1/redpoll/invites", inviter.access_token)
    ).json()
    assert len(now) == before


async def test_an_invites_last_uses_go_to_exactly_as_many_sign_ups(srv, rp, app):
    inviter, _ = await asyncio.to_thread(member, app)
    code = (await asyncio.to_thread(_invite, srv.base, inviter.access_token, max_uses="2")).json()[
        "code"
    ]
    await set_mode(srv, "closed")
    logins = [name() for _ in range(8)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda n: app.sign_up(n, invite_code=code).status_code, logins))
    assert sorted(answers) == [200, 200] + [422] * 6
    made = [n for n in logins if not await free_login(rp, n)]
    assert len(made) == 2
    listed = (
        await asyncio.to_thread(get, srv.base, "/api/v1/redpoll/invites", inviter.access_token)
    ).json()
    assert listed[0]["uses"] == 2


async def test_the_command_line_makes_lists_and_revokes_invites(srv, rp, app):
    _, login = await asyncio.to_thread(member, app)
    code = ok(
        await asyncio.to_thread(
            admin, srv, "invite-create", login, "--max-uses", "3", "--expires-in", "600"
        )
    ).strip()
    assert len(code) == 8
    listed = ok(await asyncio.to_thread(admin, srv, "invites"))
    assert code in listed and "valid, 0/3 uses" in listed
    out = ok(await asyncio.to_thread(admin, srv, "invite-revoke", code))
    assert "expired" in out
    await set_mode(srv, "closed")
    assert (await asyncio.to_thread(app.sign_up, name(), invite_code=code)).status_code == 422


async def test_a_report_names_the_rules_it_breaks(srv, rp, app):
    first = ok(await asyncio.to_thread(admin, srv, "rules-add", "Be kind")).split("#")[1].strip()
    second = ok(await asyncio.to_thread(admin, srv, "rules-add", "No spam")).split("#")[1].strip()
    reporter, _ = await asyncio.to_thread(member, app)
    target, _ = await asyncio.to_thread(member, app)
    target_id = (await asyncio.to_thread(target.me)).id
    made = await asyncio.to_thread(
        reporter.report, target_id, comment="rude", category="violation", rule_ids=[first, second]
    )
    assert made.category == "violation" and sorted(made.rule_ids) == sorted([first, second])
    # rules given make it a violation report, as Mastodon's ReportService
    made = await asyncio.to_thread(reporter.report, target_id, category="other", rule_ids=[first])
    assert made.category == "violation" and made.rule_ids == [first]
    with pytest.raises(MastodonAPIError):
        await asyncio.to_thread(reporter.report, target_id, category="violation", rule_ids=["999"])
    # the moderators see them
    owner_login = name()
    await asyncio.to_thread(
        admin, srv, "create-user", owner_login, f"{owner_login}@example.com", "--password", PASSWORD
    )
    ok(await asyncio.to_thread(admin, srv, "role", owner_login, "owner"))
    owner = app.mastodon(
        (await asyncio.to_thread(app.password_grant, owner_login, " ".join(SCOPES))).json()[
            "access_token"
        ]
    )
    shown = await asyncio.to_thread(owner.admin_report, made.id)
    assert [r.id for r in shown.rules] == [first]
