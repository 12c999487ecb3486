"""Hybrid fan-out and idle users.

**Large accounts.** An author with more followers than the threshold
(``Settings.fanout_threshold``, limits.FANOUT_THRESHOLD) is not fanned out
to their followers' homes: a status of theirs goes to their own home, the
public timeline and lists only, and each follower's home catches up with
it when the follower reads their home (:func:`catch_up`): the home page's
own round trip (Timelines.read_home) learns which of the large accounts the
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
whose follow has gone (large_followees.lua).

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

import weakref

from ..core import keys, limits
from ..core.models import HomeRead, now_ms
from ..storage.store import Store
from . import home_rule, placement, refill

#: fanout_mode.lua's answers
FAN, BIG, MARK, UNMARK = "fan", "big", "mark", "unmark"


async def fanout_mode(
    store: Store, sid: int, author: int, threshold: int, shrink_below: float, op: str
) -> str:
    """fanout_mode.lua: how this status's fan-out treats the homes."""
    mode = await store.run(
        "fanout_mode",
        [keys.user(author), keys.followers(author)],
        [sid, threshold, shrink_below, op],
    )
    return mode.decode() if isinstance(mode, bytes) else mode


async def switch_followers(store: Store, author: int, members: list[bytes], mode: str) -> None:
    """One batch of a mode switch's walk (fanout_mode.lua), idempotent:
    MARK adds ``author`` to each follower's large set; UNMARK merges the
    author's newest statuses into each follower's home (as a follow's
    backfill: those the home rule lets in, guarded by the follow) and then takes the author out of the
    set, so that no status of theirs is missing from the home meanwhile."""
    if not members:
        return
    if mode == MARK:
        await store.batch([("SADD", key, author) for key in keys.large_followings(members)])
        return
    found = home_rule.profile_batch(
        author,
        *await store.batch(home_rule.profile_reads(author, "+inf", limits.BACKFILL)),
        raw=True,
    )
    for member in members:  # each home takes what the home rule lets in
        uid = int(member)
        ids, boosts = await home_rule.take(store, found, uid)
        await placement.of(store).merge(
            keys.home(uid),
            keys.following(uid),
            str(author),
            ids,
            keys.home_reblogs(uid),
            home_rule.boost_pairs(boosts),
        )
    await store.batch(
        [
            *(("SREM", key, author) for key in keys.large_followings(members)),
            *(("HDEL", key, author) for key in keys.large_marks_many(members)),
        ]
    )


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
    await store.batch(
        [
            ("SREM", keys.large_following(follower), target),
            ("HDEL", keys.large_marks(follower), target),
        ]
    )


# --- idle users ---------------------------------------------------------------------------
_TOUCHED: weakref.WeakKeyDictionary[Store, dict[int, int]] = weakref.WeakKeyDictionary()


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
    dropped = [
        key for reply in await store.run_grouped("drop_idle_home", pairs, [cutoff]) for key in reply
    ]
    if dropped:
        marks = [x for key in dropped for x in (last[key][0], int(last[key][1]))]
        await store.run("idle_mark", [keys.HOME_SEEN], marks)
    return len(dropped)


# --- a home catching up with its large accounts ------------------------------------------
def news_posted(seq: bytes, mark: bytes | None) -> int:
    """What an account whose profile sequence is ``seq`` posted since a home
    caught up with it to ``mark`` (limits.CATCH_UP_PER_ACCOUNT when there is
    no mark, or it is not below ``seq``)."""
    posted = int(seq) - int(mark) if mark is not None else 0
    return posted if posted > 0 else limits.CATCH_UP_PER_ACCOUNT


def news_count(seq: bytes, mark: bytes | None) -> int:
    """Ids to read of that account: what it posted since, plus
    limits.CATCH_UP_OVERLAP (a status recorded after a newer one of the
    same author: ids are drawn before the profile write), at most
    limits.CATCH_UP_PER_ACCOUNT."""
    return min(limits.CATCH_UP_PER_ACCOUNT, news_posted(seq, mark) + limits.CATCH_UP_OVERLAP)


#: Per store: user -> the large accounts their last home page found (a
#: single server's catch_up_plain.lua names them; it checks them).
_LARGE: weakref.WeakKeyDictionary[Store, dict[int, list[int]]] = weakref.WeakKeyDictionary()


async def read_home(store: Store, uid: int, cursors: list) -> HomeRead:
    """A home page's first round trip (redpoll.timelines.timelines.home):
    the home's page with the large accounts it merges (large_followees.lua,
    in the page's round trip: Timelines.read_page_with) and their profile
    sequences (in that round trip on a single server, in one more on a
    cluster, only for a user who follows some): which of them posted since
    the home caught up with them (``stale``). Raises NotFound for an unknown
    user.

    On a single server whose process saw this user's large accounts on an
    earlier page, the round trip is instead catch_up_plain.lua with the
    page: it checks they are still those, and catches up with them as far
    as no rule is needed (the plain news; the home rule was asked about
    those first); what needs the rule is left in ``rest`` for
    :func:`catch_up`."""
    topo = placement.of(store)
    known = _LARGE.setdefault(store, {}).get(uid) if topo.catches_up_plain else None
    if known is not None and all(home_rule.plain_taken(a, uid) for a in known):
        reply, handle = await topo.catch_up_plain(uid, known, cursors)
        if reply[0]:
            _, large, ruled, hits, hidden, _ = reply
            large = [int(a) for a in large]
            rest = None
            if ruled or hits:
                news = [
                    (int(row[0]), row[1], home_rule.ruled_batch(int(row[0]), row[2:], 0))
                    for row in ruled
                ]
                rest = (news, {int(i): int(float(b)) for i, b in zip(hits[0::2], hits[1::2])})
            return HomeRead(large, {int(h) for h in hidden}, handle, rest=rest)
    first = await _read_home(store, uid, cursors)
    if topo.catches_up_plain:
        remembered = _LARGE[store]
        if len(remembered) >= limits.HOME_SEEN_KEPT:
            remembered.clear()
        if len(first.large) < limits.MERGED_ACCOUNTS_MAX:
            remembered[uid] = first.large
    return first


async def _read_home(store: Store, uid: int, cursors: list) -> HomeRead:
    """:func:`read_home` without a single server's shortcut."""
    call = (
        "large_followees",
        [
            keys.large_following(uid),
            keys.following(uid),
            keys.hidden_reblogs(uid),
            keys.large_marks(uid),
        ],
        [limits.MERGED_ACCOUNTS_MAX],
    )
    (large, marks, hidden), handle, seq_of = await placement.of(store).read_page_with(
        call,
        keys.home(uid),
        keys.user(uid),
        "id",
        cursors,
        (keys.large_following(uid), keys.user, "pseq"),
    )
    if not large:
        return HomeRead([], set(), handle)
    large = [int(a) for a in large]
    if seq_of is not None:  # read with the page (a single server)
        seqs = [seq_of.get(a) for a in large]
    else:
        seqs = await store.batch([("HGET", keys.user(a), "pseq") for a in large])
    stale = [
        (a, seq, mark)
        for a, seq, mark in zip(large, seqs, marks)
        if seq is not None and seq != mark
    ]
    return HomeRead(large, {int(h) for h in hidden}, handle, stale)


def _record(rows) -> dict[int, int]:
    """A home's boost record as read (ZRANGE WITHSCORES): original -> boost."""
    if rows and not isinstance(rows[0], (list, tuple)):  # RESP2: flat list
        rows = list(zip(rows[0::2], rows[1::2]))
    return {int(o): int(float(b)) for o, b in rows}


async def _read_news(store: Store, uid: int, stale: list) -> tuple[list, list[int], dict]:
    """The news of the ``stale`` accounts as home_rule candidates, less what
    the home's top holds, with that top and the home's boost record, in one
    round trip."""
    *reads, held, record = await store.batch(
        [
            *(
                c
                for a, seq, mark in stale
                for c in home_rule.profile_reads(a, "+inf", news_count(seq, mark))
            ),
            ("LRANGE", keys.home(uid), 0, limits.CATCH_UP_HOME_CHECK - 1),
            ("ZRANGE", keys.home_reblogs(uid), 0, -1, "WITHSCORES"),
        ]
    )
    top = [int(i) for i in held]
    known = set(top)
    # below the top's last entry, only a full top rules out a late one
    floor = top[-1] if len(top) == limits.CATCH_UP_HOME_CHECK else 0
    news = []
    for (a, seq, mark), ids, ruled in zip(stale, reads[0::2], reads[1::2]):
        found = home_rule.profile_batch(a, ids, ruled)
        posted = news_posted(seq, mark)
        rank = {sid: k for k, sid in enumerate(found.ids)}
        news.append(
            (
                a,
                seq,
                found.only(  # (called here, in this iteration)
                    lambda sid, rank=rank, posted=posted: (
                        sid not in known and (rank[sid] < posted or sid > floor)
                    )
                ),
            )
        )
    return news, top, _record(record)


async def catch_up(store: Store, uid: int, first: HomeRead, cursors: list) -> object:
    """Bring into ``uid``'s home what the large accounts it merges posted
    since it last caught up with each (``first.stale``, :func:`read_home`):
    the statuses the home rule lets in (redpoll.timelines.home_rule), a
    boost with the window below its place in the home as it will be. A
    boost the home holds (its boost record, keys.home_reblogs) whose
    original comes in within the window below it is taken out: the rule's
    window, which fan-out would have applied had the original come first.
    Returns the home's page read again by ``cursors`` (a handle for
    Timelines.page_of), in the round trip of the last write.

    The news are read (:func:`_read_news`), decided, and written with the
    marks moved by one script (catch_up.lua): atomic, so a catch-up cut
    short leaves the marks as they were and the next page catches up again
    (idempotent: ids already there stay once). Where a single server's
    first round trip wrote the plain news (``first.rest``, read_home), only
    the rest is decided and written this way: the ruled news, and the plain
    ones of which the home holds a boost (the window)."""
    if first.rest is not None:  # a single server wrote the plain news already
        news, came = first.rest
        return await _rule_news(store, uid, first, news, None, came, cursors)
    news, top, record = await _read_news(store, uid, first.stale)
    return await _rule_news(store, uid, first, news, (top, record), {}, cursors)


async def _rule_news(
    store: Store,
    uid: int,
    first: HomeRead,
    news: list,
    read: tuple[list[int], dict] | None,
    came: dict[int, int],
    cursors: list,
) -> object:
    """:func:`catch_up`'s decision and write: ``news`` (account, sequence,
    Batch) by the home rule, its facts read in one round trip when a
    status needs any (with the home as a whole and its boost record where
    the window needs them, or ``read`` is None: not read yet); ``came``:
    ids already put in (original -> the boost the home recorded of it)."""
    # the newest HOME_CAP (no older one could stay in the home)
    wanted = home_rule.Batch.newest([b for _, _, b in news], limits.HOME_CAP)
    ruled = list(wanted.ruled.values())
    hidden = frozenset(first.hidden)
    commands = home_rule.viewer_reads(ruled, uid, None, hidden_known=True)
    n = len(commands)
    top, record = read if read is not None else ([], {})
    boosts = [c for c in ruled if c.reblog_of is not None]
    # the window needs the home as a whole: for a boost coming in, or an
    # original coming in of which it holds a boost
    whole = read is None or bool(boosts or came) or any(sid in record for sid in wanted.int_ids())
    if whole:
        commands.append(("LRANGE", keys.home(uid), 0, -1))
        if read is None:
            commands.append(("ZRANGE", keys.home_reblogs(uid), 0, -1, "WITHSCORES"))
    commands += home_rule.window_reads(ruled, None)
    replies = await store.batch(commands) if commands else []
    facts = home_rule.viewer_facts(ruled, uid, None, replies[:n], hidden)
    at = n
    home = top
    if whole:
        home, at = [int(i) for i in replies[at]], at + 1
        if read is None:
            record, at = _record(replies[at]), at + 1
    others = {c.id: home_rule.boost_ids(rows) for c, rows in zip(boosts, replies[at:])}
    ids, took = home_rule.decide(wanted, uid, None, facts, home, others)
    take = set(ids)
    out = home_rule.boosts_to_drop(home, record, ids, took, came)
    args: list = [limits.HOME_REBLOGS_KEPT, len(news)]
    for author, seq, batch in news:
        mine = [sid for sid in batch.int_ids() if sid in take]
        args += [author, seq, len(mine), *mine]
    args += [len(took), *(x for pair in home_rule.boost_pairs(took) for x in pair), *out]
    return await placement.of(store).catch_up(uid, args, max(take, default=0), cursors)
