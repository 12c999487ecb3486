"""The keys the admin feature keeps of its own (the reports and the user
records it changes are core's, redpoll/core/keys.py; domain blocks are the
federation's, redpoll/federation/keys.py)."""

from __future__ import annotations

#: Stream: the audit log, one entry per moderation action (fields ``actor``
#: (an account id; 0: the operator at the command line), ``action``,
#: ``type``, ``target``, ``name`` (the target as a person reads it),
#: ``text``), capped at limits.AUDIT_LOG_MAX entries (the oldest go first).
AUDIT_LOG = "modlog:{log}"

#: SET: the ids of the accounts holding a staff role (redpoll.admin.staff):
#: who is told of a sign-up (admin.sign_up). Kept by the role's writer.
STAFF = "staff:{accounts}"

#: HASH: the roles an owner defines (redpoll.admin.roles), field: the role's
#: id, value: its JSON (id, name, color, position, permissions,
#: highlighted); field "-99": the everyone role's permissions. Written only
#: by role_write.lua; read whole whenever a role is needed (never cached).
ROLES = "roles:{defs}"
#: STRING: the last defined role's sequence number (same slot as ROLES)
ROLE_SEQ = "roles:{defs}:seq"
