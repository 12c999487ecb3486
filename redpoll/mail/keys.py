"""The mail package's keys; each is in its user's slot (``{uid}``), with
the secrets hash (keys.secrets) its scripts change together with it."""

from __future__ import annotations


def links(uid: int) -> str:
    """Hash with a TTL: the account's outstanding links, by purpose
    (``confirm``, ``reset``: ``<sha256 of the secret>\\n<expiry ms>\\n<address>``)
    and ``pending``, the address an e-mail change waits to confirm."""
    return f"mlink:{{{uid}}}"
