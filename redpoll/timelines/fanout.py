"""Delivery of one status id to, or its removal from, the timelines of the
author's followers and of the lists that hold the author.

Work goes in steps of at most ``fanout_batch`` targets. A step reads the next
batch from a cursor (the unique follow-time score of the last target served)
so steps resume exactly where the previous one stopped; the scripts it runs
(``Timelines.deliver`` / ``Timelines.undeliver``) are idempotent, so repeating a step
after a crash reaches nobody twice in effect.

Hybrid fan-out (redpoll.timelines.hybrid, :class:`Policy`): a large author's statuses
skip the followers' homes (fanout_mode.lua decides, per status), and a
follower idle for longer than the idle period is skipped; removal always
walks every follower (homes may hold a large author's older statuses).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ..core import keys, limits, metrics
from ..core.models import PUBLIC, now_ms
from ..records import writes
from ..storage.store import Store
from . import home_rule, hybrid, placement
from .jobs import CleanupJob, FanoutJob

HOME, LISTS = "home", "lists"


@dataclass(frozen=True)
class Policy:
    """Who a status's delivery skips (redpoll.timelines.hybrid): the followers of an
    author with more than ``threshold`` followers, and followers who have
    not read their home for ``idle_after_ms``."""

    threshold: int = limits.FANOUT_THRESHOLD
    idle_after_ms: int = limits.IDLE_AFTER_S * 1000

    @property
    def shrink_below(self) -> float:
        return self.threshold * limits.FANOUT_SHRINK_FRACTION


def policy(settings) -> Policy:
    return Policy(settings.fanout_threshold, settings.idle_after_s * 1000)


@dataclass(frozen=True)
class Cursor:
    phase: str = HOME
    after: int = 0  # score of the last target served; 0 = from the start


async def gone(store: Store, sid: int) -> bool:
    """Deleted (a tombstone) or never written."""
    found, deleted = await store.hmget(keys.status(sid), ["id", "deleted"])
    return found is None or deleted is not None


@dataclass(frozen=True)
class Advanced:
    """One fan-out step's outcome: the job that continues the delivery
    (None: every target served), or ``taken_back``: the status was deleted
    while its batch was delivered, and the batch was taken out again."""

    next: FanoutJob | None = None
    taken_back: bool = False


async def advance(store: Store, settings, job: FanoutJob) -> Advanced:
    """The one fan-out step, for a post's first batch (posting), a boost's
    (posting.boosts) and every later batch (the worker's handler): deliver
    the batch after the job's cursor; if the status is gone afterwards, its
    cleanup chain may already have passed these timelines, so the batch is
    taken back out here. Idempotent (both scripts are)."""
    start = Cursor(job.phase, job.after)
    cursor = await step(
        store,
        "deliver",
        job.sid,
        job.author,
        start,
        settings.fanout_batch,
        listed=job.listed,
        only_following=job.only_following,
        boost_of=job.boost_of,
        audience=job.audience,
        policy=policy(settings),
    )
    if await gone(store, job.sid):
        await step(store, "undeliver", job.sid, job.author, start, settings.fanout_batch)
        return Advanced(taken_back=True)
    if cursor is None:
        return Advanced()
    return Advanced(dataclasses.replace(job, phase=cursor.phase, after=cursor.after))


async def sweep(store: Store, settings, job: CleanupJob) -> CleanupJob | None:
    """One step of taking a deleted status out of every timeline; the job
    that continues it, or None when every timeline is clean (then the
    status's last keys are forgotten)."""
    cursor = await step(
        store, "undeliver", job.sid, job.author, Cursor(job.phase, job.after), settings.fanout_batch
    )
    if cursor is None:
        await writes.of(store).forget_deleted(job.sid)
        return None
    return CleanupJob(job.sid, job.author, cursor.phase, cursor.after)


async def offer(store: Store, c: home_rule.Candidate, viewers: Sequence[int]) -> list[int]:
    """Offer ``c`` (its reason MENTION or TAG: from its conversation) to the
    homes of ``viewers``, beside its fan-out: each takes it as the home rule
    decides (a block either way keeps it out, read in one round trip on the
    author's slot). The viewers whose homes took it, in order. Idempotent
    (deliver.lua puts an id in once)."""
    viewers = [v for v in dict.fromkeys(viewers) if v != c.author]
    if not viewers:
        return []
    facts = home_rule.block_facts(
        c.author, viewers, await store.batch(home_rule.block_reads(c.author, viewers))
    )
    taking = [v for v in viewers if home_rule.in_home(c, v, facts[v])]
    if taking:
        await placement.of(store).deliver_besides(
            c.id, [keys.home(v) for v in taking], limits.HOME_CAP
        )
    return taking


async def withdraw(store: Store, sid: int, viewers: Sequence[int]) -> None:
    """Take ``sid`` out of the homes of ``viewers`` (those it was offered to
    and no longer is: a delete, an edit that drops a mention). Idempotent."""
    homes = [keys.home(v) for v in dict.fromkeys(viewers)]
    if homes:
        await placement.of(store).undeliver(sid, homes)


async def take_out(store: Store, sid: int, timelines: Sequence[str]) -> None:
    """Take ``sid`` out of ``timelines`` (homes or list timelines: keys),
    as a delete's cleanup does (redpoll check --repair, for an id whose
    status is gone). Idempotent."""
    if timelines:
        await placement.of(store).undeliver(sid, list(dict.fromkeys(timelines)))


async def _scored_after(store: Store, key: str, after: int, batch: int) -> list:
    """The next ``batch`` (member, score) rows of a ZSET scored above ``after``.

    A raw ZRANGE on purpose: redis-py 8 talks RESP3 and, for
    ``withscores=True``, turns every score back into RESP2 bytes and then into
    a float (~1.5 us a row, more than half the client time of a fan-out step);
    raw, hiredis hands over native floats. Works on a RESP2 connection too.
    Sent as a batch of one: on a cluster it then goes on the multiplexed
    connection, not redis-py's cluster client (whose connection another task
    may be resetting under it: 'NoneType' object has no attribute
    'writelines', seen under concurrent posts).
    """
    [rows] = await store.batch(
        [
            (
                "ZRANGE",
                key,
                f"({after}" if after else "-inf",
                "+inf",
                "BYSCORE",
                "LIMIT",
                0,
                batch,
                "WITHSCORES",
            )
        ]
    )
    if rows and not isinstance(rows[0], (list, tuple)):  # RESP2: flat list
        rows = list(zip(rows[0::2], rows[1::2]))
    return rows


async def _active(
    store: Store, members: list, policy: Policy | None, reads: list[tuple]
) -> tuple[list[bool], list[tuple[bytes, float]], int, list]:
    """Which followers among ``members`` fan-out serves: idle ones are
    skipped (their home is rebuilt when they come back: hybrid.touch), in
    the round trip of ``reads`` (the home rule's facts: home_rule.push_reads).
    Also the idle ones whose homes are still there (follower, last read),
    the idle cutoff (ms) and the replies to ``reads``."""
    commands = [("ZMSCORE", keys.HOME_SEEN, *members)] if policy is not None and members else []
    if not commands and not reads:
        return [True] * len(members), [], 0, []
    replies = await store.batch(commands + reads)
    keep = [True] * len(members)
    newly_idle: list[tuple[bytes, float]] = []
    cutoff = 0
    if commands:
        seen, replies = replies[0], replies[1:]
        cutoff = now_ms() - policy.idle_after_ms
        # no record: a user who has not read their home since records began;
        # < 0: idle, home dropped already (idle_mark.lua)
        keep = [score is None or float(score) >= cutoff for score in seen]
        newly_idle = [
            (m, float(score))
            for m, score in zip(members, seen)
            if score is not None and 0 < float(score) < cutoff
        ]
    return keep, newly_idle, cutoff, replies


async def _homes(
    store: Store, c: home_rule.Candidate, members: list, own: bool, policy: Policy | None
) -> tuple[list, dict, list, int]:
    """The homes that take ``c`` among the followers ``members`` (and the
    author's own, if ``own``): the home rule asked for each, with its facts
    (home_rule.push_reads: none for a plain status) read in the round trip
    that finds the idle followers; for a boost, the places of the boosts of
    the same original the homes recorded in one more round trip, where
    there are any. Returns the homes, each boost home's recorded boost
    (deliver_boost.lua's guard), the newly idle and the cutoff."""
    viewers = [int(m) for m in members] if c.needs_push_facts else []
    own_viewer = [c.author] if own else []
    reads = home_rule.push_reads(c, own_viewer + viewers) if c.needs_push_facts else []
    keep, newly_idle, cutoff, replies = await _active(store, members, policy, reads)
    if not c.needs_push_facts:  # a plain status: one answer for every follower
        takers = home_rule.homes_taking(c, [m for m, k in zip(members, keep) if k], None)
        homes = keys.homes(takers)
        if own and home_rule.in_home(c, c.author, home_rule.EMPTY):
            homes = [keys.home(c.author), *homes]
        return homes, {}, newly_idle, cutoff
    keep = [True] * len(own_viewer) + keep
    everyone = own_viewer + viewers
    recorded = home_rule.push_recorded(c, everyone, replies)
    places = await store.batch(home_rule.recorded_reads(recorded)) if recorded else []
    facts = home_rule.push_facts(c, everyone, replies, recorded, places)
    chosen = home_rule.homes_taking(
        c, [v for v, k in zip(everyone, keep) if k], [f for f, k in zip(facts, keep) if k]
    )
    seen = {v: (str(b) if b else "") for v, b in recorded.items()}
    return (
        [keys.home(v) for v in chosen],
        {keys.home(v): seen.get(v, "") for v in chosen},
        newly_idle,
        cutoff,
    )


async def _lists_batch(store: Store, c: home_rule.Candidate, after: int, batch: int, deliver: bool):
    """The next batch of list timelines holding ``c``'s author; when
    delivering, those whose list takes ``c`` by the home rule (its facts
    read in the round trip that checks each list still exists)."""
    rows = await _scored_after(store, keys.listed_in(c.author), after, batch)
    if not rows:
        return [], rows
    entries = [keys.parse_listed_member(m) for m, _ in rows]
    commands = [("HEXISTS", keys.lists(owner), lid) for owner, lid in entries]
    n = len(commands)
    if deliver:
        commands += home_rule.list_push_reads(c, entries)
    replies = await store.batch(commands)
    alive = replies[:n]
    stale = [m for (m, _), ok in zip(rows, alive) if not ok]
    if stale:  # a list deleted while its reverse index was being cleaned
        await store.zrem(keys.listed_in(c.author), *stale)
    if deliver:
        facts = home_rule.list_push_facts(c, entries, replies[n:])
        alive = [
            ok and home_rule.in_list(c, owner, f)
            for ok, (owner, _), f in zip(alive, entries, facts)
        ]
    targets = [keys.list_timeline(o, lid) for (o, lid), ok in zip(entries, alive) if ok]
    return targets, rows


async def _run(store: Store, script: str, sid: int, targets: list, batch_name: str) -> None:
    if script == "deliver":
        await placement.of(store).deliver(sid, targets, batch_name)
    else:
        await placement.of(store).undeliver(sid, targets)
    metrics.FANOUT_DELIVERIES.labels(script).inc(len(targets))  # /metrics


async def _run_boost(store: Store, c: home_rule.Candidate, homes: list, seen: dict) -> None:
    """deliver_boost.lua on the homes that take the boost, each with the
    boost of the same original its record held (the write's guard)."""
    if homes:
        await placement.of(store).deliver_boost(
            c.id,
            [key for home in homes for key in keys.boost_pair(home)],
            [seen.get(home, "") for home in homes],
            [c.id, limits.HOME_CAP, c.reblog_of, limits.HOME_REBLOGS_KEPT],
        )
    metrics.FANOUT_DELIVERIES.labels("deliver").inc(len(homes))


async def step(
    store: Store,
    script: str,
    sid: int,
    author: int,
    cursor: Cursor,
    batch: int,
    *,
    listed: bool = True,
    only_following: int | None = None,
    boost_of: int | None = None,
    audience: str = PUBLIC,
    policy: Policy | None = None,
) -> Cursor | None:
    """Run ``script`` (deliver / undeliver) on the next batch; the cursor to
    continue from, or None when every target has been served. The first step
    also serves the author's own home and, for a ``listed`` status (public),
    the public timeline. Delivery asks the home rule (redpoll.timelines.home_rule)
    which homes and lists take the status, given what it is: a reply to
    ``only_following`` (Status.replies_to_other), a boost of ``boost_of``
    (written by deliver_boost.lua), of visibility ``audience``. Removal
    serves every target. ``policy``: the hybrid fan-out's (None: every
    follower, as before it existed)."""
    c = home_rule.Candidate(sid, author, audience, only_following, boost_of)
    if script == "deliver" and not home_rule.reaches_followers(c):
        if cursor == Cursor():  # only its author's own home (a direct status)
            homes, seen, _, _ = await _homes(store, c, [], True, None)
            await _deliver_homes(store, c, homes, seen, f"{HOME}:0")
        return None
    if cursor.phase == HOME:
        first = cursor == Cursor()
        mode = hybrid.FAN
        if script == "deliver" and policy is not None:
            mode = await hybrid.fanout_mode(
                store,
                sid,
                author,
                policy.threshold,
                policy.shrink_below,
                "start" if first else "step",
            )
        rows = (
            []
            if mode == hybrid.BIG
            else await _scored_after(store, keys.followers(author), cursor.after, batch)
        )
        members = [m for m, _ in rows]
        newly_idle: list = []
        if script == "deliver":
            homes, seen, newly_idle, cutoff = await _homes(store, c, members, first, policy)
            if first and listed:
                homes = [*homes, placement.of(store).public_key(sid)]
            await _deliver_homes(store, c, homes, seen, f"{HOME}:{cursor.after}")
        else:
            targets = keys.homes(members)
            if first:
                targets = (
                    [keys.home(author), placement.of(store).public_key(sid)]
                    if listed
                    else [keys.home(author)]
                ) + targets
            await _run(store, script, sid, targets, f"{HOME}:{cursor.after}")
        if mode in (hybrid.MARK, hybrid.UNMARK):  # every follower, idle ones too
            await hybrid.switch_followers(store, author, members, mode)
        if newly_idle:
            await hybrid.drop_idle_homes(store, newly_idle, cutoff)
        if len(rows) == batch:
            return Cursor(HOME, int(float(rows[-1][1])))
        if mode in (hybrid.MARK, hybrid.UNMARK):  # walked them all
            await hybrid.fanout_mode(
                store, sid, author, policy.threshold, policy.shrink_below, "end"
            )
        cursor = Cursor(LISTS, 0)
    targets, rows = await _lists_batch(store, c, cursor.after, batch, script == "deliver")
    await _run(store, script, sid, targets, f"{LISTS}:{cursor.after}")
    if len(rows) == batch:
        return Cursor(LISTS, int(float(rows[-1][1])))
    return None


async def _deliver_homes(
    store: Store, c: home_rule.Candidate, homes: list, seen: dict, batch_name: str
) -> None:
    """The write: a boost through deliver_boost.lua (the public timeline
    never holds one), anything else through Timelines.deliver."""
    if c.reblog_of is not None:
        await _run_boost(store, c, homes, seen)
    else:
        await _run(store, "deliver", c.id, homes, batch_name)
