"""The quotes package's background jobs as records (redpoll.bus.queue: the
queue and its codec); their handlers are in the federation package's
handlers.py (as polls' PollEndJob)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..bus.queue import StatusJob


@dataclass(frozen=True)
class QuoteRevokedJob(StatusJob):
    """Local account ``author`` revoked the quote that status ``sid``,
    another server's, makes of their status ``quoted``
    (redpoll.quotes.revoke): the Delete of the QuoteAuthorization this
    server published is sent to that server and to those the quoted status
    went to (redpoll.federation.quoting; sent again by a rerun: receivers
    drop the same activity id)."""

    kind: ClassVar[str] = "quote_revoked"
    quoted: int = 0
