"""The Redis keys of link preview cards (redpoll.cards), built here and
nowhere else. Which card a status shows is its own record's ``x:card``
(the card's JSON, '' none)."""

from __future__ import annotations


def card(digest: str) -> str:
    """String with an expiry (limits.CARD_MAX_AGE_S): the card made for the
    URL whose normalized form has sha256 ``digest`` (JSON), or ``none``
    for a URL that made none (expiry limits.CARD_NONE_TTL_S)."""
    return f"card:{{{digest}}}"


def fetching(digest: str) -> str:
    """String with an expiry (SET NX, limits.CARD_FETCHING_S): a job is
    fetching this URL's page now."""
    return f"card:fetching:{{{digest}}}"
