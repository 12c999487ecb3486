"""The admin API's entities, as Mastodon renders them: Admin::Account,
Admin::Report, Admin::DomainBlock, and the audit log's entries."""

from __future__ import annotations

from typing import Any

from . import entities

# (the records come from redpoll.moderation.admin_accounts (AdminAccount),
# redpoll.moderation.moderation (Report) and redpoll.federation.domains
# (Block): typed Any here, as importing them would raise this package's
# floor above the engine's)


def account(found: Any, base: str) -> dict:
    """Mastodon's Admin::Account. No sign-in addresses are kept here:
    ``ip`` is null, ``ips`` empty; a local account is confirmed unless its
    address awaits confirmation (redpoll.mail), approved unless it waits
    for approval, and ``invite_request`` is the reason it gave then."""
    user = found.user
    role = found.role
    local = not user.remote
    shown = (
        entities.suspended_account(user, base) if user.suspended else entities.account(user, base)
    )
    return {
        "id": str(user.id),
        "username": user.login.split("@", 1)[0],
        "domain": found.domain,
        "created_at": entities.iso(user.created_at),
        "email": found.email if local else None,
        "ip": None,
        "ips": [],
        "role": entities.role_entity(role) if role is not None else None,
        "confirmed": local and found.confirmed,
        "suspended": user.suspended,
        "silenced": user.silenced,
        "sensitized": user.sensitized,
        "disabled": user.disabled,
        "approved": local and not user.pending,
        "locale": None,
        "invite_request": found.reason if local else None,
        "account": shown,
        **({"invited_by_account_id": str(user.invited_by)} if user.invited_by else {}),
    }


def report(
    r: Any,
    people: dict[int, Any],
    statuses: list[dict],
    rules: list[dict],
    base: str,
) -> dict:
    """Mastodon's Admin::Report (``people``: the accounts it names, by id;
    ``statuses`` and ``rules`` rendered)."""

    def who(uid: int | None) -> dict | None:
        found = people.get(uid) if uid else None
        return account(found, base) if found is not None else None

    return {
        "id": str(r.id),
        "action_taken": r.resolved_at is not None,
        "action_taken_at": entities.iso(r.resolved_at) if r.resolved_at else None,
        "category": r.category,
        "comment": r.comment,
        "forwarded": False,
        "created_at": entities.iso(r.created_at),
        "updated_at": entities.iso(r.updated_at or r.created_at),
        "account": who(r.reporter),
        "target_account": who(r.account),
        "assigned_account": who(r.assigned),
        "action_taken_by_account": who(r.action_taken_by),
        "statuses": statuses,
        "rules": rules,
    }


def domain_block(b: Any) -> dict:
    """Mastodon's Admin::DomainBlock."""
    return {
        "id": str(b.id),
        "domain": b.host,
        "created_at": entities.iso(b.at),
        "severity": b.severity,
        "reject_media": b.reject_media,
        "reject_reports": b.reject_reports,
        "private_comment": b.private_comment or None,
        "public_comment": b.public_comment or None,
        "obfuscate": b.obfuscate,
    }


def email_domain_block(b: Any) -> dict:
    """Mastodon's Admin::EmailDomainBlock: its history is the sign-ups it
    refused each of the last days (``uses``; ``accounts`` the same count)."""
    return {
        "id": str(b.id),
        "domain": b.value,
        "created_at": entities.iso(b.at),
        "history": [{"day": str(day), "accounts": str(n), "uses": str(n)} for day, n in b.history],
    }


def canonical_email_block(b: Any) -> dict:
    """Mastodon's Admin::CanonicalEmailBlock."""
    return {"id": str(b.id), "canonical_email_hash": b.value}


def ip_block(b: Any) -> dict:
    """Mastodon's Admin::IpBlock."""
    return {
        "id": str(b.id),
        "ip": b.network,
        "severity": b.severity,
        "comment": b.comment,
        "created_at": entities.iso(b.at),
        "expires_at": entities.iso(b.expires_at) if b.expires_at else None,
    }


def domain_allow(a: Any) -> dict:
    """Mastodon's Admin::DomainAllow."""
    return {"id": str(a.id), "domain": a.host, "created_at": entities.iso(a.at)}
