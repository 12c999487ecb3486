"""A member's CSV imports (redpoll.portability.imports): started, listed,
and the actions their job does, each the engine's own with its federation
side (:class:`ImportActions`)."""

from __future__ import annotations

from ...core.errors import RedpollError, StatusNotFound, UserNotFound
from ...portability import imports
from ...portability.exports import Here
from ...records import statuses, users
from .base import Area, Deps
from .federation import Federation
from .lists import Lists
from .relations import Relations
from .statuses import Statuses


class Imports(Area):
    async def start(
        self, uid, kind: str, mode: str, data: bytes, filename: str, here: Here
    ) -> imports.Import:
        """Check the CSV file and queue its import (nothing written when refused)."""
        return await imports.start(self.store, self.queue, uid, kind, mode, data, filename, here)

    async def listed(self, uid) -> list[imports.Import]:
        return await imports.listed(self.store, uid)

    async def get(self, uid, iid) -> imports.Import:
        return await imports.get(self.store, uid, iid)


class ImportActions(Area):
    """imports.Actions through the engine's areas: what an import's job
    does for each row (each idempotent)."""

    def __init__(self, deps: Deps):
        super().__init__(deps)
        self.relations = Relations(deps)
        self.statuses = Statuses(deps)
        self.lists = Lists(deps)
        self.federation = Federation(deps)
        #: list title -> id, of the one member this step imports for
        self._titles: dict[str, int] | None = None

    async def account(self, address: str, here: Here) -> int | None:
        """A local account by its login (``name`` or ``name@this-host``),
        or another server's, looked up there (federation on); None if none."""
        name, _, host = address.partition("@")
        try:
            if not host or host.lower() == here.host.lower():
                return (await users.lookup(self.store, name)).id
            if not self.settings.public_url:
                return None
            kept = await self.federation.kept_remote_account(address)
            return (kept or await self.federation.resolve_account(address)).id
        except (UserNotFound, RedpollError):
            return None

    async def status(self, uri: str, here: Here) -> int | None:
        """A local status by its ActivityPub id or its URL; another
        server's, kept here or fetched from its server (federation on);
        None otherwise."""
        if self.settings.public_url and not uri.startswith(here.base + "/"):
            return await self.federation.status_by_uri(uri)
        if uri.startswith(here.base + "/"):
            tail = uri[len(here.base) :].strip("/").split("/")
            digits = tail[-1] if tail else ""
            if not digits.isdigit():
                return None
            try:
                return (await statuses.get_status(self.store, int(digits))).id
            except StatusNotFound:
                return None
        return None

    async def follow(self, uid: int, target: int, reblogs: bool, notify: bool) -> None:
        await self.relations.follow_with_options(uid, target, reblogs, notify)

    async def unfollow(self, uid: int, target: int) -> None:
        await self.relations.unfollow(uid, target)

    async def block(self, uid: int, target: int) -> None:
        await self.relations.block(uid, target)

    async def unblock(self, uid: int, target: int) -> None:
        await self.relations.unblock(uid, target)

    async def mute(self, uid: int, target: int, notifications: bool) -> None:
        await self.relations.mute(uid, target, 0, notifications)

    async def unmute(self, uid: int, target: int) -> None:
        await self.relations.unmute(uid, target)

    async def block_domain(self, uid: int, host: str) -> None:
        await self.relations.block_domain(uid, host)

    async def unblock_domain(self, uid: int, host: str) -> None:
        await self.relations.unblock_domain(uid, host)

    async def bookmark(self, uid: int, sid: int) -> None:
        await self.statuses.bookmark(uid, sid)

    async def unbookmark(self, uid: int, sid: int) -> None:
        await self.statuses.unbookmark(uid, sid)

    async def list_named(self, uid: int, title: str) -> int:
        """The id of ``uid``'s list of that title, made if there is none;
        the member's lists read once per step (an object lives one step:
        worker.import_actions), not once per row."""
        if self._titles is None:
            self._titles = {}
            for found in await self.lists.all(uid):
                self._titles.setdefault(found.title, found.id)
        if title not in self._titles:
            self._titles[title] = (await self.lists.create(uid, title)).id
        return self._titles[title]

    async def list_ids(self, uid: int) -> dict[int, str]:
        return {found.id: found.title for found in await self.lists.all(uid)}

    async def drop_list(self, uid: int, lid: int) -> None:
        await self.lists.delete(uid, lid)
        self._titles = None

    async def list_add(self, uid: int, lid: int, target: int) -> None:
        """As Mastodon's import: an account not followed yet is followed first."""
        if not await self.relations.is_following(uid, target):
            await self.relations.follow_with_options(uid, target)
        await self.lists.add(uid, lid, target)

    async def list_remove(self, uid: int, lid: int, target: int) -> None:
        await self.lists.remove(uid, lid, target)
