"""/health, /ready and /metrics of a real ``redpoll serve``.

Metrics are read with prometheus-client's own parser. With several HTTP
worker processes a scrape reaches one of them and must still count every
process's requests (prometheus-client multiprocess mode, set up by serve).
"""

from __future__ import annotations

import time

import httpx
from prometheus_client.parser import text_string_to_metric_families
from support.mastodon import serve_env  # noqa: F401
from support.rest import bearer, make_app, sign_up  # noqa: F401

from redpoll.api.process import ServeProcess

#: the scraper's token (REDPOLL_METRICS_TOKEN) of every serve here
METRICS_TOKEN = "test-metrics-token-0123456789"


def scrape(http: httpx.Client) -> dict[tuple[str, tuple], float]:
    r = http.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain"), r.text
    samples = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_health_ready_and_metrics(server):
    env = serve_env(server, REDPOLL_METRICS_TOKEN=METRICS_TOKEN)
    with ServeProcess(env) as srv, httpx.Client(base_url=srv.url, timeout=30) as http:
        health = http.get("/health")
        assert health.status_code == 200 and health.json() == {
            "status": "ok",
            "database": "reachable",
        }
        # The shared database may hold jobs an earlier test's serve left
        # queued: this serve's workers take them, and it is ready once they flow.
        deadline = time.monotonic() + 60
        ready = http.get("/ready")
        while ready.status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
            ready = http.get("/ready")
        assert ready.status_code == 200, ready.text
        body = ready.json()
        assert body["ready"] is True and body["problems"] == [] and body["stream"] == "connected"
        assert set(body["jobs"]) == {"queued", "pending", "oldest_age_s", "parked"}

        app = make_app(http)
        author, author_id = sign_up(http, app)
        fans = [sign_up(http, app)[0] for _ in range(3)]
        for fan in fans:
            assert (
                http.post(f"/api/v1/accounts/{author_id}/follow", headers=bearer(fan)).status_code
                == 200
            )
        before = scrape(http)
        with http.stream(
            "GET", "/1.1/statuses/sample.json", params={"identifier": "m", "percent": "100"}
        ) as stream:
            assert stream.status_code == 200
            for _ in range(3):
                assert (
                    http.post(
                        "/api/v1/statuses", headers=bearer(author), data={"status": "counted"}
                    ).status_code
                    == 200
                )
            assert http.get("/api/v1/statuses/0").status_code == 404
            time.sleep(2.5)  # the stream figures are sampled every second
            during = scrape(http)
        assert value(during, "redpoll_stream_clients") >= 1
        assert (
            value(
                during,
                "redpoll_http_requests_total",
                route="/api/v1/statuses",
                method="POST",
                status="200",
            )
            - value(
                before,
                "redpoll_http_requests_total",
                route="/api/v1/statuses",
                method="POST",
                status="200",
            )
            == 3
        )
        assert (
            value(
                during,
                "redpoll_http_requests_total",
                route="/api/v1/statuses/{id}",
                method="GET",
                status="404",
            )
            >= 1
        )
        assert (
            value(
                during,
                "redpoll_http_request_duration_seconds_count",
                route="/api/v1/statuses",
                method="POST",
            )
            >= 3
        )
        calls = {
            dict(labels)["op"]: v
            for (name, labels), v in during.items()
            if name == "redpoll_redis_calls_total"
        }
        assert calls.get("record_post", 0) >= 3 and calls.get("batch", 0) > 0, calls
        # fan-out: the author's home, public and 3 fans per post, once the jobs ran
        deadline = time.monotonic() + 30
        while value(scrape(http), "redpoll_fanout_deliveries_total", action="deliver") < 3 * 5:
            assert time.monotonic() < deadline, scrape(http)
            time.sleep(0.2)
        after = scrape(http)
        assert value(during, "redpoll_stream_deliveries_total") >= 3
        for name in (
            "redpoll_jobs_queued",
            "redpoll_jobs_pending",
            "redpoll_jobs_oldest_age_seconds",
            "redpoll_jobs_parked",
        ):
            assert (name, ()) in after, name
        assert value(after, "redpoll_database_up") == 1


def test_ready_says_when_jobs_do_not_flow(server):
    """No job worker runs (--no-jobs): queued fan-out ages and /ready says so."""
    env = serve_env(
        server,
        REDPOLL_FANOUT_BATCH="1",
        REDPOLL_READY_JOB_AGE_S="1",
        REDPOLL_METRICS_TOKEN=METRICS_TOKEN,
    )
    with (
        ServeProcess(env, args=["--no-jobs"]) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as http,
    ):
        app = make_app(http)
        author, author_id = sign_up(http, app)
        for _ in range(2):
            fan, _ = sign_up(http, app)
            assert (
                http.post(f"/api/v1/accounts/{author_id}/follow", headers=bearer(fan)).status_code
                == 200
            )
        assert (
            http.post(
                "/api/v1/statuses", headers=bearer(author), data={"status": "stuck"}
            ).status_code
            == 200
        )
        time.sleep(2.2)
        ready = http.get("/ready")
        assert ready.status_code == 503 and ready.headers["retry-after"] == "1", ready.text
        assert any("jobs not flowing" in p for p in ready.json()["problems"])
        assert ready.json()["jobs"]["queued"] >= 1
        assert scrape(http)[("redpoll_jobs_oldest_age_seconds", ())] > 1
    # leave nothing queued for the next tests
    import asyncio

    from redpoll import Redpoll, Settings

    async def drain():
        url, cluster, _ = server
        rp = await Redpoll.open(Settings(redis_url=url, cluster=cluster, job_claim_ms=500))
        try:
            await rp.drain(timeout=60)
        finally:
            await rp.close()

    asyncio.run(drain())


def test_metrics_count_every_worker_process(server):
    with (
        ServeProcess(
            serve_env(server, REDPOLL_METRICS_TOKEN=METRICS_TOKEN), args=["--workers", "2"]
        ) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as http,
    ):
        for _ in range(6):  # wait until both workers answer (each opens its engine)
            http.get("/health")
        before = value(
            scrape(http),
            "redpoll_http_requests_total",
            route="/api/v1/instance",
            method="GET",
            status="200",
        )
        clients = [httpx.Client(base_url=srv.url, timeout=30) for _ in range(8)]
        try:
            for _ in range(5):  # fresh connections, handed to either process
                for c in clients:
                    assert c.get("/api/v1/instance").status_code == 200
        finally:
            for c in clients:
                c.close()
        for _ in range(6):  # whichever process answers the scrape counts all 40
            got = value(
                scrape(http),
                "redpoll_http_requests_total",
                route="/api/v1/instance",
                method="GET",
                status="200",
            )
            assert got - before == 40, got - before
