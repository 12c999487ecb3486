"""Scheduled statuses (redpoll.scheduling) through the engine, on both
topologies: the 5-minute rule, owner-only access, rescheduling and
cancelling (record and job together), the uploads held for one, the limits,
and posting once: by two workers racing, by a run that died after posting,
and by a real ``redpoll worker`` SIGKILLed while the jobs run.

Nothing waits five minutes: due jobs are moved onto the streams with
``queue.promote_due(now_ms)`` given a time past theirs."""

from __future__ import annotations

import asyncio
import time

import pytest
from support.cli import WorkerProcess, wait_for  # noqa: F401
from support.media import small_png  # noqa: F401

from redpoll.core import limits
from redpoll.core.errors import RedpollError, ValidationError
from redpoll.media import uploads
from redpoll.moderation import moderation
from redpoll.scheduling import scheduled
from redpoll.scheduling.jobs import ScheduledStatusJob
from redpoll.scheduling.scheduled import NotScheduled, ScheduleRefused

MIN = 60_000


def now() -> int:
    return int(time.time() * 1000)


async def texts(rp, uid) -> list[str]:
    return [s.text for s in await rp.timelines.profile(uid, limit=40)]


async def post_due(rp, at: int) -> int:
    """Move every job due by ``at`` onto the streams and run them."""
    moved = await rp.queue.promote_due(at)
    await rp.drain()
    return moved


async def test_a_scheduled_status_is_posted_at_its_time_once_and_leaves_the_list(rp):
    alice = await rp.accounts.sign_up("sched_alice")
    fan = await rp.accounts.sign_up("sched_fan")
    await rp.relations.follow(fan.id, alice.id)
    at = now() + 10 * MIN
    s = await rp.statuses.schedule(alice.id, at, "later, @sched_fan", {"spoiler_text": "cw"})
    assert s.params["text"] == "later, @sched_fan" and s.params["spoiler_text"] == "cw"
    assert s.params["visibility"] == "public" and s.params["poll"] is None
    assert [x.id for x in await rp.statuses.scheduled(alice.id)] == [s.id]
    assert await rp.queue.due_at(s.job()) == at
    assert await post_due(rp, at - 1) == 0  # not yet due: nothing posted
    assert await texts(rp, alice.id) == []
    before = now()
    assert await post_due(rp, at + 1) == 1
    posted = await rp.timelines.profile(alice.id)
    assert [p.text for p in posted] == ["later, @sched_fan"]
    status = posted[0]
    assert status.created_at >= before  # the time it was posted
    assert status.extra.get("spoiler_text") == "cw"
    assert await rp.statuses.scheduled(alice.id) == []
    with pytest.raises(NotScheduled):
        await rp.statuses.scheduled_one(alice.id, s.id)
    # a normal status: in the follower's home, and the mention notified
    assert status.id in [x.id for x in await rp.timelines.home(fan.id)]
    notes = await rp.notifications.listed(fan.id)
    assert any(n.status == status.id and n.type == "mention" for n in notes)
    # the job again (at-least-once): nothing more
    await scheduled.publish(rp.store, rp.queue, rp.settings, s.job())
    assert len(await texts(rp, alice.id)) == 1


async def test_the_five_minute_rule_for_scheduling_and_rescheduling(rp):
    alice = await rp.accounts.sign_up("sched_soon")
    for at in (now() - MIN, now() + 4 * MIN):
        with pytest.raises(ScheduleRefused) as refused:
            await rp.statuses.schedule(alice.id, at, "too soon")
        assert refused.value.message == "Scheduled at must be at least 5 minutes in the future"
    assert await rp.statuses.scheduled(alice.id) == []
    s = await rp.statuses.schedule(alice.id, now() + 6 * MIN, "fine")
    with pytest.raises(ScheduleRefused):
        await rp.statuses.reschedule(alice.id, s.id, now() + 2 * MIN)
    assert (await rp.statuses.scheduled_one(alice.id, s.id)).at == s.at
    assert await rp.queue.due_at(s.job()) == s.at


async def test_only_the_owner_sees_moves_or_cancels_a_scheduled_status(rp):
    alice = await rp.accounts.sign_up("sched_owner")
    bob = await rp.accounts.sign_up("sched_other")
    s = await rp.statuses.schedule(alice.id, now() + 10 * MIN, "mine")
    with pytest.raises(NotScheduled):
        await rp.statuses.scheduled_one(bob.id, s.id)
    with pytest.raises(NotScheduled):
        await rp.statuses.reschedule(bob.id, s.id, now() + 20 * MIN)
    with pytest.raises(NotScheduled):
        await rp.statuses.cancel_scheduled(bob.id, s.id)
    assert await rp.statuses.scheduled(bob.id) == []
    assert (await rp.statuses.scheduled_one(alice.id, s.id)).at == s.at
    assert await rp.queue.due_at(s.job()) == s.at


async def test_rescheduling_moves_the_job_and_cancelling_removes_it(rp):
    alice = await rp.accounts.sign_up("sched_move")
    first = await rp.statuses.schedule(alice.id, now() + 10 * MIN, "moved")
    second = await rp.statuses.schedule(alice.id, now() + 10 * MIN, "cancelled")
    later = now() + 60 * MIN
    moved = await rp.statuses.reschedule(alice.id, first.id, later)
    assert moved.at == later and (await rp.statuses.scheduled_one(alice.id, first.id)).at == later
    assert await rp.queue.due_at(first.job()) == later
    await rp.statuses.cancel_scheduled(alice.id, second.id)
    assert await rp.queue.due_at(second.job()) is None
    with pytest.raises(NotScheduled):
        await rp.statuses.cancel_scheduled(alice.id, second.id)
    assert [s.id for s in await rp.statuses.scheduled(alice.id)] == [first.id]
    await post_due(rp, now() + 30 * MIN)  # the old time: nothing is due
    assert await texts(rp, alice.id) == []
    await post_due(rp, later + 1)
    assert await texts(rp, alice.id) == ["moved"]
    # a job that fires for a cancelled status does nothing
    await scheduled.publish(rp.store, rp.queue, rp.settings, second.job())
    assert await texts(rp, alice.id) == ["moved"]


async def test_pages_of_scheduled_statuses_by_id(rp):
    alice = await rp.accounts.sign_up("sched_pages")
    made = [await rp.statuses.schedule(alice.id, now() + (10 + i) * MIN, f"n{i}") for i in range(5)]
    ids = [s.id for s in made][::-1]
    assert [s.id for s in await rp.statuses.scheduled(alice.id, limit=2)] == ids[:2]
    assert [s.id for s in await rp.statuses.scheduled(alice.id, max_id=ids[1])] == ids[2:]
    assert [s.id for s in await rp.statuses.scheduled(alice.id, min_id=ids[4], limit=2)] == ids[2:4]
    assert [s.id for s in await rp.statuses.scheduled(alice.id, since_id=ids[2])] == ids[:2]


async def test_limits_per_day_and_in_all(rp, monkeypatch):
    alice = await rp.accounts.sign_up("sched_limits")
    day = (now() // 86_400_000 + 2) * 86_400_000  # the day after tomorrow, UTC
    for i in range(limits.SCHEDULED_STATUSES_PER_DAY):
        await rp.statuses.schedule(alice.id, day + i * MIN, f"d{i}")
    with pytest.raises(ScheduleRefused) as refused:
        await rp.statuses.schedule(alice.id, day + 3_600_000, "one too many")
    assert "for today" in refused.value.message
    other = await rp.statuses.schedule(alice.id, day + 86_400_000 + MIN, "next day")
    with pytest.raises(ScheduleRefused):  # nor moved into the full day
        await rp.statuses.reschedule(alice.id, other.id, day + 7_200_000)
    # moving one within its own day is fine
    first = (await rp.statuses.scheduled(alice.id, limit=40))[-1]
    await rp.statuses.reschedule(alice.id, first.id, day + 10_800_000)
    monkeypatch.setattr(limits, "SCHEDULED_STATUSES_MAX", 26)
    with pytest.raises(ScheduleRefused) as refused:
        await rp.statuses.schedule(alice.id, day + 3 * 86_400_000, "over the total")
    assert "limit of 26 scheduled posts" in refused.value.message
    assert len(await rp.statuses.scheduled(alice.id, limit=40)) == 26


async def test_uploads_are_held_for_a_scheduled_status_and_released_when_cancelled(rp):
    alice = await rp.accounts.sign_up("sched_media")
    kept = await rp.media.upload(alice.id, small_png())
    dropped = await rp.media.upload(alice.id, small_png())
    first = await rp.statuses.schedule(alice.id, now() + 10 * MIN, "", media=[kept.id])
    second = await rp.statuses.schedule(alice.id, now() + 10 * MIN, "with", media=[dropped.id])
    assert first.params["media_ids"] == [str(kept.id)]
    # not attachable elsewhere, nor to another scheduled status
    with pytest.raises(ValidationError):
        await rp.statuses.post(alice.id, "steal", media=[kept.id])
    with pytest.raises(ValidationError):
        await rp.statuses.schedule(alice.id, now() + 10 * MIN, "steal", media=[kept.id])
    # not swept as never attached, however old
    far = now() + 10 * 86_400_000
    await rp.media.sweep(far)
    await rp.media.attachment(alice.id, kept.id)
    await rp.media.attachment(alice.id, dropped.id)
    # cancelled: released (attachable again, and swept once old)
    await rp.statuses.cancel_scheduled(alice.id, second.id)
    await rp.media.sweep(far)
    with pytest.raises(RedpollError):
        await rp.media.attachment(alice.id, dropped.id)
    # posted: attached to the status
    await post_due(rp, now() + 11 * MIN)
    posted = await rp.timelines.profile(alice.id)
    assert len(posted) == 1 and str(kept.id) in posted[0].extra["media"]
    with pytest.raises(RedpollError):  # attached: no longer an upload of the media API
        await rp.media.attachment(alice.id, kept.id)


async def test_an_upload_held_by_a_call_cut_short_is_released_by_the_job(rp):
    """The call queued the job soon and held the upload, then died before
    the record: the job runs, finds no record and releases it."""
    alice = await rp.accounts.sign_up("sched_cut")
    upload = await rp.media.upload(alice.id, small_png())
    sid = 999_999
    job = ScheduledStatusJob(uid=alice.id, id=sid, media=(upload.id,))
    await rp.queue.enqueue_at(job, now() + limits.SCHEDULED_SETTLE_MS)
    await uploads.hold(rp.store, alice.id, [upload.id], sid)
    with pytest.raises(ValidationError):
        await rp.statuses.post(alice.id, "held", media=[upload.id])
    await post_due(rp, now() + limits.SCHEDULED_SETTLE_MS + 1)
    assert (await rp.statuses.post(alice.id, "free again", media=[upload.id])).text == "free again"


async def test_nothing_is_posted_for_a_suspended_author(rp):
    alice = await rp.accounts.sign_up("sched_susp")
    s = await rp.statuses.schedule(alice.id, now() + 10 * MIN, "never")
    await moderation.suspend(rp.store, "sched_susp")
    await post_due(rp, now() + 11 * MIN)
    assert await texts(rp, alice.id) == []
    assert await rp.statuses.scheduled(alice.id) == []
    assert s.id


async def test_two_workers_racing_post_each_once(rp):
    alice = await rp.accounts.sign_up("sched_race")
    made = [
        await rp.statuses.schedule(alice.id, now() + 10 * MIN + i, f"race {i}") for i in range(20)
    ]
    # the same job run by two handlers at once, twice over
    await asyncio.gather(
        *(
            scheduled.publish(rp.store, rp.queue, rp.settings, s.job())
            for s in made[:5]
            for _ in range(2)
        )
    )
    await rp.queue.promote_due(now() + 11 * MIN)
    stop = asyncio.Event()
    workers = [asyncio.create_task(rp.worker(f"race{n}").run(stop)) for n in range(2)]
    try:
        await wait_for(lambda: _none_left(rp, alice.id), "every scheduled status posted", 60)
        await wait_for(lambda: _queue_empty(rp), "the queue to empty", 60)
    finally:
        stop.set()
        await asyncio.gather(*workers)
    got = await texts(rp, alice.id)
    assert sorted(got) == sorted(f"race {i}" for i in range(20))


async def _none_left(rp, uid) -> bool:
    return await rp.statuses.scheduled(uid) == []


async def _queue_empty(rp) -> bool:
    return await rp.queue.depth() == 0


async def test_a_run_that_died_after_posting_is_finished_by_the_next_without_a_second(rp):
    alice = await rp.accounts.sign_up("sched_died")
    s = await rp.statuses.schedule(alice.id, now() + 10 * MIN, "once")
    # what the dead run did: the post under the scheduled status's key, no removal
    first = await rp.statuses.post_once(alice.id, f"scheduled:{s.id}", "once")
    assert (await rp.statuses.scheduled_one(alice.id, s.id)).id == s.id
    await post_due(rp, now() + 11 * MIN)
    assert [p.id for p in await rp.timelines.profile(alice.id)] == [first.id]
    assert await rp.statuses.scheduled(alice.id) == []


async def test_a_worker_sigkilled_while_posting_leaves_each_posted_once(rp, server, tmp_path):
    url, cluster, _ = server
    alice = await rp.accounts.sign_up("sched_kill")
    fans = [await rp.accounts.sign_up(f"sched_kf{i}") for i in range(30)]
    for fan in fans:
        await rp.relations.follow(fan.id, alice.id)
    await rp.drain()
    n = 60
    for i in range(n):  # (at most 25 a day)
        await rp.statuses.schedule(alice.id, now() + 10 * MIN + i // 20 * 86_400_000, f"kill {i}")
    await rp.queue.promote_due(now() + 5 * 86_400_000)
    first = WorkerProcess(url, cluster, tmp_path / "w1.log", batch=2)
    try:

        async def some_posted() -> bool:
            return len(await texts(rp, alice.id)) >= 3

        await wait_for(some_posted, "the first worker to post some", 60, detail=None)
        first.kill()
    finally:
        first.close()
    assert len(await rp.statuses.scheduled(alice.id, limit=40)) > 0, "the kill came too late"
    second = WorkerProcess(url, cluster, tmp_path / "w2.log", batch=2)
    try:
        await wait_for(lambda: _none_left(rp, alice.id), "the rest posted", 120)
        await wait_for(lambda: _queue_empty(rp), "the queue to empty", 120)
    finally:
        second.close()
    got = [s.text for s in await rp.timelines.profile(alice.id, limit=40)]
    got += [
        s.text
        for s in await rp.timelines.profile(
            alice.id, limit=40, max_id=(await rp.timelines.profile(alice.id, limit=40))[-1].id
        )
    ]
    assert sorted(got) == sorted(f"kill {i}" for i in range(n))
