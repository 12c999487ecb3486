"""The two topologies redpoll runs on, chosen once per Store (:func:`of`).
Each class implements the same named operations; the action modules
(posting, deleting, delivery, edges, timelines, refill...) call them and
never ask which topology they are on. The Store itself knows nothing of
them: it carries commands and scripts, this module says which.

====================  ==============================  ==============================
operation             SingleServer                    Cluster
====================  ==============================  ==============================
deliver               deliver_fast.lua (watermark,    deliver.lua, one call per
                      blind push), else deliver.lua   hash slot of the targets
deliver_besides       mark_merged.lua, deliver.lua    deliver.lua per slot
undeliver             undeliver.lua, one call         undeliver.lua per slot
add_edge              the three steps (and a          the three steps in turn; the
                      journal's release) pipelined;   member's ids read in between
                      merge_profile.lua reads the
                      member's ids itself
merge                 mark_merged.lua + merge.lua,    merge.lua
                      pipelined
read_page             read_page_listed.lua (skips     read_page.lua, statuses read
                      deleted ids, gives versions,    (each one's version), in
                      the epoch and authors' revs);   rounds past deleted ids
                      one batch for what is not kept
read_page_with        a script and read_page_listed   the script, then read_page
                      in one round trip
read_home             catch_up_listed.lua (the home   large_followees.lua with the
                      catches up with its large       page, then the accounts'
                      accounts: news, fan-out's       sequences, then the news;
                      rules, the write) and then      hybrid.catch_up applies the
                      read_page_listed: one trip      rules, catch_up.lua writes,
                                                      then the page again
mark_deleted          delete_mark_listed.lua          delete_mark.lua
forget_deleted        forget_deleted.lua              nothing to do
update_status         status_update_listed.lua        status_update.lua
edit_status           status_edit_listed.lua          status_edit.lua
used_memory           INFO memory                     summed over the primaries
public_key            the one public timeline         one of PUBLIC_TIMELINE_SHARDS
read_public           read_page of it                 each shard's page, merged
====================  ==============================  ==============================

The single server's extra keys (keys.FANOUT_WATERMARK, keys.fanout_done,
keys.CHANGED_STATUSES) span every slot, which is why the cluster has none
of them. What both do alike lives in the base class.
"""
from __future__ import annotations

import uuid
import weakref
from typing import Any, Protocol, Sequence

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ClusterDownError

from ..core import keys, limits
from ..core.models import EXTRA_PREFIX, HomeRead, Page, now_ms
from .store import Store


class Edge(Protocol):
    """What :meth:`Topology.add_edge` needs of an edge (redpoll.relations.edges.Edge)."""
    member: int
    source: str
    timeline: str

    def source_call(self, present: bool) -> tuple: ...

    def target_call(self, present: bool) -> tuple: ...

    async def member_newest(self, store: Store) -> list[int]:
        """The member's newest ids that the merge takes (a cluster reads
        them between the steps; a single server's script reads them)."""


class Records(Protocol):
    """How the ids a page read found become statuses. The storage layer
    knows no statuses: the caller hands this in (redpoll.timelines.timelines)."""

    async def listed(self, reply: Any) -> Page:
        """read_page_listed.lua's reply (ids with versions, the epoch, the
        authors' revs, the counts) made a page."""

    async def live(self, ids: list[int]) -> list:
        """The statuses of ``ids`` still there, in their order."""

#: Reads of one page at most, when deleted ids make it come up short.
TOP_UP_ROUNDS = 8
#: The public timeline's LISTs on a cluster (Cluster.public_key).
PUBLIC_SHARDS = keys.public_timeline_shards(limits.PUBLIC_TIMELINE_SHARDS)
#: The name parts read_page_listed.lua builds status and user keys from.
STATUS_PARTS = keys.key_parts(keys.status)
USER_PARTS = keys.key_parts(keys.user)
COUNTS_PARTS = keys.key_parts(keys.status_counts)
#: The name parts catch_up_listed.lua also builds profile and boost keys from.
PROFILE_PARTS = keys.key_parts(keys.profile)
REBLOGGED_BY_PARTS = keys.key_parts(keys.reblogged_by)
#: The status fields catch_up_listed.lua applies fan-out's rules by.
CATCH_UP_FIELDS = (EXTRA_PREFIX + "visibility", EXTRA_PREFIX + "in_reply_to_account_id",
                   EXTRA_PREFIX + "reblog_of")


class Topology:
    """What both topologies share; the subclasses are the two layouts."""

    name = ""
    #: whether :meth:`read_home` reads a home page and its large accounts'
    #: news in one round trip (else hybrid.read_home_apart does, in rounds)
    reads_home_at_once = False

    def __init__(self, store: Store):
        self.store = store

    async def deliver_boost(self, sid: int, triples: Sequence, args: list) -> None:
        """deliver_boost.lua over (home, hrb, noreb) triples (boosts.py), one
        call per hash slot, after what this topology needs before a checked
        insert (the single server's watermark)."""
        await self._before_checked_insert(sid)
        await self.store.run_grouped("deliver_boost", list(triples), args)

    async def _before_checked_insert(self, sid: int) -> None:
        return None

    async def undeliver(self, sid: int, targets: Sequence) -> None:
        """Take ``sid`` out of every timeline in ``targets`` (idempotent)."""
        if targets:
            await self.store.run_grouped("undeliver", targets, [sid, limits.HOME_CAP])

    async def deliver(self, sid: int, targets: Sequence, batch_name: str) -> None:
        """Put ``sid`` into every timeline in ``targets`` (idempotent);
        ``batch_name`` names this batch of this status's delivery."""
        raise NotImplementedError

    async def deliver_besides(self, sid: int, targets: Sequence, cap: int) -> None:
        """Put ``sid`` into timelines outside its fan-out's batches (the
        homes of those it mentions, tag timelines), checked like deliver.lua
        does; the fan-out's own batches then check too, since they may meet
        the same homes."""
        raise NotImplementedError

    async def add_edge(self, e: "Edge", then: tuple | None = None) -> tuple[Any, Any, Any, Any]:
        """Set the owner's side, the member's side and merge the member's
        newest statuses into the owner's timeline (edges.add), then run
        ``then`` (a script call; run whatever the steps returned); each
        reply, or the exception it raised, or None for a step not run."""
        raise NotImplementedError

    async def _then(self, then: tuple | None) -> Any:
        if then is None:
            return None
        try:
            return await self.store.run(*then)
        except Exception as exc:  # noqa: BLE001 - handed back like run_many's
            return exc

    async def merge(self, timeline: str, guard: str, member: str, ids: list[int]) -> bool:
        """merge.lua: ``ids`` (newest first) into ``timeline`` while ``guard``
        holds ``member`` ('' = no guard); False if it did not."""
        raise NotImplementedError

    async def read_page(self, timeline: str, owner_hash: str, field: str, cursors: list) -> Any:
        """A handle on a page of ``timeline`` for :meth:`page_of`; raises
        redpoll.core.errors.NotFound if ``owner_hash`` lacks ``field``."""
        raise NotImplementedError

    async def page_of(self, handle: Any, records: Records) -> Page:
        """The page a handle stands for: live statuses, newest first,
        reading on past deleted ones (a page of only deleted ids would look
        like the end)."""
        raise NotImplementedError

    def public_key(self, sid: int) -> str:
        """The public timeline's LIST that status ``sid`` goes to."""
        return keys.PUBLIC_TIMELINE

    def public_keys(self) -> list[str]:
        """Every LIST of the public timeline."""
        return [keys.PUBLIC_TIMELINE]

    async def read_public(self, cursors: list, records: Records) -> Page:
        """A page of the public timeline."""
        return await self.page_of(await self.read_page(keys.PUBLIC_TIMELINE, keys.PUBLIC_TIMELINE,
                                                       "", cursors), records)

    async def read_page_with(self, call: tuple, timeline: str, owner_hash: str, field: str,
                             cursors: list) -> tuple[Any, Any]:
        """``call`` (a script: name, keys, args; idempotent) and the ids of
        :meth:`read_page`: its reply and a handle on the page, for
        :meth:`page_of`. One round trip on a single server (the home page
        and its large followees, redpoll.timelines.hybrid)."""
        return await self.store.run(*call), await self.read_page(timeline, owner_hash, field,
                                                                 cursors)

    async def catch_up(self, uid: int, args: list, cursors: list) -> Any:
        """catch_up.lua on ``uid``'s home with ``args`` (its ARGV from
        ARGV[2] on), then the home's page read again by ``cursors``: a
        handle for :meth:`page_of`. (A cluster's: a single server catches
        up in read_home's own script, catch_up_listed.lua.)"""
        await self.store.run("catch_up", self._catch_up_keys(uid), [limits.HOME_CAP, *args])
        return await self.read_page(keys.home(uid), keys.user(uid), "id", cursors)

    @staticmethod
    def _catch_up_keys(uid: int) -> list[str]:
        return [keys.home(uid), keys.following(uid), keys.large_marks(uid),
                keys.home_reblogs(uid)]

    async def mark_deleted(self, sid: int, by_user: int, marker) -> list:
        """The delete's point of no return (delete_mark.lua's reply)."""
        raise NotImplementedError

    async def forget_deleted(self, sid: int) -> None:
        """The delete's cleanup reached every timeline."""

    async def update_status(self, sid: int, fields: dict[str, str]) -> int:
        """Change a live status's record (an edit): its new version, or
        StatusNotFound. Every process reads it again (redpoll.core.memo)."""
        raise NotImplementedError

    async def edit_status(self, sid: int, author: int, version: str, entries: tuple[str, str],
                          fields: dict[str, str], drop: Sequence[str] = ()) -> int:
        """An edit of a live status by ``author``, in one step: the history
        (keys.status_edits) gets ``entries`` (the original's, pushed only
        when the history is empty, and this edit's), the record's ``drop``
        fields go and ``fields`` are set, and it gets a new version, which
        it returns. Refused with nothing written: StatusNotFound, Forbidden
        (another's), Conflict (the record is no longer at ``version``),
        LimitReached (the history holds limits.EDITS_MAX edits)."""
        return await self.store.run(self._edit_script, self._edit_keys(sid),
                                    [author, version, limits.EDITS_MAX + 1, *entries,
                                     len(drop), *drop,
                                     *[x for pair in fields.items() for x in pair]])

    _edit_script = "status_edit"

    def _edit_keys(self, sid: int) -> list[str]:
        return [keys.status(sid), keys.status_edits(sid)]

    async def keys_matching(self, pattern: str) -> list[str]:
        """Every key matching ``pattern`` (SCAN, on every master of a
        cluster); for rare administrative work, never a request's."""
        return [k.decode() if isinstance(k, bytes) else k
                async for k in self.store.scan_iter(match=pattern, count=1000)]

    async def used_memory(self) -> int:
        raise NotImplementedError

    async def alive(self) -> None:
        """Whether the database serves again after an outage (the health
        probe's question, redpoll.core.health); raises if not."""
        await self.store.ping()


class SingleServer(Topology):
    name = "single server"
    #: a home page's first round trip is :meth:`read_home` (hybrid.read_home)
    reads_home_at_once = True

    async def deliver(self, sid: int, targets: Sequence, batch_name: str) -> None:
        if not targets:
            return
        pushed = await self.store.run(
            "deliver_fast", [keys.FANOUT_WATERMARK, keys.fanout_done(sid), *targets],
            [sid, limits.HOME_CAP, batch_name, limits.FANOUT_DONE_TTL_S])
        if pushed == -1:  # not provably safe to push blind: look first
            await self.store.run("deliver", targets, [sid, limits.HOME_CAP])

    async def deliver_besides(self, sid: int, targets: Sequence, cap: int) -> None:
        # the watermark marked first ('m' at this id): no blind push of it follows
        await self.store.run("mark_merged", [keys.FANOUT_WATERMARK], [sid])
        await self.store.run("deliver", targets, [sid, cap])

    async def _before_checked_insert(self, sid: int) -> None:
        # as deliver_besides: an older id's blind push must not land above it
        await self.store.run("mark_merged", [keys.FANOUT_WATERMARK], [sid])

    async def add_edge(self, e: "Edge", then: tuple | None = None) -> tuple[Any, Any, Any, Any]:
        # one round trip, ``then`` included (a pipeline runs every call)
        replies = await self.store.run_many([
            e.source_call(True),
            e.target_call(True),
            ("merge_profile", [e.timeline, e.source, keys.FANOUT_WATERMARK,
                               keys.profile(e.member), keys.direct_posts(e.member)],
             [limits.HOME_CAP, e.member, limits.BACKFILL]),
            *([then] if then is not None else []),
        ])
        return (*replies[:3], replies[3] if then is not None else None)

    async def merge(self, timeline: str, guard: str, member: str, ids: list[int]) -> bool:
        if not ids:
            return await self.store.run("merge", [timeline, guard], [limits.HOME_CAP, member])
        _, merged = await self.store.run_many([
            ("mark_merged", [keys.FANOUT_WATERMARK], [ids[0]]),
            ("merge", [timeline, guard], [limits.HOME_CAP, member, *ids])])
        if isinstance(merged, Exception):
            raise merged
        return bool(merged)

    async def read_page(self, timeline: str, owner_hash: str, field: str, cursors: list) -> Any:
        """One script call reads the ids with their versions from the log of
        changed statuses (keys.CHANGED_STATUSES), leaving out deleted ones
        and reading on past them for up to ``TOP_UP_ROUNDS`` pages of ids,
        and with them the database epoch and the 'rev' of each status's
        author: the handle (Records.listed makes it a page, serving kept
        records at those versions as kept: redpoll.core.memo's rule)."""
        return await self.store.run(*self._page_call(timeline, owner_hash, field, cursors))

    @staticmethod
    def _page_call(timeline: str, owner_hash: str, field: str, cursors: list) -> tuple:
        return ("read_page_listed", [timeline, owner_hash, keys.CHANGED_STATUSES, keys.EPOCH],
                [*cursors, field, cursors[3] * TOP_UP_ROUNDS, *STATUS_PARTS, *USER_PARTS,
                 *COUNTS_PARTS, limits.CURSOR_SCAN_MAX])

    async def read_page_with(self, call: tuple, timeline: str, owner_hash: str, field: str,
                             cursors: list) -> tuple[Any, Any]:
        reply, handle = await self.store.run_many([
            call, self._page_call(timeline, owner_hash, field, cursors)])
        for result in (reply, handle):
            if isinstance(result, Exception):
                raise result
        return reply, handle

    async def read_home(self, uid: int, cursors: list) -> HomeRead:
        """One round trip: catch_up_listed.lua (the home catches up with the
        large accounts it merges, when they posted since) and then the
        home's page, which reads the caught-up home."""
        call = ("catch_up_listed", [keys.large_following(uid), keys.following(uid),
                                    keys.hidden_reblogs(uid), keys.large_marks(uid),
                                    keys.home(uid), keys.FANOUT_WATERMARK,
                                    keys.home_reblogs(uid)],
                [limits.MERGED_ACCOUNTS_MAX, limits.CATCH_UP_PER_ACCOUNT,
                 limits.CATCH_UP_OVERLAP, *USER_PARTS, *PROFILE_PARTS,
                 limits.CATCH_UP_HOME_CHECK, *STATUS_PARTS, *REBLOGGED_BY_PARTS,
                 limits.CATCH_UP_BOOSTS_READ, limits.HOME_CAP, limits.REBLOG_WINDOW,
                 *CATCH_UP_FIELDS, limits.HOME_REBLOGS_KEPT])
        (large, _), handle = await self.read_page_with(
            call, keys.home(uid), keys.user(uid), "id", cursors)
        return HomeRead([int(a) for a in large], set(), handle)

    async def page_of(self, handle: Any, records: Records) -> Page:
        return await records.listed(handle)

    async def mark_deleted(self, sid: int, by_user: int, marker) -> list:
        return await self.store.run(
            "delete_mark_listed", [keys.status(sid), keys.CHANGED_STATUSES, keys.EPOCH],
            [by_user, marker, limits.DELETED_TOMBSTONE_S, limits.CHANGED_STATUSES_MAX,
             uuid.uuid4().hex, -(now_ms() - limits.DELETED_FORGET_AFTER_S * 1000)])

    async def forget_deleted(self, sid: int) -> None:
        await self.store.run("forget_deleted", [keys.CHANGED_STATUSES], [sid, now_ms()])

    async def update_status(self, sid: int, fields: dict[str, str]) -> int:
        return await self.store.run("status_update_listed",
                                    [keys.status(sid), keys.CHANGED_STATUSES],
                                    [x for pair in fields.items() for x in pair])

    _edit_script = "status_edit_listed"

    def _edit_keys(self, sid: int) -> list[str]:
        return [keys.status(sid), keys.status_edits(sid), keys.CHANGED_STATUSES]

    async def used_memory(self) -> int:
        return (await self.store.info("memory"))["used_memory"]


class Cluster(Topology):
    name = "cluster"

    def public_key(self, sid: int) -> str:
        """Public statuses go to one of ``limits.PUBLIC_TIMELINE_SHARDS`` LISTs
        by id, each in its own slot: posting spreads over the masters instead
        of putting every public post on the one holding a single key."""
        return PUBLIC_SHARDS[sid % len(PUBLIC_SHARDS)]

    def public_keys(self) -> list[str]:
        return list(PUBLIC_SHARDS)

    async def read_public(self, cursors: list, records: Records) -> Page:
        """Each shard's page of ids for the cursors (one read_page.lua call
        per shard, sent as one pipeline: a round trip per master), merged by
        id: the ``limit`` nearest the cursor of all of them, which the union
        of each shard's ``limit`` nearest holds. The statuses are read as on
        one timeline, in rounds past deleted ids."""
        max_id, since_id, min_id, limit = cursors
        found: list = []
        pairs = [k for shard in PUBLIC_SHARDS for k in (shard, shard)]  # KEYS[1], KEYS[2]
        for _ in range(TOP_UP_ROUNDS):
            replies = await self.store.run_grouped("read_page", pairs,
                                                   [max_id, since_id, min_id, limit, ""])
            merged = {int(i) for reply in replies for i in reply}
            # min_id: the ones right above it; otherwise the newest below the top
            ids = sorted(merged)[:limit] if min_id else sorted(merged, reverse=True)[:limit]
            statuses = await records.live(sorted(ids, reverse=True))
            if min_id:
                found = statuses + found
                min_id = max(ids) if ids else min_id
            else:
                found += statuses
                max_id = min(ids) if ids else max_id
            if len(ids) < limit or len(found) >= limit:
                break
        return Page(found[-limit:] if min_id else found[:limit])

    async def deliver(self, sid: int, targets: Sequence, batch_name: str) -> None:
        if targets:
            await self.store.run_grouped("deliver", targets, [sid, limits.HOME_CAP])

    async def deliver_besides(self, sid: int, targets: Sequence, cap: int) -> None:
        await self.store.run_grouped("deliver", targets, [sid, cap])

    async def add_edge(self, e: "Edge", then: tuple | None = None) -> tuple[Any, Any, Any, Any]:
        store = self.store
        try:
            source = await store.run(*e.source_call(True))
        except Exception as exc:  # noqa: BLE001 - handed back like run_many's
            return exc, None, None, await self._then(then)
        try:
            target = await store.run(*e.target_call(True))
        except Exception as exc:  # noqa: BLE001
            return source, exc, None, await self._then(then)
        ids = await e.member_newest(store)
        merged = await self.merge(e.timeline, e.source, str(e.member), ids)
        return source, target, merged, await self._then(then)

    async def merge(self, timeline: str, guard: str, member: str, ids: list[int]) -> bool:
        return bool(await self.store.run("merge", [timeline, guard],
                                         [limits.HOME_CAP, member, *ids]))

    async def read_page(self, timeline: str, owner_hash: str, field: str, cursors: list) -> Any:
        """The first round's ids (the statuses are in other slots: page_of
        reads them, in rounds)."""
        ids = await self.store.run("read_page", [timeline, owner_hash], [*cursors, field])
        return (timeline, owner_hash, field, cursors, ids)

    async def page_of(self, handle: Any, records: Records) -> Page:
        return await self._rounds(*handle, records)

    async def read_page_with(self, call: tuple, timeline: str, owner_hash: str, field: str,
                             cursors: list) -> tuple[Any, Any]:
        """``call`` and the page's first ids in one round trip when they are
        on one master (a home page: the user's keys share their hash tag),
        as the single server does; else one after the other."""
        store = self.store
        first = ("read_page", [timeline, owner_hash], [*cursors, field])
        if len(store.slot_groups([*call[1], timeline, owner_hash])) > 1:
            return await store.run(*call), await self.read_page(timeline, owner_hash, field,
                                                                cursors)
        reply, ids = await store.run_many([call, first])
        for result in (reply, ids):
            if isinstance(result, Exception):
                raise result
        return reply, (timeline, owner_hash, field, cursors, ids)

    async def _rounds(self, timeline: str, owner_hash: str, field: str, cursors: list,
                      ids: list | None, records: Records) -> Page:
        """The status keys are in other slots than the timeline, so deleted
        ids are found by reading the statuses, and the page reads on past
        them in rounds, in its own direction, keeping the ``limit`` closest
        to the cursor (``ids``: the first round's, if already read)."""
        max_id, since_id, min_id, limit = cursors
        found: list = []
        for _ in range(TOP_UP_ROUNDS):
            if ids is None:
                ids = await self.store.run("read_page", [timeline, owner_hash],
                                           [max_id, since_id, min_id, limit, field])
            statuses = await records.live([int(i) for i in ids])
            if min_id:
                found = statuses + found
                min_id = int(ids[0]) if ids else min_id
            else:
                found += statuses
                max_id = int(ids[-1]) if ids else max_id
            if len(ids) < limit or len(found) >= limit:
                break
            ids = None
        return Page(found[-limit:] if min_id else found[:limit])

    async def mark_deleted(self, sid: int, by_user: int, marker) -> list:
        return await self.store.run("delete_mark", [keys.status(sid)],
                                    [by_user, marker, limits.DELETED_TOMBSTONE_S])

    async def update_status(self, sid: int, fields: dict[str, str]) -> int:
        return await self.store.run("status_update", [keys.status(sid)],
                                    [x for pair in fields.items() for x in pair])

    async def used_memory(self) -> int:
        info = await self.store.info("memory", target_nodes=RedisCluster.PRIMARIES)
        return sum(node["used_memory"] for node in info.values())

    async def alive(self) -> None:
        """PING, and the answering node has every slot served
        (cluster_state:ok): nodes that came back answer before they agree
        again, and calls meanwhile get CLUSTERDOWN."""
        await self.store.ping()
        info = await self.store.client.cluster_info()
        if info.get("cluster_state", "ok") != "ok":
            raise ClusterDownError("CLUSTERDOWN the cluster is not serving every slot yet")


_CHOSEN: "weakref.WeakKeyDictionary[Store, Topology]" = weakref.WeakKeyDictionary()


def of(store: Store) -> Topology:
    """The topology of ``store``'s database, made once per store."""
    topology = _CHOSEN.get(store)
    if topology is None:
        topology = _CHOSEN[store] = Cluster(store) if store.cluster else SingleServer(store)
    return topology
