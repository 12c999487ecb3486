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
    out = []
    for r in found:
        listed = await statuses.get_statuses(store, list(r.statuses))
        shown = await pages.show(store, r.reporter, listed)
        out.append(ReportView(r, people, shown, [x for x in rules if x.id in r.rule_ids]))
    return out
