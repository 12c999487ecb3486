"""Where a stream connection's memory goes (docs/decisions.md, "Streams at
10,000 connections").

    python -m redpoll.tools.stream_memory v1|sse|ws [N]

Runs the API app (streams mounted) under uvicorn in THIS process with
tracemalloc on, a private embedded Valkey, and N clients of one kind from a
load-generator process (the stream bench's, ``stream_bench._worker``); once
they are connected, compares a snapshot with one taken before and prints the
traced bytes per connection, by source file and by allocation site.
tracemalloc sees Python allocations only (not uvloop's C state, nor the
kernel's socket buffers): the RSS figure of ``redpoll bench --stream`` is
the one the issue's target is about.
"""

from __future__ import annotations

import asyncio
import gc
import json
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import tracemalloc

from . import stream_bench as sb


async def _measure(kind: str, n: int, url: str, top: int) -> dict:
    import uvicorn

    from ..core import limits
    from ..core.settings import Settings
    from ..engine.engine import Redpoll
    from ..stream.handoff import StreamHttpProtocol, StreamWebSocketProtocol

    # as `redpoll serve` runs it: streams handed off to the connection once started
    config = uvicorn.Config(
        "redpoll.api.app:create_app",
        factory=True,
        host="127.0.0.1",
        port=0,
        http=StreamHttpProtocol,
        ws=StreamWebSocketProtocol,
        ws_per_message_deflate=False,
        log_level="warning",
        lifespan="on",
        access_log=False,
        ws_ping_interval=limits.WS_PING_INTERVAL_S,
        ws_ping_timeout=limits.WS_PING_INTERVAL_S,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    proc = None
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        rp = await Redpoll.open(Settings(redis_url=url))
        try:
            _, specs = await sb._seed(rp, n * 20)  # 12/20 v1.1, 4/20 SSE, 4/20 WebSocket
        finally:
            await rp.close()
        specs = [s for s in specs if s["kind"] == kind][:n]
        await asyncio.sleep(0.5)
        gc.collect()
        tracemalloc.start(25)
        before = tracemalloc.take_snapshot()
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=sb._worker, args=(port, specs, child), daemon=True)
        proc.start()
        report = await asyncio.to_thread(parent.recv)
        if report[3]:
            raise RuntimeError(f"{report[3]} clients could not connect: {report[2]}")
        await asyncio.sleep(1.0)
        gc.collect()
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        total = sum(d.size_diff for d in after.compare_to(before, "filename"))
        files = [
            (d.traceback[0].filename, round(d.size_diff / n))
            for d in after.compare_to(before, "filename")[:top]
        ]
        sites = [
            (f"{d.traceback[0].filename}:{d.traceback[0].lineno}", round(d.size_diff / n))
            for d in after.compare_to(before, "lineno")[:top]
        ]
        return {
            "kind": kind,
            "connections": len(specs),
            "bytes_per_connection": round(total / n),
            "by_file": files,
            "by_line": sites,
        }
    finally:
        if proc is not None:
            proc.kill()
        server.should_exit = True
        await task


def run(kind: str = "v1", n: int = 1000, top: int = 12) -> dict:
    """Traced bytes per connection of ``n`` clients of ``kind`` (v1, sse, ws)."""
    from ..storage.server import EmbeddedServer

    if kind not in ("v1", "sse", "ws"):
        raise ValueError("kind is v1, sse or ws")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    db = EmbeddedServer(tempfile.mkdtemp(prefix="redpoll-stream-memory-"))
    db.start()
    saved = dict(os.environ)
    # the app reads its settings from the environment, as under `redpoll serve`
    os.environ.update(
        REDIS_URL=db.url,
        REDPOLL_CLUSTER="0",
        REDPOLL_SERVE_JOBS="0",
        REDPOLL_ACCESS_LOG="0",
        REDPOLL_STREAM_CONNECTIONS_PER_IP="off",
    )
    try:
        return asyncio.run(_measure(kind, n, db.url, top))
    finally:
        os.environ.clear()
        os.environ.update(saved)
        db.stop()


if __name__ == "__main__":
    print(
        json.dumps(
            run(
                sys.argv[1] if len(sys.argv) > 1 else "v1",
                int(sys.argv[2]) if len(sys.argv) > 2 else 1000,
            ),
            indent=2,
        )
    )
