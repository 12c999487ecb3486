"""What the server says about itself: rules, description, settings, registrations, peers, activity."""

from __future__ import annotations

from ...admin import server
from ...federation import remote
from ...instance import activity as server_activity
from ...instance import instance, registrations
from .base import Area


class Instance(Area):
    async def registrations(self) -> registrations.Registrations:
        return await registrations.registrations(self.store)

    async def set_registrations(
        self, actor, mode: str, message=None, reason_required=None
    ) -> registrations.Registrations:
        return await server.set_registrations(self.store, actor, mode, message, reason_required)

    async def activity(self) -> list[server_activity.Week]:
        """Mastodon's instance activity: the last 12 weeks, this one first."""
        return await server_activity.weeks(self.store)

    async def rules(self) -> list[instance.Rule]:
        return await instance.rules(self.store)

    async def add_rule(self, text: str, hint: str = "") -> instance.Rule:
        return await instance.add_rule(self.store, text, hint)

    async def remove_rule(self, rid) -> None:
        await instance.remove_rule(self.store, rid)

    async def peers(self) -> list[str]:
        """The servers whose accounts this one knows (federation.remote.peers)."""
        return await remote.peers(self.store)

    async def description(self) -> tuple[str, int | None]:
        return await instance.description(self.store)

    async def describe(self, content: str) -> None:
        await instance.describe(self.store, content)

    async def instance_settings(self) -> dict[str, str]:
        """The title, short description and contact address staff set ("": the default)."""
        return await instance.settings(self.store)
