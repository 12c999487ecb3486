"""Mastodon's admin API as the engine offers it (``Redpoll.admin``): one
method per admin action, each one domain function (accounts and reports:
redpoll.moderation's admin_accounts and admin_reports; domain blocks:
redpoll.federation.domain_admin; roles and the audit log: redpoll.admin),
with the actor (an account id; None: the operator at ``redpoll admin``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from ..accounts import email_blocks, ip_blocks
from ..admin import audit, custom_roles, metrics, roles, server
from ..bus.queue import JobQueue
from ..core import limits
from ..core.models import User
from ..core.settings import Settings
from ..federation import domain_admin as domain_blocks
from ..federation import domains
from ..mail import notices
from ..moderation import admin_accounts as accounts
from ..moderation import admin_reports as reports
from ..moderation import appeals, moderation, trends_review
from ..moderation import report_views as views
from ..moderation.admin_accounts import AdminAccount, Filter
from ..moderation.moderation import Report
from ..moderation.report_views import ReportView
from ..moderation.warnings import Warning
from ..storage.store import Store


class Desk:
    def __init__(
        self,
        store: Store,
        queue: JobQueue,
        purge_later: Callable[[int, str], None],
        settings: Settings | None = None,
    ):
        self.store = store
        self.queue = queue
        #: what the mails to members need (redpoll.mail); None: none are sent
        self.mail_settings = settings
        #: purges a deleted account's keys once its jobs drained (the engine's task)
        self.purge_later = purge_later
        #: (when read, the no_access IP blocks' networks), kept per process
        self._no_access: tuple[float, list] = (float("-inf"), [])

    # --- accounts ------------------------------------------------------------------------
    async def accounts(self, actor, flt: Filter, **page: Any):
        return await accounts.accounts(self.store, actor, flt, **page)

    async def account(self, actor, uid) -> AdminAccount:
        return await accounts.account(self.store, actor, uid)

    async def act(self, actor, uid, kind: str, **options: Any) -> AdminAccount:
        """The action, then (``send_email``, Mastodon's send_email_notification,
        default on) the member is mailed it and its text (redpoll.mail.notices)."""
        found = await accounts.act(self.store, actor, uid, kind, **options)
        if options.get("send_email", True) and self.mail_settings is not None:
            text = options.get("text") or ""
            await notices.moderation_action(
                self.store, self.mail_settings, found.user.id, kind, text
            )
        return found

    async def enable(self, actor, uid) -> AdminAccount:
        return await accounts.enable(self.store, actor, uid)

    async def unsilence(self, actor, uid) -> AdminAccount:
        return await accounts.unsilence(self.store, actor, uid)

    async def unsensitive(self, actor, uid) -> AdminAccount:
        return await accounts.unsensitive(self.store, actor, uid)

    async def unsuspend(self, actor, uid) -> AdminAccount:
        return await accounts.unsuspend(self.store, actor, uid)

    async def approve(self, actor, uid) -> AdminAccount:
        """Approve a pending account; the member is mailed, as Mastodon does,
        the mail queued in the step that finishes the approval's journal."""
        return await accounts.approve(self.store, self.queue, self.mail_settings, actor, uid)

    async def reject(self, actor, uid) -> AdminAccount:
        """Reject a pending account: it is deleted (as Mastodon's reject
        does: its login and e-mail are free again once its keys are purged,
        after its jobs drained); the audit entry once the first part is done."""
        found = await accounts.pending(self.store, actor, uid)
        await moderation.delete_account(self.store, self.queue, found.user.login, uid=found.user.id)
        await audit.record(self.store, actor, "reject", "Account", found.user.id, found.user.login)
        self.purge_later(found.user.id, found.user.login)
        return found

    async def delete_account(self, actor, uid) -> AdminAccount:
        """Delete a suspended account for good (redpoll.moderation.moderation
        .delete_account here, its keys purged once its jobs drained); the
        audit entry once the first part is done."""
        found = await accounts.deletable(self.store, actor, uid)
        await moderation.delete_account(self.store, self.queue, found.user.login, uid=found.user.id)
        await audit.record(self.store, actor, "destroy", "Account", found.user.id, found.user.login)
        self.purge_later(found.user.id, found.user.login)
        return found

    async def set_role(self, actor, login: str, name: str) -> User:
        return await accounts.set_role(self.store, actor, login, name)

    async def set_role_id(self, actor, uid, role_id: int | None) -> AdminAccount:
        return await accounts.set_role_id(self.store, actor, uid, role_id)

    # --- roles (redpoll.admin.roles, custom_roles) ------------------------------------
    async def role_table(self) -> roles.Roles:
        """Every role as defined now (read each call: never kept)."""
        return await roles.load(self.store)

    async def role_of(self, user: User | None) -> roles.Role:
        return await roles.of(self.store, user)

    async def roles(self, actor) -> list[roles.Role]:
        return await custom_roles.listed(self.store, actor)

    async def define_role(self, actor, name: str, permissions: int, position: int, **rest):
        return await custom_roles.define(self.store, actor, name, permissions, position, **rest)

    async def update_role(self, actor, rid, **changes: Any) -> roles.Role:
        return await custom_roles.update(self.store, actor, rid, **changes)

    async def remove_role(self, actor, rid) -> roles.Role:
        return await custom_roles.remove(self.store, actor, rid)

    # --- strikes and appeals (redpoll.moderation.appeals) -------------------------------
    async def warnings_of(self, actor, uid) -> list[Warning]:
        return await appeals.of_account(self.store, actor, uid)

    async def appeals(self, actor, state: str | None = None) -> list[Warning]:
        return await appeals.appealed(self.store, actor, state)

    async def decide_appeal(self, actor, wid, approve: bool) -> Warning:
        return await appeals.decide(self.store, actor, wid, approve)

    # --- the server's rules and settings (redpoll.admin.server) --------------------------
    async def rules(self, actor):
        return await server.rules(self.store, actor)

    async def add_rule(self, actor, text: str, hint: str = ""):
        return await server.add_rule(self.store, actor, text, hint)

    async def remove_rule(self, actor, rid) -> None:
        await server.remove_rule(self.store, actor, rid)

    async def settings(self, actor) -> tuple[dict[str, str], str]:
        return await server.settings(self.store, actor)

    async def set_settings(self, actor, changes: dict, description=None):
        return await server.set_settings(self.store, actor, changes, description)

    async def registrations(self, actor):
        return await server.registrations_for(self.store, actor)

    async def set_registrations(self, actor, mode: str, message=None, reason_required=None):
        return await server.set_registrations(self.store, actor, mode, message, reason_required)

    async def read_audit_log(self, actor, limit: int = 100, before=None) -> list[audit.Entry]:
        """The audit log for a member whose role may read it (view_audit_log)."""
        return await server.audit_log(self.store, actor, limit, before)

    # --- reports (each with what its entity shows: views.ReportView) ---------------------
    async def reports(self, actor, **query: Any) -> list[ReportView]:
        return await views.of_reports(self.store, await reports.reports(self.store, actor, **query))

    async def report(self, actor, rid) -> ReportView:
        return await self._view(await reports.report(self.store, actor, rid))

    async def moderate_report(self, actor, rid, op: str) -> ReportView:
        return await self._view(await reports.moderate(self.store, actor, rid, op))

    async def update_report(self, actor, rid, category=None, rule_ids=None) -> ReportView:
        return await self._view(await reports.update(self.store, actor, rid, category, rule_ids))

    async def _view(self, found: Report) -> ReportView:
        return (await views.of_reports(self.store, [found]))[0]

    # --- domain blocks -------------------------------------------------------------------
    async def domain_blocks(self, actor) -> list[domains.Block]:
        return await domain_blocks.blocks(self.store, actor)

    async def domain_block(self, actor, bid) -> domains.Block:
        return await domain_blocks.block(self.store, actor, bid)

    async def create_domain_block(self, actor, host, severity=None, **flags) -> domains.Block:
        return await domain_blocks.create(self.store, actor, host, severity, **flags)

    async def update_domain_block(self, actor, bid, **changes) -> domains.Block:
        return await domain_blocks.update(self.store, actor, bid, **changes)

    async def remove_domain_block(self, actor, bid) -> domains.Block:
        return await domain_blocks.remove(self.store, actor, bid)

    # --- domain allows and the limited federation mode ----------------------------------
    async def domain_allows(self, actor) -> list[domains.Allow]:
        return await domain_blocks.allows(self.store, actor)

    async def domain_allow(self, actor, aid) -> domains.Allow:
        return await domain_blocks.allow_of(self.store, actor, aid)

    async def allow_domain(self, actor, host) -> domains.Allow:
        return await domain_blocks.allow(self.store, actor, host)

    async def remove_domain_allow(self, actor, aid) -> domains.Allow:
        return await domain_blocks.remove_allow(self.store, actor, aid)

    async def set_limited_federation(self, actor, on: bool) -> None:
        await domain_blocks.set_limited(self.store, actor, on)

    async def limited_federation(self) -> bool:
        return await domains.limited(self.store)

    # --- e-mail blocks (redpoll.accounts.email_blocks) ----------------------------------
    async def email_domain_blocks(self, actor) -> list[email_blocks.Block]:
        return await email_blocks.domain_blocks(self.store, actor)

    async def email_domain_block(self, actor, bid) -> email_blocks.Block:
        return await email_blocks.domain_block(self.store, actor, bid)

    async def block_email_domain(self, actor, domain) -> email_blocks.Block:
        return await email_blocks.block_domain(self.store, actor, domain)

    async def unblock_email_domain(self, actor, bid) -> email_blocks.Block:
        return await email_blocks.unblock_domain(self.store, actor, bid)

    async def canonical_email_blocks(self, actor) -> list[email_blocks.Block]:
        return await email_blocks.canonical_blocks(self.store, actor)

    async def canonical_email_block(self, actor, bid) -> email_blocks.Block:
        return await email_blocks.canonical_block(self.store, actor, bid)

    async def test_canonical_email(self, actor, email) -> list[email_blocks.Block]:
        return await email_blocks.test_canonical(self.store, actor, email)

    async def block_canonical_email(self, actor, email=None, digest=None) -> email_blocks.Block:
        return await email_blocks.block_canonical(self.store, actor, email, digest)

    async def unblock_canonical_email(self, actor, bid) -> email_blocks.Block:
        return await email_blocks.unblock_canonical(self.store, actor, bid)

    # --- IP blocks (redpoll.accounts.ip_blocks) -----------------------------------------
    async def ip_blocks(self, actor) -> list[ip_blocks.IpBlock]:
        return await ip_blocks.blocks(self.store, actor)

    async def ip_block(self, actor, bid) -> ip_blocks.IpBlock:
        return await ip_blocks.block(self.store, actor, bid)

    async def create_ip_block(self, actor, ip, severity, comment=None, expires_in=None):
        return await ip_blocks.create(self.store, actor, ip, severity, comment, expires_in)

    async def update_ip_block(self, actor, bid, **changes) -> ip_blocks.IpBlock:
        return await ip_blocks.update(self.store, actor, bid, **changes)

    async def remove_ip_block(self, actor, bid) -> ip_blocks.IpBlock:
        return await ip_blocks.remove(self.store, actor, bid)

    def refused_now(self, ip: str) -> bool | None:
        """Whether a no_access IP block refuses every request from ``ip``, by
        the networks this process read less than limits.IP_BLOCKS_KEPT_S
        ago; None when they must be read again (:meth:`refused`)."""
        at, networks = self._no_access
        if time.monotonic() - at > limits.IP_BLOCKS_KEPT_S:
            return None
        return bool(networks) and ip_blocks.within(ip, networks)

    async def refused(self, ip: str) -> bool:
        """:meth:`refused_now`, reading the networks again when due (the
        database away or slow, beyond limits.IP_BLOCKS_READ_S: the ones read
        last, tried again after the same time)."""
        known = self.refused_now(ip)
        if known is not None:
            return known
        try:
            networks = await asyncio.wait_for(
                ip_blocks.no_access_networks(self.store), limits.IP_BLOCKS_READ_S
            )
        except Exception:  # (any failure: the database away must not refuse or hold requests)
            networks = self._no_access[1]
        self._no_access = (time.monotonic(), networks)
        return bool(networks) and ip_blocks.within(ip, networks)

    async def sign_up_refused_from(self, ip: str) -> bool:
        """Whether an IP block refuses sign-ups from ``ip``."""
        return await ip_blocks.sign_up_refused(self.store, ip)

    # --- trends review (redpoll.moderation.trends_review) --------------------------------
    async def trending(self, actor, kind: str, *, offset=None, limit=None):
        return await trends_review.trending(self.store, actor, kind, offset=offset, limit=limit)

    async def trending_statuses(self, actor, *, offset=None, limit=None):
        return await trends_review.trending_statuses(self.store, actor, offset=offset, limit=limit)

    async def review_trend(self, actor, kind: str, item, approve: bool):
        return await trends_review.decide(self.store, actor, kind, item, approve)

    # --- the dashboard (redpoll.admin.metrics) ------------------------------------------
    async def measures(self, actor, keys, start_at, end_at, extra: dict):
        return await metrics.measures(self.store, actor, keys, start_at, end_at, extra)

    async def dimensions(self, actor, keys, start_at, end_at, limit=None):
        return await metrics.dimensions(self.store, actor, keys, start_at, end_at, limit)

    async def retention(self, actor, start_at, end_at, frequency=None):
        return await metrics.retention(self.store, actor, start_at, end_at, frequency)

    # --- the audit log -------------------------------------------------------------------
    async def audit_log(self, limit: int = 100, before: str | None = None) -> list[audit.Entry]:
        return await audit.entries(self.store, limit, before)
