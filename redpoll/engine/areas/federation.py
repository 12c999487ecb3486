"""ActivityPub as the HTTP edge asks it: the inbox, published documents, remote accounts, server domain blocks."""

from __future__ import annotations

import logging

from ...core.models import User
from ...federation import domains, publish, remote
from ...federation import inbox as fed_inbox
from .base import Area

log = logging.getLogger("redpoll.engine")


class Federation(Area):
    async def kept_remote_account(self, handle: str) -> User | None:
        """The account ``name@host`` of another server if it is kept here."""
        return await remote.kept_account(self.store, handle)

    async def resolve_account(self, handle: str) -> User:
        """The account ``name@host`` of another server, looked up there and kept."""
        here = fed_inbox.Here.of(self.settings)
        return await remote.resolve_handle(self.store, here.base, handle, loopback=here.loopback)

    async def domain_block(
        self, host: str, severity: str = "suspend", reject_media: bool = False
    ) -> domains.Block:
        return await domains.block(self.store, host, severity, reject_media)

    async def domain_unblock(self, host: str) -> bool:
        return await domains.unblock(self.store, host)

    async def domain_blocks(self) -> list[domains.Block]:
        return await domains.blocks(self.store)

    async def receive_activity(self, method: str, target: str, headers, body: bytes) -> bool:
        return await fed_inbox.receive(
            self.store, self.queue, self.settings, method, target, headers, body
        )

    async def authorize_fetch(self, method: str, target: str, headers) -> None:
        """Under Settings.authorized_fetch, a fetch of an actor, note or
        collection must be signed by an account of a server not suspended
        here (fed_inbox.Refused otherwise); without it, nothing is asked."""
        if self.settings.authorized_fetch:
            here = fed_inbox.Here.of(self.settings)
            await fed_inbox.authenticate(
                self.store, here, fed_inbox.signer_of(here, method, target, headers, None)
            )

    async def webfinger(self, resource: str) -> dict:
        return await publish.webfinger(self.store, self.settings, resource)

    async def host_meta(self) -> str:
        return publish.host_meta(self.settings)

    async def actor_document(self, login: str) -> dict:
        return await publish.actor(self.store, self.settings, login)

    async def instance_actor_document(self) -> dict:
        return await publish.instance_actor(self.store, self.settings)

    async def note_document(self, login: str, sid: int) -> dict:
        return await publish.note(self.store, self.settings, login, sid)

    async def replies_document(self, login: str, sid: int) -> dict:
        return await publish.replies(self.store, self.settings, login, sid)

    async def collection_document(self, login: str, which: str) -> dict:
        return await publish.collection(self.store, self.settings, login, which)
