"""The server's activity per UTC day, as Mastodon's ActivityTracker keeps it
for the admin dashboard (Admin::Metrics) and /api/v1/instance/activity: for
each day, the distinct local accounts active (a request with their token),
the local sign-ups, the local statuses, the interactions (favourites, boosts,
replies), the reports opened and resolved, and the statuses that came from
each other server (keys.server_day, with a board of the day's most active
servers, keys.servers_day).

Each is a HyperLogLog of the events' ids per day (keys.day), written where
the event happens: adding one again (a replayed journal, a repeated request)
counts nothing twice, so every writer is idempotent; a day's key expires
after limits.ACTIVITY_DAYS_KEPT days. Counts are HyperLogLog estimates,
exact in practice at small numbers (Mastodon counts logins the same way).
The days of one kind share a slot, so a period's distinct members are one
PFCOUNT. Two ZSETs on one slot (keys.JOINED, keys.SEEN) hold when each local
account signed up and was last active, for the retention cohorts; each write
drops the entries older than the days kept, so they are bounded by time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from ..core import limits
from ..core.models import now_ms
from ..storage.store import Store
from . import keys

DAY_MS = 86_400_000
KEEP_S = (limits.ACTIVITY_DAYS_KEPT + 1) * 86_400
EPOCH = date(1970, 1, 1)


def today(at_ms: int | None = None) -> int:
    return (now_ms() if at_ms is None else at_ms) // DAY_MS


async def count(store: Store, kind: str, member, at_ms: int | None = None) -> None:
    """Count event ``member`` (an id, unique for the event) of ``kind`` on
    the day of ``at_ms`` (now). Idempotent: one script-free pipeline on one key."""
    key = keys.day(kind, today(at_ms))
    await store.batch([("PFADD", key, str(member)), ("EXPIRE", key, KEEP_S)])


async def came_from(store: Store, domain: str, sid: int, at_ms: int) -> None:
    """A status from another server: counted in its domain's day, and the
    domain's count of the day raised among the day's servers. Two slots,
    each step idempotent (a PFADD; a ZADD GT of the count), so a call cut
    short is finished by the post's journal replay."""
    day = today(at_ms)
    key = keys.server_day(domain, day)
    _, _, n = await store.batch(
        [("PFADD", key, str(sid)), ("EXPIRE", key, KEEP_S), ("PFCOUNT", key)]
    )
    board = keys.servers_day(day)
    await store.batch(
        [
            ("ZADD", board, "GT", int(n), domain),
            ("ZREMRANGEBYRANK", board, 0, -(limits.ACTIVITY_SERVERS_KEPT + 1)),
            ("EXPIRE", board, KEEP_S),
        ]
    )


async def from_server(store: Store, domain: str, first: int, last: int) -> list[int]:
    """The statuses that came from ``domain`` on each of days ``first`` .. ``last``."""
    found = await store.batch(
        [("PFCOUNT", keys.server_day(domain, d)) for d in range(first, last + 1)]
    )
    return [int(n) for n in found]


async def servers(store: Store, first: int, last: int, limit: int) -> list[tuple[str, int]]:
    """The servers whose statuses came most over days ``first`` .. ``last``
    (each day's board read whole: at most limits.ACTIVITY_SERVERS_KEPT
    rows a day), most first, at most ``limit``."""
    boards = await store.batch(
        [("ZRANGE", keys.servers_day(d), 0, -1, "WITHSCORES") for d in range(first, last + 1)]
    )
    totals: dict[str, int] = {}
    for board in boards:
        pairs = board
        if pairs and not isinstance(pairs[0], (list, tuple)):  # RESP2: flat
            pairs = list(zip(pairs[0::2], pairs[1::2]))
        for domain, n in pairs:
            name = domain.decode() if isinstance(domain, bytes) else str(domain)
            totals[name] = totals.get(name, 0) + int(float(n))
    return sorted(totals.items(), key=lambda row: (-row[1], row[0]))[:limit]


async def joined(store: Store, uid: int, at_ms: int) -> None:
    """A local account signed up: counted among the day's registrations, and
    its sign-up kept for the retention cohorts (idempotent)."""
    await count(store, "registrations", uid, at_ms)
    oldest = at_ms - limits.ACTIVITY_DAYS_KEPT * DAY_MS
    await store.batch(
        [("ZADD", keys.JOINED, at_ms, uid), ("ZREMRANGEBYSCORE", keys.JOINED, "-inf", oldest)]
    )


async def forget(store: Store, uid: int) -> None:
    """A deleted account: out of the retention cohorts (one slot); the day
    counts it was part of stay, as Mastodon's counters do."""
    await store.batch([("ZREM", keys.JOINED, uid), ("ZREM", keys.SEEN, uid)])


class Seen:
    """Records an account active once a day per process (a request with its
    token): the day's logins and its last activity. The memo only saves
    writes; a second record counts nothing twice (and a database wiped
    under a running process counts an account it remembers the next day)."""

    def __init__(self) -> None:
        self._day = -1
        self._done: set[int] = set()

    async def record(self, store: Store, uid: int) -> None:
        now = now_ms()
        day = today(now)
        if day != self._day or len(self._done) >= limits.ACTIVITY_SEEN_MEMO:
            self._day, self._done = day, set()
        if uid in self._done:
            return
        await count(store, "logins", uid, now)
        oldest = now - limits.ACTIVITY_DAYS_KEPT * DAY_MS
        await store.batch(
            [
                ("ZADD", keys.SEEN, "GT", now, uid),
                ("ZREMRANGEBYSCORE", keys.SEEN, "-inf", oldest),
            ]
        )
        self._done.add(uid)


async def per_day(store: Store, kind: str, first: int, last: int) -> list[int]:
    """The counts of days ``first`` .. ``last`` (days since the epoch)."""
    days = range(first, last + 1)
    found = await store.batch([("PFCOUNT", keys.day(kind, d)) for d in days])
    return [int(n) for n in found]


async def distinct(store: Store, kind: str, first: int, last: int) -> int:
    """The distinct members over days ``first`` .. ``last`` (one slot: one PFCOUNT)."""
    (n,) = await store.batch([("PFCOUNT", *[keys.day(kind, d) for d in range(first, last + 1)])])
    return int(n)


@dataclass(frozen=True, slots=True)
class Week:
    start: int  # seconds since the epoch
    statuses: int
    logins: int
    registrations: int


async def weeks(store: Store, n: int = 12) -> list[Week]:
    """Mastodon's instance activity: ``n`` rows, the i-th the seven days
    from the day i weeks ago on (Mastodon's ``i.weeks.ago`` plus six days:
    the first row is today, the days after it not come yet); statuses and
    sign-ups summed, logins distinct."""
    now = now_ms()
    day = today(now)
    out = []
    for i in range(n):
        first = day - 7 * i
        statuses = sum(await per_day(store, "statuses", first, first + 6))
        registrations = sum(await per_day(store, "registrations", first, first + 6))
        logins = await distinct(store, "logins", first, first + 6)
        out.append(Week((now - i * 7 * DAY_MS) // 1000, statuses, logins, registrations))
    return out


@dataclass(frozen=True, slots=True)
class Cohort:
    start: int  # days since the epoch (the first day of the period)
    #: for each period from the cohort's on: (its first day, the accounts of
    #: the cohort active since it began, their share of the cohort)
    data: tuple[tuple[int, int, float], ...]


def periods(first: int, last: int, monthly: bool) -> list[int]:
    """The first day of each day (or month) from ``first``'s to ``last``'s."""
    if not monthly:
        return list(range(first, last + 1))
    out = []
    at = EPOCH + timedelta(days=first)
    y, m = at.year, at.month
    while (start := (date(y, m, 1) - EPOCH).days) <= last:
        out.append(start)
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


async def retention(store: Store, first: int, last: int, monthly: bool) -> list[Cohort]:
    """Mastodon's retention: for each day (month) from ``first``'s to
    ``last``'s, the local accounts that signed up in it, and for it and each
    later one, how many of them were active since it began (Mastodon's
    current_sign_in_at at or after it). Reads only."""
    starts = periods(first, last, monthly)
    ends = [*starts[1:], _next(starts[-1], monthly)] if starts else []
    cohorts = []
    for i, (start, end) in enumerate(zip(starts, ends)):
        members = await store.zrangebyscore(
            keys.JOINED, start * DAY_MS, f"({end * DAY_MS}", 0, limits.RETENTION_COHORT_MAX
        )
        seen = await store.zmscore(keys.SEEN, members) if members else []
        last_seen = [int(s) if s is not None else -1 for s in seen]
        size = max(len(members), 1)
        data = []
        for later in starts[i:]:
            value = sum(1 for s in last_seen if s >= later * DAY_MS)
            data.append((later, value, value / size))
        cohorts.append(Cohort(start, tuple(data)))
    return cohorts


def _next(start: int, monthly: bool) -> int:
    if not monthly:
        return start + 1
    at = EPOCH + timedelta(days=start)
    y, m = (at.year + 1, 1) if at.month == 12 else (at.year, at.month + 1)
    return (date(y, m, 1) - EPOCH).days
