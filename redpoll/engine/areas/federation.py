"""ActivityPub as the HTTP edge asks it: the inbox, published documents, remote accounts, server domain blocks."""

from __future__ import annotations

from ...core.models import User
from ...federation import domains, publish, relays, remote
from ...federation import inbox as fed_inbox
from .base import Area


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

    async def quote_authorization_document(self, login: str, sid: int) -> dict:
        """A QuoteAuthorization this server issued (redpoll.federation.publish)."""
        return await publish.quote_authorization(self.store, self.settings, login, sid)

    # --- relays (redpoll.federation.relays) ---------------------------------------
    async def relays(self) -> list[relays.Relay]:
        """The relays this server follows."""
        return await relays.all_(self.store)

    async def relay_add(self, inbox_url: str) -> relays.Relay:
        """Follow the relay at ``inbox_url`` (federation must be on)."""
        return await relays.add(self.store, self.queue, self.settings, inbox_url)

    async def relay_remove(self, inbox_url: str) -> relays.Relay:
        """Stop following the relay at ``inbox_url`` (the Undo sent)."""
        return await relays.remove(self.store, self.queue, self.settings, inbox_url)

    async def admin_relays(self, actor) -> list[relays.Relay]:
        """The relays, as staff with manage_federation see them (the admin API)."""
        return await relays.admin_list(self.store, actor)

    async def admin_relay_add(self, actor, inbox_url) -> relays.Relay:
        return await relays.admin_add(self.store, self.queue, self.settings, actor, inbox_url)

    async def admin_relay_remove(self, actor, rid) -> relays.Relay:
        return await relays.admin_remove(self.store, self.queue, self.settings, actor, rid)

    async def status_by_uri(self, uri: str) -> int | None:
        """The status a note's id names: a local one, another server's kept
        here, or fetched from its server now (federation on); None if none."""
        if not self.settings.public_url:
            return None
        sid = await fed_inbox.status_of(self.store, self.settings, uri)
        if sid is not None:
            return sid
        here = fed_inbox.Here.of(self.settings)
        if uri.startswith(here.base + "/"):
            return None
        return await fed_inbox.fetch_note(self.store, self.queue, self.settings, here, uri)
