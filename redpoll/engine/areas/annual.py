"""Annual reports (Wrapstodon)."""

from __future__ import annotations

from ...annual import reports as annual
from ...core import validate
from .base import Area


class Annual(Area):
    def wrapstodon(self) -> int | None:
        """The year of the annual reports' campaign now, or None."""
        return annual.campaign(self.settings.wrapstodon)

    async def reports(self, uid, year=None, *, unread_only=False) -> list[annual.Report]:
        """``uid``'s annual reports (of ``year`` only when it is named)."""
        uid = validate.an_id(uid, "user_id")
        if year is None:
            return await annual.reports(self.store, uid, unread_only=unread_only)
        one = await annual.report(self.store, uid, year)
        return [one] if one else []

    async def state(self, uid, year) -> str:
        return await annual.state(self.store, uid, year, self.settings.wrapstodon)

    async def generate(self, uid, year) -> bool:
        return await annual.request(self.store, self.queue, uid, year, self.settings.wrapstodon)

    async def read(self, uid, year) -> bool:
        return await annual.mark_read(self.store, uid, year)
