"""What the server says about itself, as staff change it from the web app
(Mastodon keeps these in its admin web pages, not its API): its rules
(``manage_rules``), its settings, title, short and extended description
and contact address (``manage_settings``), and the audit log read
(``view_audit_log``). Each write is redpoll.instance's (one atomic command,
script or transaction), then its audit entry."""

from __future__ import annotations

from ..core import limits, validate
from ..instance import instance, registrations
from ..storage.store import Store
from . import audit, roles, staff


async def rules(store: Store, actor: int | None) -> list[instance.Rule]:
    roles.require(await staff.role_of(store, actor), "manage_rules")
    return await instance.rules(store)


async def add_rule(store: Store, actor: int | None, text: str, hint: str = "") -> instance.Rule:
    roles.require(await staff.role_of(store, actor), "manage_rules")
    rule = await instance.add_rule(store, text, hint)
    await audit.record(store, actor, "create", "Rule", rule.id, f"#{rule.id}", rule.text)
    return rule


async def remove_rule(store: Store, actor: int | None, rid) -> None:
    roles.require(await staff.role_of(store, actor), "manage_rules")
    await instance.remove_rule(store, rid)
    await audit.record(store, actor, "destroy", "Rule", rid, f"#{rid}")


async def settings(store: Store, actor: int | None) -> tuple[dict[str, str], str]:
    """The settings set and the extended description."""
    roles.require(await staff.role_of(store, actor), "manage_settings")
    content, _ = await instance.description(store)
    return await instance.settings(store), content


async def set_settings(
    store: Store, actor: int | None, changes: dict[str, str], description: str | None
) -> tuple[dict[str, str], str]:
    """Change the settings given and, when not None, the extended description."""
    roles.require(await staff.role_of(store, actor), "manage_settings")
    if description is not None:  # (checked before the settings are written)
        validate.text(
            description,
            "extended_description",
            limits.INSTANCE_DESCRIPTION_MAX_CHARS,
            allow_empty=True,
        )
    found = await instance.set_settings(store, **changes)
    if description is not None:
        await instance.describe(store, description)
    named = sorted([*changes, *(["extended_description"] if description is not None else [])])
    await audit.record(store, actor, "update", "Instance", "settings", "", ", ".join(named))
    content, _ = await instance.description(store)
    return found, content


async def audit_log(
    store: Store, actor: int | None, limit: int = 100, before: str | None = None
) -> list[audit.Entry]:
    roles.require(await staff.role_of(store, actor), "view_audit_log")
    return await audit.entries(store, limit, before)


async def registrations_for(store: Store, actor: int | None) -> registrations.Registrations:
    """Who may sign up now, read by a role with ``manage_settings``."""
    roles.require(await staff.role_of(store, actor), "manage_settings")
    return await registrations.registrations(store)


async def set_registrations(
    store: Store,
    actor: int | None,
    mode: str,
    message: str | None = None,
    reason_required: bool | None = None,
) -> registrations.Registrations:
    """Who may sign up (redpoll.instance.registrations), set by a role with
    ``manage_settings`` (or the operator, ``actor`` None); audited."""
    roles.require(await staff.role_of(store, actor), "manage_settings")
    now = await registrations.store_registrations(store, mode, message, reason_required)
    note = f"message: {now.message!r}" if now.message else ""
    await audit.record(store, actor, "update", "Setting", "registrations_mode", now.mode, note)
    return now
