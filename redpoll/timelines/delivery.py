"""Delivery of one status id to, or its removal from, the timelines of the
author's followers and of the lists that hold the author.

Work goes in steps of at most ``fanout_batch`` targets. A step reads the next
batch from a cursor (the unique follow-time score of the last target served)
so steps resume exactly where the previous one stopped; the scripts it runs
(``Topology.deliver`` / ``Topology.undeliver``) are idempotent, so repeating a step
after a crash reaches nobody twice in effect.

Hybrid fan-out (redpoll.timelines.hybrid, :class:`Policy`): a large author's statuses
skip the followers' homes (fanout_mode.lua decides, per status), and a
follower idle for longer than the idle period is skipped; removal always
walks every follower (homes may hold a large author's older statuses).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import hybrid
from ..core import keys, limits, metrics
from ..relations import visibility
from ..core.models import now_ms
from ..storage.store import Store
from ..storage import topology

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


async def _scored_after(store: Store, key: str, after: int, batch: int) -> list:
    """The next ``batch`` (member, score) rows of a ZSET scored above ``after``.

    A raw ZRANGE on purpose: redis-py 8 talks RESP3 and, for
    ``withscores=True``, turns every score back into RESP2 bytes and then into
    a float (~1.5 us a row, more than half the client time of a fan-out step);
    raw, hiredis hands over native floats. Works on a RESP2 connection too.
    """
    rows = await store.execute_command(
        "ZRANGE", key, f"({after}" if after else "-inf", "+inf", "BYSCORE",
        "LIMIT", 0, batch, "WITHSCORES")
    if rows and not isinstance(rows[0], (list, tuple)):  # RESP2: flat list
        rows = list(zip(rows[0::2], rows[1::2]))
    return rows


async def _wanted(store: Store, members: list, only_following: int | None,
                  policy: Policy | None) -> tuple[list, list[tuple[bytes, float]], int]:
    """The followers among ``members`` whose homes get the status: a reply
    only reaches those who also follow the account replied to (Mastodon's
    rule; one ZSCORE per follower), and idle followers are skipped (their
    home is rebuilt when they come back: hybrid.touch). One round trip.
    Also the idle ones whose homes are still there (follower, last read),
    and the idle cutoff (ms)."""
    if not members or (only_following is None and policy is None):
        return members, [], 0
    commands = []
    if policy is not None:
        commands.append(("ZMSCORE", keys.HOME_SEEN, *members))
    if only_following is not None:
        commands += [("ZSCORE", keys.following(int(m)), only_following) for m in members]
    replies = await store.batch(commands)
    keep = [True] * len(members)
    newly_idle: list[tuple[bytes, float]] = []
    cutoff = 0
    if policy is not None:
        seen, replies = replies[0], replies[1:]
        cutoff = now_ms() - policy.idle_after_ms
        # no record: a user who has not read their home since records began;
        # < 0: idle, home dropped already (idle_mark.lua)
        keep = [score is None or float(score) >= cutoff for score in seen]
        newly_idle = [(m, float(score)) for m, score in zip(members, seen)
                      if score is not None and 0 < float(score) < cutoff]
    if only_following is not None:
        keep = [k and score is not None for k, score in zip(keep, replies)]
    return [m for m, k in zip(members, keep) if k], newly_idle, cutoff


async def _lists_batch(store: Store, author: int, after: int, batch: int,
                       need_follow: bool = False):
    """The next batch of list timelines holding ``author``; ``need_follow``
    (a private status, visibility.lists_need_follow): only lists whose
    owner follows the author."""
    rows = await _scored_after(store, keys.listed_in(author), after, batch)
    if not rows:
        return [], rows
    entries = [keys.parse_listed_member(m) for m, _ in rows]
    pipe = store.pipeline()
    for owner, lid in entries:
        pipe.hexists(keys.lists(owner), lid)
    alive = await pipe.execute()
    stale = [m for (m, _), ok in zip(rows, alive) if not ok]
    if stale:  # a list deleted while its reverse index was being cleaned
        await store.zrem(keys.listed_in(author), *stale)
    if need_follow:
        owners = [o for o, _ in entries]
        follows = await store.batch([("ZSCORE", keys.following(o), author) for o in owners])
        alive = [ok and score is not None for ok, score in zip(alive, follows)]
    targets = [keys.list_timeline(o, l) for (o, l), ok in zip(entries, alive) if ok]
    return targets, rows


async def _run(store: Store, script: str, sid: int, targets: list, batch_name: str) -> None:
    if script == "deliver":
        await topology.of(store).deliver(sid, targets, batch_name)
    else:
        await topology.of(store).undeliver(sid, targets)
    metrics.FANOUT_DELIVERIES.labels(script).inc(len(targets))  # /metrics


async def _run_boost(store: Store, sid: int, homes: list, original: int, booster: int) -> None:
    """deliver_boost.lua on each home with its boost bookkeeping keys."""
    triples = [key for home in homes for key in keys.boost_triple(home)]
    if triples:
        await topology.of(store).deliver_boost(
            sid, triples, [sid, limits.HOME_CAP, original, booster, limits.REBLOG_WINDOW,
                           limits.HOME_REBLOGS_KEPT])


async def step(store: Store, script: str, sid: int, author: int, cursor: Cursor,
               batch: int, *, listed: bool = True, only_following: int | None = None,
               boost_of: int | None = None, audience: str = visibility.PUBLIC,
               policy: Policy | None = None) -> Cursor | None:
    """Run ``script`` (deliver / undeliver) on the next batch; the cursor to
    continue from, or None when every target has been served. The first step
    also serves the author's own home and, for a ``listed`` status (not
    unlisted), the public timeline. ``only_following``: followers' homes get
    the status only where they follow that account too (a reply:
    Status.replies_to_other); removal skips no one.
    ``boost_of``: the status is a boost of that one (boosts.py): homes get
    it through deliver_boost.lua (never twice, not where boosts are hidden).
    ``audience``: the status's visibility (redpoll.relations.visibility): a direct
    one reaches only its author's home here (the mentioned get it from
    conversation.after_post), a private one only lists whose owner follows
    the author. Removal always serves every target. ``policy``: the hybrid
    fan-out's (None: every follower, as before it existed)."""
    if script == "deliver" and not visibility.fans_out(audience):
        if cursor == Cursor():
            await _run(store, script, sid, [keys.home(author)], f"{HOME}:0")
        return None
    if cursor.phase == HOME:
        first = cursor == Cursor()
        mode = hybrid.FAN
        if script == "deliver" and policy is not None:
            mode = await hybrid.fanout_mode(store, sid, author, policy.threshold,
                                            policy.shrink_below, "start" if first else "step")
        rows = [] if mode == hybrid.BIG else await _scored_after(
            store, keys.followers(author), cursor.after, batch)
        members = [m for m, _ in rows]
        newly_idle: list = []
        if script == "deliver":
            wanted, newly_idle, cutoff = await _wanted(store, members, only_following, policy)
            targets = keys.homes(wanted)
        else:
            targets = keys.homes(members)
        if first:
            own = ([keys.home(author), topology.of(store).public_key(sid)] if listed
                   else [keys.home(author)])
            targets = own + targets
        if boost_of is not None and script == "deliver":  # a boost: homes that want it
            await _run_boost(store, sid, targets, boost_of, author)
        else:
            await _run(store, script, sid, targets, f"{HOME}:{cursor.after}")
        if mode in (hybrid.MARK, hybrid.UNMARK):  # every follower, idle ones too
            await hybrid.switch_followers(store, author, members, mode)
        if newly_idle:
            await hybrid.drop_idle_homes(store, newly_idle, cutoff)
        if len(rows) == batch:
            return Cursor(HOME, int(float(rows[-1][1])))
        if mode in (hybrid.MARK, hybrid.UNMARK):  # walked them all
            await hybrid.fanout_mode(store, sid, author, policy.threshold,
                                     policy.shrink_below, "end")
        cursor = Cursor(LISTS, 0)
    targets, rows = await _lists_batch(
        store, author, cursor.after, batch,
        script == "deliver" and visibility.lists_need_follow(audience))
    await _run(store, script, sid, targets, f"{LISTS}:{cursor.after}")
    if len(rows) == batch:
        return Cursor(LISTS, int(float(rows[-1][1])))
    return None
