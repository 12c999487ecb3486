"""The one refusal the mail flows share: too many requests for mails."""

from __future__ import annotations

from ..accounts import ratelimit
from ..core.errors import RedpollError
from ..core.settings import Settings
from ..storage.store import Store
from .outbox import address_bucket


class MailLimited(RedpollError):
    """Too many requests for a mail to one address (``state``: its bucket)."""

    status = 429

    def __init__(self, state: ratelimit.RateState):
        super().__init__("Too many requests")
        self.state = state


async def count_request(store: Store, settings: Settings, address: str) -> None:
    """Count one request for a mail to ``address`` (MailLimited past
    settings.rate_mail_address), whether or not an account has it."""
    state = await ratelimit.hit(store, address_bucket(address), settings.rate_mail_address)
    if state is not None and state.exceeded:
        raise MailLimited(state)
