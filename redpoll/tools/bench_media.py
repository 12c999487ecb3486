"""``redpoll bench --media``: how long a 4 MB JPEG takes to be ready, and
whether uploads stall other requests: the p99 of GET /api/v1/instance while
20 uploads run at once, against its p99 with nothing else going on.

It starts its own embedded server (or uses ``redis_url``) and its own
``redpoll serve`` (one HTTP process per core, as serve runs by default;
rate limits and access logs off; media in a temporary directory). The
uploads go from this process (httpx); the instance requests come from a
child process of their own, one at a time on one kept-alive connection, so
that neither side's client work delays the other's clock. Bounded: a few
single uploads, one burst of 20, and the probe runs only while the burst does.
Targets: ready in < 1 s; instance p99 < 50 ms during the uploads.
"""

from __future__ import annotations

import asyncio
import http.client
import io
import logging
import multiprocessing
import statistics
import tempfile
import time
from typing import Any

import httpx
from PIL import Image

from ..accounts import auth
from ..api.process import ServeProcess
from ..core.settings import Settings
from ..engine.engine import Redpoll
from ..storage.server import EmbeddedServer

TARGET_READY_MS = 1000
TARGET_INSTANCE_P99_MS = 50
JPEG_BYTES = 4 * 1024 * 1024


def photo_jpeg(target: int = JPEG_BYTES) -> bytes:
    """A JPEG of about ``target`` bytes that compresses like a photo (12 MP
    of smooth colour with grain), its quality picked to land near the size."""
    w, h = 4000, 3000
    base = Image.linear_gradient("L").resize((w, h))
    grain = Image.effect_noise((w, h), 40)
    img = Image.merge("RGB", (base, grain, base.transpose(Image.Transpose.FLIP_LEFT_RIGHT)))
    best = b""
    for quality in (95, 92, 90, 87, 85, 80, 75, 70, 60):
        out = io.BytesIO()
        img.save(out, "JPEG", quality=quality)
        best = out.getvalue()
        if len(best) <= target * 1.1:
            break
    return best


def _probe(host: str, port: int, stop_after_s: float, pipe) -> None:
    """GET /api/v1/instance one at a time until told to stop (or the time
    bound); the latencies (ms) sent back."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    latencies: list[float] = []
    deadline = time.monotonic() + stop_after_s
    while time.monotonic() < deadline and not pipe.poll():
        start = time.perf_counter()
        conn.request("GET", "/api/v1/instance")
        response = conn.getresponse()
        response.read()
        latencies.append((time.perf_counter() - start) * 1000)
    pipe.send(latencies)
    conn.close()


class Probe:
    def __init__(self, host: str, port: int, stop_after_s: float = 120):
        ctx = multiprocessing.get_context("spawn")
        self.mine, theirs = ctx.Pipe()
        self.process = ctx.Process(
            target=_probe, args=(host, port, stop_after_s, theirs), daemon=True
        )
        self.process.start()

    def stop(self) -> list[float]:
        self.mine.send("stop")
        latencies = self.mine.recv()
        self.process.join(10)
        return latencies


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else 0.0


async def _upload_ready(http: httpx.AsyncClient, token: str, data: bytes) -> float:
    """POST /api/v2/media, then GET /api/v1/media/:id until it answers 200: ms."""
    headers = {"Authorization": f"Bearer {token}"}
    start = time.perf_counter()
    r = await http.post(
        "/api/v2/media", headers=headers, files={"file": ("photo.jpg", data, "image/jpeg")}
    )
    r.raise_for_status()
    mid = r.json()["id"]
    while r.status_code != 200 or r.json().get("url") is None:
        await asyncio.sleep(0.01)
        r = await http.get(f"/api/v1/media/{mid}", headers=headers)
        if r.status_code not in (200, 206):
            raise RuntimeError(f"upload failed: {r.status_code} {r.text[:200]}")
    return (time.perf_counter() - start) * 1000


async def run_media_bench(
    *,
    redis_url: str | None = None,
    cluster: bool = False,
    singles: int = 5,
    burst: int = 20,
    workers: int | None = None,
) -> dict[str, Any]:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per poll
    tmp = tempfile.TemporaryDirectory(prefix="redpoll-bench-media-")
    embedded = None
    try:
        if redis_url is None:
            embedded = EmbeddedServer(tmp.name + "/data").start()
            redis_url = embedded.url
        rp = await Redpoll.open(Settings(redis_url=redis_url, cluster=cluster))
        try:
            app, _ = await auth.create_app(
                rp.store, "bench-media", "urn:ietf:wg:oauth:2.0:oob", "read write"
            )
            users = [
                await rp.accounts.sign_up(f"media_bench_{i}_{int(time.time())}") for i in range(4)
            ]
            tokens = [
                (await auth.issue_token(rp.store, app, u.id, ("read", "write")))[0] for u in users
            ]
        finally:
            await rp.close()
        data = await asyncio.to_thread(photo_jpeg)
        env = {
            "REDIS_URL": redis_url,
            "REDPOLL_CLUSTER": "1" if cluster else "0",
            "REDPOLL_RATE_TOKEN": "off",
            "REDPOLL_RATE_IP": "off",
            "REDPOLL_RATE_IP_TOKENS": "off",
            "REDPOLL_MEDIA_DIR": tmp.name + "/media",
        }
        args = ["--no-access-log", "--log-level", "warning"]
        if workers:
            args += ["--workers", str(workers)]
        with ServeProcess(env, args=args, workers=None) as srv:
            host, port = srv.url.removeprefix("http://").rsplit(":", 1)
            async with httpx.AsyncClient(base_url=srv.url, timeout=120) as http:
                await _upload_ready(http, tokens[0], data)  # warm up
                ready = [await _upload_ready(http, tokens[0], data) for _ in range(singles)]
                idle = Probe(host, int(port))
                await asyncio.sleep(3)
                quiet = idle.stop()
                busy = Probe(host, int(port))
                start = time.perf_counter()
                burst_ready = await asyncio.gather(
                    *(_upload_ready(http, tokens[i % len(tokens)], data) for i in range(burst))
                )
                took = time.perf_counter() - start
                during = busy.stop()
        return {
            "jpeg_bytes": len(data),
            "upload_ready_ms": {
                "median": round(statistics.median(ready), 1),
                "max": round(max(ready), 1),
                "runs": singles,
            },
            "instance_ms_idle": {
                "p50": _p(quiet, 0.5),
                "p99": _p(quiet, 0.99),
                "requests": len(quiet),
            },
            "instance_ms_during_uploads": {
                "p50": _p(during, 0.5),
                "p99": _p(during, 0.99),
                "max": _p(during, 1.0),
                "requests": len(during),
            },
            "burst": {
                "uploads": burst,
                "seconds": round(took, 2),
                "ready_ms_median": round(statistics.median(burst_ready), 1),
                "ready_ms_max": round(max(burst_ready), 1),
            },
        }
    finally:
        if embedded is not None:
            embedded.stop()
        tmp.cleanup()


def format_report(res: dict) -> str:
    ready = res["upload_ready_ms"]["median"]
    p99 = res["instance_ms_during_uploads"]["p99"]
    lines = [
        f"{'media: 4 MB JPEG ready (v2, median ms)':<46}{ready:>10}  target < {TARGET_READY_MS}"
        f"  {'PASS' if ready < TARGET_READY_MS else 'MISS'}",
        f"{'media: /api/v1/instance p99 ms, 20 uploads':<46}{p99:>10}  target < "
        f"{TARGET_INSTANCE_P99_MS}  {'PASS' if p99 < TARGET_INSTANCE_P99_MS else 'MISS'}",
        f"media: JPEG {res['jpeg_bytes']:,} bytes; ready max {res['upload_ready_ms']['max']} ms; "
        f"instance idle p50/p99 {res['instance_ms_idle']['p50']}/{res['instance_ms_idle']['p99']}"
        f" ms, during p50/max {res['instance_ms_during_uploads']['p50']}/"
        f"{res['instance_ms_during_uploads']['max']} ms "
        f"({res['instance_ms_during_uploads']['requests']} requests); 20 uploads in "
        f"{res['burst']['seconds']} s (each ready in {res['burst']['ready_ms_median']} ms "
        f"median, {res['burst']['ready_ms_max']} max)",
    ]
    return "\n".join(lines)
