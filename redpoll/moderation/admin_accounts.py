"""Moderating accounts, as Mastodon's admin API does: listing them with
its filters, showing one, its account actions (a warning, disable,
sensitive, silence, suspend), lifting them, approval of an account that
signed up while registrations needed it (approve; reject removes it, as
Mastodon does; both refused for an account not pending) and deletion.

Every call checks the actor's role first (redpoll.admin.roles; Forbidden
otherwise) and has written nothing when it refuses. The writes: a flag on
the user record is one script (staff.set_fields, account_flags.lua);
suspension, its lifting and deletion are redpoll.moderation.moderation's
(idempotent steps); each action then resolves the reports it settles and
appends its audit entries. The steps are idempotent and in that order, so a
call cut short is finished by making it again."""

from __future__ import annotations

from dataclasses import dataclass

from ..accounts import auth, standing
from ..admin import audit, roles, staff
from ..bus.queue import JobQueue
from ..core import keys, limits, validate
from ..core.errors import Forbidden, UserNotFound, ValidationError
from ..core.models import User
from ..core.settings import Settings
from ..mail import notices
from ..records import users
from ..storage.store import Store
from . import admin_reports as reports
from . import moderation, warnings
from .jobs import ApprovalJob

#: Mastodon's Admin::AccountAction types
ACTIONS = ("none", "disable", "sensitive", "silence", "suspend")
STATUSES = ("active", "pending", "disabled", "silenced", "suspended", "sensitized")
ORIGINS = ("local", "remote")


@dataclass(frozen=True, slots=True)
class AdminAccount:
    """An account as moderators see it: the record, its e-mail address
    (local accounts), and its role (None for another server's account)."""

    user: User
    email: str | None
    #: its e-mail address is confirmed (redpoll.accounts.standing)
    confirmed: bool = True
    #: why it signed up, when it had to wait for approval (Mastodon's invite request)
    reason: str | None = None
    #: the role it holds, as defined when read (None for another server's account)
    role: roles.Role | None = None

    @property
    def domain(self) -> str | None:
        return self.user.login.split("@", 1)[1] if self.user.remote else None


@dataclass(frozen=True, slots=True)
class Filter:
    """Mastodon's AccountFilter: each given condition must hold."""

    origin: str | None = None
    status: str | None = None
    by_domain: str | None = None
    username: str | None = None
    display_name: str | None = None
    email: str | None = None
    ip: str | None = None
    staff: bool = False
    role_ids: tuple[int, ...] = ()
    invited_by: int | None = None

    def __post_init__(self) -> None:
        if self.origin is not None and self.origin not in ORIGINS:
            raise ValidationError("origin", "must be local or remote")
        if self.status is not None and self.status not in STATUSES:
            raise ValidationError("status", "must be one of " + ", ".join(STATUSES))

    def matches(self, user: User, email: str | None, table: roles.Roles) -> bool:
        if self.origin == "local" and user.remote or self.origin == "remote" and not user.remote:
            return False
        status = self.status
        if status == "active" and user.suspended:
            return False
        if status == "pending" and not user.pending:
            return False
        if status == "disabled" and not (user.disabled and not user.suspended):
            return False
        if status == "silenced" and not user.silenced:
            return False
        if status == "suspended" and not user.suspended:
            return False
        if status == "sensitized" and not user.sensitized:
            return False
        name, _, domain = user.login.partition("@")
        if self.by_domain is not None and domain != self.by_domain.strip().lower():
            return False
        if self.username and not name.lower().startswith(self.username.strip().lower()):
            return False
        if self.display_name and self.display_name.lower() not in user.display_name.lower():
            return False
        if self.email and not (email or "").lower().startswith(self.email.strip().lower()):
            return False
        if self.ip:  # no sign-in addresses are kept
            return False
        if self.invited_by is not None and user.invited_by != self.invited_by:
            return False
        role = None if user.remote else table.of(user)
        if self.staff and not (role is not None and role.staff):
            return False
        if self.role_ids and (role is None or role.id not in self.role_ids):
            return False
        return True


async def _emails(store: Store, found: list[User]) -> dict[int, str | None]:
    return {uid: email for uid, (email, _, _) in (await _private(store, found)).items()}


async def _private(
    store: Store, found: list[User]
) -> dict[int, tuple[str | None, bool, str | None]]:
    """The e-mail address, whether it is confirmed (redpoll.accounts.standing)
    and the sign-up reason of each local account."""
    local = [u for u in found if not u.remote]
    rows = await store.batch(
        [("HMGET", keys.secrets(u.id), "email", standing.UNCONFIRMED, "reason") for u in local]
    )
    return {
        u.id: (e.decode() if e else None, w is None, r.decode() if r else None)
        for u, (e, w, r) in zip(local, rows)
    }


async def _shown(store: Store, users_found: list[User]) -> list[AdminAccount]:
    """The accounts with their e-mail details and roles (read now)."""
    private = await _private(store, users_found)
    table = await roles.load(store)
    return [
        AdminAccount(u, *private.get(u.id, (None, True, None)), None if u.remote else table.of(u))
        for u in users_found
    ]


async def _one(store: Store, uid) -> AdminAccount:
    user = await users.get_user(store, uid)  # UserNotFound: 404
    return (await _shown(store, [user]))[0]


async def accounts(
    store: Store,
    actor: int | None,
    flt: Filter,
    *,
    max_id=None,
    since_id=None,
    min_id=None,
    limit=None,
) -> tuple[list[AdminAccount], int | None]:
    """The accounts the filter lets through, newest first (by id), after
    ``min_id`` (the oldest of them) or between ``since_id`` and ``max_id``,
    and where to go on when the walk stopped at its bound
    (limits.ADMIN_ACCOUNTS_SCAN records) before the page was full, else None."""
    roles.require(await staff.role_of(store, actor), "manage_users")
    limit = validate.page_limit(limit, limits.ADMIN_PAGE_DEFAULT, limits.ADMIN_PAGE_MAX)
    top = int(await store.get(keys.USER_SEQ) or 0)
    if min_id is not None:
        lo = validate.an_id(min_id, "min_id") + 1
        order = range(lo, top + 1)
    else:
        hi = min(top, validate.an_id(max_id, "max_id") - 1) if max_id is not None else top
        lo = validate.an_id(since_id, "since_id") + 1 if since_id is not None else 1
        order = range(hi, lo - 1, -1)
    table = await roles.load(store)
    out: list[AdminAccount] = []
    read = 0
    resume = None
    step = limits.ADMIN_SCAN_BATCH
    for start in range(0, len(order), step):
        if read >= limits.ADMIN_ACCOUNTS_SCAN:
            resume = order[start]
            break
        uids = list(order[start : start + step])
        read += len(uids)
        rows = await store.batch([("HGETALL", keys.user(u)) for u in uids])
        found = [User.from_hash(p) for r in rows if r and b"id" in (p := _pairs(r))]
        emails = await _emails(store, found) if flt.email else {}
        for user in found:
            if flt.matches(user, emails.get(user.id), table):
                out.append(AdminAccount(user, None))
                if len(out) == limit:
                    break
        if len(out) == limit:
            break
    if min_id is not None:
        out.reverse()
    out = await _shown(store, [a.user for a in out])
    return out, (resume + 1 if resume is not None and min_id is None else None)


def _pairs(raw) -> dict:
    return dict(zip(raw[0::2], raw[1::2])) if isinstance(raw, list) else raw


async def people(store: Store, uids) -> dict[int, AdminAccount]:
    """The accounts ``uids`` as moderators see them (for a caller that has
    checked the actor's permission), unknown ones left out."""
    found = await users.get_users(store, sorted({u for u in uids if u}))
    return {a.user.id: a for a in await _shown(store, found)}


async def account(store: Store, actor: int | None, uid) -> AdminAccount:
    found = await _one(store, uid)
    roles.require(await staff.role_of(store, actor), "manage_users")
    return found


def _held(found: AdminAccount) -> roles.Role:
    return found.role if found.role is not None else roles.NONE


def _local(found: AdminAccount) -> None:
    """Mastodon refuses enable, approve and reject for another server's account."""
    if found.user.remote:
        raise Forbidden(roles.NOT_ALLOWED)


async def act(
    store: Store,
    actor: int | None,
    uid,
    kind: str,
    *,
    report_id=None,
    text: str = "",
    send_email: bool = True,
) -> AdminAccount:
    """An account action (Mastodon's Admin::AccountAction): ``none`` warns,
    the others also apply themselves; a report given is resolved by it, and
    an action other than a warning resolves every open report about the
    account. A strike is kept (redpoll.moderation.warnings) and, with
    ``send_email`` (Mastodon's send_email_notification), a local member gets
    its moderation_warning notification; the caller (redpoll.engine.admin)
    mails it. The warning's text and the action go to the audit log."""
    if kind not in ACTIONS:
        raise ValidationError("type", "must be one of " + ", ".join(ACTIONS))
    text = validate.text(text or "", "text", limits.ADMIN_WARNING_MAX_CHARS, allow_empty=True)
    target = await _one(store, uid)
    report = await reports.get(store, report_id) if report_id is not None else None
    role = await staff.role_of(store, actor)
    # Mastodon's admin API authorizes the account's show? (manage_users)
    # before the action's own policy (manage_users or manage_reports)
    roles.require(role, "manage_users")
    if kind == "disable":
        if target.user.remote:
            raise ValidationError("type", "disable is for accounts of this server")
        roles.require_over(role, _held(target), "manage_users")
    else:
        roles.require_over(role, _held(target), "manage_users", "manage_reports")
    if kind == "none":
        settled = [report] if report is not None and report.resolved_at is None else []
    else:
        settled = await reports.open_about(store, target.user.id)
    if settled:
        roles.require(role, "manage_reports")
    user = target.user
    if kind == "disable":
        await staff.set_fields(store, user.id, dis="1")
        await moderation.revoke_tokens(store, user.id)
    elif kind == "sensitive":
        await staff.set_fields(store, user.id, sens="1")
    elif kind == "silence":
        await staff.set_fields(store, user.id, sil="1")
    elif kind == "suspend":
        await moderation.suspend_account(store, user.id)
    for r in settled:
        await reports.change(store, r.id, "resolve", actor or 0)
    # the strike (Mastodon's AccountWarning) and, when the member is to be
    # told, their moderation_warning notification
    strike = await warnings.record(
        store,
        user.id,
        actor,
        kind,
        text,
        report.statuses if report is not None else (),
        report.id if report is not None else None,
    )
    if send_email and not user.remote:
        await warnings.notify(store, strike)
    if kind != "none" or text:
        await audit.record(
            store, actor, "warn" if kind == "none" else kind, "Account", user.id, user.login, text
        )
    for r in settled:
        await audit.record(store, actor, "resolve", "Report", r.id, f"#{r.id}")
    return await _one(store, user.id)


async def _lift(store: Store, actor, uid, field: str, action: str, *, local: bool = False):
    found = await _one(store, uid)
    if local:
        _local(found)
    roles.require(await staff.role_of(store, actor), "manage_users")
    on = {"dis": found.user.disabled, "sil": found.user.silenced, "sens": found.user.sensitized}
    if on[field]:  # as Mastodon: lifting what is not there logs nothing
        await staff.set_fields(store, found.user.id, **{field: ""})
        await audit.record(store, actor, action, "Account", found.user.id, found.user.login)
    return await _one(store, found.user.id)


async def enable(store: Store, actor: int | None, uid) -> AdminAccount:
    return await _lift(store, actor, uid, "dis", "enable", local=True)


async def unsilence(store: Store, actor: int | None, uid) -> AdminAccount:
    return await _lift(store, actor, uid, "sil", "unsilence")


async def unsensitive(store: Store, actor: int | None, uid) -> AdminAccount:
    return await _lift(store, actor, uid, "sens", "unsensitive")


async def unsuspend(store: Store, actor: int | None, uid) -> AdminAccount:
    """Lift a suspension (Forbidden for an account not suspended, as Mastodon)."""
    found = await _one(store, uid)
    role = await staff.role_of(store, actor)
    roles.require(role, "manage_users")
    if not found.user.suspended:
        raise Forbidden(roles.NOT_ALLOWED)
    await moderation.unsuspend_account(store, found.user.id)
    await audit.record(store, actor, "unsuspend", "Account", found.user.id, found.user.login)
    return await _one(store, found.user.id)


async def pending(store: Store, actor: int | None, uid) -> AdminAccount:
    """The account, if it waits for approval and the actor may decide on it
    (``manage_users``); Forbidden otherwise, as Mastodon refuses approving
    or rejecting an account not pending, or another server's."""
    found = await _one(store, uid)
    _local(found)
    roles.require(await staff.role_of(store, actor), "manage_users")
    if not found.user.pending:
        raise Forbidden(roles.NOT_ALLOWED)
    return found


async def approve(
    store: Store, queue: JobQueue, settings: Settings | None, actor: int | None, uid
) -> AdminAccount:
    """Approve a pending account, journaled: the journal (ApprovalJob) is
    held first, then :func:`finish_approval` runs its steps, then the
    journal is released in one step with the member's mail queued
    (job_next.lua), so the approval and its mail are one: a call cut short
    anywhere is finished by a worker's replay of the journal. ``settings``
    None: no mail."""
    found = await pending(store, actor, uid)
    job = ApprovalJob(found.user.id, actor or 0)
    held = await queue.hold(job)
    mail = await finish_approval(store, settings, job)
    await queue.release(held, mail)
    return await _one(store, found.user.id)


async def finish_approval(store: Store, settings: Settings | None, job: ApprovalJob):
    """The approval's steps (each idempotent, in this order): the tokens
    work from now on, the account's mark goes (it signs in), the audit
    entry; then the mail to queue with the journal's release (None: e-mail
    off or no address). An account gone meanwhile: nothing to do."""
    try:
        user = await users.get_user(store, job.uid)
    except UserNotFound:
        return None
    await auth.approve_tokens(store, user.id)
    await staff.set_fields(store, user.id, pend="")
    await audit.record(store, job.actor or None, "approve", "Account", user.id, user.login)
    if settings is None:
        return None
    return await notices.approved_mail(store, settings, user.id)


async def deletable(store: Store, actor: int | None, uid) -> AdminAccount:
    """The account, if the actor may delete it: a suspended account, by a
    role with ``delete_user_data`` (Mastodon's rule); Forbidden otherwise,
    and for another server's account (its federation records would outlive
    it: not built yet)."""
    found = await _one(store, uid)
    role = await staff.role_of(store, actor)
    if not (found.user.suspended and role.can("delete_user_data")) or found.user.remote:
        raise Forbidden(roles.NOT_ALLOWED)
    return found


async def set_role(store: Store, actor: int | None, login: str, name: str) -> User:
    """Give the account ``login`` a role by its name (a built-in key or any
    role's name; 'none': take its role away): :func:`give`."""
    table = await roles.load(store)
    return await give(store, actor, await users.lookup(store, login), table.named(name), table)


async def set_role_id(store: Store, actor: int | None, uid, role_id: int | None) -> AdminAccount:
    """Give the account ``uid`` the role ``role_id`` (None or -99: none)."""
    table = await roles.load(store)
    user = await users.get_user(store, uid)  # UserNotFound: 404
    new = table.everyone if role_id is None else table.by_id(role_id)
    if new is None:
        raise ValidationError("role_id", "no such role")
    await give(store, actor, user, new, table)
    return await _one(store, user.id)


async def give(
    store: Store, actor: int | None, user: User, new: roles.Role, table: roles.Roles
) -> User:
    """Give ``user`` the role ``new``. The actor needs ``manage_roles`` and
    a place above the account's role, and may give no role above its own
    (Mastodon's UserPolicy#change_role? and the role's elevation check);
    the operator may give any. The staff index names the account before
    the role is given (and after it is taken:
    redpoll.admin.staff.index_role); the record's role and badge are one
    script; then the audit entry."""
    if user.remote:
        raise ValidationError("login", "roles are for accounts of this server")
    role = await staff.role_of(store, actor)
    roles.require_over(role, table.of(user), "manage_roles")
    if new.position > role.position:
        raise Forbidden(roles.NOT_ALLOWED)
    if new.key:
        await staff.index_role(store, user.id, new.key)
    await staff.set_fields(store, user.id, role=new.key, rb=roles.badge(new))
    if not new.key:
        await staff.index_role(store, user.id, new.key)
    # the text: a built-in role's key ("" for none), a defined role's name
    shown = new.key if new.key in roles.BUILT_IN or not new.key else new.name
    await audit.record(store, actor, "change_role", "Account", user.id, user.login, shown)
    return await users.get_user(store, user.id)
