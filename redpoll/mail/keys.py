"""The mail package's keys; each is in its user's slot (``{uid}``), with
the secrets hash (keys.secrets) its scripts change together with it."""

from __future__ import annotations


def links(uid: int) -> str:
    """Hash with a TTL: the account's outstanding links, by purpose
    (``confirm``, ``reset``: ``<sha256 of the secret>\\n<expiry ms>\\n<address>``)
    and ``pending``, the address an e-mail change waits to confirm."""
    return f"mlink:{{{uid}}}"


def sending(entry_id: str) -> str:
    """String with a TTL: ``sending`` while a run of the queued mail job
    ``entry_id`` (its stream entry) sends it, ``sent`` after (handlers.mail:
    one message per queued job)."""
    return f"msend:{{{entry_id}}}"
