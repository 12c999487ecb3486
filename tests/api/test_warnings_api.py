"""Strikes and appeals through Mastodon.py against a real ``redpoll serve``:
an account action keeps a warning (Mastodon's AccountWarning) and sends the
member a moderation_warning notification (v1 and grouped v2); the member
reads it and appeals it once; moderators see appeals and only a role with
manage_appeals decides one (approving undoes the action); the server's
rules, settings and audit log by role; every action in the audit log."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from datetime import datetime

import httpx
import pytest
from mastodon import Mastodon
from support.cli import admin, ok

from redpoll.core import limits

NOT_ALLOWED = "This action is not allowed"
PASSWORD = "correct horse battery"
SCOPES = ["read", "write", "follow", "admin:read", "admin:write"]


@dataclass
class Person:
    api: Mastodon
    login: str
    id: str


@dataclass
class Cast:
    owner: Person
    admin: Person
    mod: Person
    member: Person
    target: Person


def _people(base: str, n: int) -> list[Person]:
    cid, secret = Mastodon.create_app("warnings-test", api_base_url=base, scopes=SCOPES)
    out = []
    for _ in range(n):
        login = "w" + uuid.uuid4().hex[:10]
        m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
        m.create_account(login, PASSWORD, f"{login}@example.com", agreement=True, scopes=SCOPES)
        out.append(Person(m, login, str(m.me()["id"])))
    return out


async def cast(srv, rp) -> Cast:
    owner, adm, mod, member, target = await asyncio.to_thread(_people, srv.base, 5)
    assert "Owner" in ok(await asyncio.to_thread(admin, srv, "role", owner.login, "owner"))
    await rp.admin.set_role(None, adm.login, "admin")
    await rp.admin.set_role(None, mod.login, "moderator")
    return Cast(owner, adm, mod, member, target)


def bearer(person: Person) -> dict:
    return {"Authorization": f"Bearer {person.api.access_token}"}


def raw(base: str, person: Person, method: str, path: str, **kw) -> tuple[int, dict]:
    r = httpx.request(method, base + path, headers=bearer(person), timeout=30, **kw)
    return r.status_code, r.json()


pytestmark = [pytest.mark.timeout(300)]


def _get(base, person, path, **kw):
    return raw(base, person, "GET", path, **kw)


def _post(base, person, path, **kw):
    return raw(base, person, "POST", path, **kw)


async def test_a_strike_is_kept_notified_and_appealed_once(srv, rp):
    c = await cast(srv, rp)
    base = srv.base
    post = await asyncio.to_thread(c.member.api.status_post, "rude words")
    report = await asyncio.to_thread(
        c.target.api.report, c.member.id, status_ids=[post["id"]], comment="rude", category="other"
    )
    await asyncio.to_thread(
        c.mod.api.admin_account_moderate,
        c.member.id,
        "silence",
        report_id=report["id"],
        text="Please be kind.",
    )
    # the member's notification, v1 and grouped v2, carrying the warning
    notes = await asyncio.to_thread(c.member.api.notifications, types=["moderation_warning"])
    assert len(notes) == 1
    note = notes[0]
    assert note["type"] == "moderation_warning" and note["account"]["id"] == c.member.id
    w = note["moderation_warning"]
    assert w["action"] == "silence" and w["text"] == "Please be kind."
    assert w["status_ids"] == [post["id"]] and w["target_account"]["id"] == c.member.id
    code, grouped = _get(base, c.member, "/api/v2/notifications")
    assert code == 200
    group = [g for g in grouped["notification_groups"] if g["type"] == "moderation_warning"]
    assert group and group[0]["moderation_warning"]["id"] == w["id"]

    # the member's own warnings; nobody else's
    code, mine = _get(base, c.member, "/api/v1/redpoll/warnings")
    assert code == 200 and [x["id"] for x in mine] == [w["id"]]
    assert mine[0]["appeal"] is None and set(mine[0]) == {
        "id", "action", "text", "status_ids", "target_account", "appeal", "created_at",
        "appealable", "appealable_until",
    }  # fmt: skip
    # Redpoll's: until when it may be appealed (limits.APPEAL_WINDOW_S after it)
    made = datetime.fromisoformat(mine[0]["created_at"].replace("Z", "+00:00"))
    until = datetime.fromisoformat(mine[0]["appealable_until"].replace("Z", "+00:00"))
    assert (until - made).total_seconds() == pytest.approx(limits.APPEAL_WINDOW_S, abs=1)
    assert mine[0]["appealable"] is True
    assert _get(base, c.target, f"/api/v1/redpoll/warnings/{w['id']}")[0] == 404
    assert (
        _post(base, c.target, f"/api/v1/redpoll/warnings/{w['id']}/appeal", data={"text": "x"})[0]
        == 404
    )

    # moderators read an account's warnings; a member may not
    code, of = _get(base, c.mod, f"/api/v1/redpoll/admin/accounts/{c.member.id}/warnings")
    assert code == 200 and [x["id"] for x in of] == [w["id"]]
    assert _get(base, c.member, f"/api/v1/redpoll/admin/accounts/{c.member.id}/warnings") == (
        403,
        {"error": NOT_ALLOWED},
    )

    # one appeal, with a text
    path = f"/api/v1/redpoll/warnings/{w['id']}/appeal"
    assert _post(base, c.member, path, data={"text": ""})[0] == 422
    code, appealed = _post(base, c.member, path, data={"text": "I was quoting someone."})
    assert code == 200, appealed
    assert appealed["appeal"] == {"text": "I was quoting someone.", "state": "pending"}
    assert appealed["appealable"] is False  # once
    code, again = _post(base, c.member, path, data={"text": "Please?"})
    assert code == 422 and "appealed already" in again["error"]

    # appeals: listed for manage_appeals (admin, owner), refused to a moderator and a member
    for who in (c.mod, c.member):
        assert _get(base, who, "/api/v1/redpoll/admin/appeals") == (403, {"error": NOT_ALLOWED})
        decide = f"/api/v1/redpoll/admin/appeals/{w['id']}/approve"
        assert _post(base, who, decide) == (403, {"error": NOT_ALLOWED})
    code, listed = _get(base, c.admin, "/api/v1/redpoll/admin/appeals", params={"state": "pending"})
    assert code == 200 and w["id"] in [x["id"] for x in listed]
    assert (await asyncio.to_thread(c.admin.api.admin_account, c.member.id))["silenced"] is True
    code, approved = _post(base, c.admin, f"/api/v1/redpoll/admin/appeals/{w['id']}/approve")
    assert code == 200 and approved["appeal"]["state"] == "approved"
    assert (await asyncio.to_thread(c.admin.api.admin_account, c.member.id))["silenced"] is False
    code, _ = _post(base, c.owner, f"/api/v1/redpoll/admin/appeals/{w['id']}/reject")
    assert code == 422  # decided already (a state clash: Mastodon says 422)
    code, none_pending = _get(
        base, c.owner, "/api/v1/redpoll/admin/appeals", params={"state": "pending"}
    )
    assert w["id"] not in [x["id"] for x in none_pending]

    # a second strike, appealed and rejected by the owner: the action stays
    await asyncio.to_thread(c.mod.api.admin_account_moderate, c.target.id, "sensitive", text="nsfw")
    code, theirs = _get(base, c.target, "/api/v1/redpoll/warnings")
    second = theirs[0]
    assert second["action"] == "sensitive"
    _post(base, c.target, f"/api/v1/redpoll/warnings/{second['id']}/appeal", data={"text": "no"})
    code, rejected = _post(base, c.owner, f"/api/v1/redpoll/admin/appeals/{second['id']}/reject")
    assert code == 200 and rejected["appeal"]["state"] == "rejected"
    assert (await asyncio.to_thread(c.admin.api.admin_account, c.target.id))["sensitized"] is True

    # send_email_notification=false: a strike kept, no notification
    before = len(await asyncio.to_thread(c.target.api.notifications, types=["moderation_warning"]))
    with httpx.Client(base_url=base, timeout=30, headers=bearer(c.mod)) as http:
        r = http.post(
            f"/api/v1/admin/accounts/{c.target.id}/action",
            data={"type": "none", "text": "quiet", "send_email_notification": "false"},
        )
        assert r.status_code == 200, r.text
    after = await asyncio.to_thread(c.target.api.notifications, types=["moderation_warning"])
    assert len(after) == before
    assert len(_get(base, c.target, "/api/v1/redpoll/warnings")[1]) == 2

    # the audit log: the actions and the decisions, read with view_audit_log only
    code, log = _get(base, c.mod, "/api/v1/redpoll/admin/audit_log", params={"limit": 50})
    assert code == 200
    seen = {(e["action"], e["target_type"], e["target_id"]) for e in log}
    assert ("silence", "Account", c.member.id) in seen
    assert ("approve_appeal", "Appeal", w["id"]) in seen
    assert ("reject_appeal", "Appeal", second["id"]) in seen
    who = {e["action"]: e["account"]["id"] for e in log if e["account"]}
    assert who["approve_appeal"] == c.admin.id and who["reject_appeal"] == c.owner.id
    assert _get(base, c.member, "/api/v1/redpoll/admin/audit_log") == (403, {"error": NOT_ALLOWED})


async def test_rules_and_settings_by_role(srv, rp):
    c = await cast(srv, rp)
    base = srv.base
    # rules: manage_rules (admin, owner), not a moderator or a member
    for who in (c.mod, c.member):
        assert _get(base, who, "/api/v1/redpoll/admin/rules") == (403, {"error": NOT_ALLOWED})
        assert _post(base, who, "/api/v1/redpoll/admin/rules", data={"text": "x"})[0] == 403
    code, rule = _post(
        base, c.admin, "/api/v1/redpoll/admin/rules", data={"text": "Be kind", "hint": "always"}
    )
    assert code == 200 and rule["text"] == "Be kind"
    public = httpx.get(base + "/api/v1/instance/rules").json()
    assert {"id": rule["id"], "text": "Be kind", "hint": "always"} in public
    assert _post(base, c.admin, "/api/v1/redpoll/admin/rules", data={"text": " "})[0] == 422
    code, _ = raw(base, c.owner, "DELETE", f"/api/v1/redpoll/admin/rules/{rule['id']}")
    assert code == 200
    assert rule["id"] not in [r["id"] for r in httpx.get(base + "/api/v1/instance/rules").json()]
    assert raw(base, c.owner, "DELETE", f"/api/v1/redpoll/admin/rules/{rule['id']}")[0] == 404

    # settings: manage_settings; the instance entities show them
    for who in (c.mod, c.member):
        assert _get(base, who, "/api/v1/redpoll/admin/settings") == (403, {"error": NOT_ALLOWED})
        assert (
            raw(base, who, "PUT", "/api/v1/redpoll/admin/settings", data={"title": "x"})[0] == 403
        )
    code, set_ = raw(
        base,
        c.admin,
        "PUT",
        "/api/v1/redpoll/admin/settings",
        data={
            "title": "Birdhouse",
            "short_description": "A small place.",
            "extended_description": "Long words.",
            "email": "staff@example.com",
        },
    )
    assert code == 200 and set_["title"] == "Birdhouse"
    v2 = httpx.get(base + "/api/v2/instance").json()
    assert v2["title"] == "Birdhouse" and v2["description"] == "A small place."
    assert v2["contact"]["email"] == "staff@example.com"
    assert httpx.get(base + "/api/v1/instance").json()["short_description"] == "A small place."
    ext = httpx.get(base + "/api/v1/instance/extended_description").json()
    assert "Long words." in ext["content"]
    bad = raw(
        base,
        c.admin,
        "PUT",
        "/api/v1/redpoll/admin/settings",
        data={"email": "nope", "title": "Other"},
    )
    assert bad[0] == 422
    assert httpx.get(base + "/api/v2/instance").json()["title"] == "Birdhouse"  # all or none
    code, cleared = raw(base, c.admin, "PUT", "/api/v1/redpoll/admin/settings", data={"title": ""})
    assert code == 200 and cleared["title"] == ""
    assert httpx.get(base + "/api/v2/instance").json()["title"] != "Birdhouse"  # the default again
    code, log = _get(base, c.owner, "/api/v1/redpoll/admin/audit_log")
    actions = [(e["action"], e["target_type"]) for e in log]
    assert ("create", "Rule") in actions and ("destroy", "Rule") in actions
    assert ("update", "Instance") in actions


async def test_registrations_mode_by_role(srv, rp):
    c = await cast(srv, rp)
    base, path = srv.base, "/api/v1/redpoll/admin/registrations"
    for who in (c.mod, c.member):
        assert _get(base, who, path) == (403, {"error": NOT_ALLOWED})
        assert raw(base, who, "PUT", path, data={"mode": "closed"})[0] == 403
    assert httpx.get(base + "/api/v2/instance").json()["registrations"]["enabled"] is True
    code, now = raw(
        base,
        c.admin,
        "PUT",
        path,
        data={"mode": "approval", "message": "Ask first.", "reason_required": "true"},
    )
    assert (code, now) == (
        200,
        {"mode": "approval", "message": "Ask first.", "reason_required": True},
    )
    assert _get(base, c.admin, path) == (200, now)
    regs = httpx.get(base + "/api/v2/instance").json()["registrations"]
    assert regs["approval_required"] is True and regs["reason_required"] is True
    assert raw(base, c.admin, "PUT", path, data={"mode": "sometimes"})[0] == 422
    assert _get(base, c.admin, path) == (200, now)  # nothing written
    code, back = raw(base, c.owner, "PUT", path, data={"mode": "open"})
    assert code == 200 and back == {
        "mode": "open",
        "message": "Ask first.",
        "reason_required": True,
    }
    code, log = _get(base, c.owner, "/api/v1/redpoll/admin/audit_log")
    assert [e["target"] for e in log if e["target_type"] == "Setting"][:2] == ["open", "approval"]
