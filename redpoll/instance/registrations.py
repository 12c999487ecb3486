"""Who may sign up, as Mastodon's ``registrations_mode``: ``open`` (anyone),
``approval`` (anyone, but a moderator approves each account before it
signs in) or ``closed`` (nobody but those holding an invite); the message
shown while closed, and whether a sign-up waiting for approval must give
its reason (Mastodon's ``require_invite_text``).

One hash (keys.INSTANCE_REGISTRATIONS) set by one HSET (atomic); a change
is an admin action (redpoll.admin.server.set_registrations: the actor's
role must allow ``manage_settings``, the operator at ``redpoll admin``
may, and the change goes to the audit log after it is made)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import keys, limits, validate
from ..core.errors import ValidationError
from ..storage.store import Store

MODES = ("open", "approval", "closed")


@dataclass(frozen=True, slots=True)
class Registrations:
    mode: str = "open"
    #: shown while registrations are closed ("" for none)
    message: str = ""
    #: a sign-up waiting for approval must give a reason
    reason_required: bool = False

    @property
    def enabled(self) -> bool:
        return self.mode != "closed"

    @property
    def approval_required(self) -> bool:
        return self.mode == "approval"

    @property
    def asks_reason(self) -> bool:
        """What a sign-up needs now (Mastodon's reason_required)."""
        return self.approval_required and self.reason_required


async def registrations(store: Store) -> Registrations:
    """The mode in force (open when never set)."""
    mode, message, reason = await store.hmget(
        keys.INSTANCE_REGISTRATIONS, ["mode", "message", "reason"]
    )
    found = mode.decode() if mode else "open"
    return Registrations(
        found if found in MODES else "open",
        message.decode() if message else "",
        reason == b"1",
    )


async def store_registrations(
    store: Store,
    mode: str,
    message: str | None = None,
    reason_required: bool | None = None,
) -> Registrations:
    """Write the mode (and, when given, the closed message and whether a
    reason is required; staff change it through redpoll.admin.server, which
    checks the role and audits); ValidationError for a bad one, nothing
    written."""
    if mode not in MODES:
        raise ValidationError("mode", "must be one of " + ", ".join(MODES))
    fields: dict[str, str] = {"mode": mode}
    if message is not None:
        fields["message"] = validate.text(
            message, "message", limits.REGISTRATIONS_MESSAGE_MAX_CHARS, allow_empty=True
        ).strip()
    if reason_required is not None:
        fields["reason"] = "1" if reason_required else "0"
    await store.hset(keys.INSTANCE_REGISTRATIONS, mapping=fields)  # one command: atomic
    return await registrations(store)
