"""What the admin API's report entities show beside a report: the accounts
it names, its statuses as its reporter is shown them (they were visible to
the reporter when reported; the viewer's flags in them are the reporter's
reads, not shown apart), its rules."""

from __future__ import annotations

from dataclasses import dataclass

from ..instance import instance
from ..reading import pages
from ..records import statuses
from ..storage.store import Store
from . import admin_accounts as accounts
from .admin_accounts import AdminAccount
from .moderation import Report


@dataclass(frozen=True)
class ReportView:
    report: Report
    people: dict[int, AdminAccount]
    shown: pages.Shown
    rules: list[instance.Rule]


async def of_reports(store: Store, found: list[Report]) -> list[ReportView]:
    """For a caller that has checked the actor's permission."""
    uids = {u for r in found for u in (r.reporter, r.account, r.assigned, r.action_taken_by) if u}
    people = await accounts.people(store, uids)
    rules = await instance.rules(store)
    # one read of every report's statuses, then one visibility pass per reporter
    listed = {
        s.id: s
        for s in await statuses.get_statuses(
            store, sorted({sid for r in found for sid in r.statuses})
        )
    }
    by_reporter: dict[int, pages.Shown] = {}
    for reporter in {r.reporter for r in found}:
        theirs = sorted(
            {sid for r in found if r.reporter == reporter for sid in r.statuses if sid in listed}
        )
        by_reporter[reporter] = await pages.show(store, reporter, [listed[i] for i in theirs])
    out = []
    for r in found:
        seen = by_reporter[r.reporter]
        mine = set(r.statuses)
        shown = pages.Shown(
            [s for s in seen.statuses if s.id in mine], seen.states, seen.users, seen.originals
        )
        out.append(ReportView(r, people, shown, [x for x in rules if x.id in r.rule_ids]))
    return out
