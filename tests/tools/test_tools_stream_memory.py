"""The stream memory probe (redpoll/tools/stream_memory.py) runs end to end:
real clients of each kind connected to the app under uvicorn in this
process, traced bytes per connection attributed to source files."""

from __future__ import annotations

import asyncio

import pytest

from redpoll.tools import stream_memory

pytestmark = pytest.mark.timeout(240)


@pytest.mark.parametrize("kind", ["v1", "sse", "ws"])
async def test_stream_memory_probe_attributes_connection_memory(kind):
    res = await asyncio.to_thread(stream_memory.run, kind, 40)
    assert res["kind"] == kind and res["connections"] == 40
    # a connection holds at least uvicorn's protocol and our subscriber
    assert res["bytes_per_connection"] > 2000
    # a started v1.1 / SSE stream and an accepted WebSocket are handed off to
    # the connection (redpoll/stream/handoff.py): uvicorn's request state is gone
    uvicorn = sum(
        size for name, size in res["by_file"] if "uvicorn" in name or "websockets" in name
    )
    assert uvicorn < 0.1 * res["bytes_per_connection"], res["by_file"]
    assert sum(size for _, size in res["by_file"]) <= res["bytes_per_connection"] * 1.5


def test_stream_memory_probe_refuses_unknown_kind():
    with pytest.raises(ValueError):
        stream_memory.run("carrier-pigeon", 1)
