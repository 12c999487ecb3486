"""Mastodon's admin dashboard figures (Admin::Metrics, ``view_dashboard``):
measures (a total over a period of days, the previous period's, one value a
day), dimensions (a breakdown by some key) and retention (how many of each
day's or month's sign-ups were active later), read from the server's day
counters (redpoll.instance.activity) and the hashtags' day histories
(redpoll.trends.history). Reads only.

What Redpoll does not count is answered as Mastodon answers a period with no
data: a dimension it cannot break down has no rows, and a measure it has no
counter for (tag_servers, the instance_* ones but instance_statuses) is
left out, as Mastodon leaves out a key it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from ..core import limits, validate
from ..core.errors import ValidationError
from ..instance import activity
from ..storage import topology
from ..storage.store import Store
from ..trends import history
from . import roles, staff

#: measure -> the activity counter it reads, and whether its total is the
#: distinct members over the period (else the days' sum)
COUNTED = {
    "active_users": ("logins", True),
    "new_users": ("registrations", False),
    "interactions": ("interactions", False),
    "opened_reports": ("reports", False),
    "resolved_reports": ("resolved", False),
}
#: measures about one hashtag (their parameter: {"id": the tag's name})
TAGGED = {"tag_accounts": True, "tag_uses": False}
#: measures about one other server (their parameter: {"domain": its host})
SERVED = ("instance_statuses",)
MEASURES = (*COUNTED, *TAGGED, *SERVED)
#: Mastodon's dimensions; Redpoll breaks down servers, space_usage and
#: software_versions (the others have no rows)
DIMENSIONS = (
    "languages",
    "sources",
    "servers",
    "space_usage",
    "software_versions",
    "tag_servers",
    "tag_languages",
    "instance_accounts",
    "instance_languages",
)


#: the last day a period may end on (a month's retention reads the next month's start)
LAST_DAY = (datetime(9999, 11, 30, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)).days


@dataclass(frozen=True, slots=True)
class Measure:
    key: str
    total: int
    previous_total: int
    #: (day since the epoch, value) for each day of the period
    data: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Row:
    key: str
    human_key: str
    value: int | str
    unit: str | None = None


def day_of(value, name: str) -> int:
    """A date or a timestamp (ISO 8601) as its UTC day since the epoch; 422 otherwise."""
    if not isinstance(value, str) or not value:
        raise ValidationError(name, "is missing" if value in (None, "") else "must be a date")
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if at.tzinfo is None:
            at = at.replace(tzinfo=UTC)
        day = int(at.timestamp()) // 86_400
    except (ValueError, OverflowError):
        raise ValidationError(name, "must be a date (ISO 8601)") from None
    if not 0 <= day <= LAST_DAY:
        raise ValidationError(name, "must be a date from 1970 to 9999")
    return day


def period(start_at, end_at) -> tuple[int, int]:
    """The days from ``start_at``'s to ``end_at``'s, at most the days kept."""
    first, last = day_of(start_at, "start_at"), day_of(end_at, "end_at")
    if last < first:
        raise ValidationError("end_at", "must not be before start_at")
    if last - first + 1 > limits.ACTIVITY_DAYS_KEPT:
        raise ValidationError("start_at", f"at most {limits.ACTIVITY_DAYS_KEPT} days")
    return first, last


async def _may(store: Store, actor: int | None) -> None:
    roles.require(await staff.role_of(store, actor), "view_dashboard")


async def _counted(store: Store, kind: str, distinct: bool, first: int, last: int) -> Measure:
    n = last - first + 1
    days = await activity.per_day(store, kind, first - n, last)
    before, now = days[:n], days[n:]
    if distinct:
        total = await activity.distinct(store, kind, first, last)
        previous = await activity.distinct(store, kind, first - n, first - 1)
    else:
        total, previous = sum(now), sum(before)
    return Measure("", total, previous, tuple(zip(range(first, last + 1), now)))


async def _tagged(store: Store, tag: str, accounts: bool, first: int, last: int) -> Measure:
    n = last - first + 1
    rows = []
    for day in range(first - n, last + 1):
        uses, authors = history.day_keys("tag", tag, day)
        rows.append(authors if accounts else uses)
    counts = [int(c) for c in await store.batch([("PFCOUNT", k) for k in rows])]
    if accounts:  # distinct authors over each period (the tag's days share its slot)
        total, previous = (
            int(c) for c in await store.batch([("PFCOUNT", *rows[n:]), ("PFCOUNT", *rows[:n])])
        )
    else:
        total, previous = sum(counts[n:]), sum(counts[:n])
    return Measure("", total, previous, tuple(zip(range(first, last + 1), counts[n:])))


async def _served(store: Store, domain: str, first: int, last: int) -> Measure:
    n = last - first + 1
    days = await activity.from_server(store, domain, first - n, last)
    return Measure("", sum(days[n:]), sum(days[:n]), tuple(zip(range(first, last + 1), days[n:])))


async def measures(
    store: Store, actor: int | None, keys, start_at, end_at, extra: dict
) -> list[Measure]:
    """The measures named in ``keys`` (unknown ones left out, as Mastodon)
    over the days from ``start_at``'s to ``end_at``'s; ``extra``: each
    measure's parameters (tag_accounts / tag_uses: {"id": a hashtag})."""
    await _may(store, actor)
    first, last = period(start_at, end_at)
    out = []
    for key in _keys(keys):
        if key in COUNTED:
            found = await _counted(store, *COUNTED[key], first, last)
        elif key in TAGGED:
            given = extra.get(key)
            tag = given.get("id") if isinstance(given, dict) else None
            if not isinstance(tag, str) or not tag:
                raise ValidationError(key, "needs id (a hashtag)")
            found = await _tagged(store, tag.lower().lstrip("#"), TAGGED[key], first, last)
        elif key in SERVED:
            given = extra.get(key)
            domain = given.get("domain") if isinstance(given, dict) else None
            if not isinstance(domain, str) or not domain or len(domain) > 253:
                raise ValidationError(key, "needs domain (a server's host)")
            found = await _served(store, domain.lower(), first, last)
        else:
            continue
        out.append(Measure(key, found.total, found.previous_total, found.data))
    return out


def _keys(keys) -> list[str]:
    if keys in (None, ""):
        return []
    items = keys if isinstance(keys, list) else [keys]
    if len(items) > len(MEASURES) + len(DIMENSIONS) or not all(isinstance(k, str) for k in items):
        raise ValidationError("keys", "must be a list of names")
    return list(dict.fromkeys(items))


async def dimensions(
    store: Store, actor: int | None, keys, start_at, end_at, limit=None
) -> list[tuple[str, list[Row]]]:
    """The dimensions named in ``keys`` (unknown ones left out), each with
    its rows: servers (the other servers whose statuses came most, at most
    ``limit``), space_usage (the database's memory), software_versions (the
    database server's version; the caller adds its own), the others none."""
    await _may(store, actor)
    first, last = period(start_at, end_at)
    rows_max = validate.page_limit(limit, limits.DIMENSION_ROWS_DEFAULT, limits.DIMENSION_ROWS_MAX)
    out = []
    for key in _keys(keys):
        if key not in DIMENSIONS:
            continue
        rows: list[Row] = []
        if key == "space_usage":
            used = await topology.of(store).used_memory()
            rows = [Row("redis", "Redis", used, "bytes")]
        elif key == "servers":  # the statuses that came from each
            found = await activity.servers(store, first, last, rows_max)
            rows = [Row(domain, domain, n) for domain, n in found]
        elif key == "software_versions":
            rows = [Row("redis", "Redis", await topology.of(store).server_version())]
        out.append((key, rows))
    return out


async def retention(
    store: Store, actor: int | None, start_at, end_at, frequency
) -> list[activity.Cohort]:
    """Mastodon's retention cohorts by day or month (``frequency``)."""
    await _may(store, actor)
    first, last = period(start_at, end_at)
    if frequency in (None, ""):
        frequency = "day"
    if frequency not in ("day", "month"):
        raise ValidationError("frequency", "must be day or month")
    return await activity.retention(store, first, last, frequency == "month")
