"""Job records as the queue keeps them: each kind read back as written, and
a record with a field of the wrong type refused (MalformedJob), per kind."""

from __future__ import annotations

import pytest

from redpoll.bus.jobs import EditJob, MalformedJob, MoveJob, decode, encode


def read_back(job):
    return decode({b"j": encode(job).encode()})


def test_an_edit_journal_reads_back_with_its_old_and_new_records():
    job = EditJob(sid=7, author=3, old={"text": "draft"}, new={"text": "edited"}, at=5)
    assert read_back(job) == job


def test_a_move_step_reads_back_and_a_wrong_one_is_refused():
    job = MoveJob(old=4, new=9, phase="mutes", after=12)
    assert read_back(job) == job
    for bad in (
        MoveJob(old="4", new=9),
        MoveJob(old=4, new="9"),  # type: ignore[arg-type]
        MoveJob(old=4, new=9, phase="lists"),
    ):
        with pytest.raises(MalformedJob):
            read_back(bad)
