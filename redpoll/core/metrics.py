"""Prometheus metrics of a redpoll process, through ``prometheus-client``.

What each one means is in docs/operating.md ("Metrics"). Two kinds:

* Counted in the process as things happen (HTTP requests and latency,
  Redis calls, fan-out deliveries, stream clients and drops): the objects
  below, in prometheus-client's default registry.
* Read from Redis when ``/metrics`` is scraped (job queue depth, pending
  jobs, age of the oldest queued job): the same figure from any process,
  so they are not added up across processes (``scrape_collector``).

Several HTTP worker processes (``redpoll serve --workers N``): a scrape
reaches one of them, so ``redpoll serve`` gives them prometheus-client's
multiprocess mode: it sets ``PROMETHEUS_MULTIPROC_DIR`` to a fresh directory
before the workers start, each process writes its values to files there,
and ``/metrics`` in any worker sums counters and histograms over all of
them (live-summed for the stream-clients gauge). With one worker the
values live in the process (the default registry).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST

HTTP_REQUESTS = Counter(
    "redpoll_http_requests",
    "HTTP requests answered, by route template, method and status",
    ["route", "method", "status"],
)
HTTP_LATENCY = Histogram(
    "redpoll_http_request_duration_seconds",
    "Time from request to the end of the response, by route template and method",
    ["route", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
REDIS_CALLS = Counter(
    "redpoll_redis_calls",
    "Round trips to Redis made through the store: a script by name, or a batch of plain commands",
    ["op"],
)
REDIS_ERRORS = Counter(
    "redpoll_redis_errors",
    "Of those, the ones that failed (connection lost, timeout, error reply)",
    ["op"],
)
FANOUT_DELIVERIES = Counter(
    "redpoll_fanout_deliveries",
    "Timelines a status id was written to (deliver) or taken out of (undeliver) by fan-out steps",
    ["action"],
)
STREAM_CLIENTS = Gauge(
    "redpoll_stream_clients",
    "Open stream connections (v1.1, SSE, WebSocket)",
    multiprocess_mode="livesum",
)
STREAM_DROPS = Counter(
    "redpoll_stream_drops", "Stream connections cut off because they fell too far behind"
)
STREAM_EVENTS = Counter("redpoll_stream_deliveries", "Events written to stream connections")
DATABASE_OUTAGES = Counter(
    "redpoll_database_outages", "Times this process found the database unreachable"
)


def multiprocess() -> bool:
    return bool(os.environ.get(MULTIPROC_ENV))


def forget_dead_processes() -> None:
    """Drop the live-gauge files of worker processes that no longer run (a
    crashed worker's open-stream count must not stay in the sum)."""
    directory = Path(os.environ[MULTIPROC_ENV])
    for path in directory.glob("gauge_live*_*.db"):
        try:
            pid = int(path.stem.rsplit("_", 1)[1])
            os.kill(pid, 0)
        except ProcessLookupError:
            mark_process_dead(pid, str(directory))
        except (ValueError, PermissionError, IndexError):
            pass


class _Snapshot:
    """Figures read from Redis for one scrape, shown as gauges."""

    def __init__(self, figures: dict[str, tuple[str, float]]):
        self.figures = figures

    def collect(self) -> Iterable[GaugeMetricFamily]:
        for name, (text, value) in self.figures.items():
            yield GaugeMetricFamily(name, text, value=value)


def render(read_from_redis: dict[str, tuple[str, float]]) -> bytes:
    """The text exposition for one scrape: this process's (or, in
    multiprocess mode, every worker's) metrics, then the figures read from
    Redis for this scrape."""
    if multiprocess():
        forget_dead_processes()
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    snapshot = CollectorRegistry()
    snapshot.register(_Snapshot(read_from_redis))
    return generate_latest(registry) + generate_latest(snapshot)
