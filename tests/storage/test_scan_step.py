"""topology.scan_step: a walk over the keys matching a pattern that stops
and goes on from a cursor, one bounded SCAN call at a time, through every
master of a cluster."""

from __future__ import annotations

from redpoll.core import keys
from redpoll.storage import topology


async def test_a_walk_in_steps_finds_every_key_on_every_master(rp):
    store = rp.store
    made = {keys.status_counts(sid).encode() for sid in range(1, 301)}
    await store.batch([("HSET", k.decode(), "f", 1) for k in made])
    await store.set(keys.STATUS_SEQ, 300)  # (another family: not matched)
    found, cursor, steps = set(), "", 0
    while True:
        cursor, page = await topology.of(store).scan_step(
            keys.status_counts(0).replace("0", "*"), cursor, 20
        )
        found |= set(page)
        steps += 1
        if cursor is None:
            break
        assert isinstance(cursor, str) and cursor
    assert found == made
    assert steps > 300 // 20 / 2  # bounded: many calls, not one
