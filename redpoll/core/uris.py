"""The ActivityPub ids of this server's accounts and statuses, the one rule
for them: what federation publishes (redpoll.federation.documents), the
client API's ``uri`` fields (redpoll.render) and a member's exports
(redpoll.portability) all name a local account or status this way."""

from __future__ import annotations


def actor(base: str, login: str) -> str:
    return f"{base}/users/{login}"


def status(base: str, login: str, sid: int) -> str:
    return f"{actor(base, login)}/statuses/{sid}"
