"""Hybrid fan-out and idle users.

**Large accounts.** An author with more followers than the threshold
(``Settings.fanout_threshold``, limits.FANOUT_THRESHOLD) is not fanned out
to their followers' homes: a status of theirs goes to their own home, the
public timeline and lists only, and each follower's home catches up with
it when the follower reads their home (:func:`catch_up`): the home page's
own round trip (Topology.read_home) learns which of the large accounts the
user follows (keys.large_following, in the user's slot) posted since the
home last caught up with them (each author's profile sequence, 'pseq',
against the user's keys.large_marks) and reads those accounts' newest ids;
the statuses that fan-out's rules let through go into the home, the marks
move, and the page is read again. A page whose large accounts posted
nothing since reads no profile and is a plain page: a celebrity posts far
less often than their followers read. What comes in is then in the home
as if fanned out: deletes, unfollows, blocks, mutes, cursors and the
home's cap treat it alike.

Crossing the threshold is decided per status, atomically with the follower
count (fanout_mode.lua): the status whose post sees the count cross walks
every follower in its own fan-out, adding the author to their large sets
(growing) or merging the author's newest statuses into their homes and
taking the author out (shrinking), and only then flips the mode. While it
walks, statuses are still fanned out, so every follower sees every status
either way; homes keep what they held before, and the merge dedupes by id.
A follow of a large (or growing) account adds it to the follower's set
(:func:`after_follow`: the mode is read after the follow exists, so a walk
that starts later sees the follow); an unfollow takes it out (and its
statuses out of the home, as any account's), and a page ignores an entry
whose follow has gone (catch_up_listed.lua, large_followees.lua).

**Idle users.** A home read is recorded (keys.home_read in the user's slot,
then keys.HOME_SEEN, at most once per quarter of the idle period per
process: :func:`touch`); fan-out skips a follower whose record is older
than the idle period (delivery._wanted) and drops their home once
(:func:`drop_idle_homes`).
The first home read after that rebuilds the home from the profiles of the
accounts followed (refill.rebuild_home) before the page is read. A status
that fan-out skipped a user for is in its author's profile before the skip
(record_post runs first), and the rebuild reads the profiles after the
record of the read, so nothing is lost between the two.
"""
from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref

from redis.exceptions import NoScriptError

from . import home_rule, refill
from ..core import keys, limits
from ..core.models import HomeRead, Status, now_ms
from ..records.statuses import read_statuses
from ..storage.store import Store
from ..storage import topology

#: fanout_mode.lua's answers
FAN, BIG, MARK, UNMARK = "fan", "big", "mark", "unmark"


async def fanout_mode(store: Store, sid: int, author: int, threshold: int, shrink_below: float,
                      op: str) -> str:
    """fanout_mode.lua: how this status's fan-out treats the homes."""
    mode = await store.run("fanout_mode", [keys.user(author), keys.followers(author)],
                           [sid, threshold, shrink_below, op])
    return mode.decode() if isinstance(mode, bytes) else mode


async def switch_followers(store: Store, author: int, members: list[bytes], mode: str) -> None:
    """One batch of a mode switch's walk (fanout_mode.lua), idempotent:
    MARK adds ``author`` to each follower's large set; UNMARK merges the
    author's newest statuses into each follower's home (guarded by the
    follow, as a follow's backfill) and then takes the author out of the
    set, so that no status of theirs is missing from the home meanwhile."""
    if not members:
        return
    if mode == MARK:
        await store.batch([("SADD", key, author) for key in keys.large_followings(members)])
        return
    ids = [int(i) for i in await store.zrevrangebyscore(
        keys.profile(author), "+inf", "-inf", start=0, num=limits.BACKFILL)]
    for member in members:
        uid = int(member)
        await topology.of(store).merge(keys.home(uid), keys.following(uid), str(author), ids)
    await store.batch([*(("SREM", key, author) for key in keys.large_followings(members)),
                       *(("HDEL", key, author) for key in keys.large_marks_many(members))])


async def after_follow(store: Store, follower: int, target: int) -> None:
    """``follower`` now follows ``target``: if the target is large or
    becoming so, its statuses are merged into the follower's home from now
    on. Read after the follow exists: a walk that begins later finds it."""
    mode = await store.hget(keys.user(target), keys.FANOUT_MODE_FIELD)
    if mode is not None and (mode == b"big" or mode.startswith(b"mark:")):
        await store.sadd(keys.large_following(follower), target)


async def sync_follow(store: Store, follower: int, target: int) -> None:
    """A follow or unfollow's journal replayed (worker, FollowNoteJob): the
    follower's large set agrees with the follow and the target's mode as
    they are now (idempotent; the follow is read before the mode, as in
    :func:`after_follow`)."""
    if await store.zscore(keys.following(follower), target) is not None:
        await after_follow(store, follower, target)
    else:
        await after_unfollow(store, follower, target)


async def after_unfollow(store: Store, follower: int, target: int) -> None:
    """Tidy only: a page ignores large accounts no longer followed (and the
    unfollow took their statuses out of the home, as any account's)."""
    await store.batch([("SREM", keys.large_following(follower), target),
                       ("HDEL", keys.large_marks(follower), target)])


# --- idle users ---------------------------------------------------------------------------
_TOUCHED: "weakref.WeakKeyDictionary[Store, dict[int, int]]" = weakref.WeakKeyDictionary()


async def touch(store: Store, uid: int, idle_after_ms: int) -> bool:
    """Record that ``uid`` reads their home now; if they had been idle (so
    fan-out skipped them), rebuild their home first. True if it was rebuilt.
    Written at most once per HOME_SEEN_TOUCH_FRACTION of the idle period by
    this process: a read that skips the write comes less than that after
    one that wrote, so the user was not idle (fan-out never skipped them)."""
    now = now_ms()
    touched = _TOUCHED.setdefault(store, {})
    last = touched.get(uid)
    if last is not None and now - last < idle_after_ms * limits.HOME_SEEN_TOUCH_FRACTION:
        return False
    if len(touched) >= limits.HOME_SEEN_KEPT:
        touched.clear()
    # the user's own record first (drop_idle_home.lua checks it), then the
    # one fan-out reads; the rebuild comes after both
    await store.set(keys.home_read(uid), now)
    idle, before = await store.run("home_seen", [keys.HOME_SEEN], [uid, now, idle_after_ms])
    if idle:
        # (imported here, and only here: refill reads through this module's
        # rules, and an import statement run on every page costs ~2% of it)
        try:
            await refill.rebuild_home(store, uid)
        except BaseException:
            # not rebuilt: put the old record back, so the next read tries again
            await store.zadd(keys.HOME_SEEN, {uid: float(before)})
            raise
    touched[uid] = now
    return bool(idle)


async def drop_idle_homes(store: Store, idle: list[tuple[bytes, float]], cutoff: int) -> int:
    """Fan-out met these followers idle (follower, last read): drop their
    homes (drop_idle_home.lua, per slot: only where the user's own record
    of their last read is still older than ``cutoff``), then mark the
    dropped ones in keys.HOME_SEEN (idle_mark.lua, only where unchanged), so
    that no later fan-out looks at them again. Safe against a user coming
    back meanwhile: their read writes their own record before the shared
    one and rebuilds their home after both. How many were dropped."""
    last = {keys.homes([m])[0]: (m, score) for m, score in idle}
    pairs = [k for m, _ in idle for k in (keys.homes([m])[0], keys.home_read(int(m)))]
    dropped = [key for reply in await store.run_grouped("drop_idle_home", pairs, [cutoff])
               for key in reply]
    if dropped:
        marks = [x for key in dropped for x in (last[key][0], int(last[key][1]))]
        await store.run("idle_mark", [keys.HOME_SEEN], marks)
    return len(dropped)


# --- a home catching up with its large accounts ------------------------------------------
async def left_out_boosts(store: Store, uid: int, found: list[Status], large: list[int],
                          hidden_boosters: set[int]) -> dict[int, bool]:
    """Mastodon's recent-window check for boosts (deliver_boost.lua), for
    boosts a catch-up brings from the profiles of large accounts: a boost is
    left out when its original, or another boost of it (not by a hidden
    booster), is among the REBLOG_WINDOW newest ids below it in the home and
    those profiles (what the home holds once caught up). One round trip for
    all of ``found`` (boosts); boost id -> left out."""
    window = limits.REBLOG_WINDOW
    sha = store.scripts["read_page"].sha
    commands: list[tuple] = []
    for b in found:
        commands.append(("EVALSHA", sha, 2, keys.home(uid), keys.user(uid), b.id, "", "",
                         window, "id"))
        commands += [("ZRANGE", keys.profile(a), f"({b.id}", "-inf", "BYSCORE", "REV",
                      "LIMIT", 0, window) for a in large]
        commands.append(("ZRANGE", keys.reblogged_by(b.reblog_of), f"({b.id}", "-inf",
                         "BYSCORE", "REV", "LIMIT", 0, window, "WITHSCORES"))
    try:
        replies = await store.batch(commands)
    except NoScriptError:  # a cluster node restarted and lost its scripts
        await store.load_scripts()
        replies = await store.batch(commands)
    out: dict[int, bool] = {}
    step = len(large) + 2
    for n, b in enumerate(found):
        part = replies[n * step:(n + 1) * step]
        below = heapq.merge(*([int(i) for i in ids] for ids in part[:-1]), reverse=True)
        recent = set(itertools.islice(_unique(below), window))
        rows = part[-1]
        if rows and not isinstance(rows[0], (list, tuple)):  # RESP2: flat list
            rows = list(zip(rows[0::2], rows[1::2]))
        others = {int(float(score)) for booster, score in rows
                  if int(booster) not in hidden_boosters}
        out[b.id] = b.reblog_of in recent or bool(others & recent)
    return out


def _unique(ids):
    last = None
    for i in ids:
        if i != last:
            yield i
        last = i


def news_posted(seq: bytes, mark: bytes | None) -> int:
    """What an account whose profile sequence is ``seq`` posted since a home
    caught up with it to ``mark`` (limits.CATCH_UP_PER_ACCOUNT when there is
    no mark, or it is not below ``seq``). catch_up_listed.lua's rule, which
    the single server applies in its script."""
    posted = int(seq) - int(mark) if mark is not None else 0
    return posted if posted > 0 else limits.CATCH_UP_PER_ACCOUNT


def news_count(seq: bytes, mark: bytes | None) -> int:
    """Ids to read of that account: what it posted since, plus
    limits.CATCH_UP_OVERLAP, at most limits.CATCH_UP_PER_ACCOUNT."""
    return min(limits.CATCH_UP_PER_ACCOUNT, news_posted(seq, mark) + limits.CATCH_UP_OVERLAP)


async def read_home(store: Store, uid: int, cursors: list) -> HomeRead:
    """A home page's first round trip (redpoll.timelines.timelines.home): the home's
    page and the large accounts it merges, with each one's news since the
    home last caught up. On a single server one script (Topology.read_home);
    where the accounts are in other slots, :func:`read_home_apart`'s rounds.
    Raises NotFound for an unknown user."""
    topo = topology.of(store)
    if topo.reads_home_at_once:
        return await topo.read_home(uid, cursors)
    return await read_home_apart(store, uid, cursors)


async def read_home_apart(store: Store, uid: int, cursors: list) -> HomeRead:
    """Topology.read_home where the large accounts' records and profiles are
    in other slots than the home (a cluster): the large accounts and the
    home's marks with the home's page (one slot), then each account's
    profile sequence, then the news of those that posted since the home
    caught up with them. A user who follows no large account reads one
    round trip, as on a single server."""
    call = ("large_followees", [keys.large_following(uid), keys.following(uid),
                                keys.hidden_reblogs(uid), keys.large_marks(uid)],
            [limits.MERGED_ACCOUNTS_MAX])
    (large, marks, hidden), handle = await topology.of(store).read_page_with(
        call, keys.home(uid), keys.user(uid), "id", cursors)
    if not large:
        return HomeRead([], set(), handle)
    large = [int(a) for a in large]
    seqs = await store.batch([("HGET", keys.user(a), "pseq") for a in large])
    stale = [(a, seq, mark) for a, seq, mark in zip(large, seqs, marks)
             if seq is not None and seq != mark]
    news = []
    if stale:  # as catch_up_listed.lua: the news, less what the home's top holds
        *reads, held = await store.batch(
            [*(("ZRANGE", keys.profile(a), 0, news_count(seq, mark) - 1, "REV")
               for a, seq, mark in stale),
             ("LRANGE", keys.home(uid), 0, limits.CATCH_UP_HOME_CHECK - 1)])
        top = [int(i) for i in held]
        held = set(top)
        floor = top[-1] if len(top) == limits.CATCH_UP_HOME_CHECK else 0
        news = [(a, seq, [i for k, i in enumerate(map(int, ids))
                          if i not in held and (k < news_posted(seq, mark) or i > floor)])
                for (a, seq, mark), ids in zip(stale, reads)]
    return HomeRead(large, {int(h) for h in hidden}, handle, news)


async def catch_up(store: Store, uid: int, first: HomeRead, cursors: list) -> object:
    """On a cluster (a single server does all of it in read_home's own
    script, catch_up_listed.lua): bring into ``uid``'s home what the large
    accounts it merges posted since it last caught up with each
    (``first.news``, Topology.read_home),
    by the rules fan-out delivers by: :func:`accepted` (no direct statuses,
    replies only where uid follows the account replied to, no boosts uid
    hides) and :func:`left_out_boosts` (a boost whose original is just
    below it). A boost already in the home whose original comes in within
    the window below it is taken out, as fan-out would not have delivered
    it. One script (catch_up.lua) writes it all and moves the marks:
    atomic, so a catch-up cut short leaves the marks as they were and the
    next page catches up again (idempotent: ids already there stay once).
    Returns the home's page read again by ``cursors`` (a handle for
    Topology.page_of), in the script's round trip."""
    # the newest HOME_CAP (no older one could stay in the home)
    wanted = sorted(set(i for _, _, ids in first.news for i in ids),
                    reverse=True)[:limits.HOME_CAP]
    # each one's boosts above it (the lowest: those the home may hold
    # within the window above it), read with the statuses
    statuses, boosted = await asyncio.gather(
        read_statuses(store, wanted),  # deleted ones left out
        store.batch([("ZRANGE", keys.reblogged_by(i), f"({i}", "+inf", "BYSCORE", "LIMIT",
                      0, limits.CATCH_UP_BOOSTS_READ, "WITHSCORES") for i in wanted]))
    ok = await home_rule.accepted(store, uid, statuses, first.hidden)
    boosts = [s for s in ok if s.reblog_of]
    out = await left_out_boosts(store, uid, boosts, first.large, first.hidden) if boosts else {}
    take = {s.id for s in ok if not out.get(s.id)}
    pairs: list[int] = []
    for o, found in zip(wanted, boosted):
        if found and o in take:
            if not isinstance(found[0], (list, tuple)):  # RESP2: flat list
                found = list(zip(found[0::2], found[1::2]))
            pairs += [x for booster, score in found if int(booster) not in first.hidden
                      for x in (int(float(score)), o)]
    args: list = [limits.REBLOG_WINDOW, limits.HOME_REBLOGS_KEPT, len(first.news)]
    for author, seq, ids in first.news:
        mine = [i for i in ids if i in take]
        args += [author, seq, len(mine), *mine]
    taken_boosts = [(s.id, s.reblog_of) for s in boosts if s.id in take]
    args += [len(taken_boosts), *(x for pair in taken_boosts for x in pair)]
    return await topology.of(store).catch_up(uid, [*args, *pairs], cursors)
