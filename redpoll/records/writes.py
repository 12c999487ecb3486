"""A status record's writes that differ between the topologies: its
delete's point of no return, its record changed (an edit, a poll's counts),
the end of its delete's cleanup. Chosen once per Store (:func:`of`); the
single server also keeps the log of changed statuses (keys.CHANGED_STATUSES)
that lets every process serve kept records (redpoll.core.memo's rule),
which spans every slot, so the cluster has none. Scripts: this package's
``lua/``.

====================  ==============================  ==============================
operation             SingleServer                    Cluster
====================  ==============================  ==============================
mark_deleted          delete_mark_listed.lua          delete_mark.lua
forget_deleted        forget_deleted.lua              nothing to do
update_status         status_update_listed.lua        status_update.lua
edit_status           status_edit_listed.lua          status_edit.lua
====================  ==============================  ==============================
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from ..core import keys, limits
from ..core.models import now_ms
from ..storage import topology
from ..storage.store import Store


class StatusWrites:
    """What both topologies share; the subclasses are the two layouts."""

    def __init__(self, store: Store):
        self.store = store

    async def mark_deleted(self, sid: int, by_user: int, marker) -> list:
        """The delete's point of no return (delete_mark.lua's reply)."""
        raise NotImplementedError

    async def forget_deleted(self, sid: int) -> None:
        """The delete's cleanup reached every timeline."""

    async def update_status(
        self, sid: int, fields: dict[str, str], only_if: tuple[str, str] = ("", "")
    ) -> int:
        """Change a live status's record (an edit): its new version, or
        StatusNotFound. Every process reads it again (redpoll.core.memo).
        ``only_if``: (field, value) the record must hold, else Conflict and
        nothing written (one script: atomic)."""
        raise NotImplementedError

    async def edit_status(
        self,
        sid: int,
        author: int,
        version: str,
        entries: tuple[str, str],
        fields: dict[str, str],
        drop: Sequence[str] = (),
    ) -> int:
        """An edit of a live status by ``author``, in one step: the history
        (keys.status_edits) gets ``entries`` (the original's, pushed only
        when the history is empty, and this edit's), the record's ``drop``
        fields go and ``fields`` are set, and it gets a new version, which
        it returns. Refused with nothing written: StatusNotFound, Forbidden
        (another's), Conflict (the record is no longer at ``version``),
        LimitReached (the history holds limits.EDITS_MAX edits)."""
        return await self.store.run(
            self._edit_script,
            self._edit_keys(sid),
            [
                author,
                version,
                limits.EDITS_MAX + 1,
                *entries,
                len(drop),
                *drop,
                *[x for pair in fields.items() for x in pair],
            ],
        )

    _edit_script = "status_edit"

    def _edit_keys(self, sid: int) -> list[str]:
        return [keys.status(sid), keys.status_edits(sid)]


class SingleServerStatusWrites(StatusWrites):
    async def mark_deleted(self, sid: int, by_user: int, marker) -> list:
        return await self.store.run(
            "delete_mark_listed",
            [keys.status(sid), keys.CHANGED_STATUSES, keys.EPOCH],
            [
                by_user,
                marker,
                limits.DELETED_TOMBSTONE_S,
                limits.CHANGED_STATUSES_MAX,
                uuid.uuid4().hex,
                -(now_ms() - limits.DELETED_FORGET_AFTER_S * 1000),
            ],
        )

    async def forget_deleted(self, sid: int) -> None:
        await self.store.run("forget_deleted", [keys.CHANGED_STATUSES], [sid, now_ms()])

    async def update_status(
        self, sid: int, fields: dict[str, str], only_if: tuple[str, str] = ("", "")
    ) -> int:
        return await self.store.run(
            "status_update_listed",
            [keys.status(sid), keys.CHANGED_STATUSES],
            [*only_if, *[x for pair in fields.items() for x in pair]],
        )

    _edit_script = "status_edit_listed"

    def _edit_keys(self, sid: int) -> list[str]:
        return [keys.status(sid), keys.status_edits(sid), keys.CHANGED_STATUSES]


class ClusterStatusWrites(StatusWrites):
    async def mark_deleted(self, sid: int, by_user: int, marker) -> list:
        return await self.store.run(
            "delete_mark", [keys.status(sid)], [by_user, marker, limits.DELETED_TOMBSTONE_S]
        )

    async def update_status(
        self, sid: int, fields: dict[str, str], only_if: tuple[str, str] = ("", "")
    ) -> int:
        return await self.store.run(
            "status_update",
            [keys.status(sid)],
            [*only_if, *[x for pair in fields.items() for x in pair]],
        )


def of(store: Store) -> StatusWrites:
    """The status writes of ``store``'s topology, made once per store."""
    return topology.pick(store, SingleServerStatusWrites, ClusterStatusWrites)
