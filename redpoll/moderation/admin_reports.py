"""Reports as moderators handle them (Mastodon's admin API): listing with
its filters, one report, assigning it, resolving and reopening it, its
category and rules. A report and the index of open ones share the slot
{reports}: each change is one script (report_change.lua), refused whole
for a report that is not there. The audit entry follows it (redpoll.admin.audit)."""

from __future__ import annotations

import json

from ..admin import audit, roles, staff
from ..core import keys, limits, validate
from ..core.errors import NotFound, ValidationError
from ..core.models import now_ms
from ..instance import activity, instance
from ..storage.store import Store
from . import moderation
from .moderation import Report, ReportNotFound


def _pairs(raw) -> dict:
    return dict(zip(raw[0::2], raw[1::2])) if isinstance(raw, list) else raw


async def get(store: Store, rid) -> Report:
    rid = validate.an_id(rid, "report_id")
    raw = await store.hgetall(keys.report(rid))
    if not raw or b"id" not in raw:
        raise ReportNotFound(f"report {rid} does not exist")
    return Report.from_hash(raw)


async def change(store: Store, rid: int, op: str, *args) -> Report:
    """One change (report_change.lua); ReportNotFound if the report is not there."""
    try:
        raw = await store.run(
            "report_change", [keys.report(rid), keys.REPORTS_OPEN], [op, now_ms(), *args]
        )
    except NotFound:
        raise ReportNotFound(f"report {rid} does not exist") from None
    if op == "resolve":  # the day's resolved reports (idempotent)
        await activity.count(store, "resolved", rid)
    return Report.from_hash(_pairs(raw))


async def _read(store: Store, ids) -> list[Report]:
    rows = await store.batch([("HGETALL", keys.report(int(i))) for i in ids])
    return [Report.from_hash(_pairs(r)) for r in rows if r and b"id" in _pairs(r)]


async def open_about(store: Store, uid: int) -> list[Report]:
    """The open reports about account ``uid`` (the newest
    limits.ADMIN_REPORTS_SCAN open reports are looked at)."""
    ids = await store.zrevrange(keys.REPORTS_OPEN, 0, limits.ADMIN_REPORTS_SCAN - 1)
    found = []
    for start in range(0, len(ids), limits.ADMIN_SCAN_BATCH):
        found += [
            r
            for r in await _read(store, ids[start : start + limits.ADMIN_SCAN_BATCH])
            if r.account == uid
        ]
    return found


async def reports(
    store: Store,
    actor: int | None,
    *,
    resolved: bool = False,
    unresolved: bool = False,
    account_id=None,
    target_account_id=None,
    max_id=None,
    since_id=None,
    min_id=None,
    limit=None,
) -> list[Report]:
    """Newest first: open reports, or resolved ones with ``resolved``, or
    both with ``resolved`` and ``unresolved``; by reporter and by target when
    given. Walks at most limits.ADMIN_REPORTS_SCAN reports."""
    roles.require(await staff.role_of(store, actor), "manage_reports")
    limit = validate.page_limit(limit, limits.ADMIN_PAGE_DEFAULT, limits.ADMIN_PAGE_MAX)
    reporter = validate.optional_id(account_id, "account_id")
    target = validate.optional_id(target_account_id, "target_account_id")
    key = keys.REPORTS_OPEN if not resolved or unresolved else keys.REPORTS
    if resolved and unresolved:
        key = keys.REPORTS
    if min_id is not None:
        lo, hi, rev = f"({validate.an_id(min_id, 'min_id')}", "+inf", False
    else:
        hi = f"({validate.an_id(max_id, 'max_id')}" if max_id is not None else "+inf"
        lo = f"({validate.an_id(since_id, 'since_id')}" if since_id is not None else "-inf"
        rev = True
    out: list[Report] = []
    scanned = 0
    while scanned < limits.ADMIN_REPORTS_SCAN and len(out) < limit:
        if rev:
            (ids,) = await store.batch(
                [("ZRANGE", key, hi, lo, "BYSCORE", "REV", "LIMIT", 0, limits.ADMIN_SCAN_BATCH)]
            )
        else:
            (ids,) = await store.batch(
                [("ZRANGE", key, lo, hi, "BYSCORE", "LIMIT", 0, limits.ADMIN_SCAN_BATCH)]
            )
        if not ids:
            break
        scanned += len(ids)
        for r in await _read(store, ids):
            if resolved and not unresolved and r.resolved_at is None:
                continue
            if reporter is not None and r.reporter != reporter:
                continue
            if target is not None and r.account != target:
                continue
            out.append(r)
            if len(out) == limit:
                break
        if rev:
            hi = f"({int(ids[-1])}"
        else:
            lo = f"({int(ids[-1])}"
    return out if rev else out[::-1]


async def report(store: Store, actor: int | None, rid) -> Report:
    found = await get(store, rid)
    roles.require(await staff.role_of(store, actor), "manage_reports")
    return found


#: a change -> its audit log action (Mastodon's names)
_LOGGED = {
    "assign": "assigned_to_self",
    "unassign": "unassigned",
    "resolve": "resolve",
    "reopen": "reopen",
    "update": "update",
}


async def moderate(store: Store, actor: int | None, rid, op: str, *args) -> Report:
    """Assign to the actor, unassign, resolve or reopen a report."""
    await report(store, actor, rid)  # 404, then 403
    if op in ("assign", "resolve"):
        args = (actor or 0,)
    found = await change(store, validate.an_id(rid, "report_id"), op, *args)
    await audit.record(store, actor, _LOGGED[op], "Report", found.id, f"#{found.id}")
    return found


async def update(
    store: Store, actor: int | None, rid, category: str | None, rule_ids: list | None
) -> Report:
    """Change a report's category and rules (those given): rules must be the
    server's (422 otherwise, nothing written)."""
    was = await report(store, actor, rid)
    category = was.category if category is None else category
    if category not in moderation.CATEGORIES:
        raise ValidationError("category", "must be one of " + ", ".join(moderation.CATEGORIES))
    rules = (
        list(was.rule_ids)
        if rule_ids is None
        else [validate.an_id(i, "rule_ids") for i in rule_ids]
    )
    known = {r.id for r in await instance.rules(store)}
    if set(rules) - known:
        raise ValidationError("rule_ids", "must be rules of this server")
    found = await change(store, was.id, "update", category, json.dumps(sorted(set(rules))))
    await audit.record(store, actor, "update", "Report", found.id, f"#{found.id}")
    return found
