"""How timelines are written and read on each topology: the timelines
package's operations, chosen once per Store (:func:`of`) between the two
variants, side by side here. Callers (delivery, edges, refill, hybrid,
conversations) never ask which topology they are on; which status enters
which timeline is decided above these writes (redpoll.timelines.home_rule),
the same way on both: the scripts (this package's ``lua/``) only write.

====================  ==============================  ==============================
operation             SingleServer                    Cluster
====================  ==============================  ==============================
deliver               deliver_fast.lua (watermark,    deliver.lua, one call per
                      blind push), else deliver.lua   hash slot of the targets
deliver_besides       mark_merged.lua, deliver.lua    deliver.lua per slot
deliver_boost         mark_merged.lua, then           deliver_boost.lua per slot,
                      deliver_boost.lua               one batch per master
undeliver             undeliver.lua, one call         undeliver.lua per slot
add_edge              both sides, merge_profile.lua   both sides in turn, then the
                      (the member's plain statuses)   reads (the member's newest
                      and the journal's release, and  statuses, the ruled ones
                      the read of the ruled ones,     among them); the merge
                      pipelined; then merge.lua for   follows (merge_then)
                      the ruled ones taken
merge, merge_then     mark_merged.lua + merge.lua     merge.lua, then the journal's
                      (+ the journal's release),      release
                      pipelined
read_page             read_page_listed.lua (skips     read_page.lua, statuses read
                      deleted ids, gives versions,    (each one's version), in
                      the epoch and authors' revs);   rounds past deleted ids
                      one batch for what is not kept
read_page_with        a script and read_page_listed   the script and read_page in
                      in one round trip, with the     one trip (one slot), else in
                      members' fields (SORT_RO GET)   turn; the members' fields
                                                      are read after, by the caller
catch_up              mark_merged.lua, catch_up.lua   catch_up.lua, then the page
                      and the page, pipelined
catch_up_plain        catch_up_plain.lua (the large   (none: large_followees.lua
                      accounts' news, the plain ones  with the page, the accounts'
                      written) and the page, in the   sequences, the news, then
                      page's one round trip           catch_up)
public_key            the one public timeline         one of PUBLIC_TIMELINE_SHARDS
read_public           read_page of it                 each shard's page, merged
====================  ==============================  ==============================

The single server's extra keys (keys.FANOUT_WATERMARK, keys.fanout_done,
keys.CHANGED_STATUSES) span every slot, which is why the cluster has none
of them. What both do alike lives in the base class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..core import keys, limits
from ..core.models import Page
from ..storage import topology
from ..storage.store import Store


class Edge(Protocol):
    """What :meth:`Timelines.add_edge` needs of an edge (redpoll.relations.edges.Edge)."""

    member: int
    source: str
    timeline: str

    def source_call(self, present: bool) -> tuple: ...

    def target_call(self, present: bool) -> tuple: ...


class Records(Protocol):
    """How the ids a page read found become statuses (redpoll.timelines.timelines)."""

    async def listed(self, reply: Any) -> Page:
        """read_page_listed.lua's reply (ids with versions, the epoch, the
        authors' revs, the counts) made a page."""

    async def live(self, ids: list[int]) -> list:
        """The statuses of ``ids`` still there, in their order."""


#: Reads of one page at most, when deleted ids make it come up short.
TOP_UP_ROUNDS = 8
#: The public timeline's LISTs on a cluster (ClusterTimelines.public_key).
PUBLIC_SHARDS = keys.public_timeline_shards(limits.PUBLIC_TIMELINE_SHARDS)
#: The name parts read_page_listed.lua builds status and user keys from.
STATUS_PARTS = keys.key_parts(keys.status)
USER_PARTS = keys.key_parts(keys.user)
COUNTS_PARTS = keys.key_parts(keys.status_counts)


class Timelines:
    """What both topologies share; the subclasses are the two layouts."""

    def __init__(self, store: Store):
        self.store = store
        self.topology = topology.of(store)

    #: whether :meth:`add_edge` merges the member's plain statuses itself
    #: (merge_profile.lua; else the caller reads them and merges: merge_then)
    merges_profiles = False

    #: whether :meth:`catch_up_plain` reads a home's news from the large
    #: accounts' profiles and writes the plain ones in one script
    catches_up_plain = False

    async def deliver_boost(
        self, sid: int, pairs: Sequence, seen: Sequence[str], args: list
    ) -> None:
        """deliver_boost.lua over (home, hrb) pairs, each home with its guard
        value in ``seen`` (that script's ARGV after ``args``): one call per
        hash slot, sent as one batch per master, after what this topology
        needs before a checked insert (the single server's watermark)."""
        if not pairs:
            return
        await self._before_checked_insert(sid)
        groups: dict[int, tuple[list, list]] = {}
        for n, home in enumerate(pairs[0::2]):
            group_keys, group_seen = groups.setdefault(self.topology.slot(home), ([], []))
            group_keys.extend(pairs[2 * n : 2 * n + 2])
            group_seen.append(seen[n])
        calls = [
            ("deliver_boost", group_keys, [*args, *group_seen])
            for group_keys, group_seen in groups.values()
        ]
        if len(calls) == 1:
            await self.store.run(*calls[0])
            return
        for reply in await self.store.run_many(calls):
            if isinstance(reply, Exception):
                raise reply

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

    async def add_edge(
        self, e: Edge, reads: Sequence[tuple], plain: int = 0, then: tuple | None = None
    ) -> tuple[Any, Any, Any, Any, list | None]:
        """Set the owner's side and the member's side of an edge (edges.add),
        then send ``reads`` (plain commands: what the backfill needs to
        know). Where :attr:`merges_profiles`, also merge the newest
        ``plain`` (if not 0) of the member's profile less its ruled
        statuses (merge_profile.lua) and run ``then`` (a script call), in
        the same round trip. Each side's reply, the merge's, ``then``'s (or
        the exception it raised, or None for a step not run), and the
        reads' replies (None if not sent)."""
        raise NotImplementedError

    async def unmerge(self, timeline: str, guard: str, member: int, ids: Sequence[int]) -> int:
        """unmerge.lua: ``ids`` (``member``'s statuses) out of ``timeline``
        unless ``guard`` holds ``member`` again (then -1 and nothing
        removed); how many went. Idempotent, the same on both topologies."""
        return await self.store.run("unmerge", [timeline, guard], [member, *ids])

    async def run_then(self, then: tuple | None) -> Any:
        """``then`` (a script call), its reply or the exception it raised."""
        if then is None:
            return None
        try:
            return await self.store.run(*then)
        except Exception as exc:  # noqa: BLE001 - handed back like run_many's
            return exc

    async def merge(
        self,
        timeline: str,
        guard: str,
        member: str,
        ids: list[int],
        record: str | None = None,
        boosts: Sequence[tuple[int, int]] = (),
    ) -> bool:
        """merge.lua: ``ids`` (newest first) into ``timeline`` while ``guard``
        holds ``member`` ('' = no guard); False if it did not. ``boosts``:
        the (boost, original) pairs among the ids, recorded in ``record`` (a
        home's boost record) where they went in."""
        merged, _ = await self.merge_then(timeline, guard, member, ids, None, record, boosts)
        if isinstance(merged, Exception):
            raise merged
        return merged

    async def merge_then(
        self,
        timeline: str,
        guard: str,
        member: str,
        ids: list[int],
        then: tuple | None,
        record: str | None = None,
        boosts: Sequence[tuple[int, int]] = (),
    ) -> tuple[Any, Any]:
        """:meth:`merge`, then ``then`` (a script call, run whatever the
        merge returned): the merge's answer (or the exception it raised)
        and ``then``'s reply (or exception, or None)."""
        raise NotImplementedError

    @staticmethod
    def _merge_call(
        timeline: str,
        guard: str,
        member: str,
        ids: list[int],
        record: str | None,
        boosts: Sequence[tuple[int, int]],
    ) -> tuple:
        if record is None or not boosts:
            return ("merge", [timeline, guard], [limits.HOME_CAP, member, *ids])
        return (
            "merge",
            [timeline, guard, record],
            [
                limits.HOME_CAP,
                member,
                limits.HOME_REBLOGS_KEPT,
                len(boosts),
                *(x for pair in boosts for x in pair),
                *ids,
            ],
        )

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
        return await self.page_of(
            await self.read_page(keys.PUBLIC_TIMELINE, keys.PUBLIC_TIMELINE, "", cursors), records
        )

    async def read_page_with(
        self,
        call: tuple,
        timeline: str,
        owner_hash: str,
        field: str,
        cursors: list,
        members: tuple | None = None,
    ) -> tuple[Any, Any, dict | None]:
        """``call`` (a script: name, keys, args; idempotent) and the ids of
        :meth:`read_page`: its reply, a handle on the page, for
        :meth:`page_of`, and, where the topology reads them in that round
        trip, for ``members`` = (set key, key maker, field), each member of
        the set with that field of its key (else None: the caller reads
        them). One round trip on a single server (the home page, its large
        followees and their profile sequences, redpoll.timelines.hybrid)."""
        return (
            await self.store.run(*call),
            await self.read_page(timeline, owner_hash, field, cursors),
            None,
        )

    async def catch_up(self, uid: int, args: list, newest: int, cursors: list) -> Any:
        """catch_up.lua on ``uid``'s home with ``args`` (its ARGV from
        ARGV[2] on; ``newest``: the newest id it may put in), then the
        home's page read again by ``cursors``: a handle for :meth:`page_of`."""
        await self.store.run("catch_up", self._catch_up_keys(uid), [limits.HOME_CAP, *args])
        return await self.read_page(keys.home(uid), keys.user(uid), "id", cursors)

    async def catch_up_plain(self, uid: int, accounts: list[int], cursors: list) -> tuple[Any, Any]:
        """catch_up_plain.lua on ``uid``'s home with the large ``accounts``
        it expects, then the home's page read by ``cursors``: the script's
        reply and a handle for :meth:`page_of`. Where
        :attr:`catches_up_plain` only."""
        raise NotImplementedError

    @staticmethod
    def _catch_up_keys(uid: int) -> list[str]:
        return [keys.home(uid), keys.following(uid), keys.large_marks(uid), keys.home_reblogs(uid)]


class SingleServerTimelines(Timelines):
    async def deliver(self, sid: int, targets: Sequence, batch_name: str) -> None:
        if not targets:
            return
        pushed = await self.store.run(
            "deliver_fast",
            [keys.FANOUT_WATERMARK, keys.fanout_done(sid), *targets],
            [sid, limits.HOME_CAP, batch_name, limits.FANOUT_DONE_TTL_S],
        )
        if pushed == -1:  # not provably safe to push blind: look first
            await self.store.run("deliver", targets, [sid, limits.HOME_CAP])

    async def deliver_besides(self, sid: int, targets: Sequence, cap: int) -> None:
        # the watermark marked first ('m' at this id): no blind push of it follows
        await self.store.run("mark_merged", [keys.FANOUT_WATERMARK], [sid])
        await self.store.run("deliver", targets, [sid, cap])

    async def _before_checked_insert(self, sid: int) -> None:
        # as deliver_besides: an older id's blind push must not land above it
        await self.store.run("mark_merged", [keys.FANOUT_WATERMARK], [sid])

    merges_profiles = True

    async def add_edge(
        self, e: Edge, reads: Sequence[tuple], plain: int = 0, then: tuple | None = None
    ) -> tuple[Any, Any, Any, Any, list | None]:
        # one round trip, the reads included (a pipeline runs every call)
        calls = [e.source_call(True), e.target_call(True)]
        if plain:
            calls.append(
                (
                    "merge_profile",
                    [
                        e.timeline,
                        e.source,
                        keys.FANOUT_WATERMARK,
                        keys.profile(e.member),
                        keys.ruled_posts(e.member),
                    ],
                    [limits.HOME_CAP, e.member, plain],
                )
            )
        if then is not None:
            calls.append(then)
        replies = await self.store.run_many(calls, reads)
        source, target = replies[:2]
        merged = replies[2] if plain else None
        after = replies[len(calls) - 1] if then is not None else None
        return source, target, merged, after, replies[len(calls) :]

    async def merge_then(
        self,
        timeline: str,
        guard: str,
        member: str,
        ids: list[int],
        then: tuple | None,
        record: str | None = None,
        boosts: Sequence[tuple[int, int]] = (),
    ) -> tuple[Any, Any]:
        # one round trip: the watermark first, then the merge and ``then``
        calls = [("mark_merged", [keys.FANOUT_WATERMARK], [ids[0]])] if ids else []
        calls.append(self._merge_call(timeline, guard, member, ids, record, boosts))
        if then is not None:
            calls.append(then)
        replies = await self.store.run_many(calls)
        merged = replies[1 if ids else 0]
        return (
            merged if isinstance(merged, Exception) else bool(merged),
            replies[-1] if then is not None else None,
        )

    catches_up_plain = True

    async def catch_up_plain(self, uid: int, accounts: list[int], cursors: list) -> tuple[Any, Any]:
        # one round trip: the script, then the page, which reads its writes
        script_keys = [
            *self._catch_up_keys(uid),
            keys.FANOUT_WATERMARK,
            keys.large_following(uid),
            keys.hidden_reblogs(uid),
            *(k for a in accounts for k in (keys.user(a), keys.profile(a), keys.ruled_posts(a))),
        ]
        reply, handle = await self.store.run_many(
            [
                (
                    "catch_up_plain",
                    script_keys,
                    [
                        limits.HOME_CAP,
                        limits.CATCH_UP_HOME_CHECK,
                        limits.CATCH_UP_PER_ACCOUNT,
                        limits.CATCH_UP_OVERLAP,
                        *accounts,
                    ],
                ),
                self._page_call(keys.home(uid), keys.user(uid), "id", cursors),
            ]
        )
        for result in (reply, handle):
            if isinstance(result, Exception):
                raise result
        return reply, handle

    async def catch_up(self, uid: int, args: list, newest: int, cursors: list) -> Any:
        # one round trip: the watermark (mark_merged.lua's rule: no blind
        # push of an older id lands above what comes in), the catch-up and
        # the page, which reads the caught-up home
        replies = await self.store.run_many(
            [
                ("mark_merged", [keys.FANOUT_WATERMARK], [newest]),
                ("catch_up", self._catch_up_keys(uid), [limits.HOME_CAP, *args]),
                self._page_call(keys.home(uid), keys.user(uid), "id", cursors),
            ]
        )
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies[-1]

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
        return (
            "read_page_listed",
            [timeline, owner_hash, keys.CHANGED_STATUSES, keys.EPOCH],
            [
                *cursors,
                field,
                cursors[3] * TOP_UP_ROUNDS,
                *STATUS_PARTS,
                *USER_PARTS,
                *COUNTS_PARTS,
                limits.CURSOR_SCAN_MAX,
            ],
        )

    async def read_page_with(
        self,
        call: tuple,
        timeline: str,
        owner_hash: str,
        field: str,
        cursors: list,
        members: tuple | None = None,
    ) -> tuple[Any, Any, dict | None]:
        # the members' fields by SORT_RO ... GET, a plain read whose keys
        # span slots: one server only (a read, no rule in it)
        reads = []
        if members is not None:
            set_key, make, name = members
            before, after = keys.key_parts(make)
            reads = [
                ("SORT_RO", set_key, "BY", "nosort", "GET", "#", "GET", f"{before}*{after}->{name}")
            ]
        reply, handle, *found = await self.store.run_many(
            [call, self._page_call(timeline, owner_hash, field, cursors)], reads
        )
        for result in (reply, handle):
            if isinstance(result, Exception):
                raise result
        fields = None
        if found:
            rows = found[0]
            fields = {int(m): v for m, v in zip(rows[0::2], rows[1::2])}
        return reply, handle, fields

    async def page_of(self, handle: Any, records: Records) -> Page:
        return await records.listed(handle)


class ClusterTimelines(Timelines):
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
            replies = await self.store.run_grouped(
                "read_page", pairs, [max_id, since_id, min_id, limit, ""]
            )
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

    async def add_edge(
        self, e: Edge, reads: Sequence[tuple], plain: int = 0, then: tuple | None = None
    ) -> tuple[Any, Any, Any, Any, list | None]:
        store = self.store
        try:
            source = await store.run(*e.source_call(True))
        except Exception as exc:  # noqa: BLE001 - handed back like run_many's
            return exc, None, None, None, None
        try:
            target = await store.run(*e.target_call(True))
        except Exception as exc:  # noqa: BLE001
            return source, exc, None, None, None
        return source, target, None, None, await store.batch(list(reads)) if reads else []

    async def merge_then(
        self,
        timeline: str,
        guard: str,
        member: str,
        ids: list[int],
        then: tuple | None,
        record: str | None = None,
        boosts: Sequence[tuple[int, int]] = (),
    ) -> tuple[Any, Any]:
        try:
            merged: Any = bool(
                await self.store.run(
                    *self._merge_call(timeline, guard, member, ids, record, boosts)
                )
            )
        except Exception as exc:  # noqa: BLE001 - handed back like run_many's
            merged = exc
        return merged, await self.run_then(then)

    async def read_page(self, timeline: str, owner_hash: str, field: str, cursors: list) -> Any:
        """The first round's ids (the statuses are in other slots: page_of
        reads them, in rounds)."""
        ids = await self.store.run("read_page", [timeline, owner_hash], [*cursors, field])
        return (timeline, owner_hash, field, cursors, ids)

    async def page_of(self, handle: Any, records: Records) -> Page:
        timeline, owner_hash, field, cursors, ids = handle
        return await self._rounds(timeline, owner_hash, field, cursors, ids, records)

    async def read_page_with(
        self,
        call: tuple,
        timeline: str,
        owner_hash: str,
        field: str,
        cursors: list,
        members: tuple | None = None,
    ) -> tuple[Any, Any, dict | None]:
        """``call`` and the page's first ids in one round trip when they are
        on one master (a home page: the user's keys share their hash tag),
        as the single server does; else one after the other. The members'
        fields are the caller's to read (their keys are in other slots)."""
        store = self.store
        first = ("read_page", [timeline, owner_hash], [*cursors, field])
        if len(store.slot_groups([*call[1], timeline, owner_hash])) > 1:
            return (
                await store.run(*call),
                await self.read_page(timeline, owner_hash, field, cursors),
                None,
            )
        reply, ids = await store.run_many([call, first])
        for result in (reply, ids):
            if isinstance(result, Exception):
                raise result
        return reply, (timeline, owner_hash, field, cursors, ids), None

    async def _rounds(
        self,
        timeline: str,
        owner_hash: str,
        field: str,
        cursors: list,
        ids: list | None,
        records: Records,
    ) -> Page:
        """The status keys are in other slots than the timeline, so deleted
        ids are found by reading the statuses, and the page reads on past
        them in rounds, in its own direction, keeping the ``limit`` closest
        to the cursor (``ids``: the first round's, if already read)."""
        max_id, since_id, min_id, limit = cursors
        found: list = []
        for _ in range(TOP_UP_ROUNDS):
            if ids is None:
                ids = await self.store.run(
                    "read_page", [timeline, owner_hash], [max_id, since_id, min_id, limit, field]
                )
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


def of(store: Store) -> Timelines:
    """The timeline operations of ``store``'s topology, made once per store."""
    return topology.pick(store, SingleServerTimelines, ClusterTimelines)
