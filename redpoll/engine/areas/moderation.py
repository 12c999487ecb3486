"""The member's side of moderation: reports filed, warnings received and their appeals."""

from __future__ import annotations

from ...core.models import User
from ...moderation import appeals, moderation
from ...records import users
from .base import Area


class Moderation(Area):
    async def report(
        self,
        reporter,
        account,
        status_ids=(),
        comment: str = "",
        category: str = "other",
        rule_ids=(),
    ) -> tuple[moderation.Report, User]:
        """File a report; the report and the account it is about."""
        r = await moderation.report(
            self.store, reporter, account, status_ids, comment, category, rule_ids
        )
        return r, await users.get_user(self.store, r.account)

    async def warnings(self, uid: int):
        return await appeals.mine(self.store, uid)

    async def warning(self, uid: int, wid):
        return await appeals.my_warning(self.store, uid, wid)

    async def appeal(self, uid: int, wid, text: str):
        return await appeals.appeal(self.store, uid, wid, text)
