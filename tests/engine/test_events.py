"""The event schema (redpoll.bus.events.StatusEvent): what the engine writes to
the event log is what the stream parses, and nothing else parses."""

from __future__ import annotations

import pytest

from redpoll.bus.events import FIELD, StatusEvent
from redpoll.core import keys
from redpoll.stream.filters import Event


async def test_posts_and_deletes_write_events_the_stream_reads(rp):
    author = await rp.accounts.sign_up("teller")
    status = await rp.statuses.post(author.id, "news at 11", {"location": "52.5,13.4"})
    await rp.statuses.delete(status.id, author.id)
    entries = await rp.store.client.xrange(keys.EVENT_LOG)
    parsed = [StatusEvent.parse(fields[FIELD.encode()]) for _, fields in entries]
    assert [e.kind for e in parsed] == ["update", "delete"]
    assert parsed[0].status == status.to_dict()
    assert parsed[1].status == status.to_dict() | {"deleted": True}
    ev = Event.from_json("1-0", entries[1][1][FIELD.encode()])
    assert (ev.kind, ev.sid, ev.uid, ev.deleted) == ("delete", status.id, author.id, True)


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        b"[1]",
        b'{"event": "boost", "status": {"id": 1, "user_id": 2}}',
        b'{"event": "update"}',
        b'{"event": "update", "status": {"id": "1", "user_id": 2}}',
        b'{"event": "delete", "status": {"id": 1}}',
    ],
)
def test_anything_else_is_refused_with_a_value_error(payload):
    with pytest.raises(ValueError):
        StatusEvent.parse(payload)
    with pytest.raises(ValueError):
        Event.from_json("1-0", payload)
