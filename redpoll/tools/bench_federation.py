"""``redpoll bench --federation``: what federation costs.

1. **Fan-out to other servers**: one post by an account with ``followers``
   remote followers on ``hosts`` servers (each with a shared inbox, as
   Mastodon's) becomes one signed request per server, not per follower:
   the requests a sink on loopback received are counted (and their
   signatures present), with the time from the post to the last delivery.
2. **Inbox**: signed activities (Likes from one remote actor whose key is
   kept) checked and queued by the inbox as the HTTP handler calls it
   (signature, digest, date, dedupe by activity id, queue): activities per
   second of CPU (this process plus the database's main thread), first
   deliveries and the same activities delivered again (dropped).

It starts its own embedded server (or uses ``redis_url``, writing keys of
its own). Targets: requests == hosts; the inbox >= 1,000 activities per
second per core.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from typing import Any

from ..bus import events
from ..core import keys
from ..core.settings import Settings
from ..engine.engine import Redpoll
from ..federation import keys as fed_keys
from ..federation import outbox, remote, signing
from ..storage.server import EmbeddedServer

TARGET_INBOX_PER_CPU_S = 1000


class Sink:
    """A loopback HTTP server that answers 202 to every POST and counts
    them by path (with whether each carried a Signature)."""

    def __init__(self):
        self.paths: dict[str, int] = {}
        self.signed = 0
        self.last = 0.0
        self.server: asyncio.AbstractServer | None = None
        self.port = 0

    async def start(self) -> Sink:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def _client(self, reader, writer) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                headers = {
                    k.strip().lower(): v.strip()
                    for k, _, v in (line.partition(":") for line in lines[1:] if line)
                }
                await reader.readexactly(int(headers.get("content-length", "0")))
                self.paths[path] = self.paths.get(path, 0) + 1
                self.signed += "signature" in headers
                self.last = time.monotonic()
                writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


def _cpu(info: dict) -> float:
    nodes = (
        list(info.values()) if info and all(isinstance(v, dict) for v in info.values()) else [info]
    )
    return sum(
        float(n.get("used_cpu_user_main_thread", n.get("used_cpu_user", 0)))
        + float(n.get("used_cpu_sys_main_thread", n.get("used_cpu_sys", 0)))
        for n in nodes
    )


async def _db_cpu(rp: Redpoll) -> float:
    return _cpu(await rp.store.info("cpu"))


async def run_federation_bench(
    settings: Settings, say, *, followers: int = 10_000, hosts: int = 100, activities: int = 2_000
) -> dict[str, Any]:
    tmp = tempfile.TemporaryDirectory(prefix="redpoll-bench-fed-")
    embedded = None
    sink = await Sink().start()
    try:
        url = settings.redis_url
        if url is None:
            embedded = EmbeddedServer(tmp.name + "/data").start()
            url = embedded.url
        base = "http://127.0.0.1:1"
        rp = await Redpoll.open(
            Settings(
                redis_url=url,
                cluster=settings.cluster,
                public_url=base,
                federation_loopback=True,
                # one host sends it all: measured, not limited
                rate_inbox_host=None,
            )
        )
        try:
            return {
                "fanout": await _fanout(rp, sink, say, base, followers, hosts),
                "inbox": await _inbox(rp, say, activities),
            }
        finally:
            await rp.close()
    finally:
        await sink.stop()
        if embedded is not None:
            embedded.stop()
        tmp.cleanup()


def _actor(host: str, name: str, inbox: str, pem: str) -> dict:
    uri = f"http://{host}/users/{name}"
    return {
        "id": uri,
        "type": "Person",
        "preferredUsername": name,
        "inbox": f"{uri}/inbox",
        "endpoints": {"sharedInbox": inbox},
        "publicKey": {"id": f"{uri}#main-key", "publicKeyPem": pem},
    }


async def _fanout(
    rp: Redpoll, sink: Sink, say, base: str, followers: int, hosts: int
) -> dict[str, Any]:
    stamp = int(time.time())
    author = await rp.accounts.sign_up(f"fedbench{stamp}")
    pem = signing.KeyPair.generate().public_pem
    say(f"  federation: {followers:,} remote followers on {hosts} servers ...")
    host = f"127.0.0.1:{sink.port}"
    for i in range(followers):
        h = i % hosts
        inbox = f"http://{host}/s{h}/inbox"
        # the actors' ids name the same loopback host (the sink's): the shared inbox
        # is what groups them, as a real server's followers share its inbox
        doc = _actor(host, f"f{stamp}_{h}_{i}", inbox, pem)
        user = await remote.keep(rp.store, remote.parse_actor(doc))
        await rp.store.run(
            "fed_follow",
            [
                fed_keys.remote_followers(author.id),
                fed_keys.inboxes(author.id),
                keys.user(author.id),
                fed_keys.follower_inbox(author.id),
            ],
            [user.id, inbox, int(time.time() * 1000), "1"],
        )
    status = await rp.statuses.post(author.id, "one post, many servers")
    started = time.monotonic()
    queued = await outbox.handle(rp.store, rp.queue, base, events.update_event(status).encode())
    await rp.drain(timeout=300)
    took = (sink.last or time.monotonic()) - started
    requests = sum(sink.paths.values())
    say(f"  {requests} requests to {len(sink.paths)} inboxes in {took * 1000:,.0f} ms")
    return {
        "remote_followers": followers,
        "hosts": hosts,
        "queued": queued,
        "requests": requests,
        "inboxes_reached": len(sink.paths),
        "signed": sink.signed,
        "ms_to_last_delivery": round(took * 1000, 1),
        "requests_per_host": round(requests / hosts, 3),
    }


async def _inbox(rp: Redpoll, say, n: int) -> dict[str, Any]:
    pair = signing.KeyPair.generate()
    host = "peer.bench.example"
    doc = _actor(host, "liker", f"http://{host}/inbox", pair.public_pem)
    liker = await remote.keep(rp.store, remote.parse_actor(doc))
    await rp.store.hset(fed_keys.actor(liker.id), "fetched", int(time.time() * 1000) + 10**9)
    author = await rp.accounts.sign_up(f"fedinbox{int(time.time())}")
    status = await rp.statuses.post(author.id, "liked from afar")
    note = f"http://127.0.0.1:1/users/{author.login}/statuses/{status.id}"
    say(f"  inbox: {n:,} signed activities, then the same again ...")
    requests = []
    for i in range(n):
        body = json.dumps(
            {
                "@context": "https://www.w3.org/ns/activitystreams",
                "id": f"{doc['id']}#likes/{time.time_ns()}/{i}",
                "type": "Like",
                "actor": doc["id"],
                "object": note,
            }
        ).encode()
        headers = signing.sign(
            pair,
            f"{doc['id']}#main-key",
            "POST",
            "http://127.0.0.1:1/inbox",
            body,
            {"content-type": "application/activity+json"},
        )
        requests.append((headers, body))
    out: dict[str, Any] = {}
    for label in ("first", "again"):
        db0, cpu0, wall0 = await _db_cpu(rp), time.process_time(), time.monotonic()
        taken = 0
        for headers, body in requests:
            taken += await rp.federation.receive_activity("POST", "/inbox", headers, body)
        cpu = time.process_time() - cpu0 + await _db_cpu(rp) - db0
        wall = time.monotonic() - wall0
        out[label] = {"taken": taken, "per_cpu_s": round(n / cpu), "per_s": round(n / wall)}
        say(f"  {label}: {taken} taken, {n / cpu:,.0f} activities per CPU second")
    await rp.drain(timeout=300)
    out["target_per_cpu_s"] = TARGET_INBOX_PER_CPU_S
    return out


def format_report(res: dict) -> str:
    f, i = res["fanout"], res["inbox"]
    return "\n".join(
        [
            "federation",
            f"  one post, {f['remote_followers']:,} remote followers on {f['hosts']} servers: "
            f"{f['requests']} signed requests to {f['inboxes_reached']} shared inboxes "
            f"({f['requests_per_host']} per server, target 1), last delivered after "
            f"{f['ms_to_last_delivery']:,.0f} ms",
            f"  inbox: {i['first']['per_cpu_s']:,} activities per CPU second "
            f"(target >= {i['target_per_cpu_s']:,}), {i['first']['taken']} taken; delivered again: "
            f"{i['again']['per_cpu_s']:,} per CPU second, {i['again']['taken']} taken",
        ]
    )
