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
