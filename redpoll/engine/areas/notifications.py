"""A member's notifications as shown, grouped, dismissed; the filtering policy and its requests."""

from __future__ import annotations

from typing import Any

from ...accounts import markers
from ...collections.collections import Collection
from ...core.models import Status
from ...notifications import notifications, requests
from ...notifications.notifications import Notification
from ...reading import notification_view, pages
from .base import Area


class Notifications(Area):
    async def shown_one(self, owner, record: Notification) -> Status | None | bool:
        """False when the notification ``record`` is not shown to ``owner``
        now; else its status (None for a kind without one), decided now
        (redpoll.reading.notification_view: a stream's live and replayed
        notifications)."""
        return await notification_view.shown_one(self.store, owner, record)

    async def shown_with(
        self, owner, record: Notification
    ) -> tuple[Status | None, Collection | None] | None:
        """None when ``record`` is not shown to ``owner`` now; else its status
        and the collection it names (None for a kind without one), decided
        now (redpoll.reading.notification_view)."""
        return await notification_view.shown_with(self.store, owner, record)

    async def listed(self, uid, **query: Any) -> list[notifications.Notification]:
        return await notifications.page(self.store, uid, **query)

    async def page(self, uid, **query: Any):
        return await pages.notification_page(self.store, uid, **query)

    async def get(self, uid, nid):
        return await pages.notification(self.store, uid, nid)

    async def groups(self, uid, **query: Any):
        return await pages.notification_groups(self.store, uid, **query)

    async def group(self, uid, group_key, most: int):
        return await pages.notification_group(self.store, uid, group_key, most)

    async def dismiss(self, uid, nid) -> None:
        await notifications.dismiss(self.store, uid, nid)

    async def dismiss_group(self, uid, group_key) -> int:
        return await notifications.dismiss_group(self.store, uid, group_key)

    async def clear(self, uid) -> None:
        await notifications.clear(self.store, uid)

    async def policy(self, uid) -> tuple[dict[str, str], tuple[int, int]]:
        """The policy and its summary (pending requests, their notifications)."""
        return (
            await requests.policy(self.store, uid),
            await pages.policy_summary(self.store, uid),
        )

    async def set_policy(self, uid, changes: dict) -> None:
        await requests.set_policy(self.store, uid, changes)

    async def requests(self, uid, **query: Any):
        return await pages.notification_requests(self.store, uid, **query)

    async def request(self, uid, rid):
        return await pages.notification_request(self.store, uid, rid)

    async def accept_requests(self, uid, ids: list) -> None:
        await requests.accept_many(self.store, uid, ids)

    async def dismiss_requests(self, uid, ids: list) -> None:
        await requests.dismiss_many(self.store, uid, ids)

    async def accept_request(self, uid, rid) -> None:
        await requests.accept(self.store, uid, rid)

    async def dismiss_request(self, uid, rid) -> None:
        await requests.dismiss(self.store, uid, rid)

    async def unread(self, uid, cap: int) -> int:
        """Notifications newer than the ``notifications`` marker, at most ``cap``."""
        after = await markers.last_read(self.store, uid, "notifications")
        return len(await notification_view.unread(self.store, uid, after, cap))

    async def unread_groups(self, uid, limit, **query: Any) -> int:
        """Notification groups with one newer than the ``notifications`` marker."""
        after = await markers.last_read(self.store, uid, "notifications")
        return await notification_view.unread_groups(self.store, uid, after, limit, **query)
