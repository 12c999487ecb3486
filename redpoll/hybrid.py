"""Hybrid fan-out and idle users (issue 12, item 3).

**Large accounts.** An author with more followers than the threshold
(``Settings.fanout_threshold``, limits.FANOUT_THRESHOLD) is not fanned out
to their followers' homes: a status of theirs goes to their own home, the
public timeline and lists only, and each follower's home page merges it at
read time from the author's profile (keys.profile, scored by id). A
follower's large accounts are a set in their own slot
(keys.large_following), so a page learns them in the same round trip as its
home ids (Topology.read_home) and reads each profile's first ids: on a
single server in a script sent with the page's (large_profiles.lua); on a
cluster (each profile in its author's slot) in one batch sent alongside
when the process knows the set from the user's last page, else after. It
merges by id (a status in both the home and a profile is shown once) and
applies to the merged statuses the rules fan-out applies to a home
(:func:`merged_home`).

Crossing the threshold is decided per status, atomically with the follower
count (fanout_mode.lua): the status whose post sees the count cross walks
every follower in its own fan-out, adding the author to their large sets
(growing) or merging the author's newest statuses into their homes and
taking the author out (shrinking), and only then flips the mode. While it
walks, statuses are still fanned out, so every follower sees every status
either way; homes keep what they held before, and the merge dedupes by id.
A follow of a large (or growing) account adds it to the follower's set
(:func:`after_follow`: the mode is read after the follow exists, so a walk
that starts later sees the follow); an unfollow takes it out, and a page
ignores an entry whose follow has gone (large_followees.lua).

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

from . import conversation, keys, limits, visibility
from .models import HomeRead, Page, Status, now_ms
from .statuses import read_statuses
from .store import Store

#: fanout_mode.lua's answers
FAN, BIG, MARK, UNMARK = "fan", "big", "mark", "unmark"


def _original_of(status: Status) -> int | None:
    """boosts.original_of (boosts imports delivery, which imports this)."""
    value = status.extra.get("reblog_of")
    return int(value) if value else None


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
        await store.topology.merge(keys.home(uid), keys.following(uid), str(author), ids)
    await store.batch([("SREM", key, author) for key in keys.large_followings(members)])


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
    """Tidy only: a page ignores large accounts no longer followed."""
    await store.srem(keys.large_following(follower), target)


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
        from .refill import rebuild_home
        try:
            await rebuild_home(store, uid)
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


# --- reading a home page with large accounts merged -----------------------------------------
def followed_only(status: Status, follows: dict[int, bool]) -> bool:
    """A reply reaches the followers who also follow the account replied to
    (conversation.replies_only_to_followers_of): whether this viewer does."""
    other = conversation.replies_only_to_followers_of(status)
    return other is None or follows.get(other, False)


async def accepted(store: Store, uid: int, statuses: list[Status], hidden_boosters: set[int]
                   ) -> list[Status]:
    """Of statuses from the profiles of large accounts ``uid`` follows, the
    ones fan-out would have put into uid's home: not direct (the mentioned
    get those in their home anyway), a reply only if uid also follows the
    account replied to, a boost only if uid shows that booster's boosts."""
    statuses = [s for s in statuses if visibility.fans_out(visibility.of(s))
                and not (_original_of(s) and s.user_id in hidden_boosters)]
    if not any("in_reply_to_id" in s.extra for s in statuses):
        return statuses  # no replies: nothing more to check
    others = list(dict.fromkeys(o for o in map(conversation.replies_only_to_followers_of,
                                               statuses) if o is not None))
    follows: dict[int, bool] = {}
    if others:
        found = await store.batch([("ZMSCORE", keys.following(uid), *others)])
        follows = {o: score is not None for o, score in zip(others, found[0])}
    return [s for s in statuses if followed_only(s, follows)]


async def left_out_boosts(store: Store, uid: int, found: list[Status], large: list[int],
                          hidden_boosters: set[int]) -> dict[int, bool]:
    """Mastodon's recent-window check for boosts (deliver_boost.lua), as a
    merged home would have met it: a boost is left out when its original,
    or another boost of it (not by a hidden booster), is among the
    REBLOG_WINDOW newest ids below it in the home and the merged profiles.
    For a boost the home holds this only differs from what its delivery
    checked when the original came from a profile. One round trip for all
    of ``found`` (boosts); boost id -> left out."""
    window = limits.REBLOG_WINDOW
    sha = store.scripts["read_page"].sha
    commands: list[tuple] = []
    for b in found:
        commands.append(("EVALSHA", sha, 2, keys.home(uid), keys.user(uid), b.id, "", "",
                         window, "id"))
        commands += [("ZRANGE", keys.profile(a), f"({b.id}", "-inf", "BYSCORE", "REV",
                      "LIMIT", 0, window) for a in large]
        commands.append(("ZRANGE", keys.reblogged_by(_original_of(b)), f"({b.id}", "-inf",
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
        out[b.id] = _original_of(b) in recent or bool(others & recent)
    return out


def _unique(ids):
    last = None
    for i in ids:
        if i != last:
            yield i
        last = i


def _window(cursors: list) -> tuple[bool, int, int]:
    max_id, since_id, min_id, _ = cursors
    return (bool(min_id), int(min_id or since_id or 0),
            int(max_id) if max_id else limits.MAX_ID + 1)


#: uid -> the large accounts a page merged last (per process, per Store):
#: what the next page of that user reads ahead (prefetch), checked against
#: the set read with the home (a change costs one more round trip, never a
#: wrong page).
_LARGE_SEEN: "weakref.WeakKeyDictionary[Store, dict[int, tuple[int, ...]]]" = \
    weakref.WeakKeyDictionary()


def expected_large(store: Store, uid: int) -> tuple[int, ...]:
    return _LARGE_SEEN.get(store, {}).get(uid, ())


def first_read(limit: int, sources: int) -> int:
    """Ids a page reads first from each of ``sources`` profiles: twice its
    share of the page, at least limits.MERGE_FIRST_READ_MIN (later reads,
    for the profiles that turn out denser, take ``limit``)."""
    return min(limit, max(limits.MERGE_FIRST_READ_MIN, -(-2 * limit // max(1, sources))))


async def prefetch(store: Store, authors: tuple[int, ...], cursors: list
                   ) -> dict[int, tuple[list, int]]:
    """The first read of each profile a page of these authors merges, sent
    while the home is read (the two overlap on the connection): author ->
    (ids, how many were asked)."""
    up, lo, hi = _window(cursors)
    count = first_read(cursors[3], len(authors))
    replies = await store.topology.read_profiles([(a, lo, hi) for a in authors], up, count)
    return {a: ([int(i) for i in ids], count) for a, ids in zip(authors, replies)}


def remember_large(store: Store, uid: int, large: list[int]) -> None:
    seen = _LARGE_SEEN.setdefault(store, {})
    if len(seen) >= limits.MERGE_READERS_KEPT:
        seen.clear()
    if large:
        seen[uid] = tuple(large)
    else:
        seen.pop(uid, None)


async def read_home_apart(store: Store, uid: int, cursors: list) -> HomeRead:
    """Topology.read_home where the large accounts' profiles cannot be read
    in the home page's script (a cluster: each is in its owner's slot): the
    large accounts with the home's page, and the first read of the profiles
    this process merged for the user last time sent alongside (a change of
    that set costs one more round trip, never a wrong page)."""
    topology = store.topology
    call = ("large_followees",
            [keys.large_following(uid), keys.following(uid), keys.hidden_reblogs(uid)],
            [limits.MERGED_ACCOUNTS_MAX])
    expected = expected_large(store, uid)
    read_ahead: dict = {}
    read = topology.read_page_with(call, keys.home(uid), keys.user(uid), "id", cursors)
    if expected:  # the profiles it merged last time, read alongside the home
        ahead = asyncio.ensure_future(prefetch(store, expected, cursors))
        try:
            (large, hidden), handle = await read
        finally:
            read_ahead = await ahead
    else:
        (large, hidden), handle = await read
    large = [int(a) for a in large]
    if large or expected:
        remember_large(store, uid, large)
    return HomeRead(large, {int(h) for h in hidden}, handle, read_ahead)


async def merged_home(store: Store, uid: int, first: HomeRead, cursors: list) -> Page:
    """The home page read by ``cursors`` (``first``: Topology.read_home)
    with the statuses of the large accounts ``uid`` follows merged in by id,
    as if they had been fanned out. Each profile is read in the page's
    window (below max_id, above since_id / min_id, and not past the home
    page's last status when that page is full: nothing beyond it can be
    among the newest ``limit``), a few ids first (:func:`first_read`), and
    read on while the page is not settled or statuses left out (deleted,
    direct, replies, hidden boosts, boosts within the window of their
    original) leave it short. ``first.read_ahead``: first reads already
    made (:func:`prefetch`, or the single server's page script), by author,
    ids as ints.
    The statuses from profiles that can be on the page are read with the
    home page's (Topology.page_with), with what ``first`` knows of them."""
    handle, large, hidden_boosters = first.handle, first.large, first.hidden
    limit = cursors[3]
    up, lo, hi = _window(cursors)
    topology = store.topology
    home_ids = topology.page_ids(handle)
    if len(home_ids) >= limit:
        if up:
            hi = min(hi, max(home_ids))
        else:
            lo = max(lo, min(home_ids))
    frontier: dict[int, int] = {}  # source -> the last id read from it
    open_sources = list(dict.fromkeys(large))
    home: set[int] = set(home_ids)
    page: Page | None = None      # the home page's statuses, once read
    found: dict[int, Status] = {}  # statuses from profiles, taken
    refused: set[int] = set()
    boosts_out: dict[int, bool] = {}
    sources = set(open_sources)
    read_ahead = {a: ids for a, ids in first.read_ahead.items() if a in sources}
    #: sorted runs of ids, in the page's order: the home page's, then each
    #: read of a profile (merged lazily: a page looks at ~limit of them)
    runs: list[list[int]] = [sorted(home_ids, reverse=not up)]
    owner: dict[int, int] = {}  # id read from a profile -> its author
    order: list[int] = [0]  # [len(runs) when sorted, every id in the page's order]

    def top() -> list[int]:
        """The page's ids as far as they are known: nothing unread from an
        open profile can come before the least advanced of them."""
        edge = None
        if open_sources:
            edge = (min if up else max)(frontier[a] for a in open_sources)
        if order[0] != len(runs):  # runs came in: sort again (a hundred ids or so)
            order[:] = [len(runs), *sorted(set(itertools.chain(*runs)), reverse=not up)]
        out: list[int] = []
        for i in itertools.islice(order, 1, None):
            if edge is not None and (i > edge if up else i < edge):
                break
            if i in refused or boosts_out.get(i):
                continue
            out.append(i)
            if len(out) == limit:
                break
        return out

    count = first_read(limit, len(open_sources))
    for _ in range(limits.HIDDEN_REFILL_READS + 2):
        if open_sources:
            unread = [a for a in open_sources if a not in read_ahead]
            replies = await topology.read_profiles(
                [(a, frontier.get(a, lo) if up else lo, hi if up else frontier.get(a, hi))
                 for a in unread], up, count)
            got = {a: ([int(i) for i in ids], count)
                   for a, ids in zip(unread, replies)} | read_ahead
            read_ahead = {}
            count = limit  # a profile read again is a dense one
            still = []
            for a, (ids, asked) in ((a, got[a]) for a in open_sources):
                read = len(ids)
                # a first read made before the home page was known (read
                # ahead) may reach past its last status, which nothing
                # beyond can come before: such ids are dropped, and a read
                # that reached there has nothing more for this page
                ids = [i for i in ids if lo < i < hi]
                runs.append(ids)
                owner.update(dict.fromkeys(ids, a))
                if read == asked and len(ids) == read:
                    frontier[a] = ids[-1]
                    still.append(a)
            open_sources = still
        while True:  # only what can be on the page is read and checked
            ids = top()
            unseen = [i for i in ids if i not in found]
            if unseen or page is None:
                mine = [i for i in unseen if i not in home]  # from profiles: checked
                if page is None:  # the home page's statuses that can be on it, with these
                    page, statuses = await topology.page_with(
                        handle, mine, list(dict.fromkeys(owner[i] for i in mine)),
                        only={i for i in ids if i in home}, known=first)
                    statuses += page
                else:
                    statuses = await read_statuses(store, unseen)
                ok = {s.id for s in await accepted(
                    store, uid, [s for s in statuses if s.id not in home], hidden_boosters)}
                ok.update(s.id for s in statuses if s.id in home)
                refused.update(i for i in unseen if i not in ok)
                found.update((s.id, s) for s in statuses if s.id in ok)
                if any(i not in found for i in ids):
                    continue
            undecided = [found[i] for i in ids if i not in boosts_out and i in found
                         and _original_of(found[i])]
            if not undecided:
                break
            boosts_out.update(await left_out_boosts(store, uid, undecided, large,
                                                    hidden_boosters))
        shown = [found[i] for i in ids if i in found]
        if len(shown) >= limit or not open_sources:
            break
    if up:
        shown.reverse()  # newest first, as every page
    # the home statuses' counts as the page's script read them (the API
    # reads the others'): interactions.state_check
    return Page(shown, *((page.authors, page.counts) if page is not None else ()))
