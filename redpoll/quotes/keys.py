"""The Redis keys of quotes (redpoll.quotes), built here and nowhere else.

A quote's keys live in the quoted status's slot (``{sid}``, beside its
record ``st:{sid}``), so that recording or revoking a quote, which checks the
quoted record, is one script in one slot. Which status a status quotes is
its own record's ``x:quote`` extra; how it may be quoted, ``x:qpol``.
"""

from __future__ import annotations


def quotes(sid: int) -> str:
    """Sorted set: the accepted quotes of status ``sid``: the quoting
    status ids, scored by that id (Mastodon's quotes_count is its size;
    GET /api/v1/statuses/:id/quotes pages on it)."""
    return f"quotes:{{{sid}}}"


def revoked(sid: int) -> str:
    """Set: the quoting status ids whose quote of status ``sid`` its author
    revoked (their state ``revoked``; never accepted again)."""
    return f"qrev:{{{sid}}}"


def states(sid: int) -> str:
    """Hash: quoting status id -> ``pending`` or ``rejected``, the quotes of
    status ``sid`` across servers not accepted (yet): a quote here of a
    status of another server until its author's Accept, a quote made
    elsewhere until its authorization is verified (redpoll.federation.quoting).
    A quote in neither this hash nor :func:`revoked` is accepted."""
    return f"qst:{{{sid}}}"


def approvals(sid: int) -> str:
    """Hash: quoting status id -> the URI of the QuoteAuthorization that
    approved its quote of status ``sid`` when that was issued by another
    server (a local author's is published here, derived from the ids)."""
    return f"qappr:{{{sid}}}"
