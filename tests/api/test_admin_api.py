"""Mastodon's admin API through Mastodon.py against a real ``redpoll
serve``: the admin scopes, the roles (an owner, an admin, a moderator and a
member, each allowed exactly what its role allows), accounts, reports,
domain blocks and the audit log; on one server and on the cluster."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from dataclasses import dataclass

import httpx
import pytest
from mastodon import (
    Mastodon,
    MastodonAPIError,
    MastodonIllegalArgumentError,
    MastodonNotFoundError,
)
from support.cli import admin, ok  # noqa: F401

from redpoll.federation import domains, remote, signing

pytestmark = [pytest.mark.topology, pytest.mark.timeout(300)]

PASSWORD = "correct horse battery"
ALL_SCOPES = ["read", "write", "follow", "admin:read", "admin:write"]
NOT_ALLOWED = "This action is not allowed"


@dataclass
class Person:
    api: Mastodon
    login: str
    id: str


def _people(base: str, n: int, scopes=ALL_SCOPES) -> list[Person]:
    cid, secret = Mastodon.create_app("admin-test", api_base_url=base, scopes=scopes)
    out = []
    for _ in range(n):
        login = "u" + uuid.uuid4().hex[:10]
        m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
        m.create_account(login, PASSWORD, f"{login}@example.com", agreement=True, scopes=scopes)
        out.append(Person(m, login, str(m.me()["id"])))
    return out


@dataclass
class Cast:
    owner: Person
    admin: Person
    mod: Person
    member: Person
    target: Person


async def cast(srv, rp) -> Cast:
    owner, adm, mod, member, target = await asyncio.to_thread(_people, srv.base, 5)
    # the first owner from the command line, the others by the engine (as the operator)
    assert "Owner" in ok(await asyncio.to_thread(admin, srv, "role", owner.login, "owner"))
    await rp.admin.set_role(None, adm.login, "admin")
    await rp.admin.set_role(None, mod.login, "moderator")
    return Cast(owner, adm, mod, member, target)


def status_of(exc: pytest.ExceptionInfo) -> int:
    return exc.value.args[1]


def refused(call, *args, **kwargs) -> tuple[int, str]:
    with pytest.raises(MastodonAPIError) as exc:
        call(*args, **kwargs)
    return status_of(exc), str(exc.value)


def bearer(person: Person) -> dict:
    return {"Authorization": f"Bearer {person.api.access_token}"}


def raw(base: str, person: Person | Mastodon, method: str, path: str, **kw) -> tuple[int, dict]:
    """One request with the person's token: its status and JSON body (the
    error's text, which Mastodon.py does not keep for every route)."""
    token = person.api.access_token if isinstance(person, Person) else person.access_token
    r = httpx.request(
        method, base + path, headers={"Authorization": f"Bearer {token}"}, timeout=30, **kw
    )
    return r.status_code, r.json()


def token_with(base: str, login: str, scopes: list[str]) -> Mastodon:
    cid, secret = Mastodon.create_app("scoped", api_base_url=base, scopes=scopes)
    m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
    m.log_in(login, PASSWORD, scopes=scopes, allow_http=True)
    return m


async def test_admin_scopes_are_known_granted_and_enforced(srv, rp):
    c = await cast(srv, rp)
    # an app may ask for the sub-scopes alone; a token with one reads that resource only
    narrow = await asyncio.to_thread(token_with, srv.base, c.owner.login, ["admin:read:accounts"])
    listed = await asyncio.to_thread(narrow.admin_accounts_v2)
    assert {c.owner.id, c.member.id} <= {a["id"] for a in listed}
    code, text = await asyncio.to_thread(refused, narrow.admin_reports)
    assert code == 403
    assert await asyncio.to_thread(raw, srv.base, narrow, "GET", "/api/v1/admin/reports") == (
        403,
        {"error": "This action is outside the authorized scopes"},
    )
    code, _ = await asyncio.to_thread(refused, narrow.admin_account_moderate, c.member.id)
    assert code == 403  # admin:read:accounts does not write
    # read and write grant nothing of the admin API, even to the owner
    plain = await asyncio.to_thread(token_with, srv.base, c.owner.login, ["read", "write"])
    code, text = await asyncio.to_thread(refused, plain.admin_accounts_v2)
    assert code == 403
    # admin:write covers every write sub-scope
    writer = await asyncio.to_thread(token_with, srv.base, c.owner.login, ["admin:write"])
    block = await asyncio.to_thread(writer.admin_create_domain_block, "scoped.example")
    assert block["domain"] == "scoped.example"
    code, _ = await asyncio.to_thread(refused, writer.admin_domain_blocks)  # no read scope
    assert code == 403
    # unknown admin scopes are refused when the app is made
    with httpx.Client(base_url=srv.base, timeout=30) as http:
        r = http.post(
            "/api/v1/apps",
            data={
                "client_name": "x",
                "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
                "scopes": "admin:read:everything",
            },
        )
        assert r.status_code == 422
        meta = http.get("/.well-known/oauth-authorization-server")
        if meta.status_code == 200:
            assert {"admin:read", "admin:write:reports"} <= set(meta.json()["scopes_supported"])
    # a member's token with every admin scope is refused by its role
    code, text = await asyncio.to_thread(refused, c.member.api.admin_accounts_v2)
    assert code == 403
    for method, path in (
        ("GET", "/api/v2/admin/accounts"),
        ("GET", "/api/v1/admin/accounts"),
        ("POST", f"/api/v1/admin/accounts/{c.target.id}/action"),
        ("POST", f"/api/v1/admin/accounts/{c.target.id}/unsuspend"),
        ("DELETE", f"/api/v1/admin/accounts/{c.target.id}"),
        ("GET", "/api/v1/admin/domain_blocks"),
    ):
        got = await asyncio.to_thread(raw, srv.base, c.member, method, path)
        assert got == (403, {"error": NOT_ALLOWED}), (method, path)
    for call, args in (
        (c.member.api.admin_account, (c.target.id,)),
        (c.member.api.admin_account_moderate, (c.target.id, "suspend")),
        (c.member.api.admin_reports, ()),
        (c.member.api.admin_domain_blocks, ()),
        (c.member.api.admin_create_domain_block, ("member.example",)),
    ):
        code, text = await asyncio.to_thread(refused, call, *args)
        assert code == 403, call
    assert (await asyncio.to_thread(c.target.api.me))["suspended"] is not True
    assert [b.host for b in await rp.federation.domain_blocks()] == ["scoped.example"]


async def test_roles_show_on_accounts_and_decide_each_route(srv, rp):
    c = await cast(srv, rp)
    me = await asyncio.to_thread(c.mod.api.me)
    assert me["role"] == {
        "id": "1",
        "name": "Moderator",
        "color": "",
        "permissions": str(1 << 16 | 1 << 3 | 1 << 2 | 1 << 10 | 1 << 4 | 1 << 8),
        "highlighted": True,
    }
    # as Mastodon's RoleSerializer: the computed permissions (administrator: all)
    owner_role = (await asyncio.to_thread(c.owner.api.me))["role"]
    assert owner_role["permissions"] == str((1 << 20) - 1)
    assert (await asyncio.to_thread(c.member.api.me))["role"]["id"] == "-99"
    shown = await asyncio.to_thread(c.member.api.account, c.admin.id)
    assert shown["roles"] == [{"id": "2", "name": "Admin", "color": ""}]
    assert (await asyncio.to_thread(c.admin.api.account, c.member.id))["roles"] == []

    # a moderator manages users and reports, not federation nor deletion
    assert (await asyncio.to_thread(c.mod.api.admin_account, c.member.id))["id"] == c.member.id
    code, text = await asyncio.to_thread(refused, c.mod.api.admin_domain_blocks)
    assert code == 403
    # ... and acts only on accounts whose role is below its own
    code, text = await asyncio.to_thread(
        refused, c.mod.api.admin_account_moderate, c.admin.id, "silence"
    )
    assert code == 403
    code, _ = await asyncio.to_thread(refused, c.mod.api.admin_account_moderate, c.mod.id, "none")
    assert code == 403  # not even on itself (its own position)
    await asyncio.to_thread(c.mod.api.admin_account_moderate, c.member.id, "silence")
    assert (await asyncio.to_thread(c.mod.api.admin_account, c.member.id))["silenced"] is True
    await asyncio.to_thread(c.mod.api.admin_account_moderate, c.target.id, "suspend")
    code, text = await asyncio.to_thread(refused, c.mod.api.admin_account_delete, c.target.id)
    assert code == 403  # delete_user_data: admins only
    # an admin may block domains, not act on the owner
    code, _ = await asyncio.to_thread(
        refused, c.admin.api.admin_account_moderate, c.owner.id, "suspend"
    )
    assert code == 403
    await asyncio.to_thread(c.admin.api.admin_create_domain_block, "by-admin.example")
    # the owner may act on an admin
    await asyncio.to_thread(c.owner.api.admin_account_moderate, c.admin.id, "sensitive")
    assert (await asyncio.to_thread(c.owner.api.admin_account, c.admin.id))["sensitized"] is True
    # the CLI: an unknown role name is refused; none takes a role away
    done = await asyncio.to_thread(admin, srv, "role", c.mod.login, "janitor")
    assert done.returncode != 0
    ok(await asyncio.to_thread(admin, srv, "role", c.mod.login, "none"))
    code, text = await asyncio.to_thread(refused, c.mod.api.admin_accounts_v2)
    assert code == 403


async def test_admin_accounts_lists_filters_and_entity(srv, rp):
    c = await cast(srv, rp)
    owner = c.owner.api
    v2 = await asyncio.to_thread(owner.admin_accounts_v2)
    ids = [a["id"] for a in v2]
    assert ids == sorted(ids, key=int, reverse=True)  # newest first
    assert {c.owner.id, c.admin.id, c.mod.id, c.member.id, c.target.id} <= set(ids)
    _, body = await asyncio.to_thread(raw, srv.base, c.owner, "GET", "/api/v2/admin/accounts")
    one = next(a for a in body if a["id"] == c.member.id)  # (as sent: Mastodon.py adds keys)
    assert set(one) == {
        "id", "username", "domain", "created_at", "email", "ip", "ips", "role",
        "confirmed", "suspended", "silenced", "sensitized", "disabled", "approved",
        "locale", "invite_request", "account",
    }  # fmt: skip
    assert one["username"] == c.member.login and one["domain"] is None
    assert one["email"] == f"{c.member.login}@example.com"
    assert one["role"]["id"] == "-99" and one["account"]["id"] == c.member.id
    assert one["approved"] is True and one["suspended"] is False and one["ips"] == []

    staff = await asyncio.to_thread(owner.admin_accounts_v2, permissions="staff")
    assert {a["id"] for a in staff} == {c.owner.id, c.admin.id, c.mod.id}
    by_role = await asyncio.to_thread(owner.admin_accounts_v2, role_ids=["2"])
    assert [a["id"] for a in by_role] == [c.admin.id]
    by_name = await asyncio.to_thread(owner.admin_accounts_v2, username=c.member.login[:9])
    assert [a["id"] for a in by_name] == [c.member.id]
    by_mail = await asyncio.to_thread(owner.admin_accounts_v2, email=c.target.login)
    assert [a["id"] for a in by_mail] == [c.target.id]
    assert await asyncio.to_thread(owner.admin_accounts_v2, origin="remote") == []
    assert await asyncio.to_thread(owner.admin_accounts_v2, status="pending") == []

    await asyncio.to_thread(owner.admin_account_moderate, c.target.id, "suspend")
    await asyncio.to_thread(owner.admin_account_moderate, c.member.id, "silence")
    v1 = await asyncio.to_thread(owner.admin_accounts_v1)  # local, not suspended
    assert c.target.id not in {a["id"] for a in v1} and c.member.id in {a["id"] for a in v1}
    suspended = await asyncio.to_thread(owner.admin_accounts_v1, status="suspended")
    assert [a["id"] for a in suspended] == [c.target.id]
    assert suspended[0]["account"]["suspended"] is True
    silenced = await asyncio.to_thread(owner.admin_accounts_v2, status="silenced")
    assert [a["id"] for a in silenced] == [c.member.id]
    staff_v1 = await asyncio.to_thread(owner.admin_accounts_v1, staff_only=True)
    assert {a["id"] for a in staff_v1} == {c.owner.id, c.admin.id, c.mod.id}

    # paging: one a page, following the Link header
    with httpx.Client(base_url=srv.base, timeout=30, headers=bearer(c.owner)) as http:
        first = http.get("/api/v2/admin/accounts", params={"limit": 2})
        assert [a["id"] for a in first.json()] == ids[:2]
        second = http.get(first.links["next"]["url"])
        assert [a["id"] for a in second.json()] == ids[2:4]
        back = http.get(second.links["prev"]["url"])
        assert [a["id"] for a in back.json()] == ids[:2]
        bad = http.get("/api/v2/admin/accounts", params={"status": "sleeping"})
        assert bad.status_code == 422 and "error" in bad.json()
        missing = http.get("/api/v1/admin/accounts/999999")
        assert missing.status_code == 404 and missing.json() == {"error": "Record not found"}


async def test_account_actions_and_their_lifting(srv, rp):
    c = await cast(srv, rp)
    mod = c.mod.api
    app = Mastodon.create_app("relogin", api_base_url=srv.base, scopes=["read", "write"])

    def sign_in() -> Mastodon:
        m = Mastodon(client_id=app[0], client_secret=app[1], api_base_url=srv.base)
        m.log_in(c.member.login, PASSWORD, scopes=["read", "write"], allow_http=True)
        return m

    # bad input: 422, nothing done
    code, _ = await asyncio.to_thread(refused, mod.admin_account_moderate, c.member.id, "banish")
    assert code == 422
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(mod.admin_account_moderate, c.member.id, "suspend", report_id=999)
    assert (await asyncio.to_thread(mod.admin_account, c.member.id))["suspended"] is False

    # a warning: nothing changes but the log
    await asyncio.to_thread(mod.admin_account_moderate, c.member.id, None, text="be nice")
    # disable: its tokens go, it cannot sign in; enable: it signs in again
    await asyncio.to_thread(mod.admin_account_moderate, c.member.id, "disable")
    shown = await asyncio.to_thread(mod.admin_account, c.member.id)
    assert shown["disabled"] is True and shown["suspended"] is False
    with pytest.raises(MastodonAPIError):
        await asyncio.to_thread(c.member.api.me)
    with pytest.raises(MastodonIllegalArgumentError):  # (the password grant refused)
        await asyncio.to_thread(sign_in)
    assert (await asyncio.to_thread(mod.admin_account_enable, c.member.id))["disabled"] is False
    member = await asyncio.to_thread(sign_in)  # (its old token stays revoked)
    assert (await asyncio.to_thread(member.me))["id"] == c.member.id
    # sensitive / unsensitive, silence / unsilence
    await asyncio.to_thread(mod.admin_account_moderate, c.member.id, "sensitive")
    assert (await asyncio.to_thread(mod.admin_account, c.member.id))["sensitized"] is True
    lifted = await asyncio.to_thread(mod.admin_account_unsensitive, c.member.id)
    assert lifted["sensitized"] is False
    await asyncio.to_thread(mod.admin_account_moderate, c.member.id, "silence")
    assert (await asyncio.to_thread(mod.admin_account_unsilence, c.member.id))["silenced"] is False
    # unsuspend of an account not suspended, approve and reject: refused as Mastodon does
    for call in (mod.admin_account_unsuspend, mod.admin_account_approve, mod.admin_account_reject):
        code, text = await asyncio.to_thread(refused, call, c.member.id)
        assert code == 403
    # suspend (resolving the open reports about it), unsuspend
    report = await asyncio.to_thread(member.report, c.target.id, comment="spam!")
    await asyncio.to_thread(mod.admin_account_moderate, c.target.id, "suspend")
    assert (await asyncio.to_thread(mod.admin_report, report["id"]))["action_taken"] is True
    assert (await asyncio.to_thread(member.account, c.target.id))["suspended"] is True
    back = await asyncio.to_thread(mod.admin_account_unsuspend, c.target.id)
    assert back["suspended"] is False
    # deletion: only of a suspended account, only by a role with delete_user_data
    code, _ = await asyncio.to_thread(refused, c.admin.api.admin_account_delete, c.target.id)
    assert code == 403
    await asyncio.to_thread(c.admin.api.admin_account_moderate, c.target.id, "suspend")
    await asyncio.to_thread(c.admin.api.admin_account_delete, c.target.id)
    await rp.drain(timeout=120)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            await asyncio.to_thread(mod.admin_account, c.target.id)
        except MastodonNotFoundError:
            break
        await asyncio.sleep(0.2)
    else:
        pytest.fail("the deleted account is still there")
    # the audit log has each action, with who did it
    log = [
        json.loads(line)
        for line in ok(await asyncio.to_thread(admin, srv, "audit-log", "--json")).splitlines()
    ]
    did = [(e["actor"], e["action"], e["target"]) for e in reversed(log)]
    m, t = c.member.login, c.target.login
    assert did[:13] == [
        ("operator", "change_role", c.owner.login),  # (the cast's roles, by the operator)
        ("operator", "change_role", c.admin.login),
        ("operator", "change_role", c.mod.login),
        (c.mod.login, "warn", m),
        (c.mod.login, "disable", m),
        (c.mod.login, "enable", m),
        (c.mod.login, "sensitive", m),
        (c.mod.login, "unsensitive", m),
        (c.mod.login, "silence", m),
        (c.mod.login, "unsilence", m),
        (c.mod.login, "suspend", t),
        (c.mod.login, "resolve", f"#{report['id']}"),
        (c.mod.login, "unsuspend", t),
    ]
    assert did[13:] == [(c.admin.login, "suspend", t), (c.admin.login, "destroy", t)]
    assert log[-4]["text"] == "be nice" and log[0]["at"] >= log[-1]["at"]


async def test_admin_reports(srv, rp):
    c = await cast(srv, rp)
    mod = c.mod.api
    rule = await rp.instance.add_rule("No spam")
    post = await asyncio.to_thread(c.target.api.status_post, "buy now", visibility="private")
    await asyncio.to_thread(c.member.api.account_follow, c.target.id)
    await rp.drain()
    r1 = await asyncio.to_thread(
        c.member.api.report, c.target.id, status_ids=[post["id"]], comment="spam", category="spam"
    )
    r2 = await asyncio.to_thread(c.target.api.report, c.member.id, comment="rude")
    listed = await asyncio.to_thread(mod.admin_reports)
    assert [r["id"] for r in listed] == [r2["id"], r1["id"]]
    _, one = await asyncio.to_thread(
        raw, srv.base, c.mod, "GET", f"/api/v1/admin/reports/{r1['id']}"
    )
    assert set(one) == {
        "id", "action_taken", "action_taken_at", "category", "comment", "forwarded",
        "created_at", "updated_at", "account", "target_account", "assigned_account",
        "action_taken_by_account", "statuses", "rules",
    }  # fmt: skip
    assert one["account"]["id"] == c.member.id and one["target_account"]["id"] == c.target.id
    assert one["account"]["email"] == f"{c.member.login}@example.com"
    assert [s["id"] for s in one["statuses"]] == [post["id"]]  # private: as its reporter saw it
    assert one["assigned_account"] is None and one["action_taken"] is False
    by = await asyncio.to_thread(mod.admin_reports, account_id=c.target.id)
    assert [r["id"] for r in by] == [r2["id"]]
    about = await asyncio.to_thread(mod.admin_reports, target_account_id=c.target.id)
    assert [r["id"] for r in about] == [r1["id"]]

    mine = await asyncio.to_thread(mod.admin_report_assign, r1["id"])
    assert mine["assigned_account"]["id"] == c.mod.id
    assert (await asyncio.to_thread(mod.admin_report_unassign, r1["id"]))[
        "assigned_account"
    ] is None
    with httpx.Client(base_url=srv.base, timeout=30, headers=bearer(c.mod)) as http:
        put = http.put(
            f"/api/v1/admin/reports/{r1['id']}",
            data={"category": "violation", "rule_ids[]": [str(rule.id)]},
        )
        assert put.status_code == 200, put.text
        assert put.json()["category"] == "violation"
        assert put.json()["rules"] == [{"id": str(rule.id), "text": "No spam", "hint": ""}]
        for data in ({"category": "boring"}, {"rule_ids[]": ["999"]}):
            bad = http.put(f"/api/v1/admin/reports/{r1['id']}", data=data)
            assert bad.status_code == 422 and "error" in bad.json()
        assert http.get("/api/v1/admin/reports/99999").status_code == 404
        member = http.get("/api/v1/admin/reports", headers=bearer(c.member))
        assert member.status_code == 403 and member.json() == {"error": NOT_ALLOWED}
    kept = await asyncio.to_thread(mod.admin_report, r1["id"])
    assert kept["category"] == "violation" and len(kept["rules"]) == 1  # refused: unchanged

    done = await asyncio.to_thread(mod.admin_report_resolve, r1["id"])
    assert done["action_taken"] is True and done["action_taken_by_account"]["id"] == c.mod.id
    assert [r["id"] for r in await asyncio.to_thread(mod.admin_reports)] == [r2["id"]]
    resolved = await asyncio.to_thread(mod.admin_reports, resolved=True)
    assert [r["id"] for r in resolved] == [r1["id"]]
    again = await asyncio.to_thread(mod.admin_report_reopen, r1["id"])
    assert again["action_taken"] is False and again["action_taken_by_account"] is None
    assert len(await asyncio.to_thread(mod.admin_reports)) == 2
    # a warning with a report resolves that report alone
    await asyncio.to_thread(
        mod.admin_account_moderate, c.member.id, None, report_id=r2["id"], text="calm down"
    )
    assert [r["id"] for r in await asyncio.to_thread(mod.admin_reports)] == [r1["id"]]
    assert (await asyncio.to_thread(c.member.api.me))["id"] == c.member.id  # only warned


async def test_admin_domain_blocks(srv, rp):
    c = await cast(srv, rp)
    adm = c.admin.api
    made = await asyncio.to_thread(
        adm.admin_create_domain_block,
        "Spam.Example",
        reject_media=True,
        private_comment="seen in reports",
        public_comment="spam",
    )
    _, sent = await asyncio.to_thread(
        raw, srv.base, c.admin, "GET", f"/api/v1/admin/domain_blocks/{made['id']}"
    )
    assert set(sent) == {
        "id", "domain", "created_at", "severity", "reject_media", "reject_reports",
        "private_comment", "public_comment", "obfuscate",
    }  # fmt: skip
    assert made["domain"] == "spam.example" and made["severity"] == "silence"
    assert made["reject_media"] is True and made["public_comment"] == "spam"
    policy = await domains.policy(rp.store, "media.spam.example")
    assert policy is not None and policy.silenced and policy.reject_media
    # a block of the host or of a domain it is part of: 422 naming it, nothing written
    with httpx.Client(base_url=srv.base, timeout=30, headers=bearer(c.admin)) as http:
        for host in ("spam.example", "sub.spam.example"):
            r = http.post("/api/v1/admin/domain_blocks", data={"domain": host})
            assert r.status_code == 422
            assert r.json()["existing_domain_block"]["id"] == made["id"]
            assert "spam.example" in r.json()["error"]
        for data in ({"domain": "x.example", "severity": "obliterate"}, {"domain": "a/b"}, {}):
            r = http.post("/api/v1/admin/domain_blocks", data=data)
            assert r.status_code == 422 and "error" in r.json()
        r = http.put(f"/api/v1/admin/domain_blocks/{made['id']}", data={"severity": "bogus"})
        assert r.status_code == 422
        assert http.get("/api/v1/admin/domain_blocks/424242").status_code == 404
    assert [b.host for b in await rp.federation.domain_blocks()] == ["spam.example"]
    other = await asyncio.to_thread(adm.admin_create_domain_block, "other.example", "noop")
    listed = await asyncio.to_thread(adm.admin_domain_blocks)
    assert [b["id"] for b in listed] == [other["id"], made["id"]]
    assert (await asyncio.to_thread(adm.admin_domain_blocks, made["id"]))[
        "domain"
    ] == "spam.example"
    changed = await asyncio.to_thread(
        adm.admin_update_domain_block, made["id"], severity="suspend", obfuscate=True
    )
    assert changed["severity"] == "suspend" and changed["obfuscate"] is True
    assert changed["public_comment"] == "spam" and changed["id"] == made["id"]
    assert await domains.suspended(rp.store, "www.spam.example")  # the federation obeys it
    # a moderator may not; the CLI sees the same blocks
    code, text = await asyncio.to_thread(refused, c.mod.api.admin_delete_domain_block, made["id"])
    assert code == 403
    assert "spam.example suspend" in ok(await asyncio.to_thread(admin, srv, "domain-blocks"))
    await asyncio.to_thread(adm.admin_delete_domain_block, made["id"])
    assert not await domains.suspended(rp.store, "www.spam.example")
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(adm.admin_delete_domain_block, made["id"])
    log = ok(await asyncio.to_thread(admin, srv, "audit-log"))
    lines = [line for line in log.splitlines() if "DomainBlock" in line]
    assert [line.split()[4] for line in lines] == ["destroy", "update", "create", "create"]
    assert all(c.admin.login in line for line in lines)


def _sign_up(base: str, login: str, email: str) -> Mastodon:
    cid, secret = Mastodon.create_app("signup", api_base_url=base, scopes=["read", "write"])
    m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
    m.create_account(login, PASSWORD, email, agreement=True, scopes=["read", "write"])
    return m


async def test_email_domain_and_canonical_email_blocks(srv, rp):
    c = await cast(srv, rp)
    adm = c.admin.api
    # a moderator has no manage_blocks
    code, _ = await asyncio.to_thread(refused, c.mod.api.admin_email_domain_blocks)
    assert code == 403
    code, _ = await asyncio.to_thread(refused, c.mod.api.admin_canonical_email_blocks)
    assert code == 403

    made = await asyncio.to_thread(adm.admin_create_email_domain_block, "Blocked.Example")
    _, sent = await asyncio.to_thread(
        raw, srv.base, c.admin, "GET", f"/api/v1/admin/email_domain_blocks/{made['id']}"
    )
    assert set(sent) == {"id", "domain", "created_at", "history"}
    assert sent["domain"] == "blocked.example" and len(sent["history"]) == 7
    assert all(h["uses"] == "0" for h in sent["history"])
    for data in ({"domain": "blocked.example"}, {"domain": "not a domain"}, {}):
        got = await asyncio.to_thread(
            raw, srv.base, c.admin, "POST", "/api/v1/admin/email_domain_blocks", data=data
        )
        assert got[0] == 422 and "error" in got[1], data
    login = "u" + uuid.uuid4().hex[:10]
    for email in (f"{login}@blocked.example", f"{login}@mx.Blocked.example"):
        with pytest.raises(MastodonIllegalArgumentError) as exc:  # (its 422)
            await asyncio.to_thread(_sign_up, srv.base, login, email)
        assert "disallowed e-mail provider" in str(exc.value)  # (Mastodon's ERR_BLOCKED)
    # nothing was written: the login and the address are still free
    shown = await asyncio.to_thread(adm.admin_email_domain_block, made["id"])
    assert int(shown["history"][0]["uses"]) == 2  # (today, newest first)
    assert [b["id"] for b in await asyncio.to_thread(adm.admin_email_domain_blocks)] == [made["id"]]
    await asyncio.to_thread(_sign_up, srv.base, login, f"{login}@fine.example")

    # canonical blocks: the address lower-cased, without dots or a +part, hashed
    digest = hashlib.sha256(b"janedoe@mail.example").hexdigest()
    canon = await asyncio.to_thread(
        adm.admin_create_canonical_email_block, email="Jane.Doe+spam@Mail.example"
    )
    assert canon["canonical_email_hash"] == digest
    tested = await asyncio.to_thread(adm.admin_test_canonical_email_block, "janedoe+x@mail.example")
    assert [b["id"] for b in tested] == [canon["id"]]
    assert await asyncio.to_thread(adm.admin_test_canonical_email_block, "jane@mail.example") == []
    with pytest.raises(MastodonIllegalArgumentError) as exc:
        await asyncio.to_thread(
            _sign_up, srv.base, "u" + uuid.uuid4().hex[:10], "j.a.n.e.doe@mail.example"
        )
    assert "disallowed e-mail provider" in str(exc.value)
    for data in (
        {"email": "jane.doe@mail.example"},  # the same hash: taken
        {"canonical_email_hash": "abc"},
        {},
    ):
        got = await asyncio.to_thread(
            raw, srv.base, c.admin, "POST", "/api/v1/admin/canonical_email_blocks", data=data
        )
        assert got[0] == 422 and "error" in got[1], data
    other = "0" * 64
    by_hash = await asyncio.to_thread(
        adm.admin_create_canonical_email_block, canonical_email_hash=other
    )
    listed = await asyncio.to_thread(adm.admin_canonical_email_blocks)
    assert [b["id"] for b in listed] == [by_hash["id"], canon["id"]]
    assert (await asyncio.to_thread(adm.admin_canonical_email_block, canon["id"]))[
        "canonical_email_hash"
    ] == digest
    # lifted, the sign-ups go through
    await asyncio.to_thread(adm.admin_delete_canonical_email_block, canon["id"])
    await asyncio.to_thread(adm.admin_delete_email_domain_block, made["id"])
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(adm.admin_email_domain_block, made["id"])
    await asyncio.to_thread(
        _sign_up, srv.base, "u" + uuid.uuid4().hex[:10], "jane.doe@mail.example"
    )
    await asyncio.to_thread(_sign_up, srv.base, "u" + uuid.uuid4().hex[:10], "x@blocked.example")
    log = ok(await asyncio.to_thread(admin, srv, "audit-log"))
    kinds = [
        line.split()[4:6]
        for line in log.splitlines()
        if "EmailBlock" in line or "EmailDomain" in line
    ]
    assert kinds == [
        ["destroy", "EmailDomainBlock"],
        ["destroy", "CanonicalEmailBlock"],
        ["create", "CanonicalEmailBlock"],
        ["create", "CanonicalEmailBlock"],
        ["create", "EmailDomainBlock"],
    ]


async def test_silenced_and_sensitized_accounts_as_readers_see_them(srv, rp):
    c = await cast(srv, rp)
    mod, member = c.mod.api, c.member.api
    await asyncio.to_thread(member.account_follow, c.target.id)
    post = await asyncio.to_thread(c.target.api.status_post, "hello #redpolltest")
    other = await asyncio.to_thread(c.admin.api.status_post, "also #redpolltest")
    await rp.drain()

    def public_ids(**kw) -> list[str]:
        return [s["id"] for s in member.timeline_public(**kw)]

    def tag_ids() -> list[str]:
        return [s["id"] for s in member.timeline_hashtag("redpolltest")]

    assert post["id"] in await asyncio.to_thread(public_ids)
    assert (await asyncio.to_thread(member.status, post["id"]))["sensitive"] is False
    # sensitive: its statuses are shown sensitive, wherever they are read
    await asyncio.to_thread(mod.admin_account_moderate, c.target.id, "sensitive")
    assert (await asyncio.to_thread(member.status, post["id"]))["sensitive"] is True
    shown = {s["id"]: s for s in await asyncio.to_thread(member.timeline_home)}
    assert shown[post["id"]]["sensitive"] is True
    await asyncio.to_thread(mod.admin_account_unsensitive, c.target.id)
    assert (await asyncio.to_thread(member.status, post["id"]))["sensitive"] is False
    # silence: off the public and hashtag timelines (local and not), still in
    # its followers' homes and shown by id
    await asyncio.to_thread(mod.admin_account_moderate, c.target.id, "silence")
    assert post["id"] not in await asyncio.to_thread(public_ids)
    assert post["id"] not in await asyncio.to_thread(public_ids, local=True)
    assert await asyncio.to_thread(tag_ids) == [other["id"]]
    assert post["id"] in {s["id"] for s in await asyncio.to_thread(member.timeline_home)}
    assert (await asyncio.to_thread(member.status, post["id"]))["id"] == post["id"]
    await asyncio.to_thread(mod.admin_account_unsilence, c.target.id)
    assert await asyncio.to_thread(tag_ids) == [other["id"], post["id"]]
    assert post["id"] in await asyncio.to_thread(public_ids)


async def test_ip_blocks(srv, rp):
    c = await cast(srv, rp)
    adm = c.admin.api
    code, _ = await asyncio.to_thread(refused, c.mod.api.admin_ip_blocks)
    assert code == 403  # manage_blocks: admins, not moderators
    made = await asyncio.to_thread(
        adm.admin_create_ip_block, "127.0.0.1/8", "sign_up_block", comment="the tests"
    )
    _, sent = await asyncio.to_thread(
        raw, srv.base, c.admin, "GET", f"/api/v1/admin/ip_blocks/{made['id']}"
    )
    assert set(sent) == {"id", "ip", "severity", "comment", "created_at", "expires_at"}
    assert sent["ip"] == "127.0.0.0/8" and sent["severity"] == "sign_up_block"
    assert sent["comment"] == "the tests" and sent["expires_at"] is None
    # a sign-up from there: 403, as Mastodon, and nothing written
    login = "u" + uuid.uuid4().hex[:10]
    with pytest.raises(MastodonIllegalArgumentError) as exc:  # (Mastodon.py's for any refusal)
        await asyncio.to_thread(_sign_up, srv.base, login, f"{login}@example.com")
    assert NOT_ALLOWED in str(exc.value)  # the 403's text
    with httpx.Client(base_url=srv.base, timeout=30) as http:
        app = http.post(
            "/api/v1/apps",
            data={
                "client_name": "x",
                "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
                "scopes": "write",
            },
        ).json()
        token = http.post(
            "/oauth/token",
            data={
                "grant_type": "client_credentials",
                "client_id": app["client_id"],
                "client_secret": app["client_secret"],
                "scope": "write",
            },
        ).json()["access_token"]
        r = http.post(
            "/api/v1/accounts",
            headers={"Authorization": f"Bearer {token}"},
            data={
                "username": login,
                "email": f"{login}@example.com",
                "password": PASSWORD,
                "agreement": "true",
            },
        )
        assert (r.status_code, r.json()) == (403, {"error": NOT_ALLOWED})
    for data in (
        {"ip": "127.0.0.1/8", "severity": "no_access"},  # that network is blocked already
        {"ip": "not-an-ip", "severity": "no_access"},
        {"ip": "10.0.0.1", "severity": "everything"},
        {"severity": "no_access"},
    ):
        got = await asyncio.to_thread(
            raw, srv.base, c.admin, "POST", "/api/v1/admin/ip_blocks", data=data
        )
        assert got[0] == 422 and "error" in got[1], data
    # sign_up_requires_approval is kept, refuses nothing (there is no approval mode)
    changed = await asyncio.to_thread(
        adm.admin_update_ip_block, made["id"], severity="sign_up_requires_approval"
    )
    assert changed["severity"] == "sign_up_requires_approval" and changed["comment"] == "the tests"
    await asyncio.to_thread(_sign_up, srv.base, login, f"{login}@example.com")
    moved = await asyncio.to_thread(
        adm.admin_update_ip_block, made["id"], ip="::1", severity="no_access"
    )
    assert moved["ip"] == "::1/128" and moved["id"] == made["id"]
    short = await asyncio.to_thread(
        adm.admin_create_ip_block, "127.0.0.1", "sign_up_block", expires_in=1
    )
    listed = await asyncio.to_thread(adm.admin_ip_blocks)
    assert [b["id"] for b in listed] == [short["id"], made["id"]]
    with pytest.raises(MastodonIllegalArgumentError) as exc:
        await asyncio.to_thread(_sign_up, srv.base, "u" + uuid.uuid4().hex[:10], "a@example.com")
    assert NOT_ALLOWED in str(exc.value)
    await asyncio.sleep(1.2)  # expired: refuses nothing, listed no more
    assert [b["id"] for b in await asyncio.to_thread(adm.admin_ip_blocks)] == [made["id"]]
    await asyncio.to_thread(_sign_up, srv.base, "u" + uuid.uuid4().hex[:10], "b@example.com")
    await asyncio.to_thread(adm.admin_delete_ip_block, made["id"])
    assert await asyncio.to_thread(adm.admin_ip_blocks) == []
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(adm.admin_ip_block, made["id"])
    log = ok(await asyncio.to_thread(admin, srv, "audit-log"))
    kinds = [line.split()[4] for line in log.splitlines() if " IpBlock " in line]
    assert kinds == ["destroy", "create", "update", "update", "create"]


async def test_domain_allows_and_the_limited_federation_mode(srv, rp):
    c = await cast(srv, rp)
    adm = c.admin.api
    code, _ = await asyncio.to_thread(refused, c.mod.api.admin_domain_allows)
    assert code == 403  # manage_federation
    made = await asyncio.to_thread(adm.admin_create_domain_allow, "Friends.Example")
    _, sent = await asyncio.to_thread(
        raw, srv.base, c.admin, "GET", f"/api/v1/admin/domain_allows/{made['id']}"
    )
    assert sent == {"id": made["id"], "domain": "friends.example", "created_at": sent["created_at"]}
    again = await asyncio.to_thread(adm.admin_create_domain_allow, "friends.example")
    assert again["id"] == made["id"]  # (Mastodon: the allow there already)
    other = await asyncio.to_thread(adm.admin_create_domain_allow, "pals.example")
    listed = await asyncio.to_thread(adm.admin_domain_allows)
    assert [a["id"] for a in listed] == [other["id"], made["id"]]
    got = await asyncio.to_thread(
        raw, srv.base, c.admin, "POST", "/api/v1/admin/domain_allows", data={"domain": "a b"}
    )
    assert got[0] == 422
    # open (the default): allows change nothing, every host not blocked federates
    assert not await domains.suspended(rp.store, "stranger.example")
    assert ok(await asyncio.to_thread(admin, srv, "federation-mode")).strip() == "open"
    # limited: only the allowed hosts; a block still applies to an allowed one
    assert "limited" in ok(await asyncio.to_thread(admin, srv, "federation-mode", "limited"))
    assert await domains.suspended(rp.store, "stranger.example")
    assert not await domains.suspended(rp.store, "friends.example")
    assert not await domains.suspended(rp.store, "pals.example:8443")
    await asyncio.to_thread(adm.admin_create_domain_block, "pals.example", "suspend")
    assert await domains.suspended(rp.store, "pals.example")
    # the lists of blocks and allows stay apart
    assert [b["domain"] for b in await asyncio.to_thread(adm.admin_domain_blocks)] == [
        "pals.example"
    ]
    await asyncio.to_thread(adm.admin_delete_domain_allow, made["id"])
    assert await domains.suspended(rp.store, "friends.example")
    with pytest.raises(MastodonNotFoundError):
        await asyncio.to_thread(adm.admin_domain_allow, made["id"])
    ok(await asyncio.to_thread(admin, srv, "federation-mode", "open"))
    assert not await domains.suspended(rp.store, "stranger.example")
    log = ok(await asyncio.to_thread(admin, srv, "audit-log"))
    kinds = [
        line.split()[4:6] for line in log.splitlines() if "Domain" in line or "Federation" in line
    ]
    assert kinds == [
        ["unlimited", "Federation"],
        ["destroy", "DomainAllow"],
        ["create", "DomainBlock"],
        ["limited", "Federation"],
        ["create", "DomainAllow"],
        ["create", "DomainAllow"],
    ]


#: each admin list and the roles that may read it (Mastodon's policies):
#: manage_users, manage_reports, manage_federation, manage_blocks
MATRIX = {
    "/api/v1/admin/accounts": {"owner", "admin", "mod"},
    "/api/v2/admin/accounts": {"owner", "admin", "mod"},
    "/api/v1/admin/reports": {"owner", "admin", "mod"},
    "/api/v1/admin/domain_blocks": {"owner", "admin"},
    "/api/v1/admin/domain_allows": {"owner", "admin"},
    "/api/v1/admin/email_domain_blocks": {"owner", "admin"},
    "/api/v1/admin/canonical_email_blocks": {"owner", "admin"},
    "/api/v1/admin/ip_blocks": {"owner", "admin"},
}


async def test_each_role_is_allowed_exactly_what_it_allows(srv, rp):
    c = await cast(srv, rp)
    people = {"owner": c.owner, "admin": c.admin, "mod": c.mod, "member": c.member}
    for path, allowed in MATRIX.items():
        for name, person in people.items():
            code, body = await asyncio.to_thread(raw, srv.base, person, "GET", path)
            if name in allowed:
                assert code == 200 and isinstance(body, list), (path, name, body)
            else:
                assert (code, body) == (403, {"error": NOT_ALLOWED}), (path, name)
    # writes: who may act on whom (a role above the target's), and delete (delete_user_data)
    targets = {"owner": c.owner, "admin": c.admin, "mod": c.mod, "member": c.member}
    may_silence = {
        "owner": {"admin", "mod", "member"},
        "admin": {"mod", "member"},
        "mod": {"member"},
        "member": set(),
    }
    for name, person in people.items():
        for target_name, target in targets.items():
            code, body = await asyncio.to_thread(
                raw,
                srv.base,
                person,
                "POST",
                f"/api/v1/admin/accounts/{target.id}/action",
                data={"type": "silence"},
            )
            if target_name in may_silence[name]:
                assert (code, body) == (200, {}), (name, target_name, body)
                await rp.admin.unsilence(None, target.id)
            else:
                assert (code, body) == (403, {"error": NOT_ALLOWED}), (name, target_name)
    shown = await rp.admin.account(None, c.member.id)
    assert shown.user.silenced is False  # every silence above was lifted
    await rp.admin.act(None, c.target.id, "suspend")
    for name in ("mod", "member"):
        got = await asyncio.to_thread(
            raw, srv.base, people[name], "DELETE", f"/api/v1/admin/accounts/{c.target.id}"
        )
        assert got == (403, {"error": NOT_ALLOWED}), name
    assert (await rp.admin.account(None, c.target.id)).user.suspended  # still there


async def test_another_server_s_account_as_moderators_see_it(srv, rp):
    c = await cast(srv, rp)
    uri = "https://remote.example/users/faraway"
    doc = {
        "id": uri,
        "type": "Person",
        "preferredUsername": "faraway",
        "inbox": f"{uri}/inbox",
        "publicKey": {
            "id": f"{uri}#main-key",
            "publicKeyPem": signing.KeyPair.generate().public_pem,
        },
    }
    far = await remote.keep(rp.store, remote.parse_actor(doc))
    mod = c.mod.api
    shown = await asyncio.to_thread(mod.admin_account, far.id)
    assert shown["username"] == "faraway" and shown["domain"] == "remote.example"
    assert shown["email"] is None and shown["role"] is None and shown["approved"] is False
    remote_ids = [a["id"] for a in await asyncio.to_thread(mod.admin_accounts_v2, origin="remote")]
    assert remote_ids == [str(far.id)]
    by_domain = await asyncio.to_thread(mod.admin_accounts_v2, by_domain="remote.example")
    assert [a["id"] for a in by_domain] == [str(far.id)]
    v1 = await asyncio.to_thread(mod.admin_accounts_v1, remote=True)
    assert [a["id"] for a in v1] == [str(far.id)]
    assert str(far.id) not in {a["id"] for a in await asyncio.to_thread(mod.admin_accounts_v1)}
    # enable, approve and reject are for local accounts (403); disable too (422)
    for call in (mod.admin_account_enable, mod.admin_account_approve, mod.admin_account_reject):
        code, _ = await asyncio.to_thread(refused, call, far.id)
        assert code == 403
    code, _ = await asyncio.to_thread(refused, mod.admin_account_moderate, far.id, "disable")
    assert code == 422
    await asyncio.to_thread(mod.admin_account_moderate, far.id, "silence")
    assert (await asyncio.to_thread(mod.admin_account, far.id))["silenced"] is True
    # suspended and back, by id (its login, name@host, is no local login)
    await asyncio.to_thread(mod.admin_account_moderate, far.id, "suspend")
    assert (await asyncio.to_thread(mod.admin_account, far.id))["suspended"] is True
    assert (await asyncio.to_thread(c.member.api.account, far.id))["suspended"] is True
    # deleting another server's account is not built: refused, nothing done
    code, _ = await asyncio.to_thread(refused, c.admin.api.admin_account_delete, far.id)
    assert code == 403
    assert (await asyncio.to_thread(mod.admin_account_unsuspend, far.id))["suspended"] is False


async def test_a_no_access_ip_block_refuses_every_request(srv, rp):
    c = await cast(srv, rp)
    made = await rp.admin.create_ip_block(None, "127.0.0.0/8", "no_access")

    def status() -> tuple[int, str]:
        r = httpx.get(f"{srv.base}/api/v1/instance", timeout=30)
        return r.status_code, r.text

    deadline = time.monotonic() + 15  # (each process reads the blocks every few seconds)
    while (got := await asyncio.to_thread(status))[0] != 403 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert got == (403, "Forbidden\n")  # Rack::Attack's answer, as Mastodon's
    code, _ = await asyncio.to_thread(refused, c.owner.api.me)  # a token changes nothing
    assert code == 403
    await rp.admin.remove_ip_block(None, made.id)
    deadline = time.monotonic() + 15
    while (got := await asyncio.to_thread(status))[0] != 200 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert got[0] == 200
    assert (await asyncio.to_thread(c.owner.api.me))["id"] == c.owner.id
