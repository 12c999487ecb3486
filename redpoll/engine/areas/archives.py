"""A member's archive of their posts and media (redpoll.portability.archive):
asked for, listed, its file found for its owner; and what renders its
documents for the job (:class:`ArchiveRenderer`: the federation's own actor
and Create activities, which the portability package does not import)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.models import Status
from ...federation import documents, remote
from ...federation.outbox import mentioned, note_of
from ...portability import archive
from ...records import users
from .base import Area


class Archives(Area):
    async def start(self, uid, base: str) -> archive.Archive:
        """Queue an archive of ``uid``'s posts and media (ArchiveTooSoon
        within limits.ARCHIVE_INTERVAL_S of the last)."""
        return await archive.start(self.store, self.queue, uid, base)

    async def listed(self, uid) -> list[archive.Archive]:
        return await archive.listed(self.store, uid)

    async def get(self, uid, aid) -> archive.Archive:
        return await archive.get(self.store, uid, aid)

    async def ready_file(self, uid, aid) -> tuple[archive.Archive, Path]:
        """The ready archive ``aid`` of ``uid``'s and its file (ArchiveNotFound
        for anyone else's, or one not ready)."""
        return await archive.ready_file(self.store, self.settings.data_dir, uid, aid)


class ArchiveRenderer(Area):
    """archive.Renderer through the federation's documents: the actor as
    this server publishes it (redpoll.federation.publish.actor) and each
    status's Create as its outbox sends it (redpoll.federation.outbox)."""

    async def actor(self, uid: int, base: str) -> dict[str, Any]:
        user = await users.get_user(self.store, uid)
        pair = await remote.key_pair(self.store, user.id)
        return documents.person(user, base, pair.public_pem)

    async def create(self, status: Status, base: str) -> dict[str, Any]:
        named = await mentioned(self.store, base, status)
        to, cc = documents.addressing(status, base, [uri for uri, _, _ in named])
        note_uri = documents.note_id(base, status.login, status.id)
        me = documents.actor_id(base, status.login)
        return documents.activity(
            "Create",
            f"{note_uri}/activity",
            me,
            await note_of(self.store, base, status),
            to=to,
            cc=cc,
        )
