"""``redpoll admin``: the moderation command line. Each command is
one call of redpoll/moderation/moderation.py (or of sign-up) on the database the
environment names, as every other command (REDIS_URL, REDPOLL_DATA_DIR)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click

from ..accounts import auth, two_factor
from ..admin import audit, roles
from ..engine.engine import Redpoll
from ..moderation import moderation
from ..records import users


def _when(ms: int | None) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M") if ms else "-"


def _engine(ctx: click.Context, action):
    """Open the engine, run ``action(rp)``, close; engine errors -> one line, exit 1."""
    console = ctx.find_root().obj

    async def go():
        async with await Redpoll.open(console.settings()) as rp:
            return await action(rp)

    return console.run(go())


@click.group()
def admin() -> None:
    """Moderate: reports, suspensions, accounts, domains, rules.

    Also the server's description, passwords and staff roles. Whoever runs
    these commands acts as the operator (every permission); the moderation
    actions land in the audit log (`redpoll admin audit-log`)."""


@admin.command("reports")
@click.option("--unresolved", is_flag=True, help="Only reports not resolved yet.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.pass_context
def reports(ctx, unresolved: bool, as_json: bool) -> None:
    """List reports, newest first."""

    async def act(rp):
        found = await moderation.reports(rp.store, unresolved=unresolved)
        people = {
            u.id: u.login
            for u in await rp.accounts.get_users(
                list({r.reporter for r in found} | {r.account for r in found})
            )
        }
        return found, people

    found, people = _engine(ctx, act)
    if not found and not as_json:
        click.echo("no open reports" if unresolved else "no reports")
    for r in found:
        if as_json:
            click.echo(
                json.dumps(
                    {
                        "id": r.id,
                        "reporter": people.get(r.reporter),
                        "account": people.get(r.account),
                        "category": r.category,
                        "comment": r.comment,
                        "status_ids": list(r.statuses),
                        "created_at": r.created_at,
                        "resolved_at": r.resolved_at,
                    }
                )
            )
        else:
            state = f"resolved {_when(r.resolved_at)}" if r.resolved_at else "open"
            click.echo(
                f"#{r.id} {_when(r.created_at)} {people.get(r.reporter, r.reporter)} -> "
                f"{people.get(r.account, r.account)} [{r.category}] {state}: "
                f"{r.comment!r} statuses={list(r.statuses)}"
            )


@admin.command("resolve")
@click.argument("report_id")
@click.pass_context
def resolve(ctx, report_id: str) -> None:
    """Mark a report resolved."""

    async def act(rp):
        r = await moderation.resolve(rp.store, report_id)
        await audit.record(rp.store, None, "resolve", "Report", r.id, f"#{r.id}")
        return r

    r = _engine(ctx, act)
    click.echo(f"report #{r.id} resolved")


@admin.command("suspend")
@click.argument("login")
@click.pass_context
def suspend(ctx, login: str) -> None:
    """Hide an account everywhere, revoke its tokens, close its streams."""

    async def act(rp):
        user = await moderation.suspend(rp.store, login)
        await audit.record(rp.store, None, "suspend", "Account", user.id, user.login)
        return user

    user = _engine(ctx, act)
    click.echo(f"@{user.login} suspended")


@admin.command("unsuspend")
@click.argument("login")
@click.pass_context
def unsuspend(ctx, login: str) -> None:
    """Lift a suspension (the account signs in again)."""

    async def act(rp):
        user = await moderation.unsuspend(rp.store, login)
        await audit.record(rp.store, None, "unsuspend", "Account", user.id, user.login)
        return user

    user = _engine(ctx, act)
    click.echo(f"@{user.login} unsuspended")


@admin.command("grant-admin")
@click.argument("login")
@click.pass_context
def grant_admin(ctx, login: str) -> None:
    """Give an account the admin role (as `role LOGIN admin`)."""
    user = _engine(ctx, lambda rp: rp.admin.set_role(None, login, "admin"))
    click.echo(f"@{user.login} is an admin")


@admin.command("role")
@click.argument("login")
@click.argument("role")
@click.pass_context
def role(ctx, login: str, role: str) -> None:
    """Give an account a role: owner, admin, moderator, a defined role's
    name (`redpoll admin roles`), or none."""

    async def act(rp):
        user = await rp.admin.set_role(None, login, role)
        return user, await rp.admin.role_of(user)

    user, held = _engine(ctx, act)
    click.echo(f"@{user.login}: {held.name or 'no role'} (permissions {held.permissions})")


@admin.command("roles")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.pass_context
def roles_list(ctx, as_json: bool) -> None:
    """List the roles: the everyone role, then by position."""
    found = _engine(ctx, lambda rp: rp.admin.roles(None))
    for r in found:
        perms = roles.names_of(r.permissions)
        if as_json:
            click.echo(
                json.dumps(
                    {
                        "id": r.id,
                        "name": r.name or "everyone",
                        "position": r.position,
                        "permissions": perms,
                        "color": r.color,
                        "highlighted": r.highlighted,
                        "built_in": r.built_in,
                    }
                )
            )
        else:
            kind = "built-in" if r.built_in else "everyone" if r.everyone else "defined"
            shown = ", ".join(perms) or "-"
            extra = (f" {r.color}" if r.color else "") + (" highlighted" if r.highlighted else "")
            click.echo(
                f"{r.id} {r.name or 'everyone'} [{kind}] position {r.position}{extra}: {shown}"
            )


@admin.command("role-define")
@click.argument("name")
@click.option(
    "--permission",
    "permissions",
    multiple=True,
    type=click.Choice(list(roles.FLAGS)),
    help="A permission the role has (repeat for more).",
)
@click.option("--position", type=int, required=True, help="Its place: above it acts on below.")
@click.option("--color", default="", help="Its colour, #rgb or #rrggbb.")
@click.option("--highlighted", is_flag=True, help="Shown on its holders' profiles.")
@click.pass_context
def role_define(ctx, name, permissions, position, color, highlighted) -> None:
    """Define a role, or change the defined role of that name."""

    async def act(rp):
        table = await rp.admin.role_table()
        bits = roles.bits(permissions)
        existing = next(
            (r for r in table.all() if r.name.lower() == name.strip().lower() and r.key), None
        )
        if existing is not None and not existing.built_in:
            return await rp.admin.update_role(
                None,
                existing.id,
                permissions=bits,
                position=position,
                color=color,
                highlighted=highlighted,
            )
        return await rp.admin.define_role(
            None, name, bits, position, color=color, highlighted=highlighted
        )

    r = _engine(ctx, act)
    click.echo(
        f"role {r.name} (id {r.id}), position {r.position}: "
        + (", ".join(roles.names_of(r.permissions)) or "no permissions")
    )


@admin.command("role-undefine")
@click.argument("name")
@click.pass_context
def role_undefine(ctx, name: str) -> None:
    """Delete a defined role; its holders hold no role."""

    async def act(rp):
        found = (await rp.admin.role_table()).named(name)
        return await rp.admin.remove_role(None, found.id)

    r = _engine(ctx, act)
    click.echo(f"role {r.name} deleted")


@admin.command("audit-log")
@click.option("--limit", type=click.IntRange(1, 10_000), default=100, show_default=True)
@click.option("--before", default=None, help="Entries older than this entry id.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.pass_context
def audit_log(ctx, limit: int, before: str | None, as_json: bool) -> None:
    """The moderation actions, newest first: who did what to what, and when."""

    async def act(rp):
        found = await rp.admin.audit_log(limit, before)
        people = {
            u.id: u.login
            for u in await rp.accounts.get_users(list({e.actor for e in found if e.actor}))
        }
        return found, people

    found, people = _engine(ctx, act)
    if not found and not as_json:
        click.echo("no moderation actions")
    for e in found:
        who = people.get(e.actor, f"account {e.actor}") if e.actor else "operator"
        if as_json:
            record = {
                "id": e.id,
                "at": e.at,
                "actor_id": e.actor or None,
                "actor": who,
                "action": e.action,
                "target_type": e.type,
                "target_id": e.target,
                "target": e.name,
                "text": e.text,
            }
            click.echo(json.dumps(record))
        else:
            note = f": {e.text!r}" if e.text else ""
            click.echo(f"{e.id} {_when(e.at)} {who} {e.action} {e.type} {e.name or e.target}{note}")


def _password(given: str | None) -> str:
    if given is not None:
        return given
    return click.get_text_stream("stdin").readline().rstrip("\n")


@admin.command("create-user")
@click.argument("login")
@click.argument("email")
@click.option("--password", default=None, help="Else read from the first line of stdin.")
@click.pass_context
def create_user(ctx, login: str, email: str, password: str | None) -> None:
    """Sign an account up (as POST /api/v1/accounts does, as the operator:
    whatever the registration mode, approved, a local address such as
    admin@localhost allowed). The first owner: then `role LOGIN owner`."""
    secret = _password(password)
    try:
        user = _engine(ctx, lambda rp: rp.auth.register(login, email, secret, operator=True))
    except auth.SignUpInvalid as exc:
        raise click.ClickException(exc.summary) from None
    click.echo(f"@{user.login} created, id {user.id}")


@admin.command("reset-password")
@click.argument("login")
@click.option("--password", default=None, help="Else read from the first line of stdin.")
@click.pass_context
def reset_password(ctx, login: str, password: str | None) -> None:
    """Set a new password; every token of the account is revoked."""
    secret = _password(password)
    user = _engine(ctx, lambda rp: moderation.reset_password(rp.store, login, secret))
    click.echo(f"@{user.login}: password reset, tokens revoked")


@admin.command("disable-two-factor")
@click.argument("login")
@click.pass_context
def disable_two_factor(ctx, login: str) -> None:
    """Turn an account's two-factor sign-in off (as tootctl accounts modify
    --disable-2fa): it signs in with its password alone until its owner
    sets it up again. Its tokens stay."""

    async def act(rp):
        user = await users.lookup(rp.store, login)
        was_on = await two_factor.disable(rp.store, user.id)
        if was_on:
            await audit.record(rp.store, None, "disable_2fa", "User", user.id, user.login)
        return user, was_on

    user, was_on = _engine(ctx, act)
    click.echo(
        f"@{user.login}: two-factor sign-in turned off"
        if was_on
        else f"@{user.login}: two-factor sign-in was not on"
    )


@admin.command("delete-account")
@click.argument("login")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def delete_account(ctx, login: str, yes: bool) -> None:
    """Delete an account for good: its statuses everywhere, its follows, its
    favourites and boosts, every key of it. Run it again if it is cut short."""
    if not yes:
        click.confirm(f"Delete @{login} and everything of it for good?", abort=True)

    async def act(rp):
        uid = await moderation.delete_account(rp.store, rp.queue, login)
        await audit.record(rp.store, None, "destroy", "Account", uid, login)
        await rp.drain(timeout=600)  # the deletes' cleanup jobs, before the keys go
        return uid, await moderation.purge_account(rp.store, rp.queue, uid, login)

    uid, gone = _engine(ctx, act)
    click.echo(f"@{login} (id {uid}) deleted; {gone} keys removed")


@admin.command("rules")
@click.pass_context
def rules(ctx) -> None:
    """List the server's rules (GET /api/v1/instance/rules shows them)."""
    found = _engine(ctx, lambda rp: rp.instance.rules())
    if not found:
        click.echo("no rules")
    for rule in found:
        click.echo(f"#{rule.id} {rule.text}" + (f" ({rule.hint})" if rule.hint else ""))


@admin.command("rules-add")
@click.argument("text")
@click.option("--hint", default="", help="A longer explanation, shown under the rule.")
@click.pass_context
def rules_add(ctx, text: str, hint: str) -> None:
    """Add a rule at the end."""
    rule = _engine(ctx, lambda rp: rp.instance.add_rule(text, hint))
    click.echo(f"added rule #{rule.id}")


@admin.command("rules-remove")
@click.argument("rule_id")
@click.pass_context
def rules_remove(ctx, rule_id: str) -> None:
    """Remove a rule by its id."""
    _engine(ctx, lambda rp: rp.instance.remove_rule(rule_id))
    click.echo(f"removed rule #{rule_id}")


@admin.command("domain-block")
@click.argument("host")
@click.option(
    "--silence",
    is_flag=True,
    help="Keep its public statuses off the public timelines instead of suspending.",
)
@click.option(
    "--reject-media",
    is_flag=True,
    help="Fetch none of its media (attachments, avatars, headers); shown as not loaded.",
)
@click.pass_context
def domain_block(ctx, host: str, silence: bool, reject_media: bool) -> None:
    """Block another server: suspend (nothing taken from or sent to it) or silence."""

    async def act(rp):
        found = await rp.federation.domain_block(
            host, "silence" if silence else "suspend", reject_media
        )
        await audit.record(rp.store, None, "create", "DomainBlock", found.id, found.host)
        return found

    found = _engine(ctx, act)
    click.echo(
        f"{found.host}: {found.severity}" + (", media rejected" if found.reject_media else "")
    )


@admin.group("media-cache")
def media_cache() -> None:
    """Other servers' media kept here (attachments, avatars, headers)."""


@media_cache.command("clear")
@click.option(
    "--older-than",
    "older_than",
    default=None,
    metavar="DAYS",
    type=click.FloatRange(min=0),
    help="Only the copies fetched more than DAYS days ago (default: all).",
)
@click.pass_context
def media_cache_clear(ctx, older_than: float | None) -> None:
    """Drop kept copies: their files deleted, fetched again when next asked for."""

    async def act(rp):
        dropped = await rp.media.cache_clear(None if older_than is None else older_than * 86_400)
        return dropped, await rp.media.cache_stats()

    dropped, (count, size) = _engine(ctx, act)
    click.echo(f"dropped {dropped} kept copies; {count} kept ({size} bytes)")


@media_cache.command("stats")
@click.pass_context
def media_cache_stats(ctx) -> None:
    """How many copies are kept and what they weigh."""
    count, size = _engine(ctx, lambda rp: rp.media.cache_stats())
    click.echo(f"{count} kept copies ({size} bytes)")


@admin.command("domain-unblock")
@click.argument("host")
@click.pass_context
def domain_unblock(ctx, host: str) -> None:
    """Lift a domain block."""

    async def act(rp):
        done = await rp.federation.domain_unblock(host)
        if done:
            await audit.record(rp.store, None, "destroy", "DomainBlock", "", host)
        return done

    done = _engine(ctx, act)
    click.echo(f"{host}: unblocked" if done else f"{host} was not blocked")


@admin.command("domain-blocks")
@click.pass_context
def domain_blocks(ctx) -> None:
    """List the blocked domains."""
    found = _engine(ctx, lambda rp: rp.federation.domain_blocks())
    if not found:
        click.echo("no blocked domains")
    for b in found:
        click.echo(
            f"{b.host} {b.severity}"
            + (" reject-media" if b.reject_media else "")
            + f" since {_when(b.at)}"
        )


@admin.command("federation-mode")
@click.argument("mode", type=click.Choice(["open", "limited"]), required=False)
@click.pass_context
def federation_mode(ctx, mode: str | None) -> None:
    """Show or set the federation mode: open (every server not blocked) or
    limited (only the allowed domains: /api/v1/admin/domain_allows)."""

    async def act(rp):
        if mode is not None:
            await rp.admin.set_limited_federation(None, mode == "limited")
        return await rp.admin.limited_federation()

    click.echo("limited" if _engine(ctx, act) else "open")


@admin.command("registrations")
@click.argument("mode", type=click.Choice(["open", "approval", "closed"]), required=False)
@click.option("--message", default=None, help="Shown while registrations are closed.")
@click.option(
    "--reason-required/--reason-optional",
    default=None,
    help="Whether a sign-up waiting for approval must say why.",
)
@click.pass_context
def registrations(ctx, mode: str | None, message: str | None, reason_required) -> None:
    """Show or set who may sign up: open (anyone), approval (a moderator
    approves each account) or closed (only with an invite)."""

    async def act(rp):
        if mode is not None:
            return await rp.instance.set_registrations(None, mode, message, reason_required)
        if message is not None or reason_required is not None:
            now = await rp.instance.registrations()
            return await rp.instance.set_registrations(None, now.mode, message, reason_required)
        return await rp.instance.registrations()

    now = _engine(ctx, act)
    extra = ", reason required" if now.asks_reason else ""
    click.echo(now.mode + extra + (f"; message: {now.message}" if now.message else ""))


def _invite_line(i) -> str:
    state = "expired" if i.expired() else "used up" if i.used_up() else "valid"
    uses = f"{i.uses}/{i.max_uses}" if i.max_uses is not None else f"{i.uses}/unlimited"
    ends = f"expires {_when(i.expires_at)}" if i.expires_at else "never expires"
    return f"{i.code} by account {i.uid}: {state}, {uses} uses, {ends}"


@admin.command("invite-create")
@click.argument("login")
@click.option("--expires-in", type=click.IntRange(min=1), default=None, metavar="SECONDS")
@click.option("--max-uses", type=click.IntRange(min=1), default=None)
@click.option("--comment", default="")
@click.pass_context
def invite_create(ctx, login: str, expires_in, max_uses, comment: str) -> None:
    """Make an invite in the name of the account LOGIN; prints its code."""

    async def act(rp):
        user = await rp.accounts.lookup(login)
        made = await rp.auth.create_invite(
            user.id, expires_in=expires_in, max_uses=max_uses, comment=comment
        )
        await audit.record(rp.store, None, "create", "Invite", made.code, made.code)
        return made

    made = _engine(ctx, act)
    click.echo(made.code)


@admin.command("invites")
@click.pass_context
def invites(ctx) -> None:
    """List the invites, newest first."""
    found = _engine(ctx, lambda rp: rp.auth.list_invites(None))
    if not found:
        click.echo("no invites")
    for i in found:
        click.echo(_invite_line(i))


@admin.command("invite-revoke")
@click.argument("code")
@click.pass_context
def invite_revoke(ctx, code: str) -> None:
    """Expire an invite now."""
    found = _engine(ctx, lambda rp: rp.auth.revoke_invite(None, code))
    click.echo(_invite_line(found))


@admin.command("describe")
@click.argument("source", type=click.File("r"))
@click.pass_context
def describe(ctx, source) -> None:
    """Set the server's extended description from a file ('-': standard input)."""
    content = source.read()
    _engine(ctx, lambda rp: rp.instance.describe(content))
    click.echo(f"description set ({len(content)} characters)")
