"""Roles an owner defines (Mastodon's UserRole) against a real ``redpoll
serve``, through Mastodon.py where Mastodon's admin API is involved and
plain HTTP for the Redpoll role endpoints: a role allows exactly what it
holds, a change counts from the next request (made from another process,
the command line), Mastodon's position and elevation rules, the everyone
role, the audit entries; and the command line's role commands. On one
server and on the cluster."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass

import httpx
import pytest
from mastodon import Mastodon, MastodonAPIError
from support.cli import admin, ok

from redpoll.admin import roles

pytestmark = [pytest.mark.topology, pytest.mark.timeout(300)]

PASSWORD = "correct horse battery"
SCOPES = ["read", "write", "follow", "admin:read", "admin:write"]
FLAGS = roles.FLAGS


@dataclass
class Person:
    api: Mastodon
    login: str
    id: str


def _people(base: str, n: int) -> list[Person]:
    cid, secret = Mastodon.create_app("roles-test", api_base_url=base, scopes=SCOPES)
    out = []
    for _ in range(n):
        login = "r" + uuid.uuid4().hex[:10]
        m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
        m.create_account(login, PASSWORD, f"{login}@example.com", agreement=True, scopes=SCOPES)
        out.append(Person(m, login, str(m.me()["id"])))
    return out


def call(base: str, who: Person, method: str, path: str, **data) -> tuple[int, dict | list]:
    r = httpx.request(
        method,
        base + path,
        headers={"Authorization": f"Bearer {who.api.access_token}"},
        json=data or None,
        timeout=30,
    )
    return r.status_code, r.json()


def refused(fn, *args) -> int:
    with pytest.raises(MastodonAPIError) as exc:
        fn(*args)
    return exc.value.args[1]


async def _audit(srv) -> list[dict]:
    out = ok(await asyncio.to_thread(admin, srv, "audit-log", "--json"))
    return [json.loads(line) for line in out.splitlines()]


async def test_a_defined_role_allows_what_it_holds_and_changes_count_at_once(srv, rp):
    owner, holder, target = await asyncio.to_thread(_people, srv.base, 3)
    await rp.admin.set_role(None, owner.login, "owner")
    base = srv.base
    code, made = call(
        base,
        owner,
        "POST",
        "/api/v1/redpoll/admin/roles",
        name="Triage",
        permissions=str(FLAGS["manage_reports"]),
        position=5,
        color="#a0b",
        highlighted=True,
    )
    assert code == 200, made
    assert made["name"] == "Triage" and made["position"] == 5 and made["color"] == "#a0b"
    assert made["permission_names"] == ["manage_reports"] and made["built_in"] is False
    rid = made["id"]
    code, shown = call(
        base, owner, "PUT", f"/api/v1/redpoll/admin/accounts/{holder.id}/role", role_id=rid
    )
    assert code == 200, shown
    # Admin::Account's role: Mastodon's Role entity, computed permissions
    # (the everyone role's invite_users too)
    assert shown["role"] == {
        "id": rid,
        "name": "Triage",
        "color": "#a0b",
        "permissions": str(FLAGS["manage_reports"] | FLAGS["invite_users"]),
        "highlighted": True,
    }
    # the holder may read reports, not suspend; the account shows its role
    assert await asyncio.to_thread(holder.api.admin_reports) == []
    assert (
        await asyncio.to_thread(refused, holder.api.admin_account_moderate, target.id, "suspend")
        == 403
    )
    seen = await asyncio.to_thread(target.api.account, holder.id)
    assert seen["roles"] == [{"id": rid, "name": "Triage", "color": "#a0b"}]
    assert (await asyncio.to_thread(holder.api.me))["role"]["name"] == "Triage"

    # taking the permission away from another process (the command line):
    # the serve's very next request refuses
    out = ok(await asyncio.to_thread(admin, srv, "role-define", "Triage", "--position", "5"))
    assert "no permissions" in out
    assert await asyncio.to_thread(refused, holder.api.admin_reports) == 403
    # and giving it back counts as soon
    ok(
        await asyncio.to_thread(
            admin, srv, "role-define", "triage", "--permission", "manage_reports",
            "--position", "5", "--highlighted", "--color", "#a0b",
        )
    )  # fmt: skip
    assert await asyncio.to_thread(holder.api.admin_reports) == []

    # renaming shows on the account at once
    code, _ = call(base, owner, "PUT", f"/api/v1/redpoll/admin/roles/{rid}", name="Triagers")
    assert code == 200
    seen = await asyncio.to_thread(target.api.account, holder.id)
    assert seen["roles"] == [{"id": rid, "name": "Triagers", "color": "#a0b"}]

    # deleting it leaves its holder with no role, at once
    code, _ = call(base, owner, "DELETE", f"/api/v1/redpoll/admin/roles/{rid}")
    assert code == 200
    assert await asyncio.to_thread(refused, holder.api.admin_reports) == 403
    me = await asyncio.to_thread(holder.api.me)
    assert me["role"]["id"] == "-99" and me["roles"] == []
    assert (await asyncio.to_thread(target.api.account, holder.id))["roles"] == []
    code, listed = call(base, owner, "GET", "/api/v1/redpoll/admin/roles")
    assert code == 200 and rid not in [r["id"] for r in listed]
    assert [r["name"] for r in listed[:4]] == ["", "Moderator", "Admin", "Owner"]

    # every change is in the audit log, with who made it
    log = await _audit(srv)
    mine = [(e["action"], e["target_type"], e["actor"]) for e in log if e["target_id"] == rid]
    assert ("create", "UserRole", owner.login) in mine
    assert ("update", "UserRole", "operator") in mine
    assert ("update", "UserRole", owner.login) in mine
    assert ("destroy", "UserRole", owner.login) in mine
    given = [e for e in log if e["action"] == "change_role" and e["target_id"] == holder.id]
    assert given and given[-1]["text"] == "Triage" and given[-1]["actor"] == owner.login


async def test_the_position_and_elevation_rules(srv, rp):
    owner, lead, member, target = await asyncio.to_thread(_people, srv.base, 4)
    await rp.admin.set_role(None, owner.login, "owner")
    base = srv.base
    lead_bits = FLAGS["manage_roles"] | FLAGS["manage_reports"]
    code, made = call(
        base,
        owner,
        "POST",
        "/api/v1/redpoll/admin/roles",
        name="Lead",
        permissions=str(lead_bits),
        position=50,
    )
    assert code == 200, made
    lead_id = made["id"]
    await rp.admin.set_role(None, lead.login, "Lead")

    roles_path = "/api/v1/redpoll/admin/roles"
    # no permission it lacks, no position above its own (Mastodon: 422 "elevated")
    bits = str(FLAGS["manage_users"])
    code, body = call(base, lead, "POST", roles_path, name="X", permissions=bits, position=10)
    assert code == 422 and "permissions" in body["error"]
    code, body = call(base, lead, "POST", roles_path, name="X", position=60)
    assert code == 422 and "position" in body["error"]
    code, body = call(base, lead, "POST", roles_path, name="admin", position=1)
    assert code == 422 and "name" in body["error"]
    code, helper = call(
        base,
        lead,
        "POST",
        roles_path,
        name="Helper",
        permissions=str(FLAGS["manage_reports"]),
        position=40,
    )
    assert code == 200, helper
    # changing and deleting: only roles below its own; its own role's name
    # but not its permissions or position; never deleting its own
    assert call(base, lead, "PUT", f"{roles_path}/2", name="Boss")[0] == 403
    assert call(base, lead, "DELETE", f"{roles_path}/3")[0] == 403
    assert call(base, lead, "DELETE", f"{roles_path}/{lead_id}")[0] == 403
    code, body = call(base, lead, "PUT", f"{roles_path}/{lead_id}", permissions=str(lead_bits | 1))
    assert code == 422
    code, body = call(base, lead, "PUT", f"{roles_path}/{lead_id}", color="#123456")
    assert code == 200 and body["color"] == "#123456"
    assert call(base, lead, "PUT", f"{roles_path}/{helper['id']}", position=45)[0] == 200
    # the built-in roles are fixed, even for the owner
    assert call(base, owner, "PUT", f"{roles_path}/1", name="Mods")[0] == 422
    assert call(base, owner, "DELETE", f"{roles_path}/404")[0] == 404

    # giving roles: the account's role below the giver's, the role not above it
    give = f"/api/v1/redpoll/admin/accounts/{target.id}/role"
    assert call(base, lead, "PUT", give, role_id=helper["id"])[0] == 200
    assert call(base, lead, "PUT", give, role_id="2")[0] == 403
    owner_give = f"/api/v1/redpoll/admin/accounts/{owner.id}/role"
    assert call(base, lead, "PUT", owner_give, role_id="-99")[0] == 403
    assert call(base, lead, "PUT", give, role_id="-99")[0] == 200
    assert (await asyncio.to_thread(target.api.me))["role"]["id"] == "-99"
    # a role without manage_roles sees none of it
    assert call(base, member, "GET", roles_path)[0] == 403
    assert call(base, member, "PUT", give, role_id=helper["id"])[0] == 403

    # the everyone role: never deleted, its position fixed, only invite_users
    assert call(base, owner, "DELETE", f"{roles_path}/-99")[0] == 403
    assert call(base, owner, "PUT", f"{roles_path}/-99", position=3)[0] == 422
    bits = str(FLAGS["manage_reports"])
    assert call(base, owner, "PUT", f"{roles_path}/-99", permissions=bits)[0] == 422
    code, body = call(base, owner, "PUT", f"{roles_path}/-99", permissions="0")
    assert code == 200 and body["permissions"] == "0"
    assert httpx.get(base + "/api/v1/instance").json()["invites_enabled"] is False
    assert (await asyncio.to_thread(member.api.me))["role"]["permissions"] == "0"
    bits = str(FLAGS["invite_users"])
    assert call(base, owner, "PUT", f"{roles_path}/-99", permissions=bits)[0] == 200
    assert httpx.get(base + "/api/v1/instance").json()["invites_enabled"] is True


async def test_the_command_line_lists_defines_gives_and_deletes_roles(srv, rp):
    login = "c" + uuid.uuid4().hex[:10]
    ok(
        await asyncio.to_thread(
            admin, srv, "create-user", login, f"{login}@example.com", "--password", PASSWORD
        )
    )
    out = ok(
        await asyncio.to_thread(
            admin, srv, "role-define", "Greeters", "--permission", "manage_users",
            "--permission", "manage_reports", "--position", "20", "--color", "#0a0",
        )
    )  # fmt: skip
    assert "Greeters" in out and "manage_reports" in out and "manage_users" in out
    listed = ok(await asyncio.to_thread(admin, srv, "roles", "--json"))
    found = [json.loads(line) for line in listed.splitlines()]
    assert [r["name"] for r in found] == ["everyone", "Moderator", "Greeters", "Admin", "Owner"]
    assert found[2]["permissions"] == ["manage_reports", "manage_users"]
    assert found[2]["color"] == "#0a0" and found[2]["built_in"] is False
    out = ok(await asyncio.to_thread(admin, srv, "role", login, "greeters"))
    assert "Greeters" in out
    held = await rp.admin.role_of(await rp.accounts.lookup(login))
    assert held.name == "Greeters" and held.can("manage_users")
    bad = await asyncio.to_thread(admin, srv, "role", login, "nobody-has-this")
    assert bad.returncode != 0 and "Greeters" in bad.stderr + bad.stdout
    out = ok(await asyncio.to_thread(admin, srv, "role-undefine", "Greeters"))
    assert "deleted" in out
    held = await rp.admin.role_of(await rp.accounts.lookup(login))
    assert held.id == roles.EVERYONE_ID
    text = ok(await asyncio.to_thread(admin, srv, "roles"))
    assert "Greeters" not in text and "everyone" in text
