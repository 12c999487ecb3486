"""Job records as the queue keeps them: each kind read back as written, and
a record with a field of the wrong type refused (MalformedJob), per kind."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import ClassVar

import pytest
from support import imports as layers

from redpoll.bus.queue import KINDS, Job, MalformedJob, decode, encode
from redpoll.engine.worker import HANDLERS
from redpoll.federation.jobs import MoveJob
from redpoll.posting.jobs import EditJob, PostJob


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


def test_every_integer_field_of_every_kind_refuses_a_string():
    """The codec checks each record's fields by their declared types, so a
    kind added in its package is checked without a list to keep in step."""
    for cls in KINDS.values():
        for f in dataclasses.fields(cls):
            if f.type != "int":
                continue
            values = {g.name: 1 for g in dataclasses.fields(cls) if g.type == "int"}
            values.update(
                {g.name: "x" for g in dataclasses.fields(cls) if g.type == "str"},
                **{f.name: "1"},
            )
            if cls is MoveJob:
                values["phase"] = "blocks"
            raw = json.dumps({"kind": cls.kind, **values})
            with pytest.raises(MalformedJob, match=f.name):
                decode({b"j": raw.encode()})


def test_each_kind_lives_in_a_feature_package_with_its_handler_in_that_package_or_above():
    """A job is its record in a package's jobs.py and one line in a
    package's handlers.TABLE: the same package, or (when the handler needs
    a package above the one that queues the job) a package that imports
    the record's."""
    for cls, handler in HANDLERS.items():
        record_pkg = cls.__module__.rsplit(".", 1)
        handler_pkg = handler.__module__.rsplit(".", 1)
        assert record_pkg[1] == "jobs" and handler_pkg[1] == "handlers", (cls, handler)
        if record_pkg[0] != handler_pkg[0]:
            floors = layers.floors()
            here, there = record_pkg[0].split(".")[1], handler_pkg[0].split(".")[1]
            assert floors[there] > floors[here], (cls, handler)


def test_a_kind_declared_twice_is_refused():
    with pytest.raises(TypeError, match="declared"):

        @dataclass(frozen=True)
        class AnotherPost(Job):  # noqa: F841 - its declaration is the test
            kind: ClassVar[str] = "post"
            uid: int = 0

            def subject(self) -> str:
                return f"user:{self.uid}"

    assert KINDS["post"] is PostJob
