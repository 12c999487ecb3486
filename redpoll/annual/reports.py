"""Annual reports (Mastodon's "Wrapstodon", schema version 2): a member's
year in numbers, made on request by a background job and kept as JSON.

As Mastodon: a report may be asked for only during the campaign (the 10th
to the 31st of December, for that year; :func:`campaign`), by a member
whose year has a public or unlisted status and a status with a hashtag (its
sources' eligibility). It counts every status of the member made in the
year, boosts and every visibility (the profile's sorted set, newest first,
at most limits.ANNUAL_REPORT_STATUSES_SCANNED read): the archetype by
Mastodon's rule, the most boosted public or unlisted post, the one hashtag
used most (more than once), and one cumulative ``time_series`` entry (the
year's statuses and the followers gained in it, still following).

Making one is idempotent: :func:`generate` computes from what is kept and
overwrites the year's JSON (one HSET), so a replayed job writes the same
report; the "generating" mark (a key with an expiry) is dropped after. The
read mark is its own hash, kept when a report is written again.
"""

from __future__ import annotations

import calendar
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass

import orjson

from ..bus.queue import JobQueue
from ..core import keys as base_keys
from ..core import limits
from ..core.models import DIRECT, PRIVATE, Status, now_ms
from ..polls.polls import EXTRA as POLL_EXTRA
from ..records.statuses import read_statuses
from ..storage.store import Store
from . import keys
from .jobs import AnnualReportJob

SCHEMA = 2
#: the campaign's setting (redpoll.core.settings: REDPOLL_WRAPSTODON)
ON, OFF = "on", "off"


def campaign(setting: str, now_s: float | None = None) -> int | None:
    """The year whose reports may be asked for now, or None: with the
    setting ``on``, the current year from the 10th to the 31st of December
    (UTC, as Mastodon); ``off``, never; a year, that year at any time."""
    if setting == OFF:
        return None
    if setting != ON:
        return int(setting)
    now = time.gmtime(time.time() if now_s is None else now_s)
    first, last = limits.ANNUAL_REPORT_CAMPAIGN_DAYS
    return now.tm_year if now.tm_mon == 12 and first <= now.tm_mday <= last else None


def year_of(raw: str) -> int | None:
    """The year a path names, or None for what is not one."""
    return int(raw) if raw.isascii() and raw.isdigit() and 1 <= len(raw) <= 4 else None


def _bounds_ms(year: int) -> tuple[int, int]:
    start = calendar.timegm((year, 1, 1, 0, 0, 0)) * 1000
    end = calendar.timegm((year + 1, 1, 1, 0, 0, 0)) * 1000
    return start, end


async def _year_batches(store: Store, uid: int, year: int) -> AsyncIterator[list[Status]]:
    """``uid``'s statuses made in ``year``, newest first, a batch at a time
    (bounded: the newest limits.ANNUAL_REPORT_STATUSES_SCANNED of the
    profile read)."""
    start, end = _bounds_ms(year)
    offset = 0
    while offset < limits.ANNUAL_REPORT_STATUSES_SCANNED:
        count = min(limits.ANNUAL_REPORT_BATCH, limits.ANNUAL_REPORT_STATUSES_SCANNED - offset)
        ids = [
            int(i)
            for i in await store.zrevrange(base_keys.profile(uid), offset, offset + count - 1)
        ]
        if not ids:
            return
        offset += len(ids)
        batch = await read_statuses(store, ids)
        yield [s for s in batch if start <= s.created_at < end]
        if batch and min(s.created_at for s in batch) < start:
            return  # ids grow with time: the rest are older


async def _year_statuses(store: Store, uid: int, year: int) -> list[Status]:
    return [s async for batch in _year_batches(store, uid, year) for s in batch]


def _distributable(status: Status) -> bool:
    """Public or unlisted ("quiet public"): what a top status may be."""
    return status.extra.get("visibility", "public") not in (PRIVATE, DIRECT)


def _tags(status: Status) -> list[str]:
    return status.extra.get("tags", "").split()


def _archetype(statuses: list[Status]) -> str:
    """Mastodon's rule: a lurker below the average; else a booster, a
    pollster, a replier by how boosts, polls and replies to others compare
    with the standalone posts (which include replies to oneself and polls);
    else an oracle."""
    reblogs = sum(1 for s in statuses if s.reblog_of)
    replies = sum(1 for s in statuses if not s.reblog_of and s.replies_to_other)
    standalone = sum(1 for s in statuses if not s.reblog_of and not s.replies_to_other)
    polls = sum(1 for s in statuses if not s.reblog_of and POLL_EXTRA in s.extra)
    if standalone + replies + reblogs < limits.ANNUAL_REPORT_LURKER_BELOW:
        return "lurker"
    if reblogs > standalone * 2:
        return "booster"
    if polls > standalone * 0.1:
        return "pollster"
    if replies > standalone * 2:
        return "replier"
    return "oracle"


async def eligible(store: Store, uid: int, year: int) -> bool:
    """Every source's condition (Mastodon's): a public or unlisted status,
    and a status with a hashtag, in the year (read until both are found)."""
    public = tagged = False
    async for batch in _year_batches(store, uid, year):
        public = public or any(_distributable(s) for s in batch)
        tagged = tagged or any(_tags(s) for s in batch)
        if public and tagged:
            return True
    return False


async def compute(store: Store, uid: int, year: int) -> dict:
    """The report's ``data`` (schema 2) from what is kept now."""
    statuses = await _year_statuses(store, uid, year)
    start, end = _bounds_ms(year)
    # the followers gained in the year who still follow (scores: µs)
    followers = await store.zcount(base_keys.followers(uid), start * 1000, end * 1000 - 1)
    # the most boosted public or unlisted post (not a boost); ties: the newest
    candidates = [s for s in statuses if _distributable(s) and not s.reblog_of]
    counts = await store.batch([("HGET", base_keys.status_counts(s.id), "r") for s in candidates])
    top = max(
        zip(candidates, counts),
        key=lambda pair: (int(pair[1] or 0), pair[0].id),
        default=None,
    )
    used: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for s in statuses:
        for tag in _tags(s):
            used[tag.lower()] += 1
            shown.setdefault(tag.lower(), tag)  # the newest spelling
    tags = [
        {"name": shown[name], "count": n}
        for name, n in sorted(used.items(), key=lambda kv: (-kv[1], kv[0]))
        if n > limits.ANNUAL_REPORT_MIN_TAGGINGS
    ][: limits.ANNUAL_REPORT_TOP_HASHTAGS]
    return {
        "archetype": _archetype(statuses),
        "time_series": [{"month": 12, "statuses": len(statuses), "followers": followers}],
        "top_hashtags": tags,
        "top_statuses": {
            "by_reblogs": str(top[0].id) if top else None,
            "by_favourites": None,
            "by_replies": None,
        },
    }


async def generate(store: Store, uid: int, year: int) -> None:
    """Make ``uid``'s report of ``year`` and keep it (overwriting: idempotent)."""
    data = await compute(store, uid, year)
    record = {"year": year, "schema_version": SCHEMA, "data": data}
    await store.hset(keys.reports(uid), str(year), orjson.dumps(record))
    await store.delete(keys.generating(uid, year))


def _hash(reply) -> dict:
    """An HGETALL's reply as a dict (a flat list from some clients)."""
    if isinstance(reply, dict):
        return reply
    items = list(reply or ())
    return dict(zip(items[::2], items[1::2]))


@dataclass(frozen=True)
class Report:
    uid: int
    year: int
    schema_version: int
    data: dict
    viewed_at: int | None


async def reports(store: Store, uid: int, *, unread_only: bool = False) -> list[Report]:
    """``uid``'s reports, oldest year first; ``unread_only``: those not
    marked read (Mastodon's list shows those)."""
    raw = _hash(await store.hgetall(keys.reports(uid)))
    viewed = _hash(await store.hgetall(keys.viewed(uid)))
    seen = {int(k): int(v) for k, v in viewed.items()}
    out = []
    for year_raw, body in sorted(raw.items(), key=lambda kv: int(kv[0])):
        year = int(year_raw)
        record = orjson.loads(body)
        if unread_only and year in seen:
            continue
        out.append(Report(uid, year, record["schema_version"], record["data"], seen.get(year)))
    return out


async def report(store: Store, uid: int, year: int) -> Report | None:
    body, viewed = await store.batch(
        [("HGET", keys.reports(uid), str(year)), ("HGET", keys.viewed(uid), str(year))]
    )
    if body is None:
        return None
    record = orjson.loads(body)
    return Report(
        uid, year, record["schema_version"], record["data"], int(viewed) if viewed else None
    )


async def state(store: Store, uid: int, year: int | None, setting: str) -> str:
    """Mastodon's state: ``available`` (made), ``generating`` (queued),
    ``eligible`` (the campaign's year and the member's year qualifies) or
    ``ineligible``."""
    if year is None:
        return "ineligible"
    made, queued = await store.batch(
        [("HEXISTS", keys.reports(uid), str(year)), ("EXISTS", keys.generating(uid, year))]
    )
    if made:
        return "available"
    if queued:
        return "generating"
    if year == campaign(setting) and await eligible(store, uid, year):
        return "eligible"
    return "ineligible"


async def request(store: Store, queue: JobQueue, uid: int, year: int | None, setting: str) -> bool:
    """Queue the making of ``uid``'s report of ``year`` if it may be made now
    (the campaign's year, not made yet, eligible) and is not queued already;
    True while it is being made (queued now or before)."""
    if year is None or year != campaign(setting):
        return False
    if await store.hexists(keys.reports(uid), str(year)):
        return False
    if await store.exists(keys.generating(uid, year)):
        return True
    if not await eligible(store, uid, year):
        return False
    # of two racing requests one queues it (SET NX); a job queued twice would
    # only write the same report twice (generate is idempotent)
    if await store.set(
        keys.generating(uid, year), "1", nx=True, ex=limits.ANNUAL_REPORT_GENERATING_S
    ):
        await queue.enqueue(AnnualReportJob(uid=uid, year=year))
    return True


async def mark_read(store: Store, uid: int, year: int | None) -> bool:
    """Mark the report read; False when there is none."""
    if year is None or not await store.hexists(keys.reports(uid), str(year)):
        return False
    await store.hset(keys.viewed(uid), str(year), now_ms())
    return True
