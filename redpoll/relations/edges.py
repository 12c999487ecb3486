"""The two-sided edges: follows (following:{a} / followers:{b}) and list
memberships (list members of {owner} / listed:{member}).

Each side lives in its own user's hash slot, so no one script can change both
on a Redis Cluster. Instead the owner's side is authoritative and written
first (``edge_set.lua``, atomic with its counter); the other side is then
set to the same state (``edge_set.lua`` again, atomic with its counter); the
timeline change (``merge.lua`` / ``unmerge.lua``) re-checks the owner's side
atomically with the change. If that check shows a concurrent call flipped the
edge meanwhile, the other side is synced again until both agree. Every step is
idempotent, so a follow or unfollow that was cut short is repaired by calling
it again. Counters always equal their set sizes (same script as the set).

The timeline change of a new edge (the backfill) takes the member's newest
statuses that the home rule lets into the owner's home or list
(redpoll.timelines.home_rule: Mastodon's merge_into_home / merge_into_list
apply the same filters as a push).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core import keys, limits
from ..core.errors import (
    LimitReached,
    ListNotFound,
    NotFollowed,
    NotFound,
    RedpollError,
    UserNotFound,
)
from ..core.models import now_us
from ..storage.store import Store
from ..timelines import home_rule, placement

#: Rounds of re-syncing the far side when concurrent calls keep flipping an edge.
MAX_SYNC_ROUNDS = 20


@dataclass(frozen=True)
class Edge:
    owner: int  # a (follower) or the list owner
    member: int  # b (followee) or the list member
    source: str  # following:{a} or list members
    owner_hash: str  # u:{a} or lists:{owner}
    owner_field: str  # field proving the owner (list) exists
    owner_counter: str  # 'following' or ''
    timeline: str  # home:{a} or the list timeline
    target_member: str  # str(a) or "owner:lid"
    target: str  # followers:{b} or listed:{member}
    target_counter: str  # 'followers' or ''
    max_size: int  # 0 = unbounded
    missing: type = UserNotFound
    at: int = 0  # the time (µs) an added edge's score starts from; 0: now
    lid: int | None = None  # the list, for a list membership (its timeline's rule)
    #: owner-side zsets of which one must hold the member for it to be added
    #: (edge_set.lua checks them with the add): none for a follow; for a list
    #: member, the owner's follows and follow requests
    guards: tuple[str, ...] = ()

    def source_call(self, present: bool) -> tuple:
        """edge_set.lua on the owner's side, as a (name, keys, args) call."""
        return (
            "edge_set",
            [self.source, self.owner_hash, *self.guards],
            [
                self.member,
                int(present),
                self.owner_field,
                self.owner_counter,
                self.at or now_us(),
                self.max_size,
            ],
        )

    def target_call(self, present: bool) -> tuple:
        """edge_set.lua on the member's side."""
        return (
            "edge_set",
            [self.target, keys.user(self.member)],
            [self.target_member, int(present), "id", self.target_counter, now_us(), 0],
        )


def follow_edge(a: int, b: int, at: int = 0) -> Edge:
    """``at``: see Edge.at (follows.follow's journal compares it)."""
    return Edge(
        a,
        b,
        keys.following(a),
        keys.user(a),
        "id",
        "following",
        keys.home(a),
        str(a),
        keys.followers(b),
        "followers",
        0,
        at=at,
    )


def list_edge(owner: int, lid: int, member: int) -> Edge:
    """A list's membership. Only an account the owner follows, or has asked
    to follow, is added (or the owner themselves), as on Mastodon: checked
    with the add (``guards``); redpoll.relations.unlisting takes it out when
    that ends."""
    guards = () if owner == member else (keys.following(owner), keys.follow_requested(owner))
    return Edge(
        owner,
        member,
        keys.list_members(owner, lid),
        keys.lists(owner),
        str(lid),
        "",
        keys.list_timeline(owner, lid),
        keys.listed_member(owner, lid),
        keys.listed_in(member),
        "",
        limits.LIST_MAX_MEMBERS,
        ListNotFound,
        lid=lid,
        guards=guards,
    )


def _source_error(e: Edge, exc: Exception) -> Exception:
    if isinstance(exc, NotFollowed):
        return NotFollowed(
            f"you can only add accounts you follow to a list: you do not follow user {e.member}"
        )
    if isinstance(exc, LimitReached):
        return LimitReached(f"the list already has {e.max_size} members")
    if isinstance(exc, NotFound):
        return e.missing(
            f"{'user' if e.missing is UserNotFound else 'list'} of {e.owner} does not exist"
        )
    return exc


def _target_error(e: Edge, exc: Exception) -> Exception:
    if isinstance(exc, NotFound):
        return UserNotFound(f"user {e.member} does not exist")
    return exc


async def _source(store: Store, e: Edge, present: bool) -> bool:
    try:
        return bool(await store.run(*e.source_call(present)))
    except RedpollError as exc:
        raise _source_error(e, exc) from exc


async def _target(store: Store, e: Edge, present: bool) -> None:
    try:
        await store.run(*e.target_call(present))
    except RedpollError as exc:
        raise _target_error(e, exc) from exc


async def _member_statuses(store: Store, e: Edge, count: int, lowest) -> list[bytes]:
    """The member's newest status ids (down to ``lowest``), newest first."""
    return await store.zrevrangebyscore(keys.profile(e.member), "+inf", lowest, start=0, num=count)


async def resync(store: Store, e: Edge) -> None:
    """Copy the owner's side to the far side until a re-read shows they agree."""
    for _ in range(MAX_SYNC_ROUNDS):
        present = await store.zscore(e.source, e.member) is not None
        await _target(store, e, present)
        if (await store.zscore(e.source, e.member) is not None) == present:
            return


async def add(store: Store, e: Edge, then: tuple | None = None) -> bool:
    """Create the edge and backfill the owner's timeline; True if it is new.

    The owner's side and the member's side, with the member's newest
    statuses read (``Timelines.add_edge``: in one round trip on a single
    server, in turn on a cluster); those the home rule lets into the
    owner's timeline (its facts read first, only if some status needs
    them); then the merge of those (merge.lua, guarded by the edge). On a
    single server the member's plain statuses, which the rule answers for
    all at once, are merged in the edges' round trip (merge_profile.lua)
    and only the ruled ones are read, decided and merged after. A failed
    side is undone by its partner (every step is idempotent). ``then``: an
    idempotent script call (a journal's release) sent with the last write
    of the call, in its round trip where the topology pipelines, run
    whatever the steps returned; its error reply raises last."""
    topo = placement.of(store)
    record = home_rule.boost_record(e.owner, e.lid)
    plain = topo.merges_profiles and home_rule.plain_taken(e.member, e.owner, e.lid)
    if plain:
        source, target, merged, after, read = await topo.add_edge(
            e, [home_rule.ruled_read(e.member, limits.BACKFILL)], limits.BACKFILL, then
        )
    else:
        source, target, merged, after, read = await topo.add_edge(
            e, home_rule.profile_reads(e.member, "+inf", limits.BACKFILL)
        )
    if isinstance(source, Exception) or isinstance(target, Exception):
        if not plain:
            after = await topo.run_then(then)
    elif plain:
        if not isinstance(merged, Exception):
            held, lowest = merged
            merged = bool(held)
            if held and lowest:
                found = home_rule.ruled_batch(e.member, read[0], int(lowest))
                ids, boosts = await home_rule.take(store, found, e.owner, e.lid)
                if ids:
                    merged = await topo.merge(
                        e.timeline,
                        e.source,
                        str(e.member),
                        ids,
                        record,
                        home_rule.boost_pairs(boosts),
                    )
    else:
        found = home_rule.profile_batch(e.member, *read, raw=True)
        ids, boosts = await home_rule.take(store, found, e.owner, e.lid)
        merged, after = await topo.merge_then(
            e.timeline, e.source, str(e.member), ids, then, record, home_rule.boost_pairs(boosts)
        )
    if isinstance(source, Exception):
        if target is not None and not isinstance(target, Exception):
            await _target(store, e, False)  # undo: the owner's side refused
        raise _source_error(e, source) from source
    if isinstance(target, Exception):
        await _source(store, e, False)  # undo: the member does not exist
        raise _target_error(e, target) from target
    if isinstance(merged, Exception):
        raise merged
    if not merged:
        await resync(store, e)  # removed again meanwhile: that call won
    if isinstance(after, Exception):
        raise after
    return bool(source)


async def remove(store: Store, e: Edge) -> bool:
    """Remove the edge and the member's statuses from the owner's timeline;
    True if it existed (the caller then queues a refill)."""
    changed = await _source(store, e, False)
    tail = await store.lindex(e.timeline, -1)
    await _target(store, e, False)
    ids = await _member_statuses(store, e, 2 * limits.HOME_CAP, int(tail) if tail else "-inf")
    if await placement.of(store).unmerge(e.timeline, e.source, e.member, ids) == -1:
        await resync(store, e)  # re-added meanwhile: that call won
    return changed


async def unlist(store: Store, e: Edge) -> bool:
    """Take a list member whose owner no longer follows it out of the list
    (redpoll.relations.unlisting), in an order that a retry can finish: the
    member's side first (deliveries to the list stop), then the member's
    statuses out of the list's timeline (unmerge.lua, only while the owner
    still does not follow the member: one who follows again keeps it, and
    the step stops there), then the owner's side, and last the member's side
    synced to it (an add racing this one). Cut short anywhere before the
    owner's side went, the owner's side still names the member, so the next
    run finds it and does it all again. True if the owner's side changed."""
    await _target(store, e, False)
    tail = await store.lindex(e.timeline, -1)
    ids = await _member_statuses(store, e, 2 * limits.HOME_CAP, int(tail) if tail else "-inf")
    if await placement.of(store).unmerge(e.timeline, keys.following(e.owner), e.member, ids) == -1:
        await resync(store, e)  # followed again meanwhile: it stays
        return False
    changed = await _source(store, e, False)
    await resync(store, e)
    return changed
