"""The admin dashboard (measures, dimensions, retention) and the instance
activity through Mastodon.py against a real ``redpoll serve``: sign-ups,
logins, posts, favourites, boosts, replies and reports come back in today's
figures, the previous period is the days just before, a member and a token
without admin:read are refused; on one server and on the cluster."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from mastodon import Mastodon, MastodonAPIError

from redpoll.instance import activity

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]

PASSWORD = "correct horse battery"
SCOPES = ["read", "write", "follow", "admin:read", "admin:write"]
NOT_ALLOWED = "This action is not allowed"
DAY_MS = 86_400_000


@dataclass
class Person:
    api: Mastodon
    login: str
    id: str


def people(base: str, n: int, scopes=SCOPES) -> list[Person]:
    cid, secret = Mastodon.create_app("dashboard", api_base_url=base, scopes=scopes)
    out = []
    for _ in range(n):
        login = "u" + uuid.uuid4().hex[:10]
        m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
        m.create_account(login, PASSWORD, f"{login}@example.com", agreement=True, scopes=scopes)
        out.append(Person(m, login, str(m.me()["id"])))
    return out


def read_only(base: str, login: str) -> Mastodon:
    cid, secret = Mastodon.create_app("read-only", api_base_url=base, scopes=["read"])
    m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
    m.log_in(login, PASSWORD, scopes=["read"], allow_http=True)
    return m


def call(m: Mastodon, name: str, *args, **kwargs):
    return asyncio.to_thread(getattr(m, name), *args, **kwargs)


def midnight(days_ago: int = 0) -> datetime:
    now = datetime.now(UTC)
    return datetime(now.year, now.month, now.day, tzinfo=UTC) - timedelta(days=days_ago)


def by_key(found) -> dict:
    return {m["key"]: m for m in found}


def values(measure) -> list[str]:
    return [str(p["value"]) for p in measure["data"]]


def day(value) -> str:
    """A point's date as YYYY-MM-DD (Mastodon.py may have parsed it)."""
    return value.strftime("%Y-%m-%d") if isinstance(value, datetime) else str(value)[:10]


async def refused(m: Mastodon, name: str, *args, **kwargs) -> tuple[int, str]:
    with pytest.raises(MastodonAPIError) as exc:
        await call(m, name, *args, **kwargs)
    return exc.value.args[1], str(exc.value)


COUNTED = dict(
    active_users=True, new_users=True, interactions=True, opened_reports=True, resolved_reports=True
)


async def test_the_dashboard_counts_what_happens_today(srv, rp):
    mod, ann, bob = await asyncio.to_thread(people, srv.base, 3)
    await rp.admin.set_role(None, mod.login, "moderator")
    today = midnight()

    before = by_key(await call(mod.api, "admin_measures", today, today, **COUNTED))
    assert set(before) == set(COUNTED)
    assert before["new_users"]["total"] == "3" and before["active_users"]["total"] == "3"
    assert before["interactions"]["total"] == "0" and before["opened_reports"]["total"] == "0"

    # real actions: posts, a reply, a favourite, a boost, a report and its resolution
    first = await call(ann.api, "status_post", "hello #dashboard")
    await call(ann.api, "status_post", "again #dashboard")
    await call(bob.api, "status_post", "a reply", in_reply_to_id=first["id"])
    await call(bob.api, "status_favourite", first["id"])
    await call(bob.api, "status_favourite", first["id"])  # twice is once
    await call(bob.api, "status_reblog", first["id"])
    report = await call(ann.api, "report", bob.id, comment="rude")
    await rp.drain()
    after = by_key(await call(mod.api, "admin_measures", today, today, **COUNTED))
    assert {k: m["total"] for k, m in after.items()} == {
        "active_users": "3",
        "new_users": "3",
        "interactions": "3",
        "opened_reports": "1",
        "resolved_reports": "0",
    }
    await call(mod.api, "admin_report_resolve", report["id"])
    # a warning that resolves a report counts it too
    second = await call(bob.api, "report", ann.id, comment="spam")
    await call(mod.api, "admin_account_moderate", ann.id, None, report_id=second["id"])
    after = by_key(await call(mod.api, "admin_measures", today, today, **COUNTED))
    assert (after["opened_reports"]["total"], after["resolved_reports"]["total"]) == ("2", "2")
    for m in after.values():
        assert m["unit"] is None and len(m["data"]) == 1 and m["previous_total"] == "0"
        assert values(m) == [m["total"]]

    # a period of three days: a point a day, today's last; the previous
    # period is the three days before (a sign-up counted two days ago and
    # five days ago, by the writer a sign-up calls)
    now = int(time.time() * 1000)
    await activity.joined(rp.store, 10_001, now - 2 * DAY_MS)
    await activity.joined(rp.store, 10_002, now - 5 * DAY_MS)
    three = by_key(
        await call(
            mod.api, "admin_measures", midnight(2), today, new_users=True, tag_uses="dashboard"
        )
    )
    assert values(three["new_users"]) == ["1", "0", "3"]
    assert (three["new_users"]["total"], three["new_users"]["previous_total"]) == ("4", "1")
    assert [day(p["date"]) for p in three["new_users"]["data"]] == [
        midnight(d).strftime("%Y-%m-%d") for d in (2, 1, 0)
    ]
    assert values(three["tag_uses"]) == ["0", "0", "2"] and three["tag_uses"]["total"] == "2"
    one = by_key(await call(mod.api, "admin_measures", today, today, new_users=True))
    assert one["new_users"]["previous_total"] == "0"  # yesterday: none

    # the instance activity: 12 weeks, this one first, from the same counters
    week_rows = await call(bob.api, "instance_activity")
    assert len(week_rows) == 12
    row = week_rows[0]
    started = (
        int(row["week"].timestamp()) if hasattr(row["week"], "timestamp") else int(row["week"])
    )
    assert abs(started - time.time()) < 600
    assert tuple(str(row[k]) for k in ("statuses", "logins", "registrations")) == ("3", "3", "3")
    assert all((str(r["statuses"]), str(r["logins"])) == ("0", "0") for r in week_rows[1:])
    # as Mastodon's, a row is the seven days from i weeks ago on: the first
    # is today (and days to come), the second the six days before and a week ago
    assert [str(r["registrations"]) for r in week_rows[:3]] == ["3", "2", "0"]
    r = await asyncio.to_thread(httpx.get, srv.base + "/api/v1/instance/activity", timeout=30)
    assert r.status_code == 200 and r.headers["cache-control"].startswith("public")
    assert [w["registrations"] for w in r.json()][:2] == ["3", "2"]

    # retention: today's three sign-ups all active today; the one of two
    # days ago never signed in
    cohorts = await call(mod.api, "admin_retention", midnight(2), today, frequency="day")
    assert [c["frequency"] for c in cohorts] == ["day"] * 3
    assert [len(c["data"]) for c in cohorts] == [3, 2, 1]
    assert [(str(d["value"]), d["rate"]) for d in cohorts[2]["data"]] == [("3", 1.0)]
    assert [(str(d["value"]), d["rate"]) for d in cohorts[0]["data"]] == [("0", 0.0)] * 3
    monthly = await call(mod.api, "admin_retention", today, today, frequency="month")
    assert len(monthly) == 1 and monthly[0]["frequency"] == "month"
    assert str(monthly[0]["data"][0]["value"]) == "3"


async def test_dimensions_and_who_may_read_the_dashboard(srv, rp):
    owner, mod, member = await asyncio.to_thread(people, srv.base, 3)
    await rp.admin.set_role(None, owner.login, "owner")
    await rp.admin.set_role(None, mod.login, "moderator")
    today = midnight()
    found = by_key(
        await call(
            owner.api,
            "admin_dimensions",
            today,
            today,
            space_usage=True,
            software_versions=True,
            languages=True,
            sources=True,
            servers=True,
        )
    )
    assert set(found) == {"space_usage", "software_versions", "languages", "sources", "servers"}
    [redis] = found["space_usage"]["data"]
    assert redis["key"] == "redis" and int(redis["value"]) > 0 and redis["unit"] == "bytes"
    assert {row["key"] for row in found["software_versions"]["data"]} == {"mastodon", "redis"}
    r = await asyncio.to_thread(
        httpx.post,
        srv.base + "/api/v1/admin/dimensions",
        json={"keys": ["software_versions"], "start_at": "2026-01-01", "end_at": "2026-01-01"},
        headers={"Authorization": f"Bearer {owner.api.access_token}"},
        timeout=30,
    )
    versions = {row["key"]: row["value"] for row in r.json()[0]["data"]}
    assert versions["redis"][0].isdigit() and versions["mastodon"][0].isdigit()
    assert found["languages"]["data"] == found["sources"]["data"] == []  # not counted: no rows

    # a moderator may (view_dashboard); a member may not; nor a token without admin:read
    assert (await call(mod.api, "admin_measures", today, today, new_users=True))[0]["total"]
    for name, kw in (
        ("admin_measures", {"new_users": True}),
        ("admin_dimensions", {"space_usage": True}),
        ("admin_retention", {}),
    ):
        status, _ = await refused(member.api, name, today, today, **kw)
        assert status == 403
    r = await asyncio.to_thread(
        httpx.post,
        srv.base + "/api/v1/admin/retention",
        json={"start_at": "2026-01-01", "end_at": "2026-01-01"},
        headers={"Authorization": f"Bearer {member.api.access_token}"},
        timeout=30,
    )
    assert (r.status_code, r.json()) == (403, {"error": NOT_ALLOWED})
    reader = await asyncio.to_thread(read_only, srv.base, owner.login)
    r = await asyncio.to_thread(
        httpx.post,
        srv.base + "/api/v1/admin/measures",
        json={"keys": ["new_users"], "start_at": "2026-01-01", "end_at": "2026-01-01"},
        headers={"Authorization": f"Bearer {reader.access_token}"},
        timeout=30,
    )
    assert (r.status_code, r.json()) == (
        403,
        {"error": "This action is outside the authorized scopes"},
    )

    # bad periods are Mastodon's 422, nothing answered
    status, _ = await refused(owner.api, "admin_measures", today, midnight(1), new_users=True)
    assert status == 422
    r = await asyncio.to_thread(
        httpx.post,
        srv.base + "/api/v1/admin/measures",
        json={"keys": ["new_users"], "end_at": "2026-01-01"},
        headers={"Authorization": f"Bearer {owner.api.access_token}"},
        timeout=30,
    )
    assert r.status_code == 422 and "start_at" in r.json()["error"]
