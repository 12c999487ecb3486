"""Unique names for the accounts and things a test makes."""

from __future__ import annotations

import uuid


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"
