"""The Redis keys of annual reports (redpoll.annual), built here and nowhere
else. All of one member's are on the member's slot (``{<uid>}``)."""

from __future__ import annotations


def reports(uid: int) -> str:
    """Hash year -> the report's JSON (Mastodon's AnnualReport without its
    wrapper)."""
    return f"annual:{{{uid}}}"


def viewed(uid: int) -> str:
    """Hash year -> when the member marked that report read (ms)."""
    return f"annual:{{{uid}}}:read"


def generating(uid: int, year: int) -> str:
    """String, set while the report of ``year`` is queued (expires after
    limits.ANNUAL_REPORT_GENERATING_S)."""
    return f"annual:{{{uid}}}:gen:{year}"
