"""The keys of two-factor sign-in (redpoll/accounts/two_factor.py) that are
its own. What stays with an account (its sealed secret, the last code's
step, its recovery codes' digests) are fields of the account's secrets hash
(core ``keys.secrets``), so they go with it when the account is deleted;
these are short-lived, each with a TTL, except the database's own sealing key."""

from __future__ import annotations

#: String: the random key two-factor secrets are sealed with when the
#: operator set none (REDPOLL_TWO_FACTOR_KEY); made once, SET NX.
TWO_FACTOR_DB_KEY = "tfa:{key}"


def two_factor_setup(uid: int) -> str:
    """String with a TTL: the sealed secret of a set-up not yet confirmed by a
    code (limits.TWO_FACTOR_SETUP_TTL_S). In the account's slot, so the
    confirming script moves it into the secrets hash in one step."""
    return f"tfa:{{{uid}}}:setup"


def two_factor_challenge(digest: str) -> str:
    """String (JSON) with a TTL: the second step of one sign-in, after a right
    password (whose account, and the authorization request it continues),
    by the sha256 digest of its token; taken once with GETDEL."""
    return f"tfa:{{{digest}}}:signin"


def two_factor_tries(digest: str) -> str:
    """Counter with a TTL: the codes one second step was given (its slot)."""
    return f"tfa:{{{digest}}}:tries"
