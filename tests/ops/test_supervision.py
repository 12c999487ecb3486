"""``redpoll serve`` heals itself: a real serve on its
own embedded Valkey, which the test SIGKILLs.

* The owner restarts the server on the same data (AOF) and port; REST, jobs
  and the stream hub reconnect; no acknowledged post is lost; service is
  back by itself within 10 s.
* A second serve using that server through REDIS_URL answers 503 with
  Retry-After (REST, /ready, stream health, new streams) while the owner is
  gone, logs one line per state change, and recovers when the owner starts
  again. (A serve attached by the data directory instead takes the server
  over: tests/test_crash_and_restart.py.)

These tests start their own servers in temporary directories, so they run
the same in the single-server and the cluster pass.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from pathlib import Path

import httpx
import redis
from support.mastodon import LOOSE_LIMITS  # noqa: F401
from support.rest import bearer, make_app, sign_up  # noqa: F401

from redpoll.api.process import ServeProcess
from redpoll.storage.server import EmbeddedServer, read_password

BACK_WITHIN_S = 10.0


def own_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDPOLL_") and k != "REDIS_URL"}
    env.update(LOOSE_LIMITS, REDPOLL_DATA_DIR=str(data_dir), REDPOLL_JOB_CLAIM_MS="500", **extra)
    return env


def valkey_pid(data_dir: Path) -> int:
    port = EmbeddedServer.recorded_port(data_dir)
    return int(
        redis.Redis(port=port, password=read_password(data_dir), socket_timeout=5).info("server")[
            "process_id"
        ]
    )


def wait_ready(http: httpx.Client, within: float) -> float:
    """Seconds until /ready says 200; fails after ``within``."""
    start = time.monotonic()
    while True:
        try:
            if http.get("/ready").status_code == 200:
                return time.monotonic() - start
        except httpx.TransportError:
            pass
        if time.monotonic() - start > within:
            raise AssertionError(f"/ready not 200 within {within}s: {http.get('/ready').text}")
        time.sleep(0.05)


class StreamReader:
    """A v1.1 sample stream read in a thread; the texts of the statuses seen."""

    def __init__(self, base: str, identifier: str):
        self.texts: list[str] = []
        self.status: int | None = None
        self._client = httpx.Client(base_url=base, timeout=httpx.Timeout(5, read=60))
        self._thread = threading.Thread(target=self._read, args=(identifier,), daemon=True)
        self._thread.start()

    def _read(self, identifier: str) -> None:
        try:
            with self._client.stream(
                "GET",
                "/1.1/statuses/sample.json",
                params={"identifier": identifier, "percent": "100"},
            ) as r:
                self.status = r.status_code
                for line in r.iter_lines():
                    if line.strip():
                        try:
                            self.texts.append(json.loads(line).get("text", ""))
                        except ValueError:
                            pass
        except (httpx.HTTPError, RuntimeError):
            pass

    def wait_connected(self, within: float) -> None:
        """Until the response head arrived: the endpoint subscribes to the
        hub before it sends the head, so a status posted after this is seen
        (a post sent before it may be missed: the sample stream starts now)."""
        deadline = time.monotonic() + within
        while self.status is None:
            assert time.monotonic() < deadline, "stream did not answer"
            time.sleep(0.02)

    def wait_for(self, text: str, within: float) -> None:
        deadline = time.monotonic() + within
        while text not in self.texts:
            assert time.monotonic() < deadline, f"{text!r} not streamed; saw {self.texts[-5:]}"
            time.sleep(0.05)

    def close(self) -> None:
        self._client.close()


def test_valkey_killed_under_serve_comes_back_by_itself(tmp_path):
    data = tmp_path / "data"
    with ServeProcess(own_env(data)) as srv, httpx.Client(base_url=srv.url, timeout=10) as http:
        app = make_app(http)
        author, author_id = sign_up(http, app)
        fan, _ = sign_up(http, app)
        assert (
            http.post(f"/api/v1/accounts/{author_id}/follow", headers=bearer(fan)).status_code
            == 200
        )
        stream = StreamReader(srv.url, "watcher")
        try:
            stream.wait_connected(15)
            http.post("/api/v1/statuses", headers=bearer(author), data={"status": "before"})
            stream.wait_for("before", 10)

            acknowledged: list[str] = []
            answers: list[httpx.Response] = []
            stop = threading.Event()

            def post_all_the_time() -> None:
                with httpx.Client(base_url=srv.url, timeout=10) as poster:
                    n = 0
                    while not stop.is_set():
                        n += 1
                        text = f"post {n}"
                        try:
                            r = poster.post(
                                "/api/v1/statuses",
                                headers={**bearer(author), "Idempotency-Key": uuid.uuid4().hex},
                                data={"status": text},
                            )
                        except httpx.TransportError:
                            continue
                        answers.append(r)
                        if r.status_code == 200:
                            acknowledged.append(r.json()["id"])
                        else:
                            time.sleep(0.02)

            poster = threading.Thread(target=post_all_the_time, daemon=True)
            poster.start()
            time.sleep(0.5)
            old_pid, port = valkey_pid(data), EmbeddedServer.recorded_port(data)
            os.kill(old_pid, signal.SIGKILL)
            took = wait_ready(http, BACK_WITHIN_S)
            after_restart = len(acknowledged) + 5
            deadline = time.monotonic() + 30
            while len(acknowledged) < after_restart:  # more posts after the restart
                assert time.monotonic() < deadline, [r.status_code for r in answers[-20:]]
                time.sleep(0.05)
            stop.set()
            poster.join(30)
            assert took < BACK_WITHIN_S
            assert valkey_pid(data) != old_pid and EmbeddedServer.recorded_port(data) == port

            # while it was away: 503 with Retry-After, never a 500
            assert {r.status_code for r in answers} <= {200, 503}, {r.status_code for r in answers}
            for r in answers:
                if r.status_code == 503:
                    assert r.headers.get("retry-after") == "1", r.headers
            # no acknowledged post lost: each is there, and in the follower's home once jobs ran
            for sid in acknowledged:
                r = http.get(f"/api/v1/statuses/{sid}", headers=bearer(fan))
                assert r.status_code == 200, (
                    r.text,
                    [line for line in srv.logs().splitlines() if "redpoll.core.health" in line],
                )
            deadline = time.monotonic() + 30
            while True:
                home = []
                max_id = None
                while True:
                    page = http.get(
                        "/api/v1/timelines/home",
                        headers=bearer(fan),
                        params={"limit": 40, **({"max_id": max_id} if max_id else {})},
                    ).json()
                    if not page:
                        break
                    home += [s["id"] for s in page]
                    max_id = page[-1]["id"]
                if set(acknowledged) <= set(home):
                    break
                assert time.monotonic() < deadline, (
                    f"missing from home: {set(acknowledged) - set(home)}"
                )
                time.sleep(0.2)

            # the stream hub reconnected: the open stream delivers new posts
            assert (
                http.post(
                    "/api/v1/statuses", headers=bearer(author), data={"status": "after"}
                ).status_code
                == 200
            )
            stream.wait_for("after", 10)
            assert http.get("/api/v1/streaming/health").status_code == 200
            assert http.get("/health").json()["database"] == "reachable"
        finally:
            stream.close()
        logs = srv.logs()
    lines = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    msgs = [line["msg"] for line in lines]
    assert "embedded server restarted" in msgs, logs[-3000:]
    restarted = next(line for line in lines if line["msg"] == "embedded server restarted")
    assert restarted["took_s"] < 5, restarted
    assert "Traceback" not in logs, logs[-3000:]
    changes = [
        line for line in lines if line.get("logger") in ("redpoll.core.health", "redpoll.serve")
    ]
    assert msgs.count("database unreachable") <= 1, "\n".join(map(json.dumps, changes))


def test_attached_serve_answers_503_then_recovers_when_the_owner_restarts(tmp_path):
    data = tmp_path / "data"
    owner = ServeProcess(own_env(data)).start()
    # by its URL: a serve attached by the data directory would take it over
    attached = ServeProcess(own_env(tmp_path / "other", REDIS_URL=EmbeddedServer.running_in(data)))
    try:
        attached.start()
        with httpx.Client(base_url=attached.url, timeout=10) as http:
            app = make_app(http)
            token, _ = sign_up(http, app)
            assert http.get("/ready").status_code == 200
            owner.process.send_signal(signal.SIGKILL)  # the owner dies; its Valkey with it
            owner.process.wait(30)
            deadline = time.monotonic() + 10
            while http.get("/api/v1/streaming/health").status_code != 503:
                assert time.monotonic() < deadline, "stream health still 200 with Redis gone"
                time.sleep(0.05)
            mark = len(attached.logs())
            for _ in range(20):  # REST, readiness, streams: 503 with Retry-After
                r = http.get("/api/v1/timelines/home", headers=bearer(token))
                assert r.status_code == 503 and r.headers["retry-after"] == "1", (
                    r.status_code,
                    r.text,
                )
            ready = http.get("/ready")
            assert ready.status_code == 503 and ready.headers["retry-after"] == "1"
            assert "database unreachable" in ready.json()["problems"]
            sample = http.get("/1.1/statuses/sample.json", params={"identifier": "x"})
            assert sample.status_code == 503 and sample.headers["retry-after"] == "1"
            assert http.get("/health").status_code == 200  # alive, though not ready
            time.sleep(2)
            outage_logs = attached.logs()[mark:]
            assert "Traceback" not in outage_logs
            assert len(outage_logs.splitlines()) <= 30, outage_logs[-3000:]  # access lines + state

            owner = ServeProcess(own_env(data)).start()  # the owner restarts on the same data
            assert wait_ready(http, BACK_WITHIN_S) < BACK_WITHIN_S
            stream = StreamReader(attached.url, "attached")
            try:
                stream.wait_connected(15)
                assert stream.status == 200
                assert (
                    http.post(
                        "/api/v1/statuses", headers=bearer(token), data={"status": "back again"}
                    ).status_code
                    == 200
                )
                stream.wait_for("back again", 10)
            finally:
                stream.close()
            assert http.get("/api/v1/streaming/health").status_code == 200
            # the probe, backing off during the outage, says so at its next PING
            deadline = time.monotonic() + BACK_WITHIN_S
            while "database reachable again" not in attached.logs():
                assert time.monotonic() < deadline, attached.logs()[-3000:]
                time.sleep(0.1)
            msgs = [
                json.loads(line)["msg"]
                for line in attached.logs().splitlines()
                if line.startswith("{")
            ]
            assert msgs.count("database unreachable") == 1, [
                line for line in attached.logs().splitlines() if "redpoll.core.health" in line
            ]
            assert msgs.count("database reachable again") == 1, msgs
    finally:
        attached.close()
        owner.close()


def test_serve_and_valkey_sigkilled_while_posting_lose_no_acknowledged_post(tmp_path):
    """Both processes die at once mid-way through posting (SIGKILL, no handler
    runs); a new serve on the same data has every acknowledged post, in the
    followers' homes too once the held fan-out jobs are taken over; and a
    client that retries every unacknowledged Idempotency-Key gets no
    duplicate (0 lost, 0 duplicates)."""
    data = tmp_path / "data"
    first = ServeProcess(own_env(data)).start()
    try:
        with httpx.Client(base_url=first.url, timeout=10) as http:
            app = make_app(http)
            author, author_id = sign_up(http, app)
            fans = [sign_up(http, app)[0] for _ in range(3)]
            for fan in fans:
                assert (
                    http.post(
                        f"/api/v1/accounts/{author_id}/follow", headers=bearer(fan)
                    ).status_code
                    == 200
                )
        acknowledged: dict[str, str] = {}  # Idempotency-Key -> status id
        sent: list[str] = []  # every key sent, answered or not
        stop = threading.Event()

        def post_all_the_time() -> None:
            with httpx.Client(base_url=first.url, timeout=10) as poster:
                while not stop.is_set():
                    key = uuid.uuid4().hex
                    sent.append(key)
                    try:
                        r = poster.post(
                            "/api/v1/statuses",
                            headers={**bearer(author), "Idempotency-Key": key},
                            data={"status": key},
                        )
                    except httpx.TransportError:
                        return  # serve is gone
                    if r.status_code == 200:
                        acknowledged[key] = r.json()["id"]

        # several clients at once, so that several posts are cut short mid-way
        posters = [threading.Thread(target=post_all_the_time, daemon=True) for _ in range(4)]
        for poster in posters:
            poster.start()
        time.sleep(1.0)
        os.kill(valkey_pid(data), signal.SIGKILL)
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(30)
        stop.set()
        for poster in posters:
            poster.join(30)
        assert len(acknowledged) > 3
    finally:
        first.close()

    with ServeProcess(own_env(data)) as again, httpx.Client(base_url=again.url, timeout=10) as http:
        for key, sid in acknowledged.items():
            r = http.get(f"/api/v1/statuses/{sid}", headers=bearer(author))
            assert r.status_code == 200 and r.json()["content"].find(key) >= 0, (key, r.text)
        wanted = set(acknowledged.values())
        deadline = time.monotonic() + 60
        for fan in fans:
            while True:
                home, max_id = set(), None
                while True:
                    page = http.get(
                        "/api/v1/timelines/home",
                        headers=bearer(fan),
                        params={"limit": 40, **({"max_id": max_id} if max_id else {})},
                    ).json()
                    if not page:
                        break
                    home |= {s["id"] for s in page}
                    max_id = page[-1]["id"]
                if wanted <= home:
                    break
                assert time.monotonic() < deadline, f"missing from a home: {wanted - home}"
                time.sleep(0.2)
        # the client retries what it never heard back about, with the same key
        for key in sent:
            if key in acknowledged:
                continue
            r = http.post(
                "/api/v1/statuses",
                data={"status": key},
                headers={**bearer(author), "Idempotency-Key": key},
            )
            assert r.status_code == 200, r.text
            acknowledged[key] = r.json()["id"]
        texts, max_id = [], None
        while True:
            page = http.get(
                f"/api/v1/accounts/{author_id}/statuses",
                headers=bearer(author),
                params={"limit": 40, **({"max_id": max_id} if max_id else {})},
            ).json()
            if not page:
                break
            texts += [next(k for k in sent if k in st["content"]) for st in page]
            max_id = page[-1]["id"]
        assert sorted(texts) == sorted(sent), "a key is missing or posted twice"


def _slot_ranges(node) -> list[tuple[int, int]]:
    """The slot ranges ``node`` serves, from its own CLUSTER SLOTS."""
    rows = redis.Redis(port=node.port).execute_command("CLUSTER", "SLOTS")
    return [(start, end) for start, end, owner, *_ in rows if int(owner[1]) == node.port]


def _wait_state(nodes, state: str, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while any(redis.Redis(port=n.port).cluster("info")["cluster_state"] != state for n in nodes):
        assert time.monotonic() < deadline, f"cluster not {state} in {within} s"
        time.sleep(0.05)


def test_a_cluster_that_is_down_answers_503_then_serves_again(tmp_path):
    """A cluster that answers CLUSTERDOWN (here its masters give up their
    slots, as while a failed master is being replaced) is an outage: the API
    answers 503 with Retry-After, as for an unreachable server, not 500 (a
    crash); once the slots are served again, so are requests."""
    from redpoll.storage.server import EmbeddedCluster

    cluster = EmbeddedCluster(tmp_path / "cluster").start()
    serve = ServeProcess(own_env(tmp_path / "data", REDIS_URL=cluster.url, REDPOLL_CLUSTER="1"))
    try:
        serve.start()
        with httpx.Client(base_url=serve.url, timeout=30) as http:
            token, _ = sign_up(http, make_app(http))
            home = "/api/v1/timelines/home"
            assert http.get(home, headers=bearer(token)).status_code == 200
            ranges = {node.port: _slot_ranges(node) for node in cluster.nodes}
            for node in cluster.nodes:
                for start, end in ranges[node.port]:
                    redis.Redis(port=node.port).execute_command(
                        "CLUSTER", "DELSLOTSRANGE", start, end
                    )
            _wait_state(cluster.nodes, "fail")
            down = http.get(home, headers=bearer(token))
            assert down.status_code == 503, (down.status_code, down.text)
            assert down.headers["retry-after"] == "1"
            for node in cluster.nodes:
                for start, end in ranges[node.port]:
                    redis.Redis(port=node.port).execute_command(
                        "CLUSTER", "ADDSLOTSRANGE", start, end
                    )
            _wait_state(cluster.nodes, "ok")
            deadline = time.monotonic() + BACK_WITHIN_S
            while (r := http.get(home, headers=bearer(token))).status_code != 200:
                assert r.status_code == 503, (r.status_code, r.text)
                assert time.monotonic() < deadline, "not served again"
                time.sleep(0.1)
        assert "unhandled error" not in serve.logs()  # the API's crash path (500) never ran
    finally:
        serve.stop()
        cluster.stop()
