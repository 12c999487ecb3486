"""A list holds only accounts its owner follows, as on Mastodon.

Adding one is checked with the add itself (edges.list_edge's guards, in
edge_set.lua). Mastodon lets an account one has asked to follow (a pending
request to a locked account) be listed as well, and so does Redpoll: its
private statuses reach the list only once the request is authorized
(redpoll.timelines.home_rule), and then they are merged in
(:func:`merge_listed`). The owner may list themselves.

When the follow ends (an unfollow, a refused or withdrawn request, a block
either way), the account leaves every list of the owner's, as Mastodon's
UnfollowService does, and the owner's endorsements (Mastodon's
Follow#remove_endorsements): :func:`unlist`. The follow and the lists live in the
owner's slot but the list memberships have a second side (listed:{member},
the member's slot) and timelines to clean, so this is not one atomic write
with the unfollow; it is an idempotent step, run after the follow is gone
and retried until it has run:

- an unfollow runs it under its journal (jobs.FollowNoteJob), and the
  worker that handles that job, whether it continues the call or takes over
  one cut short, runs it again;
- a block runs it inside apply_block, which its journal (jobs.BlockJob)
  replays whole;
- a refused request runs it after the request is gone; cut short, refusing
  again runs it again (a later unfollow or block would too).

Each list's removal (edges.unlist) keeps the owner's side until the rest
is done, so a run cut short is finished by the next; the refill job that
follows it only tops the list's timeline up again (a run cut short just
before it leaves the timeline shorter, never wrong).

An add racing an unfollow cannot leave a member behind: the add checks the
follow atomically with itself, so it either sees the follow gone (refused)
or comes before the removal of the follow, and then :func:`unlist`, which
reads the lists after that removal, finds the member.
"""

from __future__ import annotations

from ..bus import events, queue
from ..core import keys
from ..core.errors import NotFound
from ..storage.store import Store
from ..timelines.jobs import RefillJob
from . import edges, endorsements


def _follow_reads(owner: int, others: list[int]) -> list[tuple]:
    """The commands reading whether ``owner`` follows, or has asked to
    follow, each of ``others`` (for :func:`_refused`), in the owner's slot."""
    return [
        ("ZMSCORE", keys.following(owner), *others),
        ("ZMSCORE", keys.follow_requested(owner), *others),
    ]


def _refused(others: list[int], follows: list, asked: list) -> list[int]:
    """Those of ``others`` the owner may not list: neither followed nor
    asked to follow (the rule edge_set.lua's guards hold at the add)."""
    return [i for i, f, r in zip(others, follows, asked) if f is None and r is None]


async def unlistable(store: Store, owner: int, ids: list[int]) -> list[int]:
    """Those of ``ids`` that ``owner`` may not add to a list: neither
    followed nor asked to follow, nor the owner. One round trip; a caller
    adding many checks them all first."""
    others = [i for i in ids if i != owner]
    if not others:
        return []
    return _refused(others, *await store.batch(_follow_reads(owner, others)))


async def _listing(store: Store, owner: int, member: int) -> tuple[bool, list[int]]:
    """(whether ``owner`` may list ``member``: follows it, has asked to, or
    is it; ``owner``'s lists that hold ``member`` on either side)."""
    if owner == member:
        return True, []
    raw, follows, asked = await store.batch(
        [("HKEYS", keys.lists(owner)), *_follow_reads(owner, [member])]
    )
    allowed = not _refused([member], follows, asked)
    lids = sorted(int(x) for x in raw or ())
    if not lids:
        return allowed, []
    replies = await store.batch(
        [("ZSCORE", keys.list_members(owner, lid), member) for lid in lids]
        + [("ZMSCORE", keys.listed_in(member), *[keys.listed_member(owner, lid) for lid in lids])]
    )
    here, there = replies[:-1], replies[-1]
    held = [lid for lid, a, b in zip(lids, here, there) if a is not None or b is not None]
    return allowed, held


async def unlist(store: Store, owner: int, member: int) -> list[int]:
    """Take ``member`` out of every list of ``owner``'s, unless ``owner``
    follows it or has asked to (read after the follow ended: see the module).
    Each removal is edges.unlist (both sides and the list timeline, in an
    order a retry finishes), then a refill job for that list; the open list
    streams are told. Idempotent; the lists it took the member out of."""
    # the endorsement goes with the follow (same rule, one script on the owner's slot)
    await endorsements.drop_unfollowed(store, owner, member)
    allowed, held = await _listing(store, owner, member)
    if allowed or not held:
        return []
    gone = []
    for lid in held:
        try:
            if not await edges.unlist(store, edges.list_edge(owner, lid, member)):
                continue  # followed again meanwhile, or gone already
        except NotFound:  # the list was deleted meanwhile: nothing left to do
            continue
        gone.append(lid)
        await queue.add(store, RefillJob(owner, lid))
    if gone:
        await events.lists_changed(store, owner)  # its open streams drop the member now
    return gone


async def merge_listed(store: Store, owner: int, member: int) -> None:
    """``owner`` now follows ``member`` (an authorized request): the lists
    that held it while the request was pending take its statuses the follow
    lets in (its private ones), as its backfill would (edges.add again: a
    no-op for the edge, a merge for the timeline)."""
    allowed, held = await _listing(store, owner, member)
    for lid in held if allowed else ():
        try:
            await edges.add(store, edges.list_edge(owner, lid, member))
        except NotFound:
            continue
